"""Alembic environment for cairn's tables: always run on a connection cairn provides."""

from __future__ import annotations

from alembic import context

from cairn.sessions.sql.schema import VERSION_TABLE, metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "cairn's migrations run through cairn: use `cairn migrate --store URL` or open the "
        "store in Python; they are not meant to be run with the alembic command directly"
    )
context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
