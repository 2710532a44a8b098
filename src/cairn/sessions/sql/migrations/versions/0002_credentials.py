"""Tools' credentials per app, user and credential key (cairn.auth).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

KEY = 128
CREDENTIAL_KEY = 255
long_text = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def exact_key(length: int) -> sa.types.TypeEngine[str]:
    # MySQL/MariaDB collations ignore case and trailing spaces; VARBINARY compares exactly.
    return sa.String(length).with_variant(mysql.VARBINARY(4 * length), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "cairn_credentials",
        sa.Column("app_name", exact_key(KEY), primary_key=True),
        sa.Column("user_id", exact_key(KEY), primary_key=True),
        sa.Column("credential_key", exact_key(CREDENTIAL_KEY), primary_key=True),
        sa.Column("credential", long_text, nullable=False),
        sa.Column("update_time", sa.Double, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("cairn_credentials")
