"""Typed errors raised by cairn.

Every error names the object it is about (app, user, session, invocation,
event, key) and says how to fix the problem, so that a log line alone is
enough to act on.
"""

from __future__ import annotations

import enum


class CairnError(Exception):
    """Base class of every error cairn raises on purpose."""

    @property
    def message(self) -> str:
        """The error's text (ADK's errors carry it as ``message`` too)."""
        return str(self.args[0]) if self.args else ""


class NotFoundError(CairnError):
    """Something that was asked for does not exist (ADK's ``NotFoundError``)."""

    def __init__(self, message: str = "The requested item was not found.") -> None:
        super().__init__(message)


class InputValidationError(CairnError, ValueError):
    """Input that fails validation (ADK's ``InputValidationError``; a ``ValueError``)."""

    def __init__(self, message: str = "Invalid input.") -> None:
        super().__init__(message)


class ToolErrorType(enum.StrEnum):
    """The semantic kind of a tool failure, as HTTP names it (OpenTelemetry's ``error.type``)."""

    BAD_REQUEST = "BAD_REQUEST"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"
    BAD_GATEWAY = "BAD_GATEWAY"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    GATEWAY_TIMEOUT = "GATEWAY_TIMEOUT"


class ToolExecutionError(CairnError):
    """A tool's own failure, raised by tool code; ``error_type`` says what kind (a
    ``ToolErrorType`` value or any string, e.g. ``"500"``). The tool call's result is an
    error the model sees, as for any exception a tool raises."""

    def __init__(self, message: str, error_type: ToolErrorType | str | None = None) -> None:
        self.error_type: str | None = (
            error_type.value if isinstance(error_type, ToolErrorType) else error_type
        )
        super().__init__(message)


def _session_ref(app_name: str, user_id: str, session_id: str) -> str:
    return f"session {session_id!r} of user {user_id!r} in app {app_name!r}"


class _AboutSession:
    """Mixin: the error concerns one session, named in ``app_name``, ``user_id``, ``session_id``."""

    def _name_session(self, app_name: str, user_id: str, session_id: str) -> str:
        self.app_name = app_name
        self.user_id = user_id
        self.session_id = session_id
        return _session_ref(app_name, user_id, session_id)

    def _own_message(
        self, message: str | None, app_name: str, user_id: str, session_id: str
    ) -> str | None:
        """Record the session; return the caller's own (ADK-style) message, if it gave one
        instead of cairn's text."""
        self._name_session(app_name, user_id, session_id)
        return message


class SessionNotFoundError(_AboutSession, NotFoundError, ValueError):
    """The named session does not exist (or was deleted).

    Like ADK's, a ``ValueError``; ``SessionNotFoundError("text")`` as ADK code raises it works.
    """

    def __init__(
        self,
        message: str | None = None,
        *,
        app_name: str = "",
        user_id: str = "",
        session_id: str = "",
        hint: str = "",
    ) -> None:
        own = self._own_message(message, app_name, user_id, session_id)
        if own is not None:
            super().__init__(own)
            return
        session = _session_ref(app_name, user_id, session_id)
        fix = hint or (
            "Create it first with create_session(...), or pass auto_create_session=True "
            "to the Runner to create missing sessions on demand."
        )
        super().__init__(f"{session} does not exist. {fix}")


class AlreadyExistsError(CairnError):
    """Something with this identity is already stored (ADK's ``AlreadyExistsError``)."""

    def __init__(self, message: str = "The resource already exists.") -> None:
        super().__init__(message)


class SessionAlreadyExistsError(_AboutSession, AlreadyExistsError, ValueError):
    """`create_session` was given the id of a session that already exists."""

    def __init__(self, *, app_name: str, user_id: str, session_id: str) -> None:
        session = self._name_session(app_name, user_id, session_id)
        super().__init__(
            f"{session} already exists. "
            "Load it with get_session(...), choose another session_id, or omit "
            "session_id to get a generated one."
        )


class DuplicateEventError(_AboutSession, AlreadyExistsError, ValueError):
    """An event with this id is already stored in the session with different content."""

    def __init__(self, *, app_name: str, user_id: str, session_id: str, event_id: str) -> None:
        session = self._name_session(app_name, user_id, session_id)
        self.event_id = event_id
        super().__init__(
            f"event {event_id!r} is already stored in "
            f"{session} with different content. "
            "Events are immutable once appended: create a new Event "
            "(it gets a fresh id) instead of re-appending a modified one."
        )


class StaleSessionError(_AboutSession, CairnError, ValueError):
    """The caller's Session object is older than what is stored.

    Detected by the session's integer revision, never by comparing timestamps.
    Like ADK's, a ``ValueError``; ``StaleSessionError("text")`` works as in ADK.
    """

    def __init__(
        self,
        message: str | None = None,
        *,
        app_name: str = "",
        user_id: str = "",
        session_id: str = "",
        held_revision: int = -1,
        stored_revision: int = -1,
    ) -> None:
        self.held_revision = held_revision
        self.stored_revision = stored_revision
        own = self._own_message(message, app_name, user_id, session_id)
        if own is not None:
            super().__init__(own)
            return
        session = _session_ref(app_name, user_id, session_id)
        super().__init__(
            f"{session} was modified in storage by another writer: "
            f"you hold revision {held_revision}, the store has revision {stored_revision}. "
            "Nothing was stored. Reload it with get_session(...) and decide again."
        )


