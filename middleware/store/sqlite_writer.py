"""The store's single writer: on the event loop's own thread, group commits.

Every write is a function ``(sqlite3.Connection) -> T``, applied in order on the loop's
connection inside a ``BEGIN IMMEDIATE`` that commits ``commit_delay`` seconds after it was
opened (with no delay: at the end of the loop iteration it was opened in), or earlier,
before a read through another connection or a transaction of the store's own. Each write
runs in its own SAVEPOINT (a single statement needs none: SQLite applies it whole or not
at all), so one that fails is rolled back alone and raises its own error. Every turn that
wrote meanwhile shares the commit: a commit writes each changed page once (the thread's
row, the index leaves all turns append to), so a few milliseconds of delay take most of
the store's cost off each turn under load.

There are three ways in:

- ``write`` applies at once and returns the result, before the commit: the turn's inbound
  message is in the database (and seen by every later write and read) before the turn goes
  on, and the commit runs while the upstream is already working on the request. If that
  commit fails (the disk is full or failing), those writes are lost: they are logged, and
  until a commit succeeds again each ``write`` commits before it returns, so callers see
  the failure as they did before. A write that must not be lost unseen asks, while it
  runs, for the outcome of the commit it lands in (``commit_of``): one future per
  transaction, which its caller awaits before it reports success (a turn, before its
  answer goes out). A crash of the process before the commit loses them too.
  A transaction a caller waits on commits when its answer is ready (``committed``), or,
  when queued writes brought it (a turn alone in the relay), as soon as they are applied:
  the upstream is working on that turn's request then, so its answer does not wait for
  the commit.
- ``queue`` is ``write`` applied later: the write is queued and its future resolves once
  it is applied (before the commit, as ``write`` returns). A turn alone in the relay queues
  its inbound message so that the request goes upstream first: the write lands while the
  upstream works on it, instead of on the way there. Once queued, it is applied whatever
  happens to the caller; every later ``write`` and read applies the queued writes before its
  own, so nothing sees the database without them.
- ``submit`` queues and returns a future that resolves once the write is committed: the
  reply, applied right after the answer has gone out and committed with the others. Asked
  to ``keep`` it (data nobody can send again: a reply, an injected block), the writer does
  not give it up when its commit fails because the file cannot take writes: it applies it
  again first in its next transaction (:mod:`middleware.store.sqlite_kept_writes`).

Queued writes are applied in the loop iteration after the one that queued them, after its
callbacks and I/O (a timer due at once, not ``call_soon``): a request the turn sends
upstream meanwhile goes out first. (On Python 3.11 aiohttp writes a request's body from a
task of its own, which a ``call_soon`` made earlier would run ahead of.) With no commit
delay, the commit at the end of the iteration that queued them applies them first.

Why on the loop's thread, not a worker thread: a turn's write is a handful of indexed
UPSERTs and one WAL append (``synchronous = NORMAL``: no fsync at commit), about 50 µs,
while a hop to aiosqlite's thread and back costs several times that in wake-ups and GIL
hand-offs (measured in ``bench/overhead.py``). The two things that could block the loop
for long, a write lock held by another connection and WAL checkpoints, are kept off it
(:mod:`middleware.store.sqlite_writer_thread`).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from typing import TypeVar

import aiosqlite

from middleware.store.sqlite_kept_writes import KeptWrites
from middleware.store.sqlite_transaction_outcomes import Commit, TransactionOutcomes
from middleware.store.sqlite_write_steps import (
    ErrorFor,
    Pending,
    apply_one,
    caller_error,
    is_busy,
    keeps_writes_out,
    settle_write,
)
from middleware.store.sqlite_writer_thread import WorkerThread

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

# A queued batch larger than this is split, so one commit never holds the file for long.
MAX_BATCH = 256
# Commits between two WAL checkpoints (a turn's commit adds a handful of pages; SQLite's
# own default is a checkpoint per 1,000 pages).
CHECKPOINT_EVERY = 200


class GroupCommitWriter:
    """Serialises all writes; the ones of one loop iteration share a commit.

    ``inline`` is a connection of the loop's thread; ``threaded`` is the aiosqlite
    connection the store's multi-statement transactions use, under ``lock``;
    ``checkpointer`` is another aiosqlite connection to the file (the store's reader).
    ``on_begin`` runs inside each ``BEGIN IMMEDIATE`` of ``inline`` (an SQLite error
    there aborts it); ``on_failure`` runs, on the loop's thread, as soon as a write or read
    is known to have failed or an open transaction to be rolled back.
    """

    def __init__(
        self,
        inline: sqlite3.Connection,
        threaded: aiosqlite.Connection,
        lock: asyncio.Lock,
        error_for: ErrorFor,
        checkpointer: aiosqlite.Connection,
        *,
        commit_delay: float = 0.0,
        on_begin: Callable[[sqlite3.Connection], None] | None = None,
        on_failure: Callable[[], None] | None = None,
    ) -> None:
        self._inline = inline
        # Told of each transaction the loop's connection opens (inside it) and of every
        # failure: what the store keeps beside the file follows them.
        self._on_begin = on_begin
        self._on_failure = on_failure
        self._commit_delay = commit_delay
        self._worker = WorkerThread(threaded, lock, checkpointer, self.commit_before_locking)
        self._lock = lock
        self._error_for = error_for
        self._pending: list[Pending] = []
        # Writes whose commit failed, to apply again first in the next transaction.
        self._kept = KeptWrites(error_for)
        self._scheduled = False
        self._commit_timer: asyncio.Handle | None = None
        # What the open transaction owes the writes applied in it, once it ends.
        self._outcomes = TransactionOutcomes(error_for, self._kept)
        # Why the store cannot write, until a commit succeeds (``failure``).
        self._failure: sqlite3.Error | None = None
        # A batch handed to the worker thread; later writes wait for it (order).
        self._handoff: asyncio.Task[None] | None = None
        self.commits = 0
        self._closed = False

    async def write(self, action: str, write: Callable[[sqlite3.Connection], T]) -> T:
        """Apply ``write`` now, after the writes queued before it; return its result.

        It commits at the end of this loop iteration, with the others (see the module
        docstring for a commit that fails). Raises what ``error_for`` makes of an SQLite
        failure, or whatever ``write`` itself raised; the write is then rolled back alone.
        When the loop's connection cannot take it now, it queues, and this waits for its
        commit: shielded, so a caller cancelled meanwhile does not take the write back.
        """
        self._check_open(action)
        if not self._take_inline(action):
            return await asyncio.shield(self.submit(action, write))
        try:
            ok, value = apply_one(self._inline, write)
        except sqlite3.Error as exc:
            # The transaction itself is gone (SQLite rolled it back).
            self._abort(exc)
            raise self._error_for(action, exc) from exc
        if not ok:
            self._failed(value)
        if self._outcomes.rolled_back_last:
            # Each ``write`` commits now: reported to this caller, not logged as lost.
            failed = self._commit()
            if failed is not None:
                raise self._error_for(action, failed) from failed
        else:
            self._outcomes.reported(action)
        if not ok:
            raise caller_error(self._error_for, action, value)
        return value  # type: ignore[no-any-return]

    async def read_then_queue(
        self,
        action: str,
        read: Callable[[sqlite3.Connection], R],
        write: Callable[[sqlite3.Connection, R], T],
    ) -> tuple[R, asyncio.Future[T]]:
        """Run ``read`` now, after the writes queued before it, and ``queue`` the ``write``
        of what it read: no other write lands between the two (every later one applies
        the queued writes before its own).

        When the loop's connection cannot take writes now, both run as one queued write
        instead, and this waits for its commit (as ``write`` does). ``read`` is one
        statement and must not write. Errors as for ``write``.
        """
        self._check_open(action)
        if not self._take_inline(action):

            def both(conn: sqlite3.Connection) -> tuple[R, T]:
                seen = read(conn)
                return seen, write(conn, seen)

            seen, written = await asyncio.shield(self.submit(action, both))
            done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
            done.set_result(written)
            return seen, done
        ok, seen = apply_one(self._inline, read, savepoint=False)
        if not ok:
            self._failed(seen)
            raise caller_error(self._error_for, action, seen)

        def then(conn: sqlite3.Connection) -> T:
            return write(conn, seen)

        return seen, self.queue(action, then)

    def queue(self, action: str, write: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        """Queue ``write``; the future resolves with its result once it is applied, before
        the commit, as ``write`` returns (and like ``write``'s, a failed commit is logged
        with it among the writes lost). Until a commit succeeds again after one failed, it
        resolves at the commit instead. Errors as for ``submit``.
        """
        return self._enqueue(action, write, one_statement=False, resolves_applied=True)

    def submit(
        self,
        action: str,
        write: Callable[[sqlite3.Connection], T],
        *,
        one_statement: bool = False,
        keep: bool = False,
    ) -> asyncio.Future[T]:
        """Queue ``write``; it is applied in the next loop iteration, and the future
        resolves once it is committed.

        The future raises what ``error_for`` makes of an SQLite failure, or whatever
        ``write`` itself raised. Once queued, the write happens whether or not anybody
        awaits the future: data a client handed over is not lost because it went away.

        ``one_statement``: ``write`` executes a single statement, which SQLite applies
        whole or not at all, so it fails alone without a savepoint of its own (two
        statements fewer per write).

        ``keep``: if its transaction fails to commit because the file cannot take writes
        (``keeps_writes_out``), ``write`` is applied again at the start of the next
        transaction, before any write made after it, and the future resolves with that
        application's result once committed (see the module docstring for the bound).
        Only for a write that may run twice when its first run was rolled back: one whose
        caller was told nothing yet and will not send it again.
        """
        return self._enqueue(
            action, write, one_statement=one_statement, resolves_applied=False, keep=keep
        )

    def _enqueue(
        self,
        action: str,
        write: Callable[[sqlite3.Connection], T],
        *,
        one_statement: bool,
        resolves_applied: bool,
        keep: bool = False,
    ) -> asyncio.Future[T]:
        self._check_open(action)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        pending = Pending(action, write, future, not one_statement, resolves_applied, keep)
        self._pending.append(pending)
        self._schedule_apply()
        return future

    def commit_of(self, conn: sqlite3.Connection) -> Commit | None:
        """Called by a write while it runs on ``conn``: the outcome of the commit it lands
        in, shared by every write of that transaction. None on the worker thread's
        connection, whose writes resolve only once committed (their own future says it).
        """
        if conn is not self._inline:
            return None
        return self._outcomes.commit()

    async def committed(self, action: str, commit: Commit | None) -> None:
        """Wait for ``commit`` (from ``commit_of``), committing it now if it is still open;
        raise what ``error_for`` makes of the error that rolled it back. Shielded: a
        caller cancelled meanwhile does not cancel the outcome the other writes of the
        transaction share."""
        if commit is None:
            return
        if self._outcomes.is_open(commit):
            # Still open: commit now rather than make the caller (an answer ready to go
            # out) wait out the commit delay. The writes of other turns so far share it.
            self.flush()
        error = commit.result() if commit.done() else await asyncio.shield(commit)
        if error is not None:
            raise self._error_for(action, error) from error

    @property
    def failure(self) -> sqlite3.Error | None:
        """The SQLite error that last kept a write from the file (a full disk, an I/O error,
        a read-only file, a failed commit), until a commit succeeds again; else None."""
        return self._failure

    def flush(self) -> None:
        """Apply what is queued and commit, unless the worker thread has the writes (order
        is kept). Called before reads, so a read sees every write made before it."""
        self._apply_queued()
        self._commit()
        if self._pending and self._handoff is None:
            self._hand_off()

    async def drain(self, *, with_kept: bool = False) -> None:
        """Return once everything written or queued so far is committed (or failed).
        ``with_kept``: the writes kept from a failed commit are tried once more first
        (before a transaction of the store's own, or closing); a read does not try them,
        so that reads on a failing disk do not each make a commit fail."""
        if with_kept:
            self._pending[:0] = self._kept.take()
        while self._pending or self._handoff is not None or self._inline.in_transaction:
            self.flush()
            if self._handoff is not None:
                await asyncio.shield(self._handoff)

    def commit_before_locking(self) -> None:
        """Commit the open transaction now: called by whoever just took ``lock``, whose
        connection would otherwise wait for this one."""
        self._commit()

    async def close(self) -> None:
        """Commit what is written and queued, let the checkpoint finish, then refuse new
        writes."""
        await self.drain(with_kept=True)
        if self._kept:
            # Tried once more above; the file still takes no writes.
            failure = self._failure or sqlite3.OperationalError("the store closed")
            self._kept.give_up(self._kept.take(), failure)
        self._closed = True
        await self._worker.checkpoint_done()
        self._inline.close()

    # -- the inline transaction ----------------------------------------------------------

    def _check_open(self, action: str) -> None:
        if self._closed:
            raise self._error_for(action, sqlite3.ProgrammingError("the writer is closed"))

    def may_write_now(self, action: str) -> bool:
        """Whether the loop's connection may write now: if so, its transaction is open and
        the queued writes are applied. Errors as for ``write``."""
        self._check_open(action)
        return self._take_inline(action)

    def _take_inline(self, action: str) -> bool:
        """Whether the loop's connection may write now; if so, the queued writes are
        applied first. An SQLite failure aborts the transaction and raises for ``action``."""
        try:
            if not self._begin():
                return False
            self._apply_pending()
        except sqlite3.Error as exc:
            self._abort(exc)
            raise self._error_for(action, exc) from exc
        return True

    def _begin(self) -> bool:
        """Make sure the loop's connection is in a transaction it may write in now.

        False when writes must queue instead: the worker thread has writes to apply before
        these, another transaction holds the lock, or another process holds the file.
        """
        if self._inline.in_transaction:
            return True
        if self._handoff is not None or self._lock.locked():
            return False
        try:
            self._inline.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                return False
            raise
        self._schedule_commit()
        if self._on_begin is not None:
            self._on_begin(self._inline)
        # The writes kept from a failed commit go first, before anything written after them.
        self._pending[:0] = self._kept.take()
        return True

    def _apply_queued(self) -> None:
        """Apply the queued writes in the open transaction (opening one) if the loop's
        connection may write now; if SQLite fails, they fail with its error."""
        if not self._pending or self._handoff is not None:
            return
        try:
            if self._begin():
                self._apply_pending()
        except sqlite3.Error as exc:
            self._abort(exc)
            failed, self._pending = self._pending, []
            self._kept.keep_or_fail(failed, exc)

    def _apply_pending(self) -> None:
        """Apply the queued writes, in order, in the open transaction; they resolve when
        it commits, or now if they asked to (``queue``)."""
        while self._pending:
            pending = self._pending[0]
            outcome = apply_one(self._inline, pending.write, savepoint=pending.savepoint)
            del self._pending[0]
            if not outcome[0]:
                self._failed(outcome[1])
            self._outcomes.applied(pending, outcome)

    def _commit(self) -> sqlite3.Error | None:
        """Commit the open transaction, if any, and settle what it owes its writes
        (``TransactionOutcomes.committed``). On failure, abort it (see ``_abort``) and
        return the error."""
        if self._commit_timer is not None:
            self._commit_timer.cancel()
            self._commit_timer = None
        if not self._inline.in_transaction:
            return None
        try:
            self._inline.execute("COMMIT")
        except sqlite3.Error as exc:
            self._abort(exc)
            return exc
        self._failure = None
        self._outcomes.committed()
        self._committed()
        return None

    def _abort(self, exc: sqlite3.Error) -> None:
        """The open transaction cannot commit: roll it back, and settle what it owes its
        writes (``TransactionOutcomes.rolled_back``: the queued ones fail with ``exc``, but
        for those asked to be kept; the ones already reported are logged as lost). From now
        until a commit succeeds, each ``write`` commits before it returns."""
        self._failed()
        self._failure = exc
        if self._inline.in_transaction:
            try:
                self._inline.execute("ROLLBACK")
            except sqlite3.Error as rollback_exc:
                log.error("SQLite could not roll back a failed transaction: %s", rollback_exc)
        self._outcomes.rolled_back(exc)

    def _schedule_apply(self) -> None:
        """Apply the queued writes in the next loop iteration, after its callbacks and I/O
        (see the module docstring)."""
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_later(0, self._apply_soon)

    def _apply_soon(self) -> None:
        self._scheduled = False
        if self._commit_delay <= 0 or self._outcomes.rolled_back_last:
            self.flush()
            return
        awaited = self._outcomes.awaited
        self._apply_queued()
        if self._pending and self._handoff is None:
            # The loop's connection may not write now: ``flush`` hands them over.
            self.flush()
        elif not awaited and self._outcomes.awaited:
            # A queued write just applied is a turn's message (a turn alone in the relay),
            # and the turn will wait for this commit before its answer goes out
            # (``committed``): commit now, while the upstream works on its request, rather
            # than once the answer is back.
            self._commit()

    def _schedule_commit(self) -> None:
        """Commit the transaction just opened ``commit_delay`` from now (with no delay, at
        the end of this loop iteration)."""
        if self._commit_timer is None:
            loop = asyncio.get_running_loop()
            self._commit_timer = (
                loop.call_later(self._commit_delay, self._commit_due)
                if self._commit_delay > 0
                else loop.call_soon(self._commit_due)
            )

    def _commit_due(self) -> None:
        self._commit_timer = None
        self.flush()

    def _failed(self, exc: BaseException | None = None) -> None:
        """A write or the transaction failed; ``exc``, when it says the file cannot be
        written (not a write's own fault, such as a constraint), is the store's failure."""
        if isinstance(exc, sqlite3.Error) and keeps_writes_out(exc):
            self._failure = exc
        if self._on_failure is not None:
            self._on_failure()

    # -- the worker thread ---------------------------------------------------------------

    def _hand_off(self) -> None:
        # The writes kept from a failed commit go first, as in a transaction of ``inline``.
        self._pending[:0] = self._kept.take()
        batch = self._pending[:MAX_BATCH]
        del self._pending[:MAX_BATCH]
        self._handoff = asyncio.get_running_loop().create_task(
            self._apply_threaded(batch), name="sqlite-writer-handoff"
        )

    async def _apply_threaded(self, batch: list[Pending]) -> None:
        try:
            outcomes = await self._worker.apply(batch)
        except sqlite3.Error as exc:
            self._failed(exc)
            self._kept.keep_or_fail(batch, exc)
        else:
            self._failure = None  # committed
            for ok, value in outcomes:
                if not ok:
                    self._failed(value)
            for pending, outcome in zip(batch, outcomes, strict=True):
                settle_write(pending, outcome, self._error_for)
        finally:
            self._handoff = None
        # What queued up meanwhile goes next, in order.
        if self._pending:
            self._schedule_apply()

    @property
    def lost(self) -> int:
        """Writes asked to be kept that were given up since opening (``KeptWrites``)."""
        return self._kept.lost

    def _committed(self) -> None:
        self.commits += 1
        if self.commits % CHECKPOINT_EVERY == 0:
            self._worker.checkpoint()
