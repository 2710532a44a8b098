"""Who notifies each stop of an A2A task (cairn_a2a_push_sent): one server per notification.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

KEY = 128


def upgrade() -> None:
    op.create_table(
        "cairn_a2a_push_sent",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("task_id", sa.String(KEY), primary_key=True),
        sa.Column("stop", sa.String(KEY * 2), primary_key=True),
        sa.Column("holder", sa.String(KEY * 2), nullable=False),
        sa.Column("done", sa.Boolean, nullable=False),
        sa.Column("claimed_at", sa.Double, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("cairn_a2a_push_sent")
