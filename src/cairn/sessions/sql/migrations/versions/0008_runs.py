"""Runs and cron schedules, beside their sessions (cairn_runs, cairn_schedules).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

KEY = 128
NAME = 16
long_text = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
auto_pk = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "cairn_runs",
        sa.Column("seq", auto_pk, primary_key=True, autoincrement=True),
        sa.Column("app_name", sa.String(KEY), nullable=False),
        sa.Column("user_id", sa.String(KEY), nullable=False),
        sa.Column("session_id", sa.String(KEY), nullable=False),
        sa.Column("run_id", sa.String(KEY), nullable=False),
        sa.Column("status", sa.String(NAME), nullable=False),
        sa.Column("strategy", sa.String(NAME), nullable=False),
        sa.Column("request", long_text, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
        sa.Column("started_at", sa.Double, nullable=True),
        sa.Column("ended_at", sa.Double, nullable=True),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("cancel", sa.String(NAME), nullable=True),
        sa.Column("error", long_text, nullable=True),
        sa.Column("webhook", sa.Text, nullable=True),
        sa.Column("webhook_done", sa.Boolean, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("metadata", long_text, nullable=False),
        sa.UniqueConstraint("app_name", "user_id", "session_id", "run_id", name="cairn_runs_id"),
    )
    op.create_index(
        "cairn_runs_by_session", "cairn_runs", ["app_name", "user_id", "session_id", "seq"]
    )
    op.create_index("cairn_runs_by_user", "cairn_runs", ["app_name", "user_id", "seq"])
    op.create_index("cairn_runs_by_status", "cairn_runs", ["status", "seq"])
    op.create_index("cairn_runs_by_webhook", "cairn_runs", ["webhook_done", "seq"])
    op.create_table(
        "cairn_schedules",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("user_id", sa.String(KEY), primary_key=True),
        sa.Column("schedule_id", sa.String(KEY), primary_key=True),
        sa.Column("cron", sa.String(255), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(KEY), nullable=True),
        sa.Column("request", long_text, nullable=False),
        sa.Column("next_run_at", sa.Double, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("strategy", sa.String(NAME), nullable=False),
        sa.Column("webhook", sa.Text, nullable=True),
        sa.Column("last_run_id", sa.String(KEY), nullable=True),
        sa.Column("metadata", long_text, nullable=False),
    )
    op.create_index("cairn_schedules_due", "cairn_schedules", ["enabled", "next_run_at"])


def downgrade() -> None:
    op.drop_table("cairn_schedules")
    op.drop_table("cairn_runs")
