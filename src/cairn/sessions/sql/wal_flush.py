"""Group commit for a SQLite file in WAL mode: durable writers share the flushes of its log.

With ``synchronous=FULL`` SQLite flushes the write-ahead log to disk inside every commit,
one writer after the other, so a disk that takes 3 ms per flush caps a file at about 300
durable commits a second, however many writers wait. cairn's SQLite connections commit
with ``synchronous=NORMAL`` (the commit reaches the operating system, which a crash of the
process cannot lose) and a durable writer then waits for a flush of the log that began
after its commit: ``os.fsync`` of the ``-wal`` file, which is what SQLite's own commit does
with ``FULL``. Writers that commit while a flush runs share the next one, so the file
takes one flush per batch of writers instead of one per writer.

A write is on disk once ``flushed`` returns, as with ``FULL``. Unlike ``FULL``, another
reader may see it in the short time between its commit and that flush; after a power loss
(not a crash of the process) such a write can be gone although a reader saw it. Its
writer was never told it was stored.
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cairn.errors import StoreUnavailableError


class WalFlusher:
    """Flushes the write-ahead log of the SQLite file ``database`` for the writers that
    committed without flushing it."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self._wal = Path(f"{database}-wal")
        self._lock = threading.Lock()
        self._committed = 0
        """Tickets handed out: commits waiting for (or covered by) a flush."""
        self._flushed = 0
        """Every ticket up to this one is on disk (written by the flushing thread only)."""
        self._executor: ThreadPoolExecutor | None = None

    def committed(self) -> int:
        """A ticket for a commit that just ended (call it after the commit, never before)."""
        with self._lock:
            self._committed += 1
            return self._committed

    async def flushed(self, ticket: int) -> None:
        """Return once a flush that began after ``ticket``'s commit has ended."""
        if self._flushed >= ticket:
            return
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="cairn-wal-flush")
            executor = self._executor
        await asyncio.get_running_loop().run_in_executor(executor, self._flush_through, ticket)

    def _flush_through(self, ticket: int) -> None:
        # Calls run one at a time on the one thread: the first flushes every commit
        # ticketed so far, and those queued behind it find their ticket covered.
        if self._flushed >= ticket:
            return
        with self._lock:
            target = self._committed
        try:
            self._fsync()
        except OSError as exc:
            raise StoreUnavailableError(
                f"SQLite file {self.database}: flushing its write-ahead log to disk failed "
                f"({exc.strerror or exc}); the last writes may not be on disk. Check the disk "
                "(space, errors) and the file's permissions."
            ) from exc
        self._flushed = target

    def _fsync(self) -> None:
        try:
            # Writable: Windows flushes a file's buffers only through a handle that can write.
            descriptor = os.open(self._wal, os.O_RDWR)
        except FileNotFoundError:
            # The log is gone only when the last connection closed: its checkpoint moved
            # every commit into the database file and flushed that.
            return
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def close(self) -> None:
        """Stop the flushing thread (a flush under way ends first; a later write starts
        another)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
