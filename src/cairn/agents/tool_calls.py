"""An LLM agent's function calls: running them, pausing them, and finishing them on resume.

A model turn's calls run concurrently; one event carries the results of those
that finished. A call that cannot finish now leaves no result and pauses the
invocation: a long-running tool, a tool that needs a human's confirmation
(``require_confirmation`` or ``tool_context.request_confirmation()``), or, on
resume, a call whose process died before its result was recorded (in doubt).
Each pause is one interrupt call (see ``cairn.events.interrupts``).

When an invocation resumes, ``open_turn`` reads this agent's last turn from
that invocation's events only, and ``settle`` finishes what the answers allow:
an approved call runs (bound to the exact call that was approved, once), a
rejected one returns a rejection to the model, an in-doubt call runs again only
if its tool is idempotent or the caller said so. Nothing that has a result runs again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from google.genai import types

import cairn.telemetry as telemetry
from cairn.agents.callback_chain import notify_tool_cancelled, plugins_then_callbacks
from cairn.agents.callback_hook import CallbackHook
from cairn.agents.context import Context
from cairn.agents.credential_requests import (
    CredentialAnswer,
    accept_credential_answer,
    credential_request_args,
    obtain_credential,
)
from cairn.agents.invocation_context import InvocationContext
from cairn.auth import AuthConfig, AuthCredential, CredentialError, user_request
from cairn.events.event import Event
from cairn.events.event_actions import EventActions, ToolConfirmation
from cairn.events.interrupts import (
    AWAITING_CONFIRMATION,
    PROTOCOL_FUNCTIONS,
    REQUEST_CONFIRMATION_FUNCTION,
    REQUEST_CREDENTIAL_FUNCTION,
    RESOLVE_IN_DOUBT_FUNCTION,
    Interrupt,
    awaiting_confirmation,
    code_results,
    code_runs,
    describe,
    interrupt_calls,
    starts_invocation,
)
from cairn.tools.base_tool import BaseTool
from cairn.tools.function_tool import to_json_result
from cairn.tools.transfer_to_agent_tool import transfer_to_agent

if TYPE_CHECKING:
    from cairn.agents.base_agent import BaseAgent
    from cairn.agents.llm_agent import LlmAgent

logger = logging.getLogger(__name__)

_PENDING = object()
"""A call with no result yet: no function response is sent for it."""


@dataclasses.dataclass
class TurnResult:
    """What running (or settling) a turn's calls produced."""

    events: list[Event]
    """A function-response event and/or an interrupt event, in that order."""
    pending: set[str]
    """Ids of the turn's calls still without a result (the invocation pauses)."""


async def run_calls(
    agent: LlmAgent,
    ctx: InvocationContext,
    calls: Sequence[types.FunctionCall],
    tools: list[BaseTool],
    *,
    confirmations: dict[str, ToolConfirmation] | None = None,
    credential_answers: dict[str, CredentialAnswer] | None = None,
    given: dict[str, Any] | None = None,
) -> TurnResult:
    """Run ``calls`` concurrently (``given`` results are used instead of running).

    ``confirmations`` carries a human's answer for calls that asked for one,
    ``credential_answers`` the answers to calls' credential requests (by call id).
    """
    confirmations = confirmations or {}
    given = given or {}
    by_name = {tool.name: tool for tool in tools}
    to_run = [call for call in calls if call.id not in given]
    contexts = [
        Context(ctx, function_call_id=call.id, tool_confirmation=confirmations.get(call.id or ""))
        for call in to_run
    ]
    outcomes = await asyncio.gather(
        *(
            _run_one(agent, by_name.get(call.name or ""), call, context)
            for call, context in zip(to_run, contexts, strict=True)
        )
    )
    results = dict(given)
    for call, outcome in zip(to_run, outcomes, strict=True):
        results[call.id or ""] = outcome
    if credential_answers:
        await _run_with_credentials(
            agent, ctx, to_run, contexts, results, by_name, credential_answers
        )
    actions = EventActions()
    for context in contexts:
        _merge_actions(actions, context.actions)
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=call.id, name=call.name, response=to_json_result(results[call.id or ""])
            )
        )
        for call in calls
        if results.get(call.id or "", _PENDING) is not _PENDING
    ]
    by_id = {call.id: call for call in calls}
    # As ADK, a call waiting for a confirmation has a placeholder response, marked by its id
    # in the event's requested_tool_confirmations (``cairn.events.interrupts``): not a result.
    asked_for = {
        call_id: confirmation
        for call_id, confirmation in actions.requested_tool_confirmations.items()
        if call_id in by_id
    }
    actions.requested_tool_confirmations = asked_for
    pending = {call.id or "" for call in calls} - {
        p.function_response.id or "" for p in parts if p.function_response
    }
    pending |= set(asked_for)
    settled = any(p.function_response.id not in asked_for for p in parts if p.function_response)
    asked_auth = dict(actions.requested_auth_configs)
    actions.requested_auth_configs = {}
    events: list[Event] = []
    if parts or actions.state_delta:
        events.append(
            Event(
                invocation_id=ctx.invocation_id,
                author=agent.name,
                branch=ctx.branch,
                content=types.Content(role="user", parts=parts) if parts else None,
                actions=actions,
            )
        )
    if asked_for:
        request = interrupt_event(
            agent,
            ctx,
            REQUEST_CONFIRMATION_FUNCTION,
            [
                (by_id[call_id], {"toolConfirmation": _dump(confirmation)})
                for call_id, confirmation in asked_for.items()
            ],
        )
        if settled:
            # Results beside the pause: the model will summarize them once it resumes.
            actions.skip_summarization = None
            events.append(request)
        else:
            events.insert(0, request)
    if asked_auth:
        by_id = {call.id: call for call in calls}
        # What the user is shown, in the call and in ADK's field: no secret reaches the log.
        shown = {
            call_id: user_request(_auth_config(config))
            for call_id, config in asked_auth.items()
            if call_id in by_id
        }
        request = interrupt_event(
            agent,
            ctx,
            REQUEST_CREDENTIAL_FUNCTION,
            [
                (by_id[call_id], _credential_request(by_id[call_id], asked))
                for call_id, asked in shown.items()
            ],
        )
        request.actions.requested_auth_configs = shown
        events.append(request)
    return TurnResult(events, pending)


