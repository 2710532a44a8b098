"""An LLM agent's code runs: code in a model reply, run by the agent's code executor.

The flow is ADK's: the first code block of a reply (fenced with one of the
executor's ``code_block_delimiters``) becomes an ``executable_code`` part of an
event, the code runs, and a second event holds its ``code_execution_result``;
the model is then called again and sees the code and its output as text (the
code between the first delimiters, the output between
``execution_result_delimiters``, as the user's turn). Files the code writes are
saved as artifacts. Failed runs in a row are counted from the invocation's
result events (``error_retry_attempts``). With ``BuiltInCodeExecutor`` the model
runs the code itself and its reply is kept as it came (images it made are saved
as artifacts).

A code run is a side effect, held to the rule of tool calls
(``cairn.agents.tool_calls``): its code is committed before it runs and its result
after, both with the run's id (``cairn-code-<uuid>``). A run whose result is not in
the log when the invocation resumes (its process died) is in doubt: it runs again
only if the executor is ``idempotent``, else the caller is asked (``in_doubt``:
``{"rerun": true}`` or ``{"result": ...}``).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import uuid
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from google.genai import types

from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.planning import rewrites
from cairn.artifacts.errors import ArtifactServiceMissingError
from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.code_executors.built_in_code_executor import BuiltInCodeExecutor
from cairn.code_executors.code_execution_utils import (
    CodeExecutionInput,
    CodeExecutionResult,
    CodeExecutionUtils,
    file_bytes,
)
from cairn.code_executors.code_executor_context import CONTEXT_KEY, CodeExecutorContext
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.interrupts import (
    CODE_RUN_ID_PREFIX,
    RESOLVE_IN_DOUBT_FUNCTION,
    Interrupt,
    code_run_call,
    starts_invocation,
)
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.user_code import call_user_code

if TYPE_CHECKING:
    from cairn.agents.llm_agent import LlmAgent

logger = logging.getLogger(__name__)


# -- the request ---------------------------------------------------------------------------
def prepare_request(executor: BaseCodeExecutor, request: LlmRequest) -> None:
    """Declare Gemini's code tool for a ``BuiltInCodeExecutor``; show earlier code and
    results to the model as text (copies: the session's events are not changed)."""
    if isinstance(executor, BuiltInCodeExecutor):
        executor.process_llm_request(request)
    delimiters = executor.code_block_delimiters
    opening = delimiters[0] if delimiters else ("", "")
    contents = []
    for content in request.contents:
        parts = content.parts or []
        if parts and (parts[-1].executable_code or parts[-1].code_execution_result):
            content = content.model_copy(update={"parts": list(parts)})
            CodeExecutionUtils.convert_code_execution_parts(
                content, opening, executor.execution_result_delimiters
            )
        contents.append(content)
    request.contents = contents


# -- the reply -----------------------------------------------------------------------------
async def save_model_images(
    ctx: InvocationContext, response: LlmResponse, context: Context
) -> None:
    """Images in a reply of a model that ran code itself: saved as artifacts (recorded in
    ``context``'s actions), each part replaced by a note naming the artifact."""
    parts = response.content.parts if response.content and response.content.parts else []
    for index, part in enumerate(parts):
        data = part.inline_data
        if data is None or not (data.mime_type or "").startswith("image/") or data.data is None:
            continue
        name = data.display_name or (
            datetime.datetime.now().astimezone().strftime("%Y%m%d_%H%M%S")
            + "."
            + (data.mime_type or "image/png").split("/")[-1]
        )
        await context.save_artifact(
            name, types.Part.from_bytes(data=data.data, mime_type=data.mime_type or "image/png")
        )
        parts[index] = types.Part(text=f"Saved as artifact: {name}. ")


def code_to_run(
    agent: LlmAgent, ctx: InvocationContext, response: LlmResponse
) -> types.Content | None:
    """The reply cut after its first code block, which becomes an ``executable_code`` part
    with a fresh run id; None if the reply has no code to run here (or the runs of this
    invocation failed ``error_retry_attempts`` times in a row)."""
    executor = agent.code_executor
    if executor is None or isinstance(executor, BuiltInCodeExecutor):
        return None
    if response.partial or response.content is None or not response.content.parts:
        return None
    if failed_in_a_row(ctx, agent.name) >= executor.error_retry_attempts:
        return None
    # The model's private reasoning (thoughts it signed) is not searched for code; under a
    # planner that marks its own sections as thoughts, those sections are.
    signed_only = rewrites_reply(agent)
    thoughts = [
        part
        for part in response.content.parts
        if part.thought and (part.thought_signature or not signed_only)
    ]
    content = response.content.model_copy(
        update={"parts": [p for p in response.content.parts if not any(p is t for t in thoughts)]}
    )
    code = CodeExecutionUtils.extract_code_and_truncate_content(
        content, executor.code_block_delimiters
    )
    if not code:
        return None
    parts = list(content.parts or [])
    last = parts[-1]
    assert last.executable_code is not None
    parts[-1] = last.model_copy(
        update={
            "executable_code": last.executable_code.model_copy(
                update={"id": f"{CODE_RUN_ID_PREFIX}{uuid.uuid4()}"}
            )
        }
    )
    return content.model_copy(update={"parts": [*thoughts, *parts], "role": "model"})


def failed_in_a_row(ctx: InvocationContext, agent_name: str) -> int:
    """How many of this agent's latest code runs in the invocation failed, back to its last
    run that succeeded (read from the log, so a resumed invocation counts on)."""
    failed = 0
    for event in reversed(ctx.session.events):
        if event.invocation_id != ctx.invocation_id:
            continue
        if starts_invocation(event):
            break
        if event.author != agent_name or event.branch != ctx.branch:
            continue
        for part in reversed(event.content.parts if event.content and event.content.parts else []):
            result = part.code_execution_result
            if result is None or not (result.id or "").startswith(CODE_RUN_ID_PREFIX):
                continue
            if result.outcome == types.Outcome.OUTCOME_OK:
                return failed
            failed += 1
    return failed


def rewrites_reply(agent: LlmAgent) -> bool:
    return rewrites(agent.planner)


async def run_code(
    agent: LlmAgent, ctx: InvocationContext, content: types.Content, actions: EventActions
) -> AsyncGenerator[Event, None]:
    """Commit the code (with ``actions``, what the reply's callbacks recorded), run it, then
    commit its result."""
    code = content.parts[-1].executable_code if content.parts else None
    assert code is not None
    yield Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=content,
        actions=actions,
    )
    yield await _run_and_record(agent, ctx, code)


