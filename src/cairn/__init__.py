"""cairn: an agent development kit whose execution is an append-only event log.

Everyday names are importable from here; each also lives in its layer's package
(``cairn.events``, ``cairn.sessions``, ``cairn.agents``, ``cairn.runners``, ...).

``import cairn`` imports none of them: a name is imported from its package when first
asked for (``from cairn import Agent`` or ``cairn.Agent``), so a command line or a tool
that needs one name does not pay for google-genai, the stores or the server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cairn.version import __version__

if TYPE_CHECKING:
    from cairn.agents import (
        Agent,
        AgentTool,
        BaseAgent,
        CallbackContext,
        Context,
        InvocationContext,
        LlmAgent,
        MultitaskStrategy,
        RunConfig,
        StreamingMode,
        ToolContext,
    )
    from cairn.apps import App, EventsCompactionConfig, LlmEventSummarizer, ResumabilityConfig
    from cairn.artifacts import (
        BaseArtifactService,
        FileArtifactService,
        InMemoryArtifactService,
        SessionStoreArtifactService,
    )
    from cairn.auth import (
        AuthConfig,
        AuthCredential,
        AuthCredentialTypes,
        BaseCredentialService,
        InMemoryCredentialService,
        SessionStoreCredentialService,
    )
    from cairn.errors import (
        AlreadyExistsError,
        CairnError,
        DuplicateEventError,
        EventTooLargeError,
        InterruptNotPendingError,
        InvalidAnswerError,
        InvalidCursorError,
        InvalidEventError,
        InvalidIdError,
        InvalidStateValueError,
        InvocationInterruptedError,
        InvocationNotFoundError,
        LeaseLostError,
        LimitExceededError,
        SessionAlreadyExistsError,
        SessionBusyError,
        SessionNotFoundError,
        StaleSessionError,
        StoreDamagedError,
        StoreUnavailableError,
    )
    from cairn.events import (
        Event,
        EventActions,
        EventCompaction,
        Interrupt,
        NodeInfo,
        RequestInput,
        ToolConfirmation,
    )
    from cairn.memory import (
        BaseMemoryService,
        InMemoryMemoryService,
        PostgresMemoryService,
        SqliteMemoryService,
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
    from cairn.workflow import START, Workflow

# Each everyday name and the package it is imported from when first asked for.
_LAZY = {
    "Agent": "cairn.agents",
    "AgentTool": "cairn.agents",
    "BaseAgent": "cairn.agents",
    "CallbackContext": "cairn.agents",
    "Context": "cairn.agents",
    "InvocationContext": "cairn.agents",
    "LlmAgent": "cairn.agents",
    "MultitaskStrategy": "cairn.agents",
    "RunConfig": "cairn.agents",
    "StreamingMode": "cairn.agents",
    "ToolContext": "cairn.agents",
    "App": "cairn.apps",
    "EventsCompactionConfig": "cairn.apps",
    "LlmEventSummarizer": "cairn.apps",
    "ResumabilityConfig": "cairn.apps",
    "BaseArtifactService": "cairn.artifacts",
    "FileArtifactService": "cairn.artifacts",
    "InMemoryArtifactService": "cairn.artifacts",
    "SessionStoreArtifactService": "cairn.artifacts",
    "AuthConfig": "cairn.auth",
    "AuthCredential": "cairn.auth",
    "AuthCredentialTypes": "cairn.auth",
    "BaseCredentialService": "cairn.auth",
    "InMemoryCredentialService": "cairn.auth",
    "SessionStoreCredentialService": "cairn.auth",
    "AlreadyExistsError": "cairn.errors",
    "CairnError": "cairn.errors",
    "DuplicateEventError": "cairn.errors",
    "EventTooLargeError": "cairn.errors",
    "InterruptNotPendingError": "cairn.errors",
    "InvalidAnswerError": "cairn.errors",
    "InvalidCursorError": "cairn.errors",
    "InvalidEventError": "cairn.errors",
    "InvalidIdError": "cairn.errors",
    "InvalidStateValueError": "cairn.errors",
    "InvocationInterruptedError": "cairn.errors",
    "InvocationNotFoundError": "cairn.errors",
    "LeaseLostError": "cairn.errors",
    "LimitExceededError": "cairn.errors",
    "SessionAlreadyExistsError": "cairn.errors",
    "SessionBusyError": "cairn.errors",
    "SessionNotFoundError": "cairn.errors",
    "StaleSessionError": "cairn.errors",
    "StoreDamagedError": "cairn.errors",
    "StoreUnavailableError": "cairn.errors",
    "Event": "cairn.events",
    "EventActions": "cairn.events",
    "EventCompaction": "cairn.events",
    "Interrupt": "cairn.events",
    "NodeInfo": "cairn.events",
    "RequestInput": "cairn.events",
    "ToolConfirmation": "cairn.events",
    "BaseMemoryService": "cairn.memory",
    "InMemoryMemoryService": "cairn.memory",
    "PostgresMemoryService": "cairn.memory",
    "SqliteMemoryService": "cairn.memory",
    "BaseLlm": "cairn.models",
    "LlmRequest": "cairn.models",
    "LlmResponse": "cairn.models",
    "BasePlugin": "cairn.plugins",
    "InMemoryRunner": "cairn.runners",
    "Runner": "cairn.runners",
    "BaseSessionService": "cairn.sessions",
    "DatabaseSessionService": "cairn.sessions",
    "EventPage": "cairn.sessions",
    "GetSessionConfig": "cairn.sessions",
    "InMemorySessionService": "cairn.sessions",
    "ListSessionsResponse": "cairn.sessions",
    "Session": "cairn.sessions",
    "SessionPage": "cairn.sessions",
    "SqliteSessionService": "cairn.sessions",
    "State": "cairn.sessions",
    "BaseTool": "cairn.tools",
    "FunctionTool": "cairn.tools",
    "LongRunningFunctionTool": "cairn.tools",
    "START": "cairn.workflow",
    "Workflow": "cairn.workflow",
}


def __getattr__(name: str) -> Any:
    package = _LAZY.get(name)
    if package is None:
        if name.isidentifier() and not name.startswith("_"):
            try:  # a layer's package, as `cairn.sessions` after `import cairn`
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"{__name__}.{name}":
                    raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(package), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "START",
    "Agent",
    "AgentTool",
    "AlreadyExistsError",
    "App",
    "AuthConfig",
    "AuthCredential",
    "AuthCredentialTypes",
    "BaseAgent",
    "BaseArtifactService",
    "BaseCredentialService",
    "BaseLlm",
    "BaseMemoryService",
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
    "FileArtifactService",
    "FunctionTool",
    "GetSessionConfig",
    "InMemoryArtifactService",
    "InMemoryCredentialService",
    "InMemoryMemoryService",
    "InMemoryRunner",
    "InMemorySessionService",
    "Interrupt",
    "InterruptNotPendingError",
    "InvalidAnswerError",
    "InvalidCursorError",
    "InvalidEventError",
    "InvalidIdError",
    "InvalidStateValueError",
    "InvocationContext",
    "InvocationInterruptedError",
    "InvocationNotFoundError",
    "LeaseLostError",
    "LimitExceededError",
    "ListSessionsResponse",
    "LlmAgent",
    "LlmEventSummarizer",
    "LlmRequest",
    "LlmResponse",
    "LongRunningFunctionTool",
    "MultitaskStrategy",
    "NodeInfo",
    "PostgresMemoryService",
    "RequestInput",
    "ResumabilityConfig",
    "RunConfig",
    "Runner",
    "Session",
    "SessionAlreadyExistsError",
    "SessionBusyError",
    "SessionNotFoundError",
    "SessionPage",
    "SessionStoreArtifactService",
    "SessionStoreCredentialService",
    "SqliteMemoryService",
    "SqliteSessionService",
    "StaleSessionError",
    "State",
    "StoreDamagedError",
    "StoreUnavailableError",
    "StreamingMode",
    "ToolConfirmation",
    "ToolContext",
    "Workflow",
    "__version__",
]
