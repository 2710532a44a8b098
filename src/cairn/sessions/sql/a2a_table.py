"""``SqlA2aStore``: the A2A rows (``cairn.sessions.a2a_store``) in the tables
``cairn_a2a_tasks``, ``cairn_a2a_messages``, ``cairn_a2a_push_configs`` and
``cairn_a2a_push_sent`` of a SQL session store's database. A message is claimed by inserting
its primary key: of two servers that receive the same message at once, one inserts it and
the other reads the task it went to; a stop's push notification is claimed the same way."""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import Connection, and_, delete, exists, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from cairn.errors import AlreadyExistsError
from cairn.sessions.a2a_store import A2aPushClaim, A2aPushConfig, A2aStore, A2aTask
from cairn.sessions.sql.database import Database
from cairn.sessions.sql.schema import (
    a2a_messages,
    a2a_push_configs,
    a2a_push_sent,
    a2a_tasks,
    encode_json_value,
)


def _insert(connection: Connection, statement: Any) -> None:
    connection.execute(statement)


def _task(row: Any) -> A2aTask:
    return A2aTask(
        app_name=row.app_name,
        task_id=row.task_id,
        user_id=row.user_id,
        session_id=row.session_id,
        created_at=float(row.created_at),
    )


def _select_task(connection: Connection, app_name: str, task_id: str) -> A2aTask | None:
    statement = select(a2a_tasks).where(
        a2a_tasks.c.app_name == app_name, a2a_tasks.c.task_id == task_id
    )
    row = connection.execute(statement).one_or_none()
    return None if row is None else _task(row)


def _select_push_tasks(connection: Connection, app_name: str | None) -> list[A2aTask]:
    configured = exists().where(
        a2a_push_configs.c.app_name == a2a_tasks.c.app_name,
        a2a_push_configs.c.task_id == a2a_tasks.c.task_id,
    )
    statement = select(a2a_tasks).where(configured)
    if app_name is not None:
        statement = statement.where(a2a_tasks.c.app_name == app_name)
    statement = statement.order_by(
        a2a_tasks.c.created_at, a2a_tasks.c.app_name, a2a_tasks.c.task_id
    )
    return [_task(row) for row in connection.execute(statement)]


def _claim_where(app_name: str, task_id: str, stop: str) -> list[ColumnElement[bool]]:
    return [
        a2a_push_sent.c.app_name == app_name,
        a2a_push_sent.c.task_id == task_id,
        a2a_push_sent.c.stop == stop,
    ]


def _select_claim(
    connection: Connection, app_name: str, task_id: str, stop: str
) -> A2aPushClaim | None:
    statement = select(a2a_push_sent).where(*_claim_where(app_name, task_id, stop))
    row = connection.execute(statement).one_or_none()
    if row is None:
        return None
    return A2aPushClaim(row.app_name, row.task_id, row.stop, row.holder, bool(row.done))


def _message_task(connection: Connection, where: ColumnElement[bool]) -> str | None:
    found = connection.execute(select(a2a_messages.c.task_id).where(where)).scalar_one_or_none()
    return None if found is None else str(found)


def _push_where(app_name: str, task_id: str) -> list[ColumnElement[bool]]:
    return [a2a_push_configs.c.app_name == app_name, a2a_push_configs.c.task_id == task_id]


def _replace_push(connection: Connection, config: A2aPushConfig) -> None:
    where = [
        *_push_where(config.app_name, config.task_id),
        a2a_push_configs.c.config_id == config.config_id,
    ]
    connection.execute(delete(a2a_push_configs).where(*where))
    connection.execute(
        insert(a2a_push_configs).values(
            app_name=config.app_name,
            task_id=config.task_id,
            config_id=config.config_id,
            config=encode_json_value(config.config),
            created_at=config.created_at,
        )
    )


def _select_push(connection: Connection, app_name: str, task_id: str) -> list[A2aPushConfig]:
    statement = (
        select(a2a_push_configs)
        .where(*_push_where(app_name, task_id))
        .order_by(a2a_push_configs.c.created_at, a2a_push_configs.c.config_id)
    )
    return [
        A2aPushConfig(
            app_name=row.app_name,
            task_id=row.task_id,
            config_id=row.config_id,
            config=json.loads(row.config),
            created_at=float(row.created_at),
        )
        for row in connection.execute(statement)
    ]


