"""Bring a database to cairn's current schema, in place, safely when processes race.

Runs alembic on a connection cairn provides, inside one transaction guarded
by a database-wide lock (an advisory lock on PostgreSQL, ``GET_LOCK`` on
MySQL/MariaDB, a ``BEGIN EXCLUSIVE`` transaction the caller opens on SQLite), so several processes
starting at once apply each migration exactly once. A schema newer than this
code, or tables that look like cairn's but are not, are refused.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sqlalchemy import Connection, inspect, text

from cairn.errors import CairnError
from cairn.sessions.sql.schema import TABLES, VERSION_TABLE

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
HEAD_REVISION = "0010"
"""The newest revision in ``migrations`` (a test keeps the two equal): a database already
there is recognised without loading alembic."""
_LOCK_NAME = "cairn_migrations"
_LOCK_KEY = 0x6361_6972  # "cair": the PostgreSQL advisory-lock key


class SchemaError(CairnError, RuntimeError):
    """The database holds a schema cairn cannot use (newer, foreign or damaged)."""


@dataclasses.dataclass
class MigrationReport:
    """What ``upgrade_schema`` found and did."""

    from_revision: str | None
    to_revision: str
    applied: list[str]
    """Revisions applied, oldest first (empty when the schema was already current)."""


def _alembic_config(connection: Connection):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest schema revision this code knows."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(MIGRATIONS))
    head = script.get_current_head()
    assert head is not None
    return head


def _known_revisions() -> list[str]:
    """Every revision this code knows, oldest first."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(MIGRATIONS))
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def current_revision(connection: Connection) -> str | None:
    """The revision recorded in the database, or None if cairn never migrated it."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    if len(rows) != 1:
        raise SchemaError(
            f"the table {VERSION_TABLE} holds {len(rows)} rows instead of one; the schema "
            "record is damaged. Restore the database from a backup or repair that table."
        )
    return str(rows[0][0])


def _lock(connection: Connection) -> None:
    dialect = connection.dialect.name
    if dialect == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    elif dialect in ("mysql", "mariadb"):
        got = connection.execute(text("SELECT GET_LOCK(:name, 300)"), {"name": _LOCK_NAME})
        if got.scalar() != 1:
            raise SchemaError(
                "another process has been migrating this database for 5 minutes; "
                "check for a stuck `cairn migrate` and try again"
            )
    # SQLite: the caller's transaction is already BEGIN EXCLUSIVE (see engines.py).


def _unlock(connection: Connection) -> None:
    if connection.dialect.name in ("mysql", "mariadb"):
        connection.execute(text("SELECT RELEASE_LOCK(:name)"), {"name": _LOCK_NAME})


_COLUMNS = {
    "sqlite": "SELECT t.name, c.name FROM sqlite_master AS t, pragma_table_info(t.name) AS c "
    "WHERE t.type = 'table' AND t.name LIKE 'cairn%'",
    "postgresql": "SELECT table_name, column_name FROM information_schema.columns "
    "WHERE table_schema = current_schema() AND table_name LIKE 'cairn%'",
    "mysql": "SELECT table_name, column_name FROM information_schema.columns "
    "WHERE table_schema = DATABASE() AND table_name LIKE 'cairn%'",
}
_COLUMNS["mariadb"] = _COLUMNS["mysql"]


def _cairn_columns(connection: Connection) -> dict[str, set[str]]:
    """The columns of each table whose name starts with ``cairn``, in one query."""
    found: dict[str, set[str]] = {}
    for table, column in connection.execute(text(_COLUMNS[connection.dialect.name])):
        found.setdefault(str(table), set()).add(str(column))
    return found


def verify_tables(connection: Connection, columns: dict[str, set[str]] | None = None) -> None:
    """Refuse a database whose cairn tables lack columns this code needs."""
    present = _cairn_columns(connection) if columns is None else columns
    for name, table in TABLES.items():
        if name not in present:
            raise SchemaError(
                f"the schema record says revision {current_revision(connection)!r} but the "
                f"table {name} is missing; the database was changed by hand. Restore it "
                "from a backup."
            )
        missing = sorted(c.name for c in table.columns if c.name not in present[name])
        if missing:
            raise SchemaError(
                f"the table {name} lacks the column(s) {', '.join(missing)} (found: "
                f"{', '.join(sorted(present[name]))}); it was not created by this version of "
                "cairn or was changed by hand."
            )


def current_schema(connection: Connection) -> MigrationReport | None:
    """The report of a database already at ``HEAD_REVISION`` with every column this code
    needs (two queries, no lock), or None: it needs ``upgrade_schema``."""
    columns = _cairn_columns(connection)
    if VERSION_TABLE not in columns:
        return None
    versions = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    if [tuple(row) for row in versions] != [(HEAD_REVISION,)]:
        return None
    verify_tables(connection, columns)
    return MigrationReport(from_revision=HEAD_REVISION, to_revision=HEAD_REVISION, applied=[])


def upgrade_schema(connection: Connection) -> MigrationReport:
    """Migrate to the newest schema (idempotent); the caller commits the transaction.

    ``connection`` must be in a transaction (SQLAlchemy's autobegin does that).
    """
    _lock(connection)
    try:
        found = current_revision(connection)
        known = _known_revisions()
        head = known[-1]
        if found is None:
            stray = sorted(set(inspect(connection).get_table_names()) & set(TABLES))
            if stray:
                raise SchemaError(
                    f"found the table(s) {', '.join(stray)} but no {VERSION_TABLE}: they were "
                    "not created by cairn's migrations (or the record was dropped). Use an "
                    "empty database, or restore the record from a backup."
                )
        elif found not in known:
            raise SchemaError(
                f"the database's schema revision {found!r} is newer than this cairn knows "
                f"(newest: {head!r}); a newer cairn wrote it. Upgrade cairn "
                "(pip install -U cairn) instead of using this older version."
            )
        applied = known[known.index(found) + 1 :] if found is not None else list(known)
        if applied:
            from alembic import command

            command.upgrade(_alembic_config(connection), "head")
        verify_tables(connection)
        return MigrationReport(from_revision=found, to_revision=head, applied=applied)
    finally:
        _unlock(connection)