async def _run_and_record(
    agent: LlmAgent, ctx: InvocationContext, code: types.ExecutableCode
) -> Event:
    executor = agent.code_executor
    assert executor is not None
    context = Context(ctx)
    record = CodeExecutorContext(context.state)
    execution_id = None
    if executor.stateful:
        execution_id = record.get_execution_id() or ctx.session.id
        record.set_execution_id(execution_id)
    run = CodeExecutionInput(
        code=code.code or "", input_files=record.get_input_files(), execution_id=execution_id
    )
    try:
        result = await call_user_code(executor.execute_code, ctx, run)
    except Exception as error:
        logger.exception("the code executor of agent %r failed", agent.name)
        result = CodeExecutionResult(
            stderr=f"the code executor {type(executor).__name__} failed: "
            f"{type(error).__name__}: {error}"
        )
    return await record_result(agent, ctx, code, result, context, record)


async def record_result(
    agent: LlmAgent,
    ctx: InvocationContext,
    code: types.ExecutableCode,
    result: CodeExecutionResult,
    context: Context | None = None,
    record: CodeExecutorContext | None = None,
) -> Event:
    """The event of a run's result, its output files saved as artifacts (failed runs are
    counted from these events, not kept in state)."""
    context = context or Context(ctx)
    record = record or CodeExecutorContext(context.state)
    saved = []
    unsaved = []
    for file in result.output_files:
        try:
            await context.save_artifact(
                file.name, types.Part.from_bytes(data=file_bytes(file), mime_type=file.mime_type)
            )
            saved.append(file)
        except ArtifactServiceMissingError:
            unsaved.append(file.name)
    shown = dataclasses.replace(result, output_files=saved)
    if unsaved:
        shown.stdout += f"\n[not saved, the runner has no artifact service: {', '.join(unsaved)}]"
    context.state[CONTEXT_KEY] = record.get_state_delta()[CONTEXT_KEY]
    part = CodeExecutionUtils.build_code_execution_result_part(shown)
    assert part.code_execution_result is not None
    part.code_execution_result.id = code.id
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[part]),
        actions=context.actions,
    )


# -- resuming ------------------------------------------------------------------------------
@dataclasses.dataclass
class SettledRun:
    events: list[Event]
    pending: bool


async def settle_code_run(
    agent: LlmAgent,
    ctx: InvocationContext,
    code: types.ExecutableCode,
    interrupt: Interrupt | None,
    answers: dict[str, Any],
) -> SettledRun:
    """A run whose result is not in the log: run it again (idempotent executor, or the
    caller said rerun), record the result the caller gave, keep waiting for the caller's
    answer, or ask for it."""
    from cairn.agents.tool_calls import interrupt_event, render

    executor = agent.code_executor
    if interrupt is not None:
        if interrupt.id not in answers:
            return SettledRun([], pending=True)
        answer = answers[interrupt.id] or {}
        if answer.get("rerun") is not True:
            given = _given_result(answer.get("result"))
            return SettledRun([await record_result(agent, ctx, code, given)], pending=False)
    elif executor is None or not executor.idempotent:
        call = code_run_call(code)
        message = (
            f"The code run {code.id} started but its result was never recorded (the process "
            "running it stopped). It may or may not have taken effect. Answer "
            '{"rerun": true} to run it again, or {"result": ...} with its output. The code:\n'
            f"{render(call.args or {})}"
        )
        asked = interrupt_event(
            agent, ctx, RESOLVE_IN_DOUBT_FUNCTION, [(call, {"message": message})]
        )
        return SettledRun([asked], pending=True)
    if executor is None:
        result = CodeExecutionResult(
            stderr=f"agent {agent.name!r} has no code executor now; the code was not run again"
        )
        return SettledRun([await record_result(agent, ctx, code, result)], pending=False)
    return SettledRun([await _run_and_record(agent, ctx, code)], pending=False)


def _given_result(value: Any) -> CodeExecutionResult:
    """The result a caller gave for a run in doubt: its output text, or ``stdout`` and
    ``stderr`` (a failed run) in a mapping."""
    if isinstance(value, str):
        return CodeExecutionResult(stdout=value)
    if isinstance(value, dict) and set(value) <= {"stdout", "stderr"}:
        return CodeExecutionResult(
            stdout=str(value.get("stdout") or ""), stderr=str(value.get("stderr") or "")
        )
    return CodeExecutionResult(stdout=json.dumps(value, ensure_ascii=False, default=str))
