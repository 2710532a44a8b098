"""Sessions, scoped state and the stores that keep them.

The SQL stores (``SqliteSessionService``, ``DatabaseSessionService``) and their errors are
imported when first asked for: they need SQLAlchemy, and ``InMemorySessionService`` does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.errors import (
    AlreadyExistsError,
    DuplicateEventError,
    InvalidStateValueError,
    LeaseLostError,
    SessionAlreadyExistsError,
    SessionNotFoundError,
    StaleSessionError,
)
from cairn.lazy_names import lazy_names
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig, ListSessionsResponse
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.lease import SessionLease
from cairn.sessions.paging import EventPage, SessionPage
from cairn.sessions.session import Session
from cairn.sessions.state import State, StateSchemaError

if TYPE_CHECKING:
    from cairn.sessions.database_session_service import DatabaseSessionService
    from cairn.sessions.sql.engines import UnsupportedStoreUrlError
    from cairn.sessions.sql.migrate import SchemaError
    from cairn.sessions.sqlite_session_service import SqliteSessionService

_LAZY = {
    "DatabaseSessionService": "cairn.sessions.database_session_service",
    "SchemaError": "cairn.sessions.sql.migrate",
    "SqliteSessionService": "cairn.sessions.sqlite_session_service",
    "UnsupportedStoreUrlError": "cairn.sessions.sql.engines",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "AlreadyExistsError",
    "BaseSessionService",
    "DatabaseSessionService",
    "DuplicateEventError",
    "EventPage",
    "GetSessionConfig",
    "InMemorySessionService",
    "InvalidStateValueError",
    "LeaseLostError",
    "ListSessionsResponse",
    "SchemaError",
    "Session",
    "SessionAlreadyExistsError",
    "SessionLease",
    "SessionNotFoundError",
    "SessionPage",
    "SqliteSessionService",
    "StaleSessionError",
    "State",
    "StateSchemaError",
    "UnsupportedStoreUrlError",
]
