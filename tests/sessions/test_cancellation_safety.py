"""A cancellation or a cut connection at any await point never leaves a transaction open.

An HTTP server cancels work whenever a client disconnects or a timeout fires, and a
database drops connections when an administrator or a failover says so. Either can land
between a statement and its commit, or while a connection is being handed back. Here each
fault is put, in turn, at every await point of one invocation (create the session, take
the lease, load, append, release) on each database store, and after each one: no
connection of the store's database is inside a transaction, the session runs at once
(a cancelled invocation gave its lease back), its state is the fold of its log, and
closing the store leaves no connection behind (none was lost outside the pool).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from google.genai import types
from tests.support.databases import MARIADB_AIOMYSQL, mariadb_database, postgres_database
from tests.support.faults import cancel, connections, cut, open_transactions, run_with_fault

from cairn import Agent, Event, Runner
from cairn.errors import StoreUnavailableError
from cairn.sessions import DatabaseSessionService, SessionLease
from cairn.sessions.sql.engines import IDLE_PING_AFTER
from cairn.sessions.verify import verify_session
from cairn.testing import ScriptedLlm

TTL = 1.0
"""The lease TTL: a lease orphaned by a cut connection frees the session this soon."""

AGENT = Agent(name="bot", model=ScriptedLlm(respond=lambda request: "noted"))


@contextlib.asynccontextmanager
async def aiomysql_database() -> AsyncIterator[str]:
    async with mariadb_database(MARIADB_AIOMYSQL) as url:  # type: ignore[attr-defined]
        yield url


DATABASES: dict[str, Callable[[], AbstractAsyncContextManager[str]]] = {
    "postgres": postgres_database,  # type: ignore[dict-item]
    "mariadb": mariadb_database,  # type: ignore[dict-item]
    "mariadb-aiomysql": aiomysql_database,
}


async def invoke(store: DatabaseSessionService, session_id: str, *, wait: float = 0.0) -> None:
    """One invocation on the session (created first if it does not exist yet)."""
    runner = Runner(
        app_name="app",
        agent=AGENT,
        session_service=store,
        session_busy_timeout=wait,
        session_lease_ttl=TTL,
    )
    if await store.get_session(app_name="app", user_id="u", session_id=session_id) is None:
        await store.create_session(app_name="app", user_id="u", session_id=session_id)
    async for _ in runner.run_async(
        user_id="u",
        session_id=session_id,
        new_message=types.UserContent("hello"),
        state_delta={"user:seen": session_id, "turn": time.time()},
    ):
        pass


async def invoke_after_cut(store: DatabaseSessionService, session_id: str) -> None:
    """As a client would after the database came back: retry while the store is unavailable
    (each failed write drops a dead connection), wait out a lease the cut left behind."""
    for _ in range(20):
        with contextlib.suppress(StoreUnavailableError):
            return await invoke(store, session_id, wait=3 * TTL)
    raise AssertionError("the store did not recover from the cut")


async def no_transaction_open(url: str, where: str) -> None:
    """No connection to ``url``'s database is inside a transaction. One the store threw away
    may still be rolled back by the server for a moment (MariaDB ends a closed connection's
    transaction on its own time), so this waits; one left open in the pool never ends."""
    deadline = time.monotonic() + 60
    while found := await open_transactions(url):
        assert time.monotonic() < deadline, f"{where}: {found}"
        await asyncio.sleep(0.05)


async def no_connections_left(url: str) -> None:
    deadline = time.monotonic() + 30
    while (count := await connections(url)) > 0:
        assert time.monotonic() < deadline, f"{count} connections stayed after close()"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("database", DATABASES)
@pytest.mark.parametrize("fault", ["cancel", "cancel-again-and-again", "cut"])
async def test_a_fault_at_any_await_point_leaves_no_transaction_open(
    database: str, fault: str
) -> None:
    async with DATABASES[database]() as url:
        at = 0
        while True:
            store = DatabaseSessionService(url)
            await store.migrate()
            session_id = f"s{at}"
            outcome = await run_with_fault(
                functools.partial(invoke, store, session_id),
                at=at,
                fault=cut(url) if fault == "cut" else cancel,
                repeat=fault == "cancel-again-and-again",
            )
            where = f"{fault} at await point {at} of {outcome.steps}"
            expected = StoreUnavailableError if fault == "cut" else asyncio.CancelledError
            if outcome.error is not None and not isinstance(outcome.error, expected):
                trace = "".join(traceback.format_exception(outcome.error))
                raise AssertionError(f"{where}: {outcome.error!r}\n{trace}")
            await no_transaction_open(url, where)

            # The session is usable at once, from this same store.
            if fault == "cut":
                await asyncio.wait_for(invoke_after_cut(store, session_id), 60)
            else:
                await asyncio.wait_for(invoke(store, session_id), 60)
            await no_transaction_open(url, where)
            assert (
                await verify_session(store, app_name="app", user_id="u", session_id=session_id)
                == []
            ), where
            await store.close()
            await no_connections_left(url)
            if not outcome.fired:
                break
            at += 1
        assert at > 10  # the fault really went through the invocation's await points


@pytest.mark.parametrize("database", DATABASES)
async def test_connections_that_sat_idle_in_the_pool_commit_what_they_append(database: str) -> None:
    """More concurrent work than the store keeps connections ready for, then a pause: the
    connections checked out again are pinged first, and the ping must not leave them inside
    a transaction (every later statement would run in it, seen by no one, never committed)."""
    async with DATABASES[database]() as url:
        store, reader = DatabaseSessionService(url), DatabaseSessionService(url)
        sessions = [
            await store.create_session(app_name="app", user_id="u", session_id=f"s{i}")
            for i in range(12)
        ]
        for turn in range(3):
            await asyncio.gather(
                *(
                    store.append_event(session, Event(author="bot", state={"turn": turn}))
                    for session in sessions
                )
            )
            assert await open_transactions(url) == [], f"after turn {turn}"
            for session in sessions:
                seen = await reader.get_session(app_name="app", user_id="u", session_id=session.id)
                assert seen is not None and seen.state == {"turn": turn}, f"turn {turn}"
            await asyncio.sleep(IDLE_PING_AFTER + 0.5)  # the pooled connections now get pinged
        await store.close()
        await reader.close()


class CheckingStore(DatabaseSessionService):
    """The real store; after each lease poll it looks at what the database holds for it
    (the caller is then between two polls, so nothing of the store's may be open)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url
        self.polls = 0
        self.open_between_polls: list[str] = []
        self.watching = True
        """Off while the test itself writes (its own transaction is not a poll's)."""
        self.checking = False

    async def acquire_session_lease(self, **key: Any) -> SessionLease | str:
        holder = await super().acquire_session_lease(**key)
        if self.watching:
            self.checking = True
            try:
                self.open_between_polls += await open_transactions(self.url)
            finally:
                self.checking = False
            self.polls += 1
        return holder


@pytest.mark.parametrize("database", DATABASES)
async def test_waiting_for_a_busy_session_holds_no_transaction_between_polls(
    database: str,
) -> None:
    async with DATABASES[database]() as url:
        store = CheckingStore(url)
        await store.create_session(app_name="app", user_id="u", session_id="busy")
        key = {"app_name": "app", "user_id": "u", "session_id": "busy"}
        taken = await store.acquire_session_lease(**key, holder="other", ttl=600)
        assert isinstance(taken, SessionLease)
        waiter = asyncio.create_task(invoke(store, "busy", wait=600))
        deadline = time.monotonic() + 60
        while store.polls < 8 or store.checking:
            assert time.monotonic() < deadline and not waiter.done()
            await asyncio.sleep(0.01)
        store.watching = False  # no check may overlap the release below
        await store.release_session_lease(**key, holder="other", generation=taken.generation)
        await asyncio.wait_for(waiter, 60)
        assert store.open_between_polls == []
        await store.close()