async def _run_with_credentials(
    agent: LlmAgent,
    ctx: InvocationContext,
    calls: list[types.FunctionCall],
    contexts: list[Context],
    results: dict[str, Any],
    by_name: dict[str, BaseTool],
    answers: dict[str, CredentialAnswer],
) -> None:
    """Calls that asked again for a credential whose answer is here: complete the answer
    with the auth config the tool just handed over (its secrets are the tool's own, in
    this process), save it, and run the call once more with the credential."""
    again: list[int] = []
    for index, (call, context) in enumerate(zip(calls, contexts, strict=True)):
        call_id = call.id or ""
        answer = answers.get(call_id)
        asked = context.actions.requested_auth_configs.get(call_id)
        if answer is None or asked is None:
            continue
        tool_config = _auth_config(asked)
        if tool_config.key != answer.config.key:
            continue  # it asks for another credential: a new request
        outcome = await _obtain_credential(ctx, answer, tool_config)
        if outcome is None:
            continue  # its secret died with the process that got it: ask again
        del context.actions.requested_auth_configs[call_id]
        if isinstance(outcome, dict):
            results[call_id] = outcome
            continue
        contexts[index] = Context(
            ctx,
            function_call_id=call.id,
            tool_confirmation=context.tool_confirmation,
            auth_responses={tool_config.key: outcome},
        )
        again.append(index)
    outcomes = await asyncio.gather(
        *(_run_one(agent, by_name.get(calls[i].name or ""), calls[i], contexts[i]) for i in again)
    )
    for index, outcome in zip(again, outcomes, strict=True):
        results[calls[index].id or ""] = outcome


