"""An LLM agent's planner at work: before each model call and on each reply.

As in ADK: a ``BuiltInPlanner`` puts its thinking config on the request; any
other planner adds its planning instruction, and the request's contents lose
their ``thought`` marks (the model reads its earlier plans as text). A planner
whose ``process_planning_response`` does something (not BuiltInPlanner's) then
rewrites every reply's parts, after the after_model_callback.

Streamed replies: a partial chunk is shown as what the planner makes of the text
streamed so far, less what was shown already, so that planning text streams as
thought, never as answer text (ADK runs the planner on each chunk alone).
"""

from __future__ import annotations

from google.genai import types

from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.readonly_context import ReadonlyContext
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.planners.base_planner import BasePlanner
from cairn.planners.built_in_planner import BuiltInPlanner
from cairn.user_code import call_user_code


async def prepare_request(
    planner: BasePlanner, ctx: InvocationContext, request: LlmRequest
) -> None:
    """The planner's part of a model request (after its contents are built)."""
    if isinstance(planner, BuiltInPlanner):
        planner.apply_thinking_config(request)
        return
    instruction = await call_user_code(
        planner.build_planning_instruction, ReadonlyContext(ctx), request
    )
    if instruction:
        request.append_instructions([instruction])
    request.contents = [_without_thoughts(content) for content in request.contents]


def _without_thoughts(content: types.Content) -> types.Content:
    parts = content.parts or []
    if not any(part.thought for part in parts):
        return content
    return content.model_copy(
        update={
            "parts": [p.model_copy(update={"thought": None}) if p.thought else p for p in parts]
        }
    )


def rewrites(planner: BasePlanner | None) -> bool:
    """Whether ``planner`` rewrites replies (its ``process_planning_response`` is its own)."""
    if planner is None:
        return False
    own = type(planner).process_planning_response
    return own is not BuiltInPlanner.process_planning_response


async def process_reply(
    planner: BasePlanner, context: Context, response: LlmResponse
) -> LlmResponse:
    """``response`` with its parts as the planner keeps them (a copy; the planner's state
    writes go to ``context``)."""
    parts = response.content.parts if response.content and response.content.parts else []
    if not parts or not rewrites(planner):
        return response
    given = [part.model_copy() for part in parts]
    processed = await call_user_code(planner.process_planning_response, context, given)
    if not processed:
        return response
    assert response.content is not None
    content = response.content.model_copy(update={"parts": list(processed)})
    return response.model_copy(update={"content": content})


class PlannedStream:
    """The partial chunks of one streamed reply, as the planner makes of them."""

    def __init__(self, planner: BasePlanner, ctx: InvocationContext) -> None:
        self.planner = planner
        self.context = Context(ctx)  # partial events are never stored: their writes neither
        self.text = ""
        self.shown = {True: "", False: ""}

    async def chunk(self, response: LlmResponse) -> LlmResponse:
        parts = response.content.parts if response.content and response.content.parts else []
        if not rewrites(self.planner) or not parts:
            return response
        others = [part for part in parts if not part.text or part.thought]
        self.text += "".join(part.text or "" for part in parts if part.text and not part.thought)
        processed = await call_user_code(
            self.planner.process_planning_response, self.context, [types.Part(text=self.text)]
        )
        if not processed:
            processed = [types.Part(text=self.text)]
        new = list(others)
        for thought in (True, False):
            whole = "".join(p.text or "" for p in processed if bool(p.thought) == thought)
            before = self.shown[thought]
            if len(whole) > len(before) and whole.startswith(before):
                new.append(types.Part(text=whole[len(before) :], thought=thought or None))
                self.shown[thought] = whole
        content = types.Content(
            role=response.content.role if response.content else "model", parts=new
        )
        return response.model_copy(update={"content": content})
