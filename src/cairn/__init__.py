"""cairn: an agent development kit whose execution is an append-only event log.

Everyday names are importable from here; each also lives in its layer's package
(``cairn.events``, ``cairn.sessions``, ``cairn.agents``, ``cairn.runners``, ...).
"""

from cairn.agents import (
    Agent,
    AgentTool,
    BaseAgent,
    CallbackContext,
    Context,
    InvocationContext,
    LlmAgent,
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
    InterruptNotPendingError,
    InvalidAnswerError,
    InvalidCursorError,
    InvalidEventError,
    InvalidStateValueError,
    InvocationInterruptedError,
    InvocationNotFoundError,
    LimitExceededError,
    SessionAlreadyExistsError,
    SessionBusyError,
    SessionNotFoundError,
    StaleSessionError,
    StoreUnavailableError,
)
from cairn.events import (
    Event,
    EventActions,
    EventCompaction,
    Interrupt,
    NodeInfo,
    ToolConfirmation,
)
from cairn.models import BaseLlm, LlmRequest, LlmResponse
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
from cairn.tools import BaseTool, FunctionTool, LongRunningFunctionTool

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentTool",
    "AlreadyExistsError",
    "App",
    "BaseAgent",
    "BaseLlm",
    "BasePlugin",
    "BaseSessionService",
    "BaseTool",
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
    "FunctionTool",
    "GetSessionConfig",
    "InMemoryRunner",
    "InMemorySessionService",
    "Interrupt",
    "InterruptNotPendingError",
    "InvalidAnswerError",
    "InvalidCursorError",
    "InvalidEventError",
    "InvalidStateValueError",
    "InvocationContext",
    "InvocationInterruptedError",
    "InvocationNotFoundError",
    "LimitExceededError",
    "ListSessionsResponse",
    "LlmAgent",
    "LlmRequest",
    "LlmResponse",
    "LongRunningFunctionTool",
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
