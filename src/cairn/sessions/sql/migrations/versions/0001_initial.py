"""cairn's first schema: sessions, events, per-key state, leases.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql, postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

KEY = 128
json_value = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
long_text = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
auto_pk = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "cairn_sessions",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("user_id", sa.String(KEY), primary_key=True),
        sa.Column("session_id", sa.String(KEY), primary_key=True),
        sa.Column("revision", sa.BigInteger, nullable=False),
        sa.Column("create_time", sa.Double, nullable=False),
        sa.Column("update_time", sa.Double, nullable=False),
        sa.Column("initial_state", json_value, nullable=False),
    )
    op.create_index(
        "cairn_sessions_by_user_update",
        "cairn_sessions",
        ["app_name", "user_id", "update_time", "session_id"],
    )
    op.create_index(
        "cairn_sessions_by_app_update",
        "cairn_sessions",
        ["app_name", "update_time", "user_id", "session_id"],
    )

    op.create_table(
        "cairn_events",
        sa.Column("pk", auto_pk, primary_key=True, autoincrement=True),
        sa.Column("app_name", sa.String(KEY), nullable=False),
        sa.Column("user_id", sa.String(KEY), nullable=False),
        sa.Column("session_id", sa.String(KEY), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("event_id", sa.String(KEY), nullable=False),
        sa.Column("invocation_id", sa.String(KEY), nullable=False),
        sa.Column("timestamp", sa.Double, nullable=False),
        sa.Column("event", long_text, nullable=False),
        sa.UniqueConstraint("app_name", "user_id", "session_id", "seq", name="cairn_events_seq"),
        sa.UniqueConstraint(
            "app_name", "user_id", "session_id", "event_id", name="cairn_events_id"
        ),
    )
    op.create_index(
        "cairn_events_by_time",
        "cairn_events",
        ["app_name", "user_id", "session_id", "timestamp"],
    )
    op.create_index(
        "cairn_events_by_invocation",
        "cairn_events",
        ["app_name", "user_id", "session_id", "invocation_id"],
    )

    op.create_table(
        "cairn_state",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("scope", sa.String(1), primary_key=True),
        sa.Column("user_id", sa.String(KEY), primary_key=True),
        sa.Column("session_id", sa.String(KEY), primary_key=True),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("value", json_value, nullable=False),
    )

    op.create_table(
        "cairn_leases",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("user_id", sa.String(KEY), primary_key=True),
        sa.Column("session_id", sa.String(KEY), primary_key=True),
        sa.Column("holder", sa.String(255), nullable=False),
        sa.Column("expires_at", sa.Double, nullable=False),
    )


def downgrade() -> None:
    for table in ("cairn_leases", "cairn_state", "cairn_events", "cairn_sessions"):
        op.drop_table(table)
