"""Check a message's function responses against the session's pending interrupts."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from google.genai import types
from pydantic import ValidationError

from cairn.auth import AuthConfig, CredentialError, accept_auth_response, without_secrets
from cairn.errors import InterruptNotPendingError, InvalidAnswerError
from cairn.events.event import Event
from cairn.events.interrupts import (
    Interrupt,
    describe,
    needs_users_answer,
    pending_interrupts,
    schema_problem,
    unwrap_answer,
)


@dataclasses.dataclass
class Answers:
    """What a message answers: interrupts of one invocation."""

    invocation_id: str
    interrupts: list[Interrupt]

    def named(self, message: types.Content) -> types.Content:
        """``message`` with each response named after the call it answers (ids decide)."""
        names = {interrupt.id: interrupt.name for interrupt in self.interrupts}
        parts = [
            part.model_copy(
                update={
                    "function_response": part.function_response.model_copy(
                        update={"name": names[part.function_response.id or ""]}
                    )
                }
            )
            if part.function_response is not None
            else part
            for part in message.parts or []
        ]
        return message.model_copy(update={"parts": parts})

    def stored_apart(self, message: types.Content) -> tuple[types.Content, dict[str, Any]]:
        """``message`` as it is stored, its credential answers without their secrets (an
        API key, tokens, a client secret; ``without_secrets``), and those answers as sent,
        by interrupt id, which only this process keeps, to complete them."""
        credential_ids = {i.id for i in self.interrupts if i.kind == "credential"}
        whole: dict[str, Any] = {}
        parts = []
        for part in message.parts or []:
            response = part.function_response
            if response is None or response.id not in credential_ids:
                parts.append(part)
                continue
            whole[response.id or ""] = response.response
            given = AuthConfig.model_validate(response.response or {})
            named = "credential_key" in given.model_fields_set
            stored = without_secrets(given).model_dump(
                mode="json", exclude_none=True, exclude=None if named else {"credential_key"}
            )
            parts.append(
                part.model_copy(
                    update={"function_response": response.model_copy(update={"response": stored})}
                )
            )
        return message.model_copy(update={"parts": parts}), whole

    @property
    def branch(self) -> str | None:
        """The branch the answered calls were made on, if they share one."""
        branches = {interrupt.branch for interrupt in self.interrupts}
        return branches.pop() if len(branches) == 1 else None


def responses_in(message: types.Content | None) -> list[types.FunctionResponse]:
    if message is None or not message.parts:
        return []
    return [p.function_response for p in message.parts if p.function_response is not None]


def with_matched_ids(events: Sequence[Event], message: types.Content) -> types.Content:
    """``message`` with each function response that has no id given the id of the oldest
    pending call of the same name not answered otherwise in it (ADK matches such answers
    by name, in call order). A response no pending call matches keeps no id (and is
    refused by ``check_answers``)."""
    parts = message.parts or []
    if all(p.function_response is None or p.function_response.id for p in parts):
        return message
    given = {p.function_response.id for p in parts if p.function_response is not None}
    waiting = [
        interrupt
        for interrupt in pending_interrupts(events)
        if interrupt.kind != "interrupted" and interrupt.id not in given
    ]
    matched = []
    for part in parts:
        response = part.function_response
        if response is None or response.id:
            matched.append(part)
            continue
        interrupt = next((i for i in waiting if i.name == response.name), None)
        if interrupt is None:
            matched.append(part)
            continue
        waiting.remove(interrupt)
        matched.append(
            part.model_copy(
                update={"function_response": response.model_copy(update={"id": interrupt.id})}
            )
        )
    return message.model_copy(update={"parts": matched})


def check_answers(
    events: Sequence[Event],
    responses: list[types.FunctionResponse],
    *,
    app_name: str,
    user_id: str,
    session_id: str,
) -> Answers:
    """The interrupts ``responses`` answer, or a typed error (nothing is stored on error).

    Walks back from the newest event only as far as the oldest answered call.
    """
    where = {"app_name": app_name, "user_id": user_id, "session_id": session_id}

    def refuse(interrupt_id: str, reason: str) -> InterruptNotPendingError:
        pending = [i.id for i in pending_interrupts(events)]
        return InterruptNotPendingError(
            **where, interrupt_id=interrupt_id, reason=reason, pending=pending
        )

    wanted: dict[str, types.FunctionResponse] = {}
    for response in responses:
        if not response.id:
            raise refuse(
                str(response.name),
                f"it has no id, and no call of {response.name!r} is waiting for an answer (a "
                "FunctionResponse without an id answers the oldest pending call of its name); "
                "give the id of the call it answers",
            )
        wanted[response.id] = response
    found: dict[str, Interrupt] = {}
    # (invocation, call id) answered by a response newer than the walk has reached: an answer
    # belongs to the invocation it resumed, so an older invocation may still wait under that id.
    answered_later: set[tuple[str, str]] = set()
    answered_by_user_later: set[tuple[str, str]] = set()  # what closes a long-running call
    refusals: dict[str, str] = {}  # why the newest call with a wanted id takes no answer
    for event in reversed(events):
        for call in event.get_function_calls():
            if not call.id or call.id not in wanted or call.id in found:
                continue
            answered = (event.invocation_id, call.id) in (
                answered_by_user_later if needs_users_answer(call.name) else answered_later
            )
            if call.id not in (event.long_running_tool_ids or set()):
                reason = (
                    f"it is an ordinary call of {call.name!r}, which got its result when it "
                    "ran; only paused calls take answers"
                    if answered
                    else f"its invocation {event.invocation_id!r} stopped while {call.name!r} "
                    "ran, so whether it took effect is unknown; continue that invocation "
                    f"with run_async(invocation_id={event.invocation_id!r}) to re-run it or "
                    "answer with its result"
                )
            elif answered:
                reason = "it has been answered already (an answer is used once)"
            else:
                found[call.id] = describe(event, call)
                continue
            refusals.setdefault(call.id, reason)
        if len(found) == len(wanted):
            break
        newer = {(event.invocation_id, r.id) for r in event.get_function_responses() if r.id}
        answered_later |= newer
        if event.author == "user":
            answered_by_user_later |= newer
    for interrupt_id in wanted:
        if interrupt_id not in found:
            reason = refusals.get(interrupt_id, "no call with this id was made in this session")
            raise refuse(interrupt_id, reason)
    invocations = {interrupt.invocation_id for interrupt in found.values()}
    if len(invocations) > 1:
        raise refuse(
            next(iter(wanted)),
            f"one message may answer interrupts of one invocation; these belong to "
            f"{sorted(invocations)}. Send one message per invocation",
        )
    for interrupt_id, response in wanted.items():
        problem = shape_problem(found[interrupt_id], response.response)
        if problem is not None:
            raise InvalidAnswerError(**where, interrupt_id=interrupt_id, reason=problem)
    return Answers(invocation_id=invocations.pop(), interrupts=list(found.values()))


def shape_problem(interrupt: Interrupt, response: Any) -> str | None:
    """Why ``response`` cannot answer ``interrupt`` (None if it can)."""
    if interrupt.kind == "input":
        problem = schema_problem(interrupt.response_schema, unwrap_answer(response))
        if problem is None:
            return None
        return f"it does not match the request's response_schema: {problem}"
    if interrupt.kind == "confirmation":
        if not isinstance(response, dict) or not isinstance(response.get("confirmed"), bool):
            return (
                'a confirmation is answered with {"confirmed": true or false, "payload": ...}; '
                f"got {response!r}"
            )
        return _other_call(interrupt, response)
    if interrupt.kind == "in_doubt":
        if not isinstance(response, dict) or (
            response.get("rerun") is not True and "result" not in response
        ):
            return (
                'an in-doubt tool call is answered with {"rerun": true} to run it again or '
                f'{{"result": ...}} to record what it returned; got {response!r}'
            )
        return _other_call(interrupt, response)
    if interrupt.kind == "credential" and isinstance(response, dict):
        try:
            requested = AuthConfig.model_validate(interrupt.args.get("authConfig") or {})
            accept_auth_response(requested, response)
        except (CredentialError, ValidationError) as error:
            return f"it is not a usable answer to the credential request: {error}"
        return None
    if interrupt.kind == "credential":
        return (
            f"a credential request is answered with its auth config (an object); got {response!r}"
        )
    return None


def _other_call(interrupt: Interrupt, response: dict[str, Any]) -> str | None:
    """An answer that names the call it approves must name exactly the pending one."""
    named = response.get("originalFunctionCall", response.get("functionCall"))
    if named is None or interrupt.function_call is None:
        return None
    pending = interrupt.function_call
    if not isinstance(named, dict):
        return f"originalFunctionCall must be an object; got {named!r}"
    checks = (("id", pending.id), ("name", pending.name), ("args", pending.args or {}))
    for field, expected in checks:
        if field in named and (named[field] or ({} if field == "args" else None)) != expected:
            return (
                f"it is for {field} {named[field]!r}, but the pending call is "
                f"{pending.name}({pending.args or {}}) with id {pending.id!r}; an approval "
                "holds only for the exact call it was asked for"
            )
    return None
