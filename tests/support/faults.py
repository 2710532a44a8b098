"""A fault at the Nth await point of some async work: the caller cancelled, or the database cut.

``run_with_fault(work, at=N, fault=...)`` runs ``work()`` in a task and counts every
suspension of it and of every task it starts (the store's own tasks, the driver's). Just
before suspension number N, the fault happens: ``cancel`` cancels the caller's task (as a
client disconnect or a timeout does, so the ``CancelledError`` lands at exactly that await);
``cancel_again_and_again`` does that at every later suspension of the caller too (as anyio's
cancel scopes do); ``cut(url)`` terminates every connection the database server has to the
store's database (as an administrator or a failover does) and waits until they are gone.
Looping N from 0 until the work finishes before its Nth suspension puts the fault at every
await point, deterministically: no timing decides where it lands.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

from sqlalchemy.engine import make_url

_PLAN: contextvars.ContextVar[Plan | None] = contextvars.ContextVar("fault_plan", default=None)


@dataclasses.dataclass
class Plan:
    at: int
    fault: Callable[[Plan], None]
    repeat: bool = False
    steps: int = 0
    fired: bool = False
    caller: asyncio.Task[Any] | None = None

    def suspending(self) -> None:
        step = self.steps
        self.steps += 1
        again = self.repeat and self.fired and asyncio.current_task() is self.caller
        if step == self.at or again:
            self.fired = True
            self.fault(self)


@dataclasses.dataclass
class Outcome:
    steps: int
    """Suspensions counted: when fewer than ``at``, the fault never happened."""
    fired: bool
    error: BaseException | None


class _Stepped:
    def __init__(self, coroutine: Coroutine[Any, Any, Any], plan: Plan) -> None:
        self._coroutine = coroutine
        self._plan = plan

    def __await__(self) -> Generator[Any, Any, Any]:
        inner = self._coroutine.__await__()
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                yielded = inner.send(value) if error is None else inner.throw(error)
            except StopIteration as stop:
                return stop.value
            self._plan.suspending()
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # a cancellation (or close) thrown in by the task
                value, error = None, exc


async def _stepped(coroutine: Coroutine[Any, Any, Any], plan: Plan) -> Any:
    return await _Stepped(coroutine, plan)


def _task_factory(
    loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, Any], **kwargs: Any
) -> asyncio.Task[Any]:
    plan = _PLAN.get()
    if plan is not None:
        coroutine = _stepped(coroutine, plan)
    return asyncio.Task(coroutine, loop=loop, **kwargs)


async def run_with_fault(
    work: Callable[[], Awaitable[Any]],
    *,
    at: int,
    fault: Callable[[Plan], None],
    repeat: bool = False,
    within: float = 60.0,
) -> Outcome:
    """Run ``work()`` with ``fault`` at suspension ``at``; what it raised (None if nothing)."""
    loop = asyncio.get_running_loop()
    plan = Plan(at=at, fault=fault, repeat=repeat)
    previous = loop.get_task_factory()
    loop.set_task_factory(_task_factory)  # type: ignore[arg-type]
    token = _PLAN.set(plan)
    try:

        async def call() -> Any:
            return await work()

        caller = asyncio.ensure_future(call())
    finally:
        _PLAN.reset(token)
    plan.caller = caller
    try:
        await asyncio.wait((caller,), timeout=within)
    finally:
        loop.set_task_factory(previous)
    assert caller.done(), f"the work hung with a fault at await point {at}"
    error = caller.exception() if not caller.cancelled() else asyncio.CancelledError()
    return Outcome(steps=plan.steps, fired=plan.fired, error=error)


def cancel(plan: Plan) -> None:
    assert plan.caller is not None
    plan.caller.cancel()


def cut(url: str) -> Callable[[Plan], None]:
    """A fault that terminates every server connection to ``url``'s database, and waits."""

    def fault(_plan: Plan) -> None:
        with concurrent.futures.ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, _terminate(url)).result()

    return fault


async def _terminate(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        import asyncpg

        connection = await asyncpg.connect(
            host=parsed.host, port=parsed.port, user=parsed.username, database="postgres"
        )
        try:
            await connection.execute(
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()",
                parsed.database,
            )
        finally:
            await connection.close()
        return
    import asyncmy

    connection = await asyncmy.connect(
        host=parsed.host, port=parsed.port or 3306, user=parsed.username, password=""
    )
    try:
        async with connection.cursor() as cursor:
            await cursor.execute(
                "SELECT id FROM information_schema.processlist "
                "WHERE db = %s AND id <> CONNECTION_ID()",
                (parsed.database,),
            )
            for (thread_id,) in await cursor.fetchall():
                await cursor.execute(f"KILL CONNECTION {int(thread_id)}")
    finally:
        connection.close()


async def open_transactions(url: str) -> list[str]:
    """The connections to ``url``'s database that are inside a transaction, described."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        import asyncpg

        connection = await asyncpg.connect(
            host=parsed.host, port=parsed.port, user=parsed.username, database="postgres"
        )
        try:
            rows = await connection.fetch(
                "SELECT pid, state, query FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid() AND xact_start IS NOT NULL",
                parsed.database,
            )
        finally:
            await connection.close()
        return [f"{row['pid']} {row['state']}: {row['query']}" for row in rows]
    import asyncmy

    connection = await asyncmy.connect(
        host=parsed.host, port=parsed.port or 3306, user=parsed.username, password=""
    )
    try:
        async with connection.cursor() as cursor:
            await cursor.execute(
                "SELECT p.id, t.trx_state, p.info FROM information_schema.innodb_trx AS t "
                "JOIN information_schema.processlist AS p ON p.id = t.trx_mysql_thread_id "
                "WHERE p.db = %s",
                (parsed.database,),
            )
            found = await cursor.fetchall()
    finally:
        connection.close()
    return [f"{thread} {state}: {info}" for thread, state, info in found]


async def connections(url: str) -> int:
    """How many connections the server has to ``url``'s database (the caller's excluded)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        import asyncpg

        connection = await asyncpg.connect(
            host=parsed.host, port=parsed.port, user=parsed.username, database="postgres"
        )
        try:
            count: int = await connection.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()",
                parsed.database,
            )
        finally:
            await connection.close()
        return count
    import asyncmy

    connection = await asyncmy.connect(
        host=parsed.host, port=parsed.port or 3306, user=parsed.username, password=""
    )
    try:
        async with connection.cursor() as cursor:
            await cursor.execute(
                "SELECT count(*) FROM information_schema.processlist WHERE db = %s",
                (parsed.database,),
            )
            (found,) = await cursor.fetchone()
    finally:
        connection.close()
    return int(found)