async def _run_one(
    agent: LlmAgent, tool: BaseTool | None, call: types.FunctionCall, context: Context
) -> Any:
    args = dict(call.args or {})
    if getattr(tool, "func", None) is transfer_to_agent:  # cairn's own, not a user's namesake
        names = [a.name for a in agent.transfer_targets()]
        if args.get("agent_name") not in names:
            return {
                "error": f"cannot transfer to {args.get('agent_name')!r}; agent "
                f"{agent.name!r} can transfer to: {', '.join(names)}"
            }
    if tool is None:
        return await _answer_unknown_tool(agent, call, args, context)
    answer = await plugins_then_callbacks(
        context.invocation_context,
        CallbackHook.BEFORE_TOOL,
        agent.before_tool_callback,
        tool=tool,
        args=args,
        tool_context=context,
    )
    if answer is None:
        answer = await _gate(tool, args, context)
    if answer is None:
        try:
            with telemetry.tool_span(context.invocation_context, tool.name, call.id) as span:
                telemetry.record_tool_arguments(span, args)
                answer = await tool.run_async(args=args, tool_context=context)
                telemetry.record_tool_result(span, answer)
        except asyncio.CancelledError as cancelled:
            await notify_tool_cancelled(
                context.invocation_context,
                agent.on_tool_error_callback,
                tool=tool,
                args=args,
                tool_context=context,
                error=cancelled,
            )
            raise
        except Exception as error:
            answer = await plugins_then_callbacks(
                context.invocation_context,
                CallbackHook.ON_TOOL_ERROR,
                agent.on_tool_error_callback,
                tool=tool,
                args=args,
                tool_context=context,
                error=error,
            )
            if answer is None:
                # cairn's own answer (ADK raises): no after_tool_callback, as for no tool.
                logger.exception("tool %r of agent %r failed", tool.name, agent.name)
                return {"error": f"tool {tool.name!r} failed: {type(error).__name__}: {error}"}
        if call.id in context.actions.requested_auth_configs:
            return _PENDING  # the tool asked for a credential
        if answer is None and tool.is_long_running:
            return _PENDING
    # As ADK: after_tool_callback sees every result, a before_tool_callback's, an
    # on_tool_error_callback's and a confirmation placeholder included.
    replaced = await plugins_then_callbacks(
        context.invocation_context,
        CallbackHook.AFTER_TOOL,
        agent.after_tool_callback,
        tool=tool,
        args=args,
        tool_context=context,
        tool_response=answer,
    )
    return answer if replaced is None else replaced


async def _answer_unknown_tool(
    agent: LlmAgent, call: types.FunctionCall, args: dict[str, Any], context: Context
) -> Any:
    """A call naming no tool of the agent: as in ADK, a before_tool_callback may answer it,
    then an on_tool_error_callback (given a ValueError that names the missing tool); else
    the answer lists the tools there are. No after_tool_callback: no tool ran."""
    available = ", ".join(sorted(agent.tool_names()))
    missing = _MissingTool(name=call.name or "", description="")
    answer = await plugins_then_callbacks(
        context.invocation_context,
        CallbackHook.BEFORE_TOOL,
        agent.before_tool_callback,
        tool=missing,
        args=args,
        tool_context=context,
    )
    if answer is None:
        error = ValueError(
            f"there is no tool named {call.name!r} in agent {agent.name!r}; "
            f"available tools: {available}"
        )
        answer = await plugins_then_callbacks(
            context.invocation_context,
            CallbackHook.ON_TOOL_ERROR,
            agent.on_tool_error_callback,
            tool=missing,
            args=args,
            tool_context=context,
            error=error,
        )
    if answer is None:
        return {"error": f"there is no tool named {call.name!r}; available tools: {available}"}
    return answer


class _MissingTool(BaseTool):
    """What callbacks are given as the tool of a call naming no tool (its name is the call's)."""

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        raise ValueError(f"there is no tool named {self.name!r}")


async def _gate(tool: BaseTool, args: dict[str, Any], context: Context) -> Any:
    """What a call of a tool that needs confirmation gets instead of running: a placeholder
    while no confirmation is given (the request is recorded), a refusal once rejected; None:
    it may run (it needs none, or it was approved)."""
    if not await tool.check_require_confirmation(args, context):
        return None
    confirmation = context.tool_confirmation
    if confirmation is None:
        context.request_confirmation(
            hint=f"Approve or reject the call {tool.name}({render(args)}).",
        )
        # A pause, not a result for the model to summarize (the call stays pending).
        context.actions.skip_summarization = True
        return dict(AWAITING_CONFIRMATION)
    if not confirmation.confirmed:
        return {"error": "This tool call is rejected."}
    return None


# -- resuming ------------------------------------------------------------------------------
@dataclasses.dataclass
class OpenTurn:
    """This agent's last model turn in the invocation, as the log records it."""

    calls: list[types.FunctionCall]
    """The turn's calls (delegations to sub-agents excluded) with no result yet."""
    answers: dict[str, Any]
    """Function responses given after the turn, by call id (interrupt answers included)."""
    interrupts: dict[str, Interrupt]
    """The latest interrupt about each call (confirmation, in doubt), by the call's id."""


@dataclasses.dataclass
class OpenCodeRun:
    """A code run of this agent whose result is not in the log (its process stopped)."""

    code: types.ExecutableCode
    answers: dict[str, Any]
    interrupt: Interrupt | None
    """The in-doubt interrupt about it, once asked."""


@dataclasses.dataclass
class ResumePoint:
    finished: bool = False
    """The agent already gave its final answer in this invocation."""
    turn: OpenTurn | None = None
    code_run: OpenCodeRun | None = None


