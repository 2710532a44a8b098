"""The artifact table's operations, each run in one transaction by a SQL session store.

Like ``cairn.sessions.sql.operations``: synchronous SQLAlchemy Core on a
``Connection``; the store begins and commits the transaction around them.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from cairn.artifacts.base_artifact_service import ArtifactVersion
from cairn.sessions.sql.database import WriteConflict
from cairn.sessions.sql.schema import artifacts

Owner = tuple[str, str, str]
"""(app_name, user_id, session_id), session_id '' for user-scoped artifacts."""

Stored = tuple[str, str | None, bytes]


def _is(owner: Owner, filename: str) -> ColumnElement[bool]:
    return and_(
        artifacts.c.app_name == owner[0],
        artifacts.c.user_id == owner[1],
        artifacts.c.session_id == owner[2],
        artifacts.c.filename == filename,
    )


def save(
    connection: Connection,
    owner: Owner,
    filename: str,
    stored: Stored,
    custom_metadata: dict[str, Any],
    now: float,
) -> int:
    """Insert the next version. Two concurrent writers may pick the same number: the loser's
    insert fails on the primary key, which is a ``WriteConflict`` (the database runs it again)."""
    latest = select(func.max(artifacts.c.version)).where(_is(owner, filename))
    found = connection.execute(latest).scalar_one_or_none()
    version = 0 if found is None else int(found) + 1
    kind, mime_type, data = stored
    value: Any = data
    if connection.dialect.name in ("mysql", "mariadb"):
        # Sent as hexadecimal text: aiomysql cannot bind bytes; UNHEX stores them exactly.
        value = func.unhex(data.hex())
    row = insert(artifacts).values(
        app_name=owner[0],
        user_id=owner[1],
        session_id=owner[2],
        filename=filename,
        version=version,
        kind=kind,
        mime_type=mime_type,
        data=value,
        custom_metadata=json.dumps(custom_metadata),
        create_time=now,
    )
    try:
        connection.execute(row)
    except IntegrityError:
        raise WriteConflict(f"version {version} of {filename!r} was just taken") from None
    return version


def load(connection: Connection, owner: Owner, filename: str, version: int | None) -> Stored | None:
    statement = select(artifacts.c.kind, artifacts.c.mime_type, artifacts.c.data).where(
        _is(owner, filename)
    )
    if version is None:
        statement = statement.order_by(artifacts.c.version.desc()).limit(1)
    else:
        statement = statement.where(artifacts.c.version == version)
    row = connection.execute(statement).first()
    if row is None:
        return None
    return str(row.kind), row.mime_type, bytes(row.data)


def keys(connection: Connection, app_name: str, user_id: str, session_ids: list[str]) -> list[str]:
    statement = (
        select(artifacts.c.filename)
        .where(
            artifacts.c.app_name == app_name,
            artifacts.c.user_id == user_id,
            artifacts.c.session_id.in_(session_ids),
        )
        .distinct()
    )
    # Sorted here, not by the database: collations differ between databases.
    return sorted({str(name) for name in connection.execute(statement).scalars()})


def remove(connection: Connection, owner: Owner, filename: str) -> None:
    connection.execute(delete(artifacts).where(_is(owner, filename)))


def versions(connection: Connection, owner: Owner, filename: str) -> list[ArtifactVersion]:
    statement = (
        select(
            artifacts.c.version,
            artifacts.c.mime_type,
            artifacts.c.custom_metadata,
            artifacts.c.create_time,
        )
        .where(_is(owner, filename))
        .order_by(artifacts.c.version)
    )
    return [
        ArtifactVersion(
            version=int(row.version),
            custom_metadata=json.loads(row.custom_metadata),
            create_time=float(row.create_time),
            mime_type=row.mime_type,
        )
        for row in connection.execute(statement)
    ]
