"""The credential table's operations, each run in one transaction by a SQL session store.

Like ``cairn.sessions.sql.operations``: synchronous SQLAlchemy Core on a
``Connection``; the store begins and commits the transaction around them.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, and_, delete, insert, select, update
from sqlalchemy.sql.elements import ColumnElement

from cairn.sessions.sql.schema import credentials

Owner = tuple[str, str]


def _is(owner: Owner, credential_key: str) -> ColumnElement[bool]:
    return and_(
        credentials.c.app_name == owner[0],
        credentials.c.user_id == owner[1],
        credentials.c.credential_key == credential_key,
    )


def read(connection: Connection, owner: Owner, credential_key: str) -> str | None:
    statement = select(credentials.c.credential).where(_is(owner, credential_key))
    found = connection.execute(statement).scalar_one_or_none()
    return None if found is None else str(found)


def write(
    connection: Connection,
    owner: Owner,
    credential_key: str,
    text: str,
    now: float,
    check_replaced: Callable[[str], object],
) -> None:
    """Store ``text``; ``check_replaced`` sees the row it replaces first and may refuse it.

    Two first writes of one key race on the primary key: the loser's insert
    raises ``IntegrityError`` and its caller runs this again.
    """
    current = select(credentials.c.credential).where(_is(owner, credential_key))
    existing = connection.execute(current.with_for_update()).scalar_one_or_none()
    if existing is None:
        connection.execute(
            insert(credentials).values(
                app_name=owner[0],
                user_id=owner[1],
                credential_key=credential_key,
                credential=text,
                update_time=now,
            )
        )
        return
    check_replaced(str(existing))
    connection.execute(
        update(credentials)
        .where(_is(owner, credential_key))
        .values(credential=text, update_time=now)
    )


def remove(connection: Connection, owner: Owner, credential_key: str) -> None:
    connection.execute(delete(credentials).where(_is(owner, credential_key)))


def keys(connection: Connection, owner: Owner) -> list[str]:
    statement = select(credentials.c.credential_key).where(
        credentials.c.app_name == owner[0], credentials.c.user_id == owner[1]
    )
    # Sorted here, not by the database: collations differ between databases.
    return sorted(str(key) for key in connection.execute(statement).scalars())
