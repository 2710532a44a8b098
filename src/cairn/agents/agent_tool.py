"""AgentTool: another agent, called by an LLM agent as if it were a function."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import AsyncGenerator
from typing import Any, Self

from google.genai import types
from pydantic import ValidationError

from cairn.agents.base_agent import BaseAgent
from cairn.agents.branches import call_branch
from cairn.agents.common_configs import AgentRefConfig
from cairn.agents.grounding import GROUNDING_STATE_KEY, grounding_state_value
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.llm_agent import LlmAgent
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.interrupts import starts_invocation, waiting_under
from cairn.tools.base_tool import BaseTool
from cairn.tools.tool_configs import BaseToolConfig, ToolArgsConfig

_REQUEST = "request"


class AgentTool(BaseTool):
    """Wraps ``agent`` so a model can call it as a tool (ADK's ``AgentTool``).

    The tool is named after the agent and described by its ``description``.
    Its parameters are the agent's ``input_schema`` (an ``LlmAgent`` with one)
    or a single string, ``request``.

    Each call runs the agent inside the caller's invocation, on a branch of
    its own (``<caller branch>.<tool name>@<call id>``) that nothing else
    sees: it is given the call's arguments as its request and sees only its
    own work, but reads and writes the session's state. Its events are
    committed to the session like any other (unlike ADK, whose AgentTool uses
    a throw-away session), so a child that pauses for a confirmation or a
    long-running tool is resumed like its caller; as in ADK, the Runner's
    caller is not given them, except a call the child pauses on. The result is the agent's
    last final reply: ``{"result": text}``, or the parsed dict when the agent
    has an ``output_schema``. ``skip_summarization=True`` ends the caller's
    turn with the tool's result instead of handing it back to the caller's model.
    ``propagate_grounding_metadata=True``: the grounding of the agent's answer (a
    search's sources) is carried over to the caller's later replies in the
    invocation (``cairn.agents.grounding``).
    """

    def __init__(
        self,
        agent: BaseAgent,
        skip_summarization: bool = False,
        *,
        include_plugins: bool = True,
        propagate_grounding_metadata: bool = False,
    ) -> None:
        super().__init__(name=agent.name, description=agent.description)
        self.agent = agent
        self.skip_summarization = skip_summarization
        self.include_plugins = include_plugins
        self.propagate_grounding_metadata = propagate_grounding_metadata

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> Self:
        """``- name: AgentTool`` with ``args: {agent: {config_path: helper.yaml}}`` (or
        ``agent: {code: ...}``), ``skip_summarization``, ``include_plugins``."""
        from cairn.agents.config_agent_utils import resolve_agent_reference

        parsed = AgentToolConfig.model_validate(config.model_dump())
        agent = resolve_agent_reference(parsed.agent, config_abs_path)
        return cls(
            agent=agent,
            skip_summarization=parsed.skip_summarization,
            include_plugins=parsed.include_plugins,
        )

    def declaration(self) -> types.FunctionDeclaration:
        input_schema = self.agent.input_schema if isinstance(self.agent, LlmAgent) else None
        if input_schema is not None:
            schema = input_schema.model_json_schema()
            schema.pop("title", None)
        else:
            schema = {
                "type": "object",
                "properties": {_REQUEST: {"type": "string"}},
                "required": [_REQUEST],
            }
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )

    def _user_message(self, args: dict[str, Any]) -> types.Content | dict[str, Any]:
        """The child's user message, or an error result for the model."""
        input_schema = self.agent.input_schema if isinstance(self.agent, LlmAgent) else None
        if input_schema is not None:
            try:
                text = input_schema.model_validate(args).model_dump_json(exclude_none=True)
            except ValidationError as error:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in issue['loc']) or '(arguments)'}: {issue['msg']}"
                    for issue in error.errors()
                )
                return {
                    "error": f"invalid arguments for agent tool {self.name!r}: {problems}. Call "
                    "it again with arguments that match its parameters."
                }
        else:
            request = args.get(_REQUEST)
            if request is None:
                return {
                    "error": f"agent tool {self.name!r} needs a {_REQUEST!r} argument (a string "
                    "saying what it should do)"
                }
            text = request if isinstance(request, str) else json.dumps(request)
        return types.Content(role="user", parts=[types.Part(text=text)])

    runs_in_invocation = True
    """The calling LLM agent runs this tool's agent inside its own invocation (below)."""

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        raise TypeError(
            f"AgentTool {self.name!r} runs its agent inside the calling LLM agent's invocation "
            "(so the agent's events are stored and a pause can resume); give it to an "
            "LlmAgent's tools, or use the agent itself as a workflow node"
        )

    async def run_in_invocation(
        self, ctx: InvocationContext, call: types.FunctionCall, caller: str
    ) -> AsyncGenerator[Event, None]:
        """Run the agent for ``call`` on its own branch, then answer the call.

        The agent sees only its branch: the request (the call's arguments) and
        its own work. Its events are committed like the caller's, state
        included. If it pauses (a confirmation, a long-running tool), the call
        stays unanswered and the caller's turn waits; when the invocation
        resumes, the agent goes on from its own events. The answer is the
        agent's last final reply (``{"result": text}``, or the dict of its
        ``output_schema``).
        """
        branch = call_branch(ctx.branch, self.name, call.id)
        message = self._user_message(dict(call.args or {}))
        if isinstance(message, dict):
            yield self._answer(ctx, call, caller, message)
            return
        ctx.flags.agent_tool_branches.add(branch)
        child = dataclasses.replace(
            ctx,
            agent=self.agent,
            branch=branch,
            user_content=message,
            isolated=True,
            # include_plugins=False: the agent's own hooks run, not the Runner's plugins.
            plugin_manager=ctx.plugin_manager if self.include_plugins else None,
        )
        if not _has_events(ctx, branch):  # not a resume: hand over the request
            yield Event(
                invocation_id=ctx.invocation_id, author=caller, branch=branch, content=message
            )
        async with contextlib.aclosing(self.agent.run_async(child)) as events:
            async for event in events:
                yield event
        if waiting_under(ctx.session.events, ctx.invocation_id, branch):
            return  # the agent paused: the call stays open
        answer = self._answer(ctx, call, caller, self._result(_final_on(ctx, branch)))
        grounding = _last_grounding_on(ctx, branch) if self.propagate_grounding_metadata else None
        if grounding is not None:
            answer.actions.state_delta[GROUNDING_STATE_KEY] = grounding_state_value(grounding)
        yield answer

    def _answer(
        self, ctx: InvocationContext, call: types.FunctionCall, caller: str, result: Any
    ) -> Event:
        return Event(
            invocation_id=ctx.invocation_id,
            author=caller,
            branch=ctx.branch,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call.id, name=call.name, response=result
                        )
                    )
                ],
            ),
            actions=EventActions(skip_summarization=self.skip_summarization or None),
        )

    def _result(self, final: Event | None) -> dict[str, Any]:
        if final is None:
            return {"result": ""}
        text = "\n".join(
            part.text
            for part in (final.content.parts or [] if final.content else [])
            if part.text and not part.thought
        )
        if final.error_code and not text:
            return {"error": f"agent {self.agent.name!r} failed: {final.error_message}"}
        output_schema = self.agent.output_schema if isinstance(self.agent, LlmAgent) else None
        if output_schema is not None and text:
            if final.error_code:
                return {"error": final.error_message, "result": text}
            dumped: dict[str, Any] = output_schema.model_validate_json(text).model_dump(
                mode="json", exclude_none=True
            )
            return dumped
        return {"result": text}


