"""Saved artifact versions per app, user, session and filename (cairn.artifacts).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

KEY = 128
FILENAME = 255
long_text = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
long_bytes = sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")


def exact_key(length: int) -> sa.types.TypeEngine[str]:
    # MySQL/MariaDB collations ignore case and trailing spaces; VARBINARY compares exactly.
    return sa.String(length).with_variant(mysql.VARBINARY(4 * length), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "cairn_artifacts",
        sa.Column("app_name", exact_key(KEY), primary_key=True),
        sa.Column("user_id", exact_key(KEY), primary_key=True),
        sa.Column("session_id", exact_key(KEY), primary_key=True),
        sa.Column("filename", exact_key(FILENAME), primary_key=True),
        sa.Column("version", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("mime_type", sa.String(255), nullable=True),
        sa.Column("data", long_bytes, nullable=False),
        sa.Column("custom_metadata", long_text, nullable=False),
        sa.Column("create_time", sa.Double, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("cairn_artifacts")
