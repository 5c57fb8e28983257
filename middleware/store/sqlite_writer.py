"""The store's single writer: group commit over one aiosqlite connection.

Every write is a function ``(sqlite3.Connection) -> T`` run in the connection's worker
thread. Writes that arrive while a batch is running are queued and then applied together:
one thread hop and one ``BEGIN IMMEDIATE … COMMIT`` for the whole batch, each write in its
own SAVEPOINT so one that fails is rolled back alone and reports its own error. Alone, a
write costs one hop; under load, many writes share one commit. This is what keeps the
store off the critical path of every turn (measured in ``bench/overhead.py``).

aiosqlite exposes no public "run this function in the connection thread"; we use its
``_execute``/``_conn`` (stable since aiosqlite 0.11, the version range is pinned), which
is one hop instead of one hop per statement.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

import aiosqlite

log = logging.getLogger(__name__)

T = TypeVar("T")
Write = Callable[[sqlite3.Connection], Any]
# A batch larger than this is split, so one commit never holds the file for long.
MAX_BATCH = 256


class BatchedWriter:
    """Serialises all writes through one connection, batching concurrent ones."""

    def __init__(self, conn: aiosqlite.Connection, lock: asyncio.Lock) -> None:
        self._conn = conn
        # Shared with the store's other (multi-statement) transactions on this connection.
        self._lock = lock
        self._pending: list[tuple[Write, asyncio.Future[Any]]] = []
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def start(self) -> None:
        self._task = asyncio.create_task(self._drain(), name="sqlite-writer")

    async def run(self, write: Callable[[sqlite3.Connection], T]) -> T:
        """Apply ``write`` atomically; return its result or raise its ``sqlite3.Error``.

        Once queued, the write happens even if the caller is cancelled: data a client
        handed over is not lost because the client went away.
        """
        if self._closing or self._task is None:
            raise sqlite3.ProgrammingError("the writer is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((write, future))
        self._wakeup.set()
        return await asyncio.shield(future)

    async def close(self) -> None:
        """Apply what is queued, then stop."""
        self._closing = True
        self._wakeup.set()
        if self._task is not None:
            await self._task
            self._task = None

    async def _drain(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._pending:
                batch = self._pending[:MAX_BATCH]
                del self._pending[:MAX_BATCH]
                await self._apply(batch)
            if self._closing:
                return

    async def _apply(self, batch: list[tuple[Write, asyncio.Future[Any]]]) -> None:
        writes = [write for write, _ in batch]
        try:
            async with self._lock:
                outcomes = await self._conn._execute(  # type: ignore[no-untyped-call]
                    _apply_batch, self._conn._conn, writes
                )
        except Exception as exc:  # the whole batch failed (BEGIN or COMMIT)
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
            if future.done():
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)


def _apply_batch(conn: sqlite3.Connection, writes: list[Write]) -> list[tuple[bool, Any]]:
    """Runs in the connection's thread: one transaction, one savepoint per write."""
    outcomes: list[tuple[bool, Any]] = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        for write in writes:
            conn.execute("SAVEPOINT write")
            try:
                outcomes.append((True, write(conn)))
            except Exception as exc:
                conn.execute("ROLLBACK TO write")
                outcomes.append((False, exc))
            conn.execute("RELEASE write")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return outcomes