def resume_point(ctx: InvocationContext, agent_name: str, delegates: set[str]) -> ResumePoint:
    """Where this agent stands in the invocation, from that invocation's events only.

    Walks back from the newest event to this agent's last model turn (or to the
    message that started the invocation).
    """
    answers: dict[str, Any] = {}
    interrupts: dict[str, Interrupt] = {}
    user_answers: set[str] = set()
    code_done: set[str] = set()
    # Under a shell agent, only this run's events (a loop's earlier rounds are done).
    run = ctx.session.events[ctx.run_start :] if ctx.run_start else ctx.session.events
    newest = run[-1] if run else None
    if (
        newest is not None
        and newest.invocation_id == ctx.invocation_id
        and newest.branch == ctx.branch
        and newest.author != agent_name
        and starts_invocation(newest)
    ):
        return ResumePoint()  # a new invocation, its message the last event: nothing ran yet
    for event in reversed(run):
        if event.invocation_id != ctx.invocation_id:
            continue
        if event.branch != ctx.branch:
            if starts_invocation(event):
                break
            continue
        held = awaiting_confirmation(event)
        code_done |= code_results(event)
        for response in event.get_function_responses():
            if response.id and response.id not in answers and response.id not in held:
                answers[response.id] = response.response
        if held and all(r.id in held for r in event.get_function_responses()):
            continue  # placeholders of calls waiting for a confirmation: no result, no answer
        if event.author != agent_name:
            if starts_invocation(event):
                break
            if event.author == "user":
                user_answers.update(r.id for r in event.get_function_responses() if r.id)
            continue
        calls = event.get_function_calls()
        protocol = [call for call in calls if call.name in PROTOCOL_FUNCTIONS]
        if protocol:
            for call in interrupt_calls(event):
                interrupt = describe(event, call)
                about = interrupt.function_call
                if about is not None and about.id and about.id not in interrupts:
                    interrupts[about.id] = interrupt
            continue
        runs = code_runs(event)
        if runs:
            unfinished = [code for code in runs if code.id not in code_done]
            if not unfinished:
                return ResumePoint()  # its result is in: the model goes on from it
            code = unfinished[-1]
            return ResumePoint(code_run=OpenCodeRun(code, answers, interrupts.get(code.id or "")))
        if calls:
            open_calls = [
                call for call in calls if call.id not in answers and call.name not in delegates
            ]
            if not open_calls:
                return ResumePoint()
            return ResumePoint(turn=OpenTurn(open_calls, answers, interrupts))
        if event.content is not None and event.is_final_response() and not event.partial:
            # The final answer to a long-running call of this agent came after its reply (the
            # call had an intermediate result): it goes on with a new model turn, as in ADK.
            late = user_answers and _answers_own_call(run, event, ctx, agent_name, user_answers)
            return ResumePoint(finished=not late)
    return ResumePoint()


def _answers_own_call(
    run: Sequence[Event], final: Event, ctx: InvocationContext, agent_name: str, ids: set[str]
) -> bool:
    """Whether ``ids`` (the user's responses after ``final``) include a long-running call
    this agent made before ``final`` in this invocation, on its branch."""
    at = next(i for i in range(len(run) - 1, -1, -1) if run[i] is final)
    for event in reversed(run[:at]):
        if event.invocation_id != ctx.invocation_id:
            continue
        if starts_invocation(event):
            return False
        own = event.author == agent_name and event.branch == ctx.branch
        if own and ids & (event.long_running_tool_ids or set()):
            return True
    return False


