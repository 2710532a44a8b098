"""Sessions, scoped state and the stores that keep them."""

from cairn.errors import (
    AlreadyExistsError,
    DuplicateEventError,
    InvalidStateValueError,
    LeaseLostError,
    SessionAlreadyExistsError,
    SessionNotFoundError,
    StaleSessionError,
)
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig, ListSessionsResponse
from cairn.sessions.database_session_service import DatabaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.lease import SessionLease
from cairn.sessions.paging import EventPage, SessionPage
from cairn.sessions.session import Session
from cairn.sessions.sql.engines import UnsupportedStoreUrlError
from cairn.sessions.sql.migrate import SchemaError
from cairn.sessions.sqlite_session_service import SqliteSessionService
from cairn.sessions.state import State, StateSchemaError

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
