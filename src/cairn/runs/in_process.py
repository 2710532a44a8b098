"""The in-process executor: runs execute in this process, one session's runs one after
another in arrival order.

Each session with runs here has a queue and a worker task (gone when the queue is
empty); each run executes in a task of its own (``execute_run``), so that a cancel stops
that run and not the worker. The rows in the store stay the truth: a run queued in another
process that arrived earlier is waited for, a cancel asked from another process is seen
by a watcher polling the store while runs execute here, and the runs of a process that
died are taken over by the next executor that starts on the same store.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

from cairn.agents.run_config import MultitaskStrategy
from cairn.errors import SessionBusyError
from cairn.events.event import Event
from cairn.runners.outcome import InvocationOutcome
from cairn.runners.runner import Runner
from cairn.runs.execute import RELEASED, execute_run
from cairn.runs.executor import RunExecutor
from cairn.runs.live import LiveRuns, RunKey
from cairn.runs.request import RunRequest
from cairn.runs.webhooks import deliver_run_webhook
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.lease import (
    SessionLease,
    holder_is_gone,
    holder_name,
    lease_holder,
    release_session,
    take_session_over,
)
from cairn.sessions.run_store import CancelRequest, RunStatus, RunStore, StoredRun
from cairn.sessions.uninterrupted import uninterrupted

logger = logging.getLogger(__name__)

RunnerFor = Callable[[str], Awaitable[Runner]]
"""The Runner of an app, by name (raises for an app this process does not serve)."""

SessionKey = tuple[str, str, str]

CANCEL_POLL = 0.5
"""Seconds between the watcher's looks for runs cancelled from another process."""
CLOSE_WAIT = 10.0
"""Seconds ``close`` gives cancelled runs to write their rows."""
_FIRST_WAIT = 0.02
_MAX_WAIT = 0.5


def _run_key(run: StoredRun) -> RunKey:
    return (*run.key, run.run_id)


def _abandoned(run: StoredRun) -> bool:
    """Given back by an executor that stopped, or owned by a process of this host that has
    exited (a row without owner is being submitted: not abandoned)."""
    return run.owner == RELEASED or (run.owner is not None and holder_is_gone(run.owner))


@dataclasses.dataclass
class _Queued:
    run: StoredRun
    take_over: bool = False
    ready: asyncio.Event | None = None
    """Set once the run may start (an interrupting run: once the running one is stopped)."""


@dataclasses.dataclass
class _SessionQueue:
    waiting: collections.deque[_Queued] = dataclasses.field(default_factory=collections.deque)
    worker: asyncio.Task[None] | None = None