def _delete(connection: Connection, statement: Any) -> int:
    """Run a DELETE or UPDATE; how many rows it touched."""
    return int(connection.execute(statement).rowcount)


class SqlA2aStore(A2aStore):
    """The A2A rows of ``database`` (the session store's; ``SqlSessionStore.a2a`` is one)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def record_task(self, task: A2aTask) -> None:
        statement = insert(a2a_tasks).values(
            app_name=task.app_name,
            task_id=task.task_id,
            user_id=task.user_id,
            session_id=task.session_id,
            created_at=task.created_at,
        )
        try:
            await self.database.transaction(_insert, statement, write=True)
        except IntegrityError:
            raise AlreadyExistsError(
                f"app {task.app_name!r} already has an A2A task {task.task_id!r}"
            ) from None

    async def get_task(self, app_name: str, task_id: str) -> A2aTask | None:
        return await self.database.transaction(_select_task, app_name, task_id, write=False)

    async def claim_message(
        self, app_name: str, user_id: str, session_id: str, message_id: str, task_id: str
    ) -> str | None:
        key = {
            "app_name": app_name,
            "user_id": user_id,
            "session_id": session_id,
            "message_id": message_id,
        }
        try:
            statement = insert(a2a_messages).values(**key, task_id=task_id)
            await self.database.transaction(_insert, statement, write=True)
            return None
        except IntegrityError:
            return await self.message_task(app_name, user_id, session_id, message_id)

    async def message_task(
        self, app_name: str, user_id: str, session_id: str, message_id: str
    ) -> str | None:
        where = and_(
            a2a_messages.c.app_name == app_name,
            a2a_messages.c.user_id == user_id,
            a2a_messages.c.session_id == session_id,
            a2a_messages.c.message_id == message_id,
        )
        return await self.database.transaction(_message_task, where, write=False)

    async def set_push_config(self, config: A2aPushConfig) -> A2aPushConfig:
        await self.database.transaction(_replace_push, config, write=True)
        return config

    async def list_push_configs(self, app_name: str, task_id: str) -> list[A2aPushConfig]:
        return await self.database.transaction(_select_push, app_name, task_id, write=False)

    async def delete_push_config(self, app_name: str, task_id: str, config_id: str) -> bool:
        statement = delete(a2a_push_configs).where(
            *_push_where(app_name, task_id), a2a_push_configs.c.config_id == config_id
        )
        return bool(await self.database.transaction(_delete, statement, write=True))

    async def list_push_tasks(self, app_name: str | None = None) -> list[A2aTask]:
        return await self.database.transaction(_select_push_tasks, app_name, write=False)

    async def claim_push(
        self, app_name: str, task_id: str, stop: str, holder: str, *, replacing: str | None = None
    ) -> bool:
        if replacing is not None:
            statement = (
                update(a2a_push_sent)
                .where(
                    *_claim_where(app_name, task_id, stop),
                    a2a_push_sent.c.holder == replacing,
                    a2a_push_sent.c.done.is_(False),
                )
                .values(holder=holder, claimed_at=time.time())
            )
            return bool(await self.database.transaction(_delete, statement, write=True))
        claim = insert(a2a_push_sent).values(
            app_name=app_name,
            task_id=task_id,
            stop=stop,
            holder=holder,
            done=False,
            claimed_at=time.time(),
        )
        try:
            await self.database.transaction(_insert, claim, write=True)
        except IntegrityError:
            return False
        return True

    async def push_claim(self, app_name: str, task_id: str, stop: str) -> A2aPushClaim | None:
        return await self.database.transaction(_select_claim, app_name, task_id, stop, write=False)

    async def finish_push(self, app_name: str, task_id: str, stop: str) -> None:
        statement = (
            update(a2a_push_sent).where(*_claim_where(app_name, task_id, stop)).values(done=True)
        )
        await self.database.transaction(_delete, statement, write=True)
