"""The SQLite store's aiosqlite connections: how each one is opened and set up."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from middleware.errors import StoreError
from middleware.store.migrations import apply_migrations, check_store_file
from middleware.store.sqlite_continuity import read_snapshot
from middleware.store.sqlite_errors import explained
from middleware.store.sqlite_functions import add_functions, add_functions_async
from middleware.store.sqlite_prior_cache import PriorRows
from middleware.store.sqlite_serving import ServingLock
from middleware.store.sqlite_writer import GroupCommitWriter

log = logging.getLogger(__name__)

T = TypeVar("T")

# How long a statement waits for another process's lock on the file before failing.
BUSY_TIMEOUT_MS = 5000


async def connect(path: Path) -> aiosqlite.Connection:
    """An autocommit connection to ``path`` with foreign keys on, the busy timeout set and
    the store's SQL functions (``sqlite_functions``)."""
    # isolation_level=None: no implicit BEGINs from the sqlite3 module; transactions
    # are exactly the store's BEGIN IMMEDIATE ... COMMIT blocks.
    conn = aiosqlite.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        await conn
    except BaseException:
        # On a failed connect aiosqlite stops its worker thread without waiting for
        # it; if the event loop is gone before the thread hands back its last result,
        # the thread dies with "Event loop is closed". Wait for it to finish.
        await asyncio.to_thread(conn._thread.join, 5)
        raise
    try:
        await conn.executescript(
            f"PRAGMA foreign_keys = ON; PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d};"
        )
        await add_functions_async(conn)
    except BaseException:
        await conn.close()
        raise
    return conn


