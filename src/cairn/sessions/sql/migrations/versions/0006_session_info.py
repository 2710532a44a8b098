"""Session names and fork lineage, beside the log (cairn.sessions.session_info).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

KEY = 128
NAME = 200


def upgrade() -> None:
    op.create_table(
        "cairn_session_info",
        sa.Column("app_name", sa.String(KEY), primary_key=True),
        sa.Column("user_id", sa.String(KEY), primary_key=True),
        sa.Column("session_id", sa.String(KEY), primary_key=True),
        sa.Column("name", sa.String(NAME), nullable=True),
        sa.Column("parent_session_id", sa.String(KEY), nullable=True),
        sa.Column("parent_event_id", sa.String(KEY), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("cairn_session_info")
