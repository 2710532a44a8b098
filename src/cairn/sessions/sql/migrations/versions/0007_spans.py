"""Finished OpenTelemetry spans of invocations, beside their sessions (cairn_spans).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

KEY = 128
long_text = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
auto_pk = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "cairn_spans",
        sa.Column("pk", auto_pk, primary_key=True, autoincrement=True),
        sa.Column("app_name", sa.String(KEY), nullable=False),
        sa.Column("user_id", sa.String(KEY), nullable=False),
        sa.Column("session_id", sa.String(KEY), nullable=False),
        sa.Column("invocation_id", sa.String(KEY), nullable=False),
        sa.Column("event_id", sa.String(KEY), nullable=True),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("span_id", sa.String(16), nullable=False),
        sa.Column("parent_span_id", sa.String(16), nullable=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("operation", sa.String(32), nullable=False),
        sa.Column("start_time", sa.BigInteger, nullable=False),
        sa.Column("end_time", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("status_message", long_text, nullable=True),
        sa.Column("input_tokens", sa.BigInteger, nullable=True),
        sa.Column("output_tokens", sa.BigInteger, nullable=True),
        sa.Column("attributes", long_text, nullable=False),
        sa.Column("events", long_text, nullable=False),
    )
    op.create_index(
        "cairn_spans_by_session",
        "cairn_spans",
        ["session_id", "app_name", "user_id", "invocation_id", "start_time"],
    )
    op.create_index(
        "cairn_spans_by_operation",
        "cairn_spans",
        ["session_id", "app_name", "user_id", "operation", "start_time"],
    )
    op.create_index("cairn_spans_by_event", "cairn_spans", ["event_id"])


def downgrade() -> None:
    op.drop_table("cairn_spans")