class SqliteConnections:
    """The connections of one SQLite file, their lifecycle and the ways to use them; the
    base of ``SqliteStore``, which adds the ``Store`` methods on top.

    Three connections, all in autocommit mode so every transaction is one we wrote:

    - the inline writer, on the event loop's own thread: single writes (every turn's
      inbound message and reply) go through ``GroupCommitWriter`` (``sqlite_writer``),
      which applies each write whole, in order, and commits the writes of one loop
      iteration together, so the statements of two concurrent turns never interleave
      (spec 000 §10.3: atomic, locked state updates);
    - the threaded writer (aiosqlite) for multi-statement transactions (import, export,
      timezones) and the end of each WAL checkpoint, serialised by an ``asyncio.Lock``,
      and for writes that must wait for a file another process holds;
    - the reader, ``query_only`` (aiosqlite), for lookups and the bulk of each WAL
      checkpoint. WAL lets it read the last committed state while a writer works; queued
      writes are applied before a read, so a read sees every write made before it.
    """

    def __init__(
        self, path: str | Path, *, commit_delay: float = 0.0, serving: bool = False
    ) -> None:
        """``commit_delay``: seconds a write may wait for others to share its commit (see
        ``sqlite_writer``); 0 commits at the end of the loop iteration. ``serving``: a
        relay that answers turns from this store, which no other may serve meanwhile
        (``sqlite_serving``)."""
        self._path = Path(path)
        self._commit_delay = commit_delay
        self._serving = ServingLock(self._path) if serving else None
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()
        self._batcher: GroupCommitWriter | None = None
        # The prior-state rows of recent pairs, so a turn's message need not read them.
        self._priors = PriorRows()

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    async def open(self) -> None:
        """Create the directory and file if needed, set the pragmas, apply migrations.

        Raises ``StoreError`` naming the path when it cannot be created, opened or
        migrated; nothing is left open in that case. Opening an open store does nothing.
        """
        # Under the write lock, so no write can slip in before the migrations are done.
        async with self._write_lock:
            if self._writer is not None:
                return
            try:
                await asyncio.to_thread(self._path.parent.mkdir, parents=True, exist_ok=True)
                if self._serving is not None:
                    self._serving.acquire()
                self._writer = await connect(self._path)
                # Before anything writes: a file the relay refuses is left as it was.
                await check_store_file(self._writer, str(self._path))
                await self._writer.executescript("PRAGMA synchronous = NORMAL;")
                rows = list(await self._writer.execute_fetchall("PRAGMA journal_mode = WAL"))
                if str(rows[0][0]).lower() != "wal":
                    # Still correct, only slower and with readers blocking the writer.
                    log.warning("SQLite at %s refused WAL mode (got %s)", self._path, rows[0][0])
                version = await apply_migrations(self._writer, str(self._path))
                # Every turn writes: a file the relay may only read fails here, not at the
                # first user's message. (Rewriting the version is a write that changes
                # nothing.)
                await self._writer.executescript(
                    f"BEGIN IMMEDIATE; PRAGMA user_version = {version:d}; COMMIT;"
                )
                self._reader = await connect(self._path)
                await self._reader.executescript("PRAGMA query_only = ON;")
                # Opened on the loop's thread, which alone uses it (a local file: quick).
                inline = connect_inline(str(self._path))
                self._batcher = GroupCommitWriter(
                    inline,
                    self._writer,
                    self._write_lock,
                    self._store_error,
                    self._reader,
                    commit_delay=self._commit_delay,
                    on_begin=self._priors.began,
                    on_failure=self._priors.clear,
                )
            except (OSError, sqlite3.Error) as exc:
                await self._close_connections()
                todo = (
                    "check that the path is a file in a directory the relay's user can "
                    "write to, or set [store] path to one"
                )
                reason = (
                    explained(exc, todo) if isinstance(exc, sqlite3.Error) else f"{exc} ({todo})"
                )
                raise StoreError(f"cannot open the SQLite store at {self._path}: {reason}") from exc
            except BaseException:
                await self._close_connections()
                raise
            log.info("SQLite store open at %s (schema version %d)", self._path, version)

    async def close(self) -> None:
        """Apply the queued writes, then close both connections; safe to call twice."""
        if self._batcher is not None:
            await self._batcher.close()
            self._batcher = None
        async with self._write_lock:
            await self._close_connections()

    async def ping(self) -> bool:
        """Whether ``SELECT 1`` answers on the reader; ``False`` if closed or failing."""
        if self._reader is None:
            return False
        try:
            rows = list(await self._reader.execute_fetchall("SELECT 1"))
        except (sqlite3.Error, ValueError):
            # ValueError: aiosqlite's "Connection closed", if close() raced us.
            return False
        return bool(rows) and rows[0][0] == 1

    def write_failure(self) -> str | None:
        """See ``Store.write_failure``."""
        failure = None if self._batcher is None else self._batcher.failure
        if failure is None:
            return None
        # Shown by /readyz, which needs no key: the reason, not the file's path (the log
        # names it).
        return f"the SQLite store could not write: {explained(failure)}"

    def lost_writes(self) -> int:
        """See ``Store.lost_writes``: the writer keeps up to ``MAX_KEPT`` of them for the
        next transaction when a commit fails (``GroupCommitWriter.submit``)."""
        return 0 if self._batcher is None else self._batcher.lost

    # -- plumbing ----------------------------------------------------------------------

    async def _close_connections(self) -> None:
        for conn in (self._reader, self._writer):
            if conn is not None:
                try:
                    await conn.close()
                except sqlite3.Error as exc:
                    log.warning("closing the SQLite store at %s failed: %s", self._path, exc)
        self._reader = self._writer = None
        if self._serving is not None:
            self._serving.release()

    async def _read(self) -> aiosqlite.Connection:
        """The reader, once every write made or queued so far is committed (including any
        the worker thread has): reads see them. Returns at once when nothing is pending."""
        if self._reader is None or self._batcher is None:
            raise self._not_open()
        await self._batcher.drain()
        return self._reader

    async def _fetch(self, sql: str, params: Any = ()) -> list[Any]:
        """The rows of one query on the reader (see ``_read``)."""
        return list(await (await self._read()).execute_fetchall(sql, params))

    def _not_open(self) -> StoreError:
        return StoreError(f"the SQLite store at {self._path} is not open; call open() first")

    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._store_error(action, exc) from exc

    async def _write(self, action: str, write: Callable[[sqlite3.Connection], T]) -> T:
        """Apply one write now (after the queued ones); it commits with the others written
        meanwhile. Raises ``StoreError`` naming ``action`` if SQLite fails. It may change
        any prior state: the held rows are dropped."""
        self._priors.clear()
        return await self._group_writer().write(action, write)

    def _submit(
        self,
        action: str,
        write: Callable[[sqlite3.Connection], T],
        *,
        one_statement: bool = False,
    ) -> asyncio.Future[T]:
        """Queue one write, applied in the next loop iteration; the future resolves
        when it is committed, and raises ``StoreError`` naming ``action`` if SQLite fails.
        ``one_statement``: see ``GroupCommitWriter.submit``. Only for writes that change no
        prior state, or whose change the caller applies to the held rows.

        These are data nobody can send again (a reply already shown, an injected block, a
        mark on a committed message): a commit that fails because the file cannot take
        writes keeps them for the next one (``GroupCommitWriter.submit``'s ``keep``). Each
        must be safe to apply again after a rollback: an insert that was rolled back, an
        upsert, or an update of a committed row."""
        return self._group_writer().submit(action, write, one_statement=one_statement, keep=True)

    def _group_writer(self) -> GroupCommitWriter:
        if self._batcher is None:
            raise self._not_open()
        return self._batcher

    def _store_error(self, action: str, exc: sqlite3.Error) -> StoreError:
        error = StoreError(f"the SQLite store at {self._path} could not {action}: {explained(exc)}")
        error.__cause__ = exc
        return error

    async def _snapshot(self, action: str, read: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``read`` in the reader's thread inside one read transaction: one hop and
        one consistent view, however many statements it takes."""
        with self._translate(action):
            return await read_snapshot(await self._read(), read)

    @asynccontextmanager
    async def _transaction(self, action: str) -> AsyncIterator[aiosqlite.Connection]:
        """The writer, inside one ``BEGIN IMMEDIATE`` that commits if the body returns and
        rolls back if it raises; other writers wait on the lock until it ends."""
        if self._batcher is None:
            raise self._not_open()
        self._priors.clear()
        # The writes queued before this transaction land before it, and those kept from
        # a failed commit too: one that deletes rows must not meet them again after it.
        await self._batcher.drain(with_kept=True)
        async with self._write_lock:
            conn = self._writer
            if conn is None:
                raise self._not_open()
            self._batcher.commit_before_locking()
            with self._translate(action):
                await conn.execute_fetchall("BEGIN IMMEDIATE")
                try:
                    yield conn
                    await conn.commit()
                except BaseException:
                    # The worker thread runs calls in order, so even when we were
                    # cancelled mid-statement this rollback lands after that statement
                    # and before the next transaction's BEGIN.
                    await conn.rollback()
                    raise


def connect_inline(
    path: str, factory: type[sqlite3.Connection] = sqlite3.Connection
) -> sqlite3.Connection:
    """The loop thread's connection: never waits for a lock, never checkpoints. It has the
    store's SQL functions (``sqlite_functions``), as every connection of the store.
    ``factory``: ``sqlite3.connect``'s (a test's connection that fails on demand)."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=0, factory=factory)
    try:
        conn.executescript(
            "PRAGMA busy_timeout = 0; PRAGMA synchronous = NORMAL; "
            "PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0;"
        )
        add_functions(conn)
    except BaseException:
        conn.close()
        raise
    return conn
