"""The writer's worker thread: aiosqlite's connection to the file, under the store's lock.
:mod:`middleware.store.sqlite_writer` writes on the event loop's own thread; two things
that could block the loop for long are kept off it and come here:

- another connection holding the write lock (a multi-statement transaction of this store,
  or another process): the loop's connection never waits (``busy_timeout = 0``); writes
  queue and go to the worker-thread connection instead, which waits its normal busy
  timeout, in order;
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

import aiosqlite

from middleware.store.sqlite_write_steps import Outcome, Pending, apply_batch

log = logging.getLogger(__name__)


class WorkerThread:
    """Runs, on aiosqlite's connection ``threaded`` under ``lock``, the batches of writes
    the loop's connection may not take, and the WAL checkpoints (with ``checkpointer``,
    another connection to the file: the store's reader). ``before_locking`` runs as soon
    as ``lock`` is taken: the writer commits its own open transaction, which that
    connection would otherwise wait for."""

    def __init__(
        self,
        threaded: aiosqlite.Connection,
        lock: asyncio.Lock,
        checkpointer: aiosqlite.Connection,
        before_locking: Callable[[], None],
    ) -> None:
        self._threaded = threaded
        self._lock = lock
        self._checkpointer = checkpointer
        self._before_locking = before_locking
        self._checkpoint: asyncio.Task[None] | None = None

    async def apply(self, batch: list[Pending]) -> list[Outcome]:
        """Apply ``batch`` in one transaction, each write as it asks (``Pending.savepoint``);
        its outcomes, in order. Raises the SQLite error that failed the whole transaction."""
        writes = [(pending.write, pending.savepoint) for pending in batch]
        async with self._lock:
            self._before_locking()
            outcomes: list[Outcome] = await self._threaded._execute(  # type: ignore[no-untyped-call]
                apply_batch, self._threaded._conn, writes
            )
        return outcomes

    def checkpoint(self) -> None:
        """Start a checkpoint (``_restart_wal``) unless one is running."""
        if self._checkpoint is None:
            self._checkpoint = asyncio.get_running_loop().create_task(
                self._restart_wal(), name="sqlite-checkpoint"
            )

    async def checkpoint_done(self) -> None:
        """Return once the running checkpoint, if any, has finished."""
        if self._checkpoint is not None:
            await self._checkpoint

    async def _restart_wal(self) -> None:
        """Copy the whole WAL into the database, so the next commit starts it over: the
        bulk beside the writes, the rest (a few pages and the fsyncs) holding them."""
        try:
            await self._checkpointer.execute_fetchall("PRAGMA wal_checkpoint(PASSIVE)")
            async with self._lock:
                self._before_locking()
                await self._threaded.execute_fetchall("PRAGMA wal_checkpoint(RESTART)")
        except sqlite3.Error as exc:
            # Harmless: the WAL only grows until the next one succeeds.
            log.warning("WAL checkpoint failed: %s", exc)
        finally:
            self._checkpoint = None
