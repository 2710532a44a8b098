"""What an A2A server keeps beside the runs: tasks' sessions, message ids, push configs
(cairn_a2a_tasks, cairn_a2a_messages, cairn_a2a_push_configs).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

KEY = 128
long_text = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "cairn_a2a_tasks",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("task_id", sa.String(KEY), primary_key=True),
        sa.Column("user_id", sa.String(KEY), nullable=False),
        sa.Column("session_id", sa.String(KEY), nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
    )
    op.create_table(
        "cairn_a2a_messages",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("user_id", sa.String(KEY), primary_key=True),
        sa.Column("session_id", sa.String(KEY), primary_key=True),
        sa.Column("message_id", sa.String(KEY), primary_key=True),
        sa.Column("task_id", sa.String(KEY), nullable=False),
    )
    op.create_table(
        "cairn_a2a_push_configs",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("task_id", sa.String(KEY), primary_key=True),
        sa.Column("config_id", sa.String(KEY), primary_key=True),
        sa.Column("config", long_text, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("cairn_a2a_push_configs")
    op.drop_table("cairn_a2a_messages")
    op.drop_table("cairn_a2a_tasks")