class SessionBusyError(_AboutSession, CairnError, RuntimeError):
    """Another invocation is already running on this session (or others wait for it first)."""

    def __init__(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        waited: float,
        holder: str,
        ahead: int = 0,
    ) -> None:
        session = self._name_session(app_name, user_id, session_id)
        self.holder = holder
        self.ahead = ahead
        queued = f", and {ahead} more wait before this one" if ahead else ""
        running = f"invocation {holder!r}" if holder else "another invocation"
        super().__init__(
            f"{session} is busy: {running} is "
            f"still running{queued} (waited {waited:.2f}s). Only one invocation runs per "
            "session at a time; wait for it to finish, give the Runner (or RunConfig) a longer "
            "session_busy_timeout, or choose multitask_strategy='enqueue' (wait in line), "
            "'interrupt' or 'rollback' (stop the running one)."
        )


class InvalidStateValueError(CairnError, TypeError):
    """A state value (or initial state) is not plain JSON, so it cannot be stored losslessly."""

    def __init__(self, *, key: str, path: str, value_type: str, where: str) -> None:
        self.key = key
        self.path = path
        self.value_type = value_type
        location = key if path == "" else f"{key}{path}"
        super().__init__(
            f"state key {key!r} in {where} holds a value that is not plain JSON: "
            f"{location} is {value_type}. cairn stores state as JSON only (dict with str keys, "
            "list, str without U+0000 or lone surrogates, int of at most 4300 digits, finite "
            "float, bool, None; nested at most 100 levels). Convert it first, e.g. "
            "model.model_dump(mode='json') for a pydantic model or list(...) for a tuple or set. "
            "Nothing was stored."
        )


class InvalidEventError(CairnError, ValueError):
    """An event cannot be stored as lossless JSON."""

    def __init__(self, *, event_id: str, reason: str) -> None:
        self.event_id = event_id
        super().__init__(f"event {event_id!r} cannot be stored: {reason} Nothing was stored.")


class InvocationNotFoundError(_AboutSession, NotFoundError, ValueError):
    """``run_async(invocation_id=...)`` (or a rewind) named an invocation the session does
    not have. Like ADK's, a ``NotFoundError`` and a ``ValueError``."""

    def __init__(
        self,
        message: str | None = None,
        *,
        app_name: str = "",
        user_id: str = "",
        session_id: str = "",
        invocation_id: str = "",
    ) -> None:
        self.invocation_id = invocation_id
        own = self._own_message(message, app_name, user_id, session_id)
        if own is not None:
            super().__init__(own)
            return
        session = _session_ref(app_name, user_id, session_id)
        super().__init__(
            f"invocation {invocation_id!r} is not part of "
            f"{session}. Pass the invocation_id of an "
            "event in that session, or omit invocation_id to start a new invocation."
        )


class EventNotFoundError(_AboutSession, NotFoundError, ValueError):
    """An event id that the named session does not have."""

    def __init__(self, *, app_name: str, user_id: str, session_id: str, event_id: str) -> None:
        self.event_id = event_id
        session = self._name_session(app_name, user_id, session_id)
        super().__init__(
            f"event {event_id!r} is not part of {session}. Pass the id of one of its events "
            "(list them with list_events(...)), or omit it to use the whole history."
        )


class EventTooLargeError(InvalidEventError):
    """An event's JSON is larger than the store's ``max_event_bytes``."""

    def __init__(self, *, event_id: str, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            event_id=event_id,
            reason=f"its JSON is {size:,} bytes, over the store's limit of {limit:,} bytes. "
            "Keep large payloads in an artifact and reference it from the event, or raise "
            "the limit with max_event_bytes=... when creating the session service.",
        )


class LimitExceededError(CairnError, ValueError):
    """A name or key is longer than the stores can hold."""


class StoreUnavailableError(CairnError, ConnectionError):
    """The session store's database cannot be reached (the password is never shown)."""


class InvalidCursorError(CairnError, ValueError):
    """A page cursor that no earlier page of the same listing produced."""


class InterruptNotPendingError(_AboutSession, CairnError, ValueError):
    """A ``FunctionResponse`` answers no pending interrupt (unknown id, or answered already).

    Nothing was stored. ``pending`` lists the ids that are waiting for an answer.
    """

    def __init__(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        interrupt_id: str,
        reason: str,
        pending: list[str],
    ) -> None:
        self.interrupt_id = interrupt_id
        self.pending = pending
        session = self._name_session(app_name, user_id, session_id)
        waiting = ", ".join(repr(i) for i in pending) if pending else "none"
        super().__init__(
            f"the answer to {interrupt_id!r} was refused: {reason}. Pending interrupts of "
            f"{session}: {waiting}. Nothing was stored; answer one of those ids "
            "(Runner.list_pending_interrupts lists them with what each one asks)."
        )