class InProcessExecutor(RunExecutor):
    """Executes runs in this process's event loop (see the module's docstring)."""

    name = "in-process"

    def __init__(
        self,
        store: RunStore,
        sessions: BaseSessionService,
        runner_for: RunnerFor,
        *,
        lease_ttl: float = 30.0,
        cancel_poll: float = CANCEL_POLL,
        max_runs: int | None = None,
    ) -> None:
        if max_runs is not None and max_runs < 1:
            raise ValueError(f"max_runs must be at least 1 (or None: no limit); got {max_runs}")
        self.store = store
        self.sessions = sessions
        self.runner_for = runner_for
        self.owner = lease_holder(f"runs-{uuid.uuid4().hex[:8]}")
        """This executor's name in the rows it executes (host, process, instance)."""
        self.lease_ttl = lease_ttl
        self.cancel_poll = cancel_poll
        self.live_runs = LiveRuns()
        self._queues: dict[SessionKey, _SessionQueue] = {}
        self._running: dict[RunKey, asyncio.Task[None]] = {}
        self._started: dict[RunKey, bool] = {}
        """Runs here that continue an invocation, once claimed (they have begun, with no
        message to commit first)."""
        self._watcher: asyncio.Task[None] | None = None
        self._recovery: asyncio.Task[None] | None = None
        self._closing = False
        self._deliveries: set[asyncio.Task[None]] = set()
        """Webhook deliveries under way (a session's next run does not wait for them)."""
        self.max_runs = max_runs
        """Runs this executor executes at once (None: no limit); the others stay pending,
        in their sessions' order, until one ends."""
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self.waiting_for_place = 0
        """Runs whose turn in their session has come, waiting for one of the ``max_runs``."""

    # -- the seam ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Take over the unfinished runs whose executor is gone (its process exited, or it
        was closed), oldest first, and execute them (resumed, never re-sent). Done in the
        background: a store that cannot be reached yet is tried again, with a growing pause.
        An executor that was closed executes again once started."""
        self._closing = False
        self._recovery = asyncio.create_task(self._take_over_abandoned())

    async def _take_over_abandoned(self) -> None:
        pause = 1.0
        while True:
            try:
                await self.take_over_abandoned()
                return
            except Exception:
                logger.warning(
                    "could not look for runs to take over; trying again in %.0f s",
                    pause,
                    exc_info=True,
                )
            await asyncio.sleep(pause)
            pause = min(pause * 2, 60.0)

    async def take_over_abandoned(self) -> list[StoredRun]:
        """Queue here the unfinished runs whose executor is gone; returns them."""
        adopted_runs = []
        for run in await self.store.unfinished_runs():
            if not _abandoned(run):
                continue
            try:
                await self.runner_for(run.app_name)
            except Exception:
                continue  # an app this process does not serve: another one takes it over
            adopted = await self._adopt(run)
            if adopted is not None:
                self._enqueue(adopted, take_over=True)
                adopted_runs.append(adopted)
        return adopted_runs

    async def close(self) -> None:
        """Stop every run here: those running are cancelled at once and, like those still
        queued, given back (pending, no owner) for the next executor that starts."""
        self._closing = True
        for queue in list(self._queues.values()):
            waiting = list(queue.waiting)
            queue.waiting.clear()
            for queued in waiting:
                self.live_runs.end(_run_key(queued.run))
                await self._give_back(queued.run)
        tasks = [*self._running.values()]
        tasks += [q.worker for q in self._queues.values() if q.worker is not None]
        tasks += [t for t in (self._watcher, self._recovery) if t is not None]
        tasks += [*self._deliveries]  # left undelivered: ``deliver_pending`` sends them later
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_WAIT)

    async def submit(self, run: StoredRun) -> StoredRun:
        strategy = MultitaskStrategy(run.strategy)
        if strategy is MultitaskStrategy.REJECT:
            busy_with = await self._busy_with(run)
            if busy_with is not None:
                error = SessionBusyError(
                    app_name=run.app_name,
                    user_id=run.user_id,
                    session_id=run.session_id,
                    waited=0.0,
                    holder=busy_with,
                )
                await self.store.update_run(
                    *run.key,
                    run.run_id,
                    expect_status={RunStatus.PENDING},
                    status=RunStatus.CANCELLED,
                    ended_at=time.time(),
                    error={"type": type(error).__name__, "message": str(error)},
                )
                raise error
        queued = await self.store.update_run(
            *run.key, run.run_id, expect_status={RunStatus.PENDING}, owner=self.owner
        )
        if queued is None:  # cancelled meanwhile
            return await self.store.get_run(*run.key, run.run_id) or run
        if strategy not in (MultitaskStrategy.INTERRUPT, MultitaskStrategy.ROLLBACK):
            self._enqueue(queued)
            return queued
        # Take the head of the queue before stopping the running run: the session's next
        # run waits behind this one instead of starting the moment the stopped one ends.
        place = self._enqueue(queued, first=True, ready=asyncio.Event())
        assert place.ready is not None
        try:
            stopped = await self._stop_session(queued, CancelRequest(strategy.value))
            if stopped is not None and strategy is MultitaskStrategy.ROLLBACK:
                request = RunRequest.from_json(queued.request)
                place.run = (
                    await self.store.update_run(
                        *run.key,
                        run.run_id,
                        expect_status={RunStatus.PENDING},
                        request=dataclasses.replace(request, rewind_before=stopped).to_json(),
                    )
                    or place.run
                )
        finally:
            place.ready.set()
        return place.run

    async def cancel(self, run: StoredRun, how: CancelRequest) -> None:
        key = _run_key(run)
        queue = self._queue_of(run.key)
        if queue is not None:
            for queued in list(queue.waiting):
                if queued.run.run_id == run.run_id:
                    queue.waiting.remove(queued)
        ended = await self.store.update_run(
            *key,
            expect_status={RunStatus.PENDING},
            status=RunStatus.CANCELLED,
            cancel=how,
            ended_at=time.time(),
        )
        if ended is not None:
            task = self._task_here(key)
            if task is not None:
                task.cancel()  # it waited for its turn: it never starts
            self.live_runs.end(key)
            return
        running = await self.store.update_run(*key, expect_status={RunStatus.RUNNING}, cancel=how)
        if running is None:
            return  # it has ended
        task = self._task_here(key)
        if task is not None:
            task.cancel()
        else:
            await self._take_lease_from(running)

    def live(self, run: StoredRun, *, events: bool = True) -> AsyncIterator[Event] | None:
        key = _run_key(run)
        channel = self.live_runs.find(key)
        if channel is None:
            return None
        queue = self._queue_of(run.key)
        queued = queue is not None and any(q.run.run_id == run.run_id for q in queue.waiting)
        if not queued and self._task_here(key) is None:
            return None  # its channel was left behind by an event loop that has ended
        return channel.subscribe(events=events)

    def _task_here(self, key: RunKey) -> asyncio.Task[None] | None:
        """The run's task, if it executes in this event loop now."""
        task = self._running.get(key)
        if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
            return None
        return task

    def running_here(self, app_name: str, user_id: str, session_id: str) -> list[str]:
        found = []
        for key in list(self._running):
            channel = self.live_runs.find(key)
            if key[:3] != (app_name, user_id, session_id) or channel is None:
                continue
            if self._task_here(key) is None:
                continue
            if channel.published or self._started.get(key, False):
                found.append(key[3])
        return found

    # -- queues --------------------------------------------------------------------------------
    def _enqueue(
        self,
        run: StoredRun,
        *,
        first: bool = False,
        take_over: bool = False,
        ready: asyncio.Event | None = None,
    ) -> _Queued:
        """Queue the run (synchronously: a listener subscribing right after sees it all)."""
        self.live_runs.open(_run_key(run))
        queue = self._queue_of(run.key)
        if queue is None:
            queue = self._queues[run.key] = _SessionQueue()
        queued = _Queued(run, take_over, ready)
        if first:
            queue.waiting.appendleft(queued)
        else:
            queue.waiting.append(queued)
        if queue.worker is None:
            queue.worker = asyncio.create_task(self._work(run.key, queue))
        return queued

    def _queue_of(self, session: SessionKey) -> _SessionQueue | None:
        """The session's queue here, if it has one whose worker runs in this event loop (a
        worker left behind in a loop that has ended, as a test client's, is dropped)."""
        queue = self._queues.get(session)
        if queue is None or queue.worker is None:
            return queue
        if queue.worker.done() or queue.worker.get_loop() is not asyncio.get_running_loop():
            del self._queues[session]
            return None
        return queue

    async def _work(self, session: SessionKey, queue: _SessionQueue) -> None:
        try:
            while queue.waiting and not self._closing:
                queued = queue.waiting.popleft()
                key = _run_key(queued.run)
                task = asyncio.create_task(self._execute(queued))
                self._running[key] = task
                self._watch()
                try:
                    await asyncio.wait([task])
                finally:
                    if self._running.get(key) is task:
                        del self._running[key]
        finally:
            if self._queues.get(session) is queue:
                del self._queues[session]

    async def _execute(self, queued: _Queued) -> None:
        key = _run_key(queued.run)
        failure: list[BaseException] = []
        outcome = InvocationOutcome()
        channel = self.live_runs.open(key)
        run = queued.run
        try:
            if queued.ready is not None:
                await queued.ready.wait()
                run = queued.run
            if MultitaskStrategy(run.strategy) not in (
                MultitaskStrategy.INTERRUPT,
                MultitaskStrategy.ROLLBACK,
            ):
                await self._wait_for_earlier(run)
            runner = await self.runner_for(run.app_name)
            self._started[key] = bool(run.request.get("continuing", False))
            async with self._place():
                settled = await execute_run(
                    runner,
                    self.store,
                    run,
                    owner=self.owner,
                    take_over=queued.take_over,
                    on_event=channel.publish,
                    on_failure=failure.append,
                    stopping=lambda: self._closing,
                    outcome=outcome,
                )
            self._deliver(settled)
        except asyncio.CancelledError:
            if self._closing:
                await uninterrupted(self._give_back(run))
            else:
                current = await uninterrupted(self.store.get_run(*key))
                if current is not None:
                    self._deliver(current)
        except Exception as error:  # the app cannot be loaded, the store is unreachable
            logger.exception("run %s could not be executed", run.run_id)
            failure.append(error)
            with contextlib.suppress(Exception):
                await uninterrupted(
                    self.store.update_run(
                        *key,
                        expect_status={RunStatus.PENDING},
                        status=RunStatus.FAILED,
                        ended_at=time.time(),
                        error={"type": type(error).__name__, "message": str(error)},
                    )
                )
        finally:
            self._started.pop(key, None)
            self.live_runs.end(key, failure[0] if failure else None, outcome)

    @contextlib.asynccontextmanager
    async def _place(self) -> AsyncIterator[None]:
        """One of the ``max_runs`` places to execute a run in (none needed without a limit).
        A semaphore belongs to one event loop: a server whose lifespan runs again gets a new
        one."""
        if self.max_runs is None:
            yield
            return
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:
            self._slots = (loop, asyncio.Semaphore(self.max_runs))
        self.waiting_for_place += 1
        try:
            await self._slots[1].acquire()
        finally:
            self.waiting_for_place -= 1
        try:
            yield
        finally:
            self._slots[1].release()

    async def _wait_for_earlier(self, run: StoredRun) -> None:
        """Wait while the session has an earlier run, not cancelled, queued or running in
        another executor (one whose process is gone is taken over and executed here first)."""
        pause = _FIRST_WAIT
        while True:
            active = await self.store.list_runs(
                *run.key, statuses={RunStatus.PENDING, RunStatus.RUNNING}
            )
            earlier = [
                other
                for other in active
                if other.seq < run.seq
                and other.run_id != run.run_id
                and other.cancel is None
                and other.owner != self.owner
            ]
            if not earlier:
                return
            for other in earlier:
                if _abandoned(other):
                    adopted = await self._adopt(other)
                    if adopted is not None:
                        await self._execute(_Queued(adopted, take_over=True))
            await asyncio.sleep(pause)
            pause = min(pause * 2, _MAX_WAIT)

    async def _adopt(self, run: StoredRun) -> StoredRun | None:
        """Become the owner of an abandoned run (of two executors trying, one gets it)."""
        adopted = await self.store.update_run(
            *run.key,
            run.run_id,
            expect_status={run.status},
            expect_owner=run.owner,
            owner=self.owner,
        )
        if adopted is not None:
            logger.info("run %s: its executor %s is gone; resuming it", run.run_id, run.owner)
        return adopted

    async def _give_back(self, run: StoredRun) -> None:
        await self.store.update_run(
            *run.key,
            run.run_id,
            expect_status={RunStatus.PENDING},
            expect_owner=self.owner,
            owner=RELEASED,
        )

    # -- busy sessions, stopping runs ------------------------------------------------------------
    async def _busy_with(self, run: StoredRun) -> str | None:
        """What keeps the session busy: another run pending or running, or an invocation
        holding its lease; None when it is free."""
        queue = self._queue_of(run.key)
        if queue is not None and (queue.waiting or queue.worker is not None):
            running = [key[3] for key in self._running if key[:3] == run.key]
            queued = [queued.run.run_id for queued in queue.waiting]
            return next(iter(running + queued), "a run here")
        # Only runs that came first: of a crowd submitted at once with ``reject``, the first
        # runs and the others hear it is busy (each sees the others' rows as pending). A
        # later run already running holds the lease, which the probe below finds.
        earlier = await self.store.list_runs(
            *run.key, statuses={RunStatus.PENDING, RunStatus.RUNNING}, limit=1, before_seq=run.seq
        )
        if earlier:
            return earlier[0].run_id
        probe = lease_holder(f"probe-{run.run_id}")
        got = await self._acquire(run, probe)
        if isinstance(got, str):
            return got or None
        await self._release(run, probe, got)
        return None

    async def _stop_session(self, run: StoredRun, how: CancelRequest) -> str | None:
        """Cancel the session's running run (``interrupt``/``rollback``); its id, or None."""
        active = await self.store.list_runs(*run.key, statuses={RunStatus.RUNNING})
        stopped = None
        for other in active:
            if other.run_id != run.run_id:
                await self.cancel(other, how)
                stopped = other.run_id
        return stopped

    async def _take_lease_from(self, run: StoredRun) -> None:
        """Take the session's lease from the run's invocation (in another process) and give
        it back: that invocation's next append is refused, so it stops there."""
        taker = lease_holder(f"cancel-{run.run_id}")
        got = await self._acquire(run, taker)
        if isinstance(got, SessionLease):  # the run holds no lease (between steps, or ended)
            await self._release(run, taker, got)
            return
        if holder_name(got) != run.run_id:
            return  # another invocation holds the session: not the run's to stop
        taken = await take_session_over(
            self.sessions,
            app_name=run.app_name,
            user_id=run.user_id,
            session_id=run.session_id,
            holder=taker,
            ttl=self.lease_ttl,
            interrupting=got,
        )
        if taken is not None:
            await release_session(self.sessions, taken)

    async def _release(self, run: StoredRun, holder: str, lease: SessionLease) -> None:
        await self.sessions.release_session_lease(
            app_name=run.app_name,
            user_id=run.user_id,
            session_id=run.session_id,
            holder=holder,
            generation=lease.generation,
        )

    def _deliver(self, run: StoredRun) -> None:
        """Call the webhook of a run this executor settled, in a task of its own (the
        session's next run does not wait for the receiver)."""
        if not run.webhook or run.webhook_done or run.owner != self.owner:
            return
        if not (run.status.ended or run.status is RunStatus.PAUSED):
            return
        task = asyncio.create_task(self._deliver_webhook(run))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _deliver_webhook(self, run: StoredRun) -> None:
        try:
            await deliver_run_webhook(self.store, run)
        except Exception:  # the store is unreachable: ``deliver_pending`` retries at start
            logger.warning("run %s: its webhook could not be delivered", run.run_id, exc_info=True)

    async def _acquire(
        self, run: StoredRun, holder: str, *, replacing: str | None = None
    ) -> SessionLease | str:
        return await self.sessions.acquire_session_lease(
            app_name=run.app_name,
            user_id=run.user_id,
            session_id=run.session_id,
            holder=holder,
            ttl=self.lease_ttl,
            replacing=replacing,
        )

    # -- cancels asked from another process -------------------------------------------------------
    def _watch(self) -> None:
        if (
            self._watcher is None
            or self._watcher.done()
            or self._watcher.get_loop() is not asyncio.get_running_loop()
        ):
            self._watcher = asyncio.create_task(self._watch_cancels())

    async def _watch_cancels(self) -> None:
        """While runs execute here: cancel at once those another process asked to stop."""
        while self._running:
            await asyncio.sleep(self.cancel_poll)
            try:
                unfinished = await self.store.unfinished_runs()
            except Exception:
                logger.warning("could not look for cancelled runs", exc_info=True)
                continue
            for run in unfinished:
                if run.owner == self.owner and run.cancel is not None:
                    task = self._task_here(_run_key(run))
                    if task is not None and run.status is RunStatus.RUNNING:
                        task.cancel()