async def settle(
    agent: LlmAgent, ctx: InvocationContext, turn: OpenTurn, tools: list[BaseTool]
) -> TurnResult:
    """Finish what the answers allow of a resumed turn; ask about calls found in doubt."""
    by_name = {tool.name: tool for tool in tools}
    confirmations: dict[str, ToolConfirmation] = {}
    credential_answers: dict[str, CredentialAnswer] = {}
    given: dict[str, Any] = {}
    runnable: list[types.FunctionCall] = []
    in_doubt: list[types.FunctionCall] = []
    waiting: set[str] = set()
    for call in turn.calls:
        call_id = call.id or ""
        tool = by_name.get(call.name or "")
        interrupt = turn.interrupts.get(call_id)
        if interrupt is not None:
            if interrupt.id not in turn.answers:
                waiting.add(call_id)
                continue
            answer = turn.answers[interrupt.id] or {}
            if interrupt.kind == "confirmation":
                hint = interrupt.message or ""
                confirmations[call_id] = ToolConfirmation(
                    hint=hint,
                    confirmed=bool(answer.get("confirmed")),
                    payload=answer.get("payload"),
                )
                runnable.append(call)
            elif interrupt.kind == "credential":
                outcome = _accept_answer(ctx, interrupt, answer)
                if isinstance(outcome, CredentialAnswer):
                    credential_answers[call_id] = outcome
                    runnable.append(call)
                else:
                    given[call_id] = outcome
            elif interrupt.kind == "in_doubt":
                if answer.get("rerun") is True:
                    runnable.append(call)
                else:
                    given[call_id] = answer.get("result")
            else:
                runnable.append(call)
        elif tool is not None and tool.is_long_running:
            waiting.add(call_id)  # its own answer has not come yet
        elif tool is not None and tool.idempotent:
            runnable.append(call)  # in doubt, but safe to run again
        else:
            in_doubt.append(call)
    result = TurnResult([], set())
    if runnable or given:
        result = await run_calls(
            agent,
            ctx,
            runnable + [c for c in turn.calls if c.id in given],
            tools,
            confirmations=confirmations,
            credential_answers=credential_answers,
            given=given,
        )
    if in_doubt:
        result.events.append(
            interrupt_event(
                agent,
                ctx,
                RESOLVE_IN_DOUBT_FUNCTION,
                [
                    (
                        call,
                        {
                            "message": f"The call {call.name}({render(call.args or {})}) "
                            "started but its result was never recorded (the process running "
                            "it stopped). It may or may not have taken effect. Answer "
                            '{"rerun": true} to run it again, or {"result": ...} with what '
                            "it returned.",
                        },
                    )
                    for call in in_doubt
                ],
            )
        )
    result.pending |= waiting | {call.id or "" for call in in_doubt}
    return result


def _accept_answer(
    ctx: InvocationContext, interrupt: Interrupt, stored: Any
) -> CredentialAnswer | dict[str, Any]:
    """The user's answer merged into the request it answers, or an error result for the
    model (``cairn.agents.credential_requests``)."""
    try:
        return accept_credential_answer(ctx, interrupt.id, interrupt.args, stored)
    except CredentialError as error:
        return {"error": f"the credential could not be obtained: {error}"}


async def _obtain_credential(
    ctx: InvocationContext, answer: CredentialAnswer, tool_config: AuthConfig
) -> AuthCredential | dict[str, Any] | None:
    """The credential ``answer`` leads to with the tool's own client, saved; an error result
    for the model if that failed; None if the user is to be asked again."""
    try:
        return await obtain_credential(ctx, answer, tool_config)
    except CredentialError as error:
        return {"error": f"the credential could not be obtained: {error}"}


def _credential_request(call: types.FunctionCall, asked: AuthConfig) -> dict[str, Any]:
    return credential_request_args(call.id or "", f"The call {call.name}(...)", asked)


def _auth_config(config: Any) -> AuthConfig:
    return config if isinstance(config, AuthConfig) else AuthConfig.model_validate(config)


# -- helpers --------------------------------------------------------------------------------
def interrupt_event(
    agent: BaseAgent,
    ctx: InvocationContext,
    function: str,
    about: list[tuple[types.FunctionCall, dict[str, Any]]],
) -> Event:
    """One event with an interrupt call per (call, extra args); each id is long-running."""
    parts = []
    for call, extra in about:
        original = {"id": call.id, "name": call.name, "args": dict(call.args or {})}
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=f"{function.rsplit('_', 1)[-1]}-{uuid.uuid4()}",
                    name=function,
                    args={"originalFunctionCall": original, **extra},
                )
            )
        )
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=types.Content(role="model", parts=parts),
        long_running_tool_ids={p.function_call.id for p in parts if p.function_call},
    )


def _dump(confirmation: ToolConfirmation) -> dict[str, Any]:
    return confirmation.model_dump(by_alias=True, exclude_none=True, mode="json")


def render(args: dict[str, Any]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in args.items())


def _merge_actions(into: EventActions, other: EventActions) -> None:
    into.state_delta.update(other.state_delta)
    if into.removed_state_keys or other.removed_state_keys:
        removed = [k for k in into.removed_state_keys or () if k not in other.state_delta]
        for key in other.removed_state_keys or ():
            into.state_delta.pop(key, None)
            if key not in removed:
                removed.append(key)
        into.removed_state_keys = removed or None
    into.artifact_delta.update(other.artifact_delta)
    into.requested_auth_configs.update(other.requested_auth_configs)
    into.requested_tool_confirmations.update(other.requested_tool_confirmations)
    for name in (
        "transfer_to_agent",
        "escalate",
        "skip_summarization",
        "transfer_reason",
        "end_of_agent",
        "set_model_response",
    ):
        value = getattr(other, name)
        if value:
            setattr(into, name, value)