def _invocation_events(ctx: InvocationContext) -> list[Event]:
    """This invocation's events, newest first, back to the message that started it."""
    found = []
    for event in reversed(ctx.session.events):
        if event.invocation_id != ctx.invocation_id:
            continue
        found.append(event)
        if starts_invocation(event):
            break
    return found


def _has_events(ctx: InvocationContext, branch: str) -> bool:
    return any(event.branch == branch for event in _invocation_events(ctx))


def _last_grounding_on(ctx: InvocationContext, branch: str) -> types.GroundingMetadata | None:
    for event in _invocation_events(ctx):
        if event.branch == branch and event.grounding_metadata is not None:
            return event.grounding_metadata
    return None


def _final_on(ctx: InvocationContext, branch: str) -> Event | None:
    for event in _invocation_events(ctx):
        if event.branch == branch and event.author != "user" and event.is_final_response():
            return event
    return None


__all__ = ["AgentTool"]


class AgentToolConfig(BaseToolConfig):
    """The ``args`` of ``- name: AgentTool`` in an agent config."""

    agent: AgentRefConfig
    """The agent to wrap: ``config_path`` (a YAML file beside the config) or ``code``."""
    skip_summarization: bool = False
    """End the calling agent's turn with the agent's reply (no model call to sum it up)."""
    include_plugins: bool = True
    """Run the wrapped agent with the caller's Runner plugins."""
