"""State values and initial states become JSON text, kept exactly as written.

SQLite's numeric affinity (the JSON column type) turned the text of integers
beyond 64 bits into floats and ``-0.0``/``1.0`` into integers; PostgreSQL's
JSONB turned ``1e308`` into an integer and ``-0.0`` into ``0``. A text column
is never reparsed. Values already changed stay as they are; on SQLite, numbers
the affinity kept as numbers are written back as the JSON text of that number.

Revision ID: 0005
Revises: 0003 (0004 once the lease-generation migration is merged)
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

long_text = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
_STATE_KEY = ("app_name", "scope", "user_id", "session_id", "key")
_COLUMNS = (("cairn_state", "value"), ("cairn_sessions", "initial_state"))


def upgrade() -> None:
    bind = op.get_bind()
    dialect = bind.dialect.name
    if dialect == "postgresql":
        for table, column in _COLUMNS:
            op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE text USING {column}::text")
    elif dialect in ("mysql", "mariadb"):
        for table, column in _COLUMNS:
            op.execute(f"ALTER TABLE {table} MODIFY {column} LONGTEXT NOT NULL")
    else:
        _rebuild_sqlite(bind)


def _rebuild_sqlite(bind: sa.Connection) -> None:
    """SQLite cannot change a column's type: the tables are rebuilt (indexes included).

    Rows the numeric affinity stored as INTEGER or REAL are read first (Python
    gets the exact number) and written back as JSON text afterwards, since the
    copy would print a REAL with only 15 significant digits.
    """
    columns = ", ".join(_STATE_KEY)
    numbers = bind.execute(
        sa.text(f"SELECT {columns}, value FROM cairn_state WHERE typeof(value) <> 'text'")
    ).all()
    for table, column in _COLUMNS:
        with op.batch_alter_table(table, recreate="always") as batch:
            batch.alter_column(column, type_=sa.Text(), existing_nullable=False)
    if numbers:
        where = " AND ".join(f"{name} = :{name}" for name in _STATE_KEY)
        bind.execute(
            sa.text(f"UPDATE cairn_state SET value = :value WHERE {where}"),
            [
                {**dict(zip(_STATE_KEY, row[:-1], strict=True)), "value": json.dumps(row[-1])}
                for row in numbers
            ],
        )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    for table, column in _COLUMNS:
        if dialect == "postgresql":
            op.execute(
                f"ALTER TABLE {table} ALTER COLUMN {column} TYPE jsonb USING {column}::jsonb"
            )
        elif dialect in ("mysql", "mariadb"):
            op.execute(f"ALTER TABLE {table} MODIFY {column} JSON NOT NULL")
        else:
            with op.batch_alter_table(table, recreate="always") as batch:
                batch.alter_column(column, type_=sa.JSON(), existing_nullable=False)