class InvalidAnswerError(_AboutSession, CairnError, ValueError):
    """An answer has the wrong shape for its interrupt, or approves a different call.

    Nothing was stored; the interrupt is still pending.
    """

    def __init__(
        self, *, app_name: str, user_id: str, session_id: str, interrupt_id: str, reason: str
    ) -> None:
        self.interrupt_id = interrupt_id
        session = self._name_session(app_name, user_id, session_id)
        super().__init__(
            f"Validation failed for interrupt {interrupt_id!r} of {session}: the answer was "
            f"refused: {reason}. "
            "Nothing was stored; the interrupt is still pending."
        )


class InvocationInterruptedError(_AboutSession, CairnError, RuntimeError):
    """The session's last invocation stopped in the middle of a tool call (its process died).

    A new message would leave that call without a result. Continue the
    invocation first: ``run_async(invocation_id=...)`` re-runs idempotent
    tools and asks about the others. Nothing was stored.
    """

    def __init__(
        self, *, app_name: str, user_id: str, session_id: str, invocation_id: str, calls: list[str]
    ) -> None:
        self.invocation_id = invocation_id
        self.calls = calls
        session = self._name_session(app_name, user_id, session_id)
        super().__init__(
            f"invocation {invocation_id!r} of {session} stopped while running "
            f"{', '.join(calls)}, and has no result for them. Continue it with "
            f"run_async(invocation_id={invocation_id!r}) before sending a new message: idempotent "
            "tools run again, the others are offered to you to re-run or to answer with their "
            "result. Nothing was stored."
        )


class LeaseLostError(_AboutSession, CairnError, RuntimeError):
    """An append was made under a session lease that another holder has since taken over."""

    def __init__(
        self, *, app_name: str, user_id: str, session_id: str, holder: str, current_holder: str
    ) -> None:
        session = self._name_session(app_name, user_id, session_id)
        self.holder = holder
        self.current_holder = current_holder
        now = f"{current_holder!r} holds it now" if current_holder else "nobody holds it now"
        super().__init__(
            f"{session}: invocation {holder!r} lost its lease ({now}), so its event was "
            "refused and nothing was stored. Either another invocation took the session "
            "over on purpose (multitask_strategy 'interrupt' or 'rollback', or a cancel): "
            "nothing to fix; or it stalled for longer than the lease's TTL: make the slow step "
            "async or give the Runner a longer session_lease_ttl, then run the invocation "
            "again (or answer its pending interrupts)."
        )


class InvalidIdError(CairnError, ValueError):
    """An app name, user id or session id that breaks cairn's id rule (``cairn.sessions.ids``)."""

    def __init__(self, *, which: str, value: object, reason: str) -> None:
        self.which = which
        self.value = value
        shown = (
            repr(value[:40]) + "..."
            if isinstance(value, str | bytes) and len(value) > 40
            else repr(value)
        )
        super().__init__(
            f"the {which} {shown} is not a valid id: {reason}. An id is a non-empty str of at "
            "most 128 characters, without control characters (U+0000-U+001F, U+007F-U+009F) "
            "or lone surrogates. Nothing was stored."
        )


class StoreDamagedError(CairnError, RuntimeError):
    """A SQLite store file is damaged: truncated, overwritten, or not a SQLite database."""

    def __init__(self, *, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(
            f"the SQLite store {path} is damaged or is not a cairn store: {problem}. cairn "
            "changed nothing in it. Stop every process that uses it, restore it from a backup "
            f"(or point --store at another file), then check it with `cairn verify --store "
            f"{path}`."
        )


class LiveStreamingNotSupportedError(CairnError, NotImplementedError):
    """A live (bidirectional audio/video, Gemini Live) run was asked for: cairn has none.

    ``Runner.run_live`` and an ``LlmAgent``'s live run raise it. Use ``Runner.run_async``
    (or ``run_sse`` in the web server), with ``RunConfig(streaming_mode=StreamingMode.SSE)``
    for partial events as the model writes.
    """

    def __init__(self, *, what: str) -> None:
        self.what = what
        super().__init__(
            f"{what}: cairn does not support Gemini Live bidirectional (audio/video) streaming. "
            "Run the agent with Runner.run_async(...) instead, with "
            "RunConfig(streaming_mode=StreamingMode.SSE) to get partial events as the model "
            "writes (docs/porting-from-adk.md)."
        )


class RunNotFoundError(_AboutSession, NotFoundError, ValueError):
    """A run id the named session does not have (``cairn.runs``)."""

    def __init__(self, *, app_name: str, user_id: str, session_id: str, run_id: str) -> None:
        session = self._name_session(app_name, user_id, session_id)
        self.run_id = run_id
        super().__init__(
            f"{session} has no run {run_id!r}. List the session's runs (GET /cairn/apps/"
            f"{app_name}/users/{user_id}/sessions/{session_id}/runs, or Runs.list) and use "
            "one of their ids; a run's id is its invocation's id."
        )


class InvalidRunRequestError(CairnError, ValueError):
    """A run asked for something it cannot do (no message and nothing to continue, a
    strategy that does not exist)."""
