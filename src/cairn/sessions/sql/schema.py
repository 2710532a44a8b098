"""cairn's one table layout, shared by every SQL store (SQLAlchemy Core).

- ``cairn_sessions``: one row per session: revision, times, the initial state.
- ``cairn_events``: one row per committed event, ordered per session by ``seq``
  (= the session's revision after that append), the event's exact JSON text,
  and a global ``pk`` whose order is commit order among appends that touched
  the same state key.
- ``cairn_state``: one row per state key and scope (``a`` app, ``u`` user,
  ``s`` session), so an append writes only the keys it changes. Values (and
  ``initial_state``) are JSON text kept exactly as written: no database type
  reparses them (SQLite's numeric affinity and PostgreSQL's JSONB change big
  integers, ``-0.0`` and ``1e308``).
- ``cairn_leases``: which invocation holds a session, until when, at which generation.
- ``cairn_credentials``: tools' credentials per app, user and credential key
  (``cairn.auth``), as versioned JSON text, encrypted if the service has a key.
- ``cairn_artifacts``: one row per saved artifact version (``cairn.artifacts``)
  per app, user, session (``''`` for user-scoped ones) and filename: its bytes,
  MIME type and custom metadata.
- ``cairn_session_info``: a session's name and, for a fork, its parent session and the
  last event copied from it (``cairn.sessions.session_info``); deleted with the session.
- ``cairn_spans``: one row per finished OpenTelemetry span of an invocation
  (``cairn.sessions.span_store``): its ids, name, times in nanoseconds, status, the
  token counts of a model call, and its attributes and events as JSON text.
- ``cairn_runs``: one row per run (``cairn.sessions.run_store``): its key, its arrival
  order ``seq`` across the store, status, who runs it, its request, error and metadata as
  JSON text, and its webhook (``webhook_done`` is NULL, not false, for a run without one, so
  the undelivered webhooks are found by the index alone).
- ``cairn_schedules``: one row per cron schedule: what to run, where, and when it is next due.
- ``cairn_a2a_tasks``, ``cairn_a2a_messages``, ``cairn_a2a_push_configs``: what an A2A
  server keeps beside the runs (``cairn.sessions.a2a_store``): the session of each task,
  the id of each message it acted on (its idempotency key), and the tasks' push configs;
  ``cairn_a2a_push_sent``: who notifies each stop of a task, and whether it has.

Migrations in ``migrations/versions`` create exactly this; a test compares them.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Double,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeEngine

from cairn.sessions.ids import CREDENTIAL_KEY_LENGTH, MAX_ID_LENGTH
from cairn.sessions.session_info import NAME_LENGTH

KEY_LENGTH = MAX_ID_LENGTH
"""Longest app name, user id, session id, event id and invocation id, in characters."""

STATE_KEY_LENGTH = 255
"""Longest state key (prefix included), in characters."""

APP_SCOPE, USER_SCOPE, SESSION_SCOPE = "a", "u", "s"

LongText = Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


class JsonText(TypeDecorator[Any]):
    """A plain-JSON value stored as its JSON text, read back exactly (migration 0005)."""

    impl = LongText
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str:
        return encode_json_value(value)  # None is JSON null, as the column is NOT NULL

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        return json.loads(value)


_COMPACT = json.JSONEncoder(separators=(",", ":"))


def encode_json_value(value: Any) -> str:
    """The text a state value is stored as (compact; Python's float repr round-trips)."""
    return _COMPACT.encode(value)


# SQLite's INTEGER PRIMARY KEY is the rowid; BIGINT would not auto-increment there.
AutoPk = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData()

sessions = Table(
    "cairn_sessions",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("user_id", String(KEY_LENGTH), primary_key=True),
    Column("session_id", String(KEY_LENGTH), primary_key=True),
    Column("revision", BigInteger, nullable=False),
    Column("create_time", Double, nullable=False),
    Column("update_time", Double, nullable=False),
    Column("initial_state", JsonText, nullable=False),
    # Both fit the keyset order of list_sessions_page: (update_time, user_id, session_id).
    Index("cairn_sessions_by_user_update", "app_name", "user_id", "update_time", "session_id"),
    Index("cairn_sessions_by_app_update", "app_name", "update_time", "user_id", "session_id"),
)

events = Table(
    "cairn_events",
    metadata,
    Column("pk", AutoPk, primary_key=True, autoincrement=True),
    Column("app_name", String(KEY_LENGTH), nullable=False),
    Column("user_id", String(KEY_LENGTH), nullable=False),
    Column("session_id", String(KEY_LENGTH), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("event_id", String(KEY_LENGTH), nullable=False),
    Column("invocation_id", String(KEY_LENGTH), nullable=False),
    Column("timestamp", Double, nullable=False),
    Column("event", LongText, nullable=False),
    UniqueConstraint("app_name", "user_id", "session_id", "seq", name="cairn_events_seq"),
    UniqueConstraint("app_name", "user_id", "session_id", "event_id", name="cairn_events_id"),
    Index("cairn_events_by_time", "app_name", "user_id", "session_id", "timestamp"),
    Index("cairn_events_by_invocation", "app_name", "user_id", "session_id", "invocation_id"),
)

state = Table(
    "cairn_state",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("scope", String(1), primary_key=True),
    Column("user_id", String(KEY_LENGTH), primary_key=True),
    Column("session_id", String(KEY_LENGTH), primary_key=True),
    Column("key", String(STATE_KEY_LENGTH), primary_key=True),
    Column("value", JsonText, nullable=False),
)

leases = Table(
    "cairn_leases",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("user_id", String(KEY_LENGTH), primary_key=True),
    Column("session_id", String(KEY_LENGTH), primary_key=True),
    Column("holder", String(255), nullable=False),  # '' once released; the row stays
    Column("expires_at", Double, nullable=False),
    # Bumped by every acquisition that is not a renewal; appends under a lease check it.
    Column("generation", BigInteger, nullable=False, server_default="0"),
)


class _Utf8Varbinary(mysql.VARBINARY):
    """VARBINARY bound as text: MySQL/MariaDB store the text's UTF-8 bytes and compare them
    exactly (bytes would do too, but aiomysql cannot send them)."""

    def bind_processor(self, dialect: Dialect) -> None:
        return None


class ExactKey(TypeDecorator[str]):
    """A key column compared exactly. MySQL/MariaDB collations ignore case and trailing
    spaces, so there it is VARBINARY (``length`` characters of UTF-8)."""

    impl = String
    cache_ok = True

    def __init__(self, length: int) -> None:
        super().__init__(length)
        self.length = length

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(_Utf8Varbinary(4 * self.length))
        return dialect.type_descriptor(String(self.length))

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        return value.decode() if isinstance(value, bytes) else value


credentials = Table(
    "cairn_credentials",
    metadata,
    Column("app_name", ExactKey(KEY_LENGTH), primary_key=True),
    Column("user_id", ExactKey(KEY_LENGTH), primary_key=True),
    Column("credential_key", ExactKey(CREDENTIAL_KEY_LENGTH), primary_key=True),
    Column("credential", LongText, nullable=False),
    Column("update_time", Double, nullable=False),
)

ARTIFACT_NAME_LENGTH = 255
"""Longest artifact filename (``user:`` prefix included), in characters."""

Bytes = LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")

artifacts = Table(
    "cairn_artifacts",
    metadata,
    Column("app_name", ExactKey(KEY_LENGTH), primary_key=True),
    Column("user_id", ExactKey(KEY_LENGTH), primary_key=True),
    Column("session_id", ExactKey(KEY_LENGTH), primary_key=True),
    Column("filename", ExactKey(ARTIFACT_NAME_LENGTH), primary_key=True),
    Column("version", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(16), nullable=False),
    Column("mime_type", String(255), nullable=True),
    Column("data", Bytes, nullable=False),
    Column("custom_metadata", LongText, nullable=False),
    Column("create_time", Double, nullable=False),
)

session_info = Table(
    "cairn_session_info",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("user_id", String(KEY_LENGTH), primary_key=True),
    Column("session_id", String(KEY_LENGTH), primary_key=True),
    Column("name", String(NAME_LENGTH), nullable=True),
    Column("parent_session_id", String(KEY_LENGTH), nullable=True),
    Column("parent_event_id", String(KEY_LENGTH), nullable=True),
)

spans = Table(
    "cairn_spans",
    metadata,
    Column("pk", AutoPk, primary_key=True, autoincrement=True),
    Column("app_name", String(KEY_LENGTH), nullable=False),
    Column("user_id", String(KEY_LENGTH), nullable=False),
    Column("session_id", String(KEY_LENGTH), nullable=False),
    Column("invocation_id", String(KEY_LENGTH), nullable=False),
    Column("event_id", String(KEY_LENGTH), nullable=True),
    Column("trace_id", String(32), nullable=False),
    Column("span_id", String(16), nullable=False),
    Column("parent_span_id", String(16), nullable=True),
    Column("name", String(255), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("operation", String(32), nullable=False),
    Column("start_time", BigInteger, nullable=False),
    Column("end_time", BigInteger, nullable=False),
    Column("status", String(8), nullable=False),
    Column("status_message", LongText, nullable=True),
    Column("input_tokens", BigInteger, nullable=True),
    Column("output_tokens", BigInteger, nullable=True),
    Column("attributes", LongText, nullable=False),
    Column("events", LongText, nullable=False),
    # Leads with the session id: ADK's /debug/trace/session/{session_id} names nothing else.
    Index(
        "cairn_spans_by_session",
        "session_id",
        "app_name",
        "user_id",
        "invocation_id",
        "start_time",
    ),
    # The newest invocations of a session: their root spans, by start.
    Index(
        "cairn_spans_by_operation",
        "session_id",
        "app_name",
        "user_id",
        "operation",
        "start_time",
    ),
    Index("cairn_spans_by_event", "event_id"),
)

STATUS_LENGTH = 16
"""Longest run status, multitask strategy or cancel request name."""

runs = Table(
    "cairn_runs",
    metadata,
    Column("seq", AutoPk, primary_key=True, autoincrement=True),
    Column("app_name", String(KEY_LENGTH), nullable=False),
    Column("user_id", String(KEY_LENGTH), nullable=False),
    Column("session_id", String(KEY_LENGTH), nullable=False),
    Column("run_id", String(KEY_LENGTH), nullable=False),
    Column("status", String(STATUS_LENGTH), nullable=False),
    Column("strategy", String(STATUS_LENGTH), nullable=False),
    Column("request", LongText, nullable=False),
    Column("created_at", Double, nullable=False),
    Column("started_at", Double, nullable=True),
    Column("ended_at", Double, nullable=True),
    Column("owner", String(255), nullable=True),
    Column("cancel", String(STATUS_LENGTH), nullable=True),
    Column("error", LongText, nullable=True),
    Column("webhook", Text, nullable=True),
    Column("webhook_done", Boolean, nullable=True),  # NULL: false, and no webhook
    Column("attempts", Integer, nullable=False),
    Column("metadata", LongText, nullable=False),
    UniqueConstraint("app_name", "user_id", "session_id", "run_id", name="cairn_runs_id"),
    # A session's runs and a user's runs, newest first (by seq, descending).
    Index("cairn_runs_by_session", "app_name", "user_id", "session_id", "seq"),
    Index("cairn_runs_by_user", "app_name", "user_id", "seq"),
    # Unfinished runs, oldest first; runs whose webhook is not delivered yet, oldest first.
    Index("cairn_runs_by_status", "status", "seq"),
    Index("cairn_runs_by_webhook", "webhook_done", "seq"),
)

schedules = Table(
    "cairn_schedules",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("user_id", String(KEY_LENGTH), primary_key=True),
    Column("schedule_id", String(KEY_LENGTH), primary_key=True),
    Column("cron", String(255), nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("session_id", String(KEY_LENGTH), nullable=True),
    Column("request", LongText, nullable=False),
    Column("next_run_at", Double, nullable=False),
    Column("created_at", Double, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("strategy", String(STATUS_LENGTH), nullable=False),
    Column("webhook", Text, nullable=True),
    Column("last_run_id", String(KEY_LENGTH), nullable=True),
    Column("metadata", LongText, nullable=False),
    # The schedules due now, soonest first.
    Index("cairn_schedules_due", "enabled", "next_run_at"),
)

a2a_tasks = Table(
    "cairn_a2a_tasks",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("task_id", String(KEY_LENGTH), primary_key=True),
    Column("user_id", String(KEY_LENGTH), nullable=False),
    Column("session_id", String(KEY_LENGTH), nullable=False),
    Column("created_at", Double, nullable=False),
)

a2a_messages = Table(
    "cairn_a2a_messages",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("user_id", String(KEY_LENGTH), primary_key=True),
    Column("session_id", String(KEY_LENGTH), primary_key=True),
    Column("message_id", String(KEY_LENGTH), primary_key=True),
    Column("task_id", String(KEY_LENGTH), nullable=False),
)

a2a_push_configs = Table(
    "cairn_a2a_push_configs",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("task_id", String(KEY_LENGTH), primary_key=True),
    Column("config_id", String(KEY_LENGTH), primary_key=True),
    Column("config", LongText, nullable=False),
    Column("created_at", Double, nullable=False),
)

a2a_push_sent = Table(
    "cairn_a2a_push_sent",
    metadata,
    Column("app_name", String(KEY_LENGTH), primary_key=True),
    Column("task_id", String(KEY_LENGTH), primary_key=True),
    Column("stop", String(KEY_LENGTH * 2), primary_key=True),
    Column("holder", String(KEY_LENGTH * 2), nullable=False),
    Column("done", Boolean, nullable=False),
    Column("claimed_at", Double, nullable=False),
)

VERSION_TABLE = "cairn_alembic_version"

TABLES = {
    table.name: table
    for table in (
        sessions,
        events,
        state,
        leases,
        credentials,
        artifacts,
        session_info,
        spans,
        runs,
        schedules,
        a2a_tasks,
        a2a_messages,
        a2a_push_configs,
        a2a_push_sent,
    )
}
