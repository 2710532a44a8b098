"""``SqlRunStore``: runs and schedules in the tables ``cairn_runs`` and ``cairn_schedules`` of
a SQL session store's database.

Every change of a row is one conditional statement (``UPDATE ... WHERE status IN (...) AND
owner = ...``, a compare-and-set on ``next_run_at`` for a schedule) whose count of matched
rows says whether it happened: of two processes racing for a row, one changes it and the
other is told it did not.

Durability: a new run or schedule, and a schedule's advance (which decides that it fires),
wait for the disk at commit. A run's updates need not (``durable=False``): a crash of the
database host may lose the last status change, and the run's events in the session's log say
what really happened; ``cairn.runs.execute`` recovers the row from them (a run seen running
whose invocation already ended is settled without running again).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Collection
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    case,
    delete,
    false,
    insert,
    null,
    select,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from cairn.errors import AlreadyExistsError
from cairn.sessions.run_store import (
    MAX_RUNS_PER_READ,
    CancelRequest,
    RunStatus,
    RunStore,
    StoredRun,
    StoredSchedule,
)
from cairn.sessions.sql.database import Database
from cairn.sessions.sql.schema import encode_json_value, runs, schedules

RunKey = tuple[str, str, str, str]
_ACTIVE = [RunStatus.PENDING.value, RunStatus.RUNNING.value]
_REPORTED = [s.value for s in RunStatus if s.ended or s is RunStatus.PAUSED]


def _json_or_none(value: Any) -> str | None:
    return None if value is None else encode_json_value(value)


def _name_or_none(kind: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else kind(value).value


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _webhook_done(value: Any) -> Any:
    # False is NULL for a run without a webhook: the index cairn_runs_by_webhook then finds
    # only runs that have one (NULL reads back as False).
    if value:
        return True
    return case((runs.c.webhook.is_(None), null()), else_=False)


_ENCODERS: dict[str, Callable[[Any], Any]] = {
    "status": lambda value: RunStatus(value).value,
    "owner": lambda value: value,
    "started_at": _float_or_none,
    "ended_at": _float_or_none,
    "cancel": _name_or_none(CancelRequest),
    "error": _json_or_none,
    "request": encode_json_value,
    "webhook_done": _webhook_done,
    "attempts": int,
}
"""How each field ``update_run`` may change is written to its column."""


def _run_row(run: StoredRun) -> dict[str, Any]:
    return {
        "app_name": run.app_name,
        "user_id": run.user_id,
        "session_id": run.session_id,
        "run_id": run.run_id,
        "status": RunStatus(run.status).value,
        "strategy": run.strategy,
        "request": encode_json_value(run.request),
        "created_at": run.created_at,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "owner": run.owner,
        "cancel": None if run.cancel is None else CancelRequest(run.cancel).value,
        "error": _json_or_none(run.error),
        "webhook": run.webhook,
        "webhook_done": run.webhook_done or (None if run.webhook is None else False),
        "attempts": run.attempts,
        "metadata": encode_json_value(run.metadata),
    }


def _run(row: Any) -> StoredRun:
    return StoredRun(
        app_name=row.app_name,
        user_id=row.user_id,
        session_id=row.session_id,
        run_id=row.run_id,
        seq=int(row.seq),
        status=RunStatus(row.status),
        strategy=row.strategy,
        request=json.loads(row.request),
        created_at=float(row.created_at),
        started_at=_float_or_none(row.started_at),
        ended_at=_float_or_none(row.ended_at),
        owner=row.owner,
        cancel=None if row.cancel is None else CancelRequest(row.cancel),
        error=None if row.error is None else json.loads(row.error),
        webhook=row.webhook,
        webhook_done=bool(row.webhook_done),
        attempts=int(row.attempts),
        metadata=json.loads(row.metadata),
    )


def _schedule_row(schedule: StoredSchedule) -> dict[str, Any]:
    return {
        "app_name": schedule.app_name,
        "user_id": schedule.user_id,
        "schedule_id": schedule.schedule_id,
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "session_id": schedule.session_id,
        "request": encode_json_value(schedule.request),
        "next_run_at": schedule.next_run_at,
        "created_at": schedule.created_at,
        "enabled": schedule.enabled,
        "strategy": schedule.strategy,
        "webhook": schedule.webhook,
        "last_run_id": schedule.last_run_id,
        "metadata": encode_json_value(schedule.metadata),
    }


def _schedule(row: Any) -> StoredSchedule:
    return StoredSchedule(
        app_name=row.app_name,
        user_id=row.user_id,
        schedule_id=row.schedule_id,
        cron=row.cron,
        timezone=row.timezone,
        session_id=row.session_id,
        request=json.loads(row.request),
        next_run_at=float(row.next_run_at),
        created_at=float(row.created_at),
        enabled=bool(row.enabled),
        strategy=row.strategy,
        webhook=row.webhook,
        last_run_id=row.last_run_id,
        metadata=json.loads(row.metadata),
    )


_RUN_KEY = and_(
    runs.c.app_name == bindparam("key_app"),
    runs.c.user_id == bindparam("key_user"),
    runs.c.session_id == bindparam("key_session"),
    runs.c.run_id == bindparam("key_run"),
)
"""One run by its key, built once (building a clause costs more than running it on SQLite);
``_run_key(key)`` gives its parameters."""
_SELECT_RUN = select(runs).where(_RUN_KEY)


def _run_key(key: RunKey) -> dict[str, str]:
    return {"key_app": key[0], "key_user": key[1], "key_session": key[2], "key_run": key[3]}


def _is_schedule(app_name: str, user_id: str, schedule_id: str) -> ColumnElement[bool]:
    return and_(
        schedules.c.app_name == app_name,
        schedules.c.user_id == user_id,
        schedules.c.schedule_id == schedule_id,
    )


# -- run operations (each runs in one transaction of the database) ---------------------------
def _create_run(connection: Connection, row: dict[str, Any]) -> int:
    key = connection.execute(insert(runs).values(row)).inserted_primary_key
    assert key is not None
    return int(key[0])


def _select_run(connection: Connection, key: RunKey) -> StoredRun | None:
    row = connection.execute(_SELECT_RUN, _run_key(key)).one_or_none()
    return None if row is None else _run(row)


def _select_runs(
    connection: Connection, where: list[ColumnElement[bool]], newest_first: bool, limit: int
) -> list[StoredRun]:
    order = runs.c.seq.desc() if newest_first else runs.c.seq
    statement = select(runs).where(*where).order_by(order).limit(limit)
    return [_run(row) for row in connection.execute(statement)]


def _update_run(
    connection: Connection,
    key: RunKey,
    expect: list[ColumnElement[bool]],
    values: dict[str, Any],
) -> StoredRun | None:
    if values:
        statement = update(runs).where(_RUN_KEY, *expect).values(values)
        if connection.execute(statement, _run_key(key)).rowcount != 1:
            return None
        return _select_run(connection, key)
    row = connection.execute(select(runs).where(_RUN_KEY, *expect), _run_key(key)).one_or_none()
    return None if row is None else _run(row)


# -- schedule operations ----------------------------------------------------------------------
def _create_schedule(connection: Connection, row: dict[str, Any]) -> None:
    connection.execute(insert(schedules).values(row))


def _select_schedules(
    connection: Connection, where: list[ColumnElement[bool]], order: list[Any], limit: int
) -> list[StoredSchedule]:
    statement = select(schedules).where(*where).order_by(*order).limit(limit)
    return [_schedule(row) for row in connection.execute(statement)]


def _changed_rows(connection: Connection, statement: Any) -> int:
    return int(connection.execute(statement).rowcount)


class SqlRunStore(RunStore):
    """Runs in ``cairn_runs`` and schedules in ``cairn_schedules`` of ``database`` (the session
    store's ``database``; ``SqlSessionStore.runs`` is one)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    # -- runs -----------------------------------------------------------------------------
    async def create_run(self, run: StoredRun) -> StoredRun:
        try:
            seq = await self.database.transaction(_create_run, _run_row(run), write=True)
        except IntegrityError:
            raise AlreadyExistsError(
                f"session {run.session_id!r} already has a run {run.run_id!r}; "
                "give a new id (or none)"
            ) from None
        return dataclasses.replace(run, seq=seq)

    async def get_run(
        self, app_name: str, user_id: str, session_id: str, run_id: str
    ) -> StoredRun | None:
        key = (app_name, user_id, session_id, run_id)
        return await self.database.transaction(_select_run, key, write=False)

    async def list_runs(
        self,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        *,
        statuses: Collection[RunStatus] | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[StoredRun]:
        # Served by cairn_runs_by_session (or cairn_runs_by_user), read backwards.
        where = [runs.c.app_name == app_name, runs.c.user_id == user_id]
        if session_id is not None:
            where.append(runs.c.session_id == session_id)
        if before_seq is not None:
            where.append(runs.c.seq < before_seq)
        if statuses is not None:
            where.append(runs.c.status.in_([RunStatus(s).value for s in statuses]))
        limit = min(limit, MAX_RUNS_PER_READ)
        return await self.database.transaction(_select_runs, where, True, limit, write=False)

    async def update_run(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        run_id: str,
        *,
        expect_status: Collection[RunStatus] | None = None,
        expect_owner: str | None = None,
        **changes: Any,
    ) -> StoredRun | None:
        unknown = set(changes) - set(_ENCODERS)
        if unknown:
            raise TypeError(
                f"update_run cannot change {sorted(unknown)}; it changes {sorted(_ENCODERS)}"
            )
        values = {name: _ENCODERS[name](value) for name, value in changes.items()}
        expect: list[ColumnElement[bool]] = []
        if expect_status is not None:
            expect.append(runs.c.status.in_([RunStatus(s).value for s in expect_status]))
        if expect_owner is not None:
            expect.append(runs.c.owner == expect_owner)
        key = (app_name, user_id, session_id, run_id)
        return await self.database.transaction(
            _update_run, key, expect, values, write=True, durable=False
        )

    async def unfinished_runs(
        self, *, app_name: str | None = None, limit: int = MAX_RUNS_PER_READ
    ) -> list[StoredRun]:
        # Served by cairn_runs_by_status.
        where: list[ColumnElement[bool]] = [runs.c.status.in_(_ACTIVE)]
        if app_name is not None:
            where.append(runs.c.app_name == app_name)
        limit = min(limit, MAX_RUNS_PER_READ)
        return await self.database.transaction(_select_runs, where, False, limit, write=False)

    async def undelivered_webhooks(self, *, limit: int = MAX_RUNS_PER_READ) -> list[StoredRun]:
        # Served by cairn_runs_by_webhook: webhook_done is false only for runs with a webhook.
        where = [runs.c.webhook_done == false(), runs.c.status.in_(_REPORTED)]
        limit = min(limit, MAX_RUNS_PER_READ)
        return await self.database.transaction(_select_runs, where, False, limit, write=False)

    # -- schedules -------------------------------------------------------------------------
    async def create_schedule(self, schedule: StoredSchedule) -> StoredSchedule:
        try:
            await self.database.transaction(_create_schedule, _schedule_row(schedule), write=True)
        except IntegrityError:
            raise AlreadyExistsError(
                f"user {schedule.user_id!r} already has a schedule "
                f"{schedule.schedule_id!r}; give a new id (or none)"
            ) from None
        return schedule

    async def get_schedule(
        self, app_name: str, user_id: str, schedule_id: str
    ) -> StoredSchedule | None:
        where = [_is_schedule(app_name, user_id, schedule_id)]
        found = await self.database.transaction(_select_schedules, where, [], 1, write=False)
        return found[0] if found else None

    async def list_schedules(
        self, app_name: str, user_id: str | None = None, *, limit: int = 100
    ) -> list[StoredSchedule]:
        where: list[ColumnElement[bool]] = [schedules.c.app_name == app_name]
        if user_id is not None:
            where.append(schedules.c.user_id == user_id)
        order = [schedules.c.created_at, schedules.c.schedule_id]
        return await self.database.transaction(_select_schedules, where, order, limit, write=False)

    async def delete_schedule(self, app_name: str, user_id: str, schedule_id: str) -> bool:
        statement = delete(schedules).where(_is_schedule(app_name, user_id, schedule_id))
        return bool(await self.database.transaction(_changed_rows, statement, write=True))

    async def due_schedules(self, now: float, *, limit: int = 100) -> list[StoredSchedule]:
        # Served by cairn_schedules_due.
        where = [schedules.c.enabled == true(), schedules.c.next_run_at <= now]
        order = [schedules.c.next_run_at]
        return await self.database.transaction(_select_schedules, where, order, limit, write=False)

    async def advance_schedule(
        self,
        schedule: StoredSchedule,
        *,
        next_run_at: float,
        last_run_id: str | None,
    ) -> bool:
        statement = (
            update(schedules)
            .where(
                _is_schedule(schedule.app_name, schedule.user_id, schedule.schedule_id),
                schedules.c.next_run_at == schedule.next_run_at,
            )
            .values(next_run_at=next_run_at, last_run_id=last_run_id)
        )
        # Durable: the advance decides that this process fires the schedule.
        return bool(await self.database.transaction(_changed_rows, statement, write=True))
