"""ToolCallIntegrityPlugin: a tool runs only for a function call whose stored copy is signed.

On resume a call recorded in the session runs (a confirmed call, a call whose credential
came). Whoever can write to the session store could change its arguments first. This
plugin stamps every function call with an HMAC of the call and where it was made (session,
invocation, branch, author) before its event is stored, checks every stamp in the session
before each run, and lets a tool run only when its call's stamp verifies and its
arguments are the stored ones. Without the key, a changed call cannot be re-stamped.

Register it first among the plugins: a later plugin's ``on_event_callback`` must not
change function calls or replace ``custom_metadata``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Sequence
from typing import Any

from google.genai import types

from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.plugins.base_plugin import BasePlugin
from cairn.sessions.session import Session
from cairn.tools.base_tool import BaseTool

logger = logging.getLogger(__name__)

STAMPS_KEY = "__adk_internal_fc_hmac"
"""The ``custom_metadata`` key holding ``{function_call_id: stamp}`` (ADK's key)."""
RESTORED_EVENT_KEY = "__adk_internal_restored_event"
"""Marks an event copied in from elsewhere: kept as history, its calls never run."""
_STAMP_PREFIX = "v1:"


class ToolCallIntegrityError(ValueError):
    """A function call in the session failed its integrity check (changed, unsigned, or
    signed with another key). The Runner's plugin manager raises it as a ``RuntimeError``
    whose ``__cause__`` it is."""


class ToolCallIntegrityPlugin(BasePlugin):
    """Signs function calls as they are stored and verifies them before they run.

    ``secret_key``: the HMAC key, or a list of keys while rotating (the first signs, any
    verifies). ``allow_unstamped_calls``: log, rather than refuse, calls that have no stamp
    (stored before the plugin was added); a wrong stamp is always refused.
    """

    def __init__(
        self,
        secret_key: bytes | Sequence[bytes],
        *,
        allow_unstamped_calls: bool = False,
        name: str = "tool_call_integrity",
    ) -> None:
        super().__init__(name)
        keys = [secret_key] if isinstance(secret_key, bytes) else list(secret_key)
        if not keys or not all(isinstance(key, bytes) and key for key in keys):
            raise ValueError(
                "secret_key must be non-empty bytes or a non-empty list of them, e.g. "
                "secret_key=os.environb[b'TOOL_CALL_KEY']"
            )
        self._keys = keys
        self._allow_unstamped_calls = allow_unstamped_calls

    @staticmethod
    def prepare_restored_event(event: Event) -> Event:
        """A copy of ``event`` to put in another session: its stamps dropped and marked
        restored, so the history verifies; its calls never run."""
        copy = event.model_copy(deep=True)
        metadata = {
            key: value
            for key, value in (copy.custom_metadata or {}).items()
            if not key.startswith("__adk_internal_")
        }
        metadata[RESTORED_EVENT_KEY] = True
        copy.custom_metadata = metadata
        return copy

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        calls = [call for call in event.get_function_calls() if call.id]
        if not event.partial:
            ids = [call.id for call in calls]
            repeated = sorted({i for i in ids if ids.count(i) > 1 and i})
            if repeated:
                raise ToolCallIntegrityError(
                    f"event {event.id!r} has two function calls with id {repeated[0]!r}"
                )
        session = invocation_context.session
        stamps = {call.id: self._sign(_payload(session, event, call)) for call in calls if call.id}
        if stamps:
            event.custom_metadata = {**(event.custom_metadata or {}), STAMPS_KEY: stamps}
        return None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        session = invocation_context.session
        for event in session.events:
            calls = event.get_function_calls()
            if not calls or _restored(event):
                continue
            stamps = _stamps(event)
            verified: set[str] = set()
            for call in calls:
                if not call.id:
                    continue
                stamp = stamps.get(call.id)
                if stamp is None:
                    self._unstamped(call.name, call.id)
                    continue
                if call.id in verified:
                    raise ToolCallIntegrityError(
                        f"event {event.id!r} has two function calls with id {call.id!r}"
                    )
                if not self._verify(_payload(session, event, call), stamp):
                    raise ToolCallIntegrityError(
                        f"the {call.name} call {call.id!r} in session {session.id!r} does not "
                        "match its integrity stamp: it was changed after it was stored"
                    )
                verified.add(call.id)
            unmatched = sorted(set(stamps) - verified)
            if unmatched:
                raise ToolCallIntegrityError(
                    f"event {event.id!r} has integrity stamps for calls it does not have: "
                    f"{unmatched}"
                )
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        call_id = tool_context.function_call_id
        if not call_id:
            raise ToolCallIntegrityError(
                f"the {tool.name} call has no id, so its integrity cannot be checked"
            )
        session = tool_context.session
        stored: list[tuple[Event, types.FunctionCall]] = []
        restored = False
        for event in session.events:
            for call in event.get_function_calls():
                if call.id != call_id:
                    continue
                if _restored(event):
                    restored = True
                else:
                    stored.append((event, call))
        if not stored:
            if restored:
                raise ToolCallIntegrityError(
                    f"the {tool.name} call {call_id!r} comes from restored history; it cannot run"
                )
            self._unstamped(tool.name, call_id)
            return None
        trusted: list[types.FunctionCall] = []
        for event, call in stored:
            stamp = _stamps(event).get(call_id)
            if stamp is None:
                self._unstamped(tool.name, call_id)
            elif not self._verify(_payload(session, event, call), stamp):
                raise ToolCallIntegrityError(
                    f"the {tool.name} call {call_id!r} does not match its integrity stamp"
                )
            trusted.append(call)
        running = _canonical(_json_args(stored[0][1].model_copy(update={"args": tool_args})))
        if not any(
            call.name == tool.name and _canonical(_json_args(call)) == running for call in trusted
        ):
            raise ToolCallIntegrityError(
                f"the {tool.name} call {call_id!r} is about to run with arguments other than "
                "its stored call's"
            )
        return None

    def _sign(self, payload: bytes) -> str:
        return _STAMP_PREFIX + hmac.new(self._keys[0], payload, hashlib.sha256).hexdigest()

    def _verify(self, payload: bytes, stamp: str) -> bool:
        if not stamp.startswith(_STAMP_PREFIX):
            return False
        digest = stamp[len(_STAMP_PREFIX) :]
        return any(
            hmac.compare_digest(hmac.new(key, payload, hashlib.sha256).hexdigest(), digest)
            for key in self._keys
        )

    def _unstamped(self, name: str | None, call_id: str | None) -> None:
        if not self._allow_unstamped_calls:
            raise ToolCallIntegrityError(
                f"the {name} call {call_id!r} has no integrity stamp (pass "
                "allow_unstamped_calls=True to accept calls stored before the plugin was added)"
            )
        logger.warning("the %s call %r has no integrity stamp", name, call_id)


def _normalize(value: Any) -> Any:
    """Whole floats as ints: a store may give ``1`` back as ``1.0``."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _normalize(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalize(item) for item in value]
    return value


def _canonical(value: Any) -> str:
    return json.dumps(_normalize(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _json_args(call: types.FunctionCall) -> dict[str, Any]:
    args = call.model_dump(mode="json", include={"args"}).get("args")
    return args or {}


def _payload(session: Session, event: Event, call: types.FunctionCall) -> bytes:
    return _canonical(
        {
            "app_name": session.app_name,
            "user_id": session.user_id,
            "session_id": session.id,
            "invocation_id": event.invocation_id,
            "branch": event.branch,
            "author": event.author,
            "name": call.name,
            "id": call.id,
            "args": _json_args(call),
        }
    ).encode()


def _restored(event: Event) -> bool:
    return bool((event.custom_metadata or {}).get(RESTORED_EVENT_KEY))


def _stamps(event: Event) -> dict[str, str]:
    stamps = (event.custom_metadata or {}).get(STAMPS_KEY)
    if stamps is None:
        return {}
    if not isinstance(stamps, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in stamps.items()
    ):
        raise ToolCallIntegrityError(f"event {event.id!r} has a malformed integrity stamp")
    return stamps
