"""cairn: an agent development kit whose execution is an append-only event log.

Everyday names are importable from here; each also lives in its layer's package
(``cairn.events``, ``cairn.sessions``, ``cairn.agents``, ``cairn.runners``, ...).
"""

from cairn.agents import (
    BaseAgent,
    CallbackContext,
    Context,
    InvocationContext,
    RunConfig,
    StreamingMode,
    ToolContext,
)
from cairn.apps import App, EventsCompactionConfig, ResumabilityConfig
from cairn.errors import (
    AlreadyExistsError,
    CairnError,
    DuplicateEventError,
    EventTooLargeError,
    InvalidCursorError,
    InvalidEventError,
    InvalidStateValueError,
    InvocationNotFoundError,
    LimitExceededError,
    SessionAlreadyExistsError,
    SessionBusyError,
    SessionNotFoundError,
    StaleSessionError,
    StoreUnavailableError,
)
from cairn.events import Event, EventActions, EventCompaction, NodeInfo, ToolConfirmation
from cairn.plugins import BasePlugin
from cairn.runners import InMemoryRunner, Runner
from cairn.sessions import (
    BaseSessionService,
    DatabaseSessionService,
    EventPage,
    GetSessionConfig,
    InMemorySessionService,
    ListSessionsResponse,
    Session,
    SessionPage,
    SqliteSessionService,
    State,
)

__version__ = "0.1.0"

__all__ = [
    "AlreadyExistsError",
    "App",
    "BaseAgent",
    "BasePlugin",
    "BaseSessionService",
    "CairnError",
    "CallbackContext",
    "Context",
    "DatabaseSessionService",
    "DuplicateEventError",
    "Event",
    "EventActions",
    "EventCompaction",
    "EventPage",
    "EventTooLargeError",
    "EventsCompactionConfig",
    "GetSessionConfig",
    "InMemoryRunner",
    "InMemorySessionService",
    "InvalidCursorError",
    "InvalidEventError",
    "InvalidStateValueError",
    "InvocationContext",
    "InvocationNotFoundError",
    "LimitExceededError",
    "ListSessionsResponse",
    "NodeInfo",
    "ResumabilityConfig",
    "RunConfig",
    "Runner",
    "Session",
    "SessionAlreadyExistsError",
    "SessionBusyError",
    "SessionNotFoundError",
    "SessionPage",
    "SqliteSessionService",
    "StaleSessionError",
    "State",
    "StoreUnavailableError",
    "StreamingMode",
    "ToolConfirmation",
    "ToolContext",
    "__version__",
]
