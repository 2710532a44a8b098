"""Lease generations: every acquisition of a session's lease that is not a renewal gets a new
one, and appends made under a lease check it (fencing).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "cairn_leases",
        sa.Column("generation", sa.BigInteger, nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_column("cairn_leases", "generation")
