"""The store's single writer: group commit on the event loop's own thread.

Every write is a function ``(sqlite3.Connection) -> T``. ``submit`` queues it and returns a
future at once; the queue is applied at the end of the current loop iteration (or by
``flush``, before a read), all of it in one ``BEGIN IMMEDIATE … COMMIT``, each write in
its own SAVEPOINT so one that fails is rolled back alone and reports its own error. Alone,
a write costs its statements and a commit; under load, the writes of every turn that got
that far in the same iteration share one commit.

Why on the loop's thread, not a worker thread: a turn's write is a handful of indexed
UPSERTs and one WAL append (``synchronous = NORMAL``: no fsync at commit), about 50 µs,
while a hop to aiosqlite's thread and back costs several times that in wake-ups and GIL
hand-offs (measured in ``bench/overhead.py``). The two things that could block the loop
for long are kept off it:

- another connection holding the write lock (a multi-statement transaction of this store,
  or another process): the loop's connection never waits (``busy_timeout = 0``); the batch
  goes to the worker-thread connection instead, which waits its normal busy timeout;
- WAL checkpoints, which copy pages and fsync: automatic checkpoints are off on the loop's
  connection. Every ``CHECKPOINT_EVERY`` commits, a passive checkpoint on the store's
  reader copies the WAL while writes go on inline; then a ``RESTART`` checkpoint on the
  worker-thread connection, under the write lock, copies the few pages written meanwhile,
  so the next commit writes the WAL from its start again. Writes made during that second
  step queue behind it as behind any transaction. (A passive checkpoint alone never
  catches up under steady load, and the WAL then grows without bound.)

aiosqlite exposes no public "run this function in the connection thread"; the fallback uses
its ``_execute``/``_conn`` (stable since aiosqlite 0.11, the version range is pinned), which
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
Pending = tuple[str, Write, "asyncio.Future[Any]"]
# Turns an SQLite failure during ``action`` into the error the caller sees.
ErrorFor = Callable[[str, sqlite3.Error], Exception]

# A batch larger than this is split, so one commit never holds the file for long.
MAX_BATCH = 256
# Commits between two WAL checkpoints (a turn's commit adds a handful of pages; SQLite's
# own default is a checkpoint per 1,000 pages).
CHECKPOINT_EVERY = 200


class GroupCommitWriter:
    """Serialises all writes, batching the ones queued in the same loop iteration.

    ``inline`` is a connection of the loop's thread; ``threaded`` is the aiosqlite
    connection the store's multi-statement transactions use, under ``lock``;
    ``checkpointer`` is another aiosqlite connection to the file (the store's reader).
    """

    def __init__(
        self,
        inline: sqlite3.Connection,
        threaded: aiosqlite.Connection,
        lock: asyncio.Lock,
        error_for: ErrorFor,
        checkpointer: aiosqlite.Connection,
    ) -> None:
        self._inline = inline
        self._threaded = threaded
        self._checkpointer = checkpointer
        self._lock = lock
        self._error_for = error_for
        self._pending: list[Pending] = []
        self._scheduled = False
        # A batch handed to the worker thread; later batches wait for it (order).
        self._handoff: asyncio.Task[None] | None = None
        self._checkpoint: asyncio.Task[None] | None = None
        self._commits = 0
        self._closed = False

    def submit(self, action: str, write: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        """Queue ``write`` now; the future resolves once it is committed.

        The future raises what ``error_for`` makes of an SQLite failure, or whatever
        ``write`` itself raised. Once queued, the write happens whether or not anybody
        awaits the future: data a client handed over is not lost because it went away.
        """
        if self._closed:
            raise self._error_for(action, sqlite3.ProgrammingError("the writer is closed"))
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((action, write, future))
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush_soon)
        return future

    def flush(self) -> None:
        """Apply what is queued now, unless the worker thread has it (order is kept).

        Called before reads, so a read sees every write queued before it.
        """
        while self._pending and self._handoff is None:
            batch = self._pending[:MAX_BATCH]
            del self._pending[:MAX_BATCH]
            if self._lock.locked():
                # A multi-statement transaction owns the file: queue behind it.
                self._hand_off(batch)
                return
            try:
                outcomes = _apply_batch(self._inline, [write for _, write, _ in batch])
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    self._fail(batch, exc)
                    continue
                # Another process holds the write lock: wait for it off the loop.
                self._hand_off(batch)
                return
            except sqlite3.Error as exc:
                self._fail(batch, exc)
                continue
            self._settle(batch, outcomes)
            self._committed()

    async def drain(self) -> None:
        """Return once everything queued so far is committed (or failed)."""
        while self._pending or self._handoff is not None:
            self.flush()
            if self._handoff is not None:
                await asyncio.shield(self._handoff)

    async def close(self) -> None:
        """Apply what is queued, let the checkpoint finish, then refuse new writes."""
        await self.drain()
        self._closed = True
        if self._checkpoint is not None:
            await self._checkpoint
        self._inline.close()

    def _flush_soon(self) -> None:
        self._scheduled = False
        self.flush()

    def _hand_off(self, batch: list[Pending]) -> None:
        self._handoff = asyncio.get_running_loop().create_task(
            self._apply_threaded(batch), name="sqlite-writer-handoff"
        )

    async def _apply_threaded(self, batch: list[Pending]) -> None:
        writes = [write for _, write, _ in batch]
        try:
            async with self._lock:
                outcomes = await self._threaded._execute(  # type: ignore[no-untyped-call]
                    _apply_batch, self._threaded._conn, writes
                )
        except sqlite3.Error as exc:
            self._fail(batch, exc)
        else:
            self._settle(batch, outcomes)
        finally:
            self._handoff = None
        # What queued up meanwhile goes next, in order.
        if self._pending and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush_soon)

    def _committed(self) -> None:
        self._commits += 1
        if self._commits % CHECKPOINT_EVERY == 0 and self._checkpoint is None:
            self._checkpoint = asyncio.get_running_loop().create_task(
                self._restart_wal(), name="sqlite-checkpoint"
            )

    async def _restart_wal(self) -> None:
        """Copy the whole WAL into the database, so the next commit starts it over: the
        bulk beside the writes, the rest (a few pages and the fsyncs) holding them."""
        try:
            await self._checkpointer.execute_fetchall("PRAGMA wal_checkpoint(PASSIVE)")
            async with self._lock:
                await self._threaded.execute_fetchall("PRAGMA wal_checkpoint(RESTART)")
        except sqlite3.Error as exc:
            # Harmless: the WAL only grows until the next one succeeds.
            log.warning("WAL checkpoint failed: %s", exc)
        finally:
            self._checkpoint = None

    def _settle(self, batch: list[Pending], outcomes: list[tuple[bool, Any]]) -> None:
        for (action, _, future), (ok, value) in zip(batch, outcomes, strict=True):
            if future.done():
                continue
            if ok:
                future.set_result(value)
            elif isinstance(value, sqlite3.Error):
                future.set_exception(self._error_for(action, value))
            else:
                future.set_exception(value)

    def _fail(self, batch: list[Pending], exc: sqlite3.Error) -> None:
        """The whole batch failed (BEGIN or COMMIT): every write reports it."""
        for action, _, future in batch:
            if not future.done():
                future.set_exception(self._error_for(action, exc))


def connect_inline(path: str) -> sqlite3.Connection:
    """The loop thread's connection: never waits for a lock, never checkpoints."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        conn.executescript(
            "PRAGMA busy_timeout = 0; PRAGMA synchronous = NORMAL; "
            "PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0;"
        )
    except BaseException:
        conn.close()
        raise
    return conn


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return int(code) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def _apply_batch(conn: sqlite3.Connection, writes: list[Write]) -> list[tuple[bool, Any]]:
    """One transaction, one savepoint per write (none for a write alone: the transaction is
    its savepoint); runs on whichever thread owns ``conn``."""
    outcomes: list[tuple[bool, Any]] = []
    alone = len(writes) == 1
    conn.execute("BEGIN IMMEDIATE")
    try:
        for write in writes:
            if not alone:
                conn.execute("SAVEPOINT write")
            try:
                outcomes.append((True, write(conn)))
            except Exception as exc:
                conn.execute("ROLLBACK" if alone else "ROLLBACK TO write")
                outcomes.append((False, exc))
                if alone:
                    return outcomes
            if not alone:
                conn.execute("RELEASE write")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return outcomes
