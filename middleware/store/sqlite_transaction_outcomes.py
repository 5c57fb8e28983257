"""What the writer's open transaction owes the writes applied in it, paid when it ends.

The loop's connection (:mod:`middleware.store.sqlite_writer`) applies writes in a
transaction that commits later. Until it ends, three kinds of waiter hang on it:

- the writes already reported to their callers (``write`` returned, ``queue``'s future
  resolved): a commit owes them nothing; a rollback loses them, and they are logged;
- the queued writes whose futures resolve at the commit (``submit``; ``queue`` too after a
  rollback, until a transaction commits): a commit settles each with its own outcome; a
  rollback fails the applied ones with its error, but for those asked to be kept
  (:mod:`middleware.store.sqlite_kept_writes`), while one that had failed alone keeps its
  own error;
- the outcome of the commit, once a write asked for it (``commit_of``): None once
  committed, else the error that rolled it back.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3

from middleware.store.sqlite_kept_writes import KeptWrites
from middleware.store.sqlite_write_steps import ErrorFor, Outcome, Pending, settle, settle_write

log = logging.getLogger(__name__)

# What became of a transaction of the loop's connection: None once committed, or the SQLite
# error that rolled it back.
Commit = asyncio.Future[sqlite3.Error | None]


class TransactionOutcomes:
    """The waiters of the open transaction, settled by ``committed`` or ``rolled_back``;
    ``error_for`` makes the errors their callers see, and ``kept`` takes the writes asked
    to be kept that a rollback undid."""

    def __init__(self, error_for: ErrorFor, kept: KeptWrites) -> None:
        self._error_for = error_for
        self._kept = kept
        # The actions of the writes already reported applied, and the queued writes applied
        # whose futures resolve at the commit.
        self._reported: list[str] = []
        self._settling: list[tuple[Pending, Outcome]] = []
        # Its outcome, once a write asked for it.
        self._commit: Commit | None = None
        # A transaction rolled back, and none committed since.
        self._rolled_back_last = False

    @property
    def rolled_back_last(self) -> bool:
        """Whether the last transaction to end rolled back. Until one commits, no write is
        reported applied before its commit (and the writer commits each ``write`` before
        it returns), so that every caller learns of a commit that fails."""
        return self._rolled_back_last

    def reported(self, action: str) -> None:
        """A write applied in the open transaction was reported to its caller: lost, and
        logged, if the transaction rolls back."""
        self._reported.append(action)

    def applied(self, pending: Pending, outcome: Outcome) -> None:
        """The queued ``pending`` was applied in the open transaction with ``outcome``: its
        future settles now if it asked to (``queue``), unless the last transaction rolled
        back; else when this one ends."""
        if pending.resolves_applied and not self._rolled_back_last:
            if outcome[0]:
                self._reported.append(pending.action)
            settle_write(pending, outcome, self._error_for)
        else:
            self._settling.append((pending, outcome))

    def commit(self) -> Commit:
        """The outcome of the open transaction's commit, one future shared by every write
        that asks."""
        if self._commit is None:
            self._commit = asyncio.get_running_loop().create_future()
        return self._commit

    @property
    def awaited(self) -> bool:
        """Whether a write asked for the outcome of the open transaction (``commit``)."""
        return self._commit is not None

    def is_open(self, commit: Commit) -> bool:
        """Whether ``commit`` is the outcome of the transaction still open."""
        return commit is self._commit

    def committed(self) -> None:
        """The open transaction committed: settle its waiters."""
        settling, self._settling = self._settling, []
        self._reported = []
        self._rolled_back_last = False
        self._end(None)
        for pending, outcome in settling:
            settle_write(pending, outcome, self._error_for)

    def rolled_back(self, exc: sqlite3.Error) -> None:
        """The open transaction was rolled back by ``exc``: log the writes it loses, fail
        its queued writes with ``exc`` but keep those asked to be kept (``KeptWrites``)."""
        settling, self._settling = self._settling, []
        lost, self._reported = self._reported, []
        self._rolled_back_last = True
        self._end(exc)
        if lost:
            log.error(
                "SQLite could not commit; %d write(s) already applied are lost (%s): %s. "
                "A turn whose message is among them is answered with the store's error "
                "unless its answer had already gone out. Until a commit succeeds, each "
                "write commits before it returns.",
                len(lost),
                ", ".join(lost),
                exc,
            )
        applied = []
        for pending, outcome in settling:
            if outcome[0]:
                applied.append(pending)
            elif pending.keep:
                # Failed alone, before the commit did: its own error says why.
                settle_write(pending, outcome, self._error_for)
            else:
                settle(pending.future, (False, self._error_for(pending.action, exc)))
        self._kept.keep_or_fail(applied, exc)

    def _end(self, error: sqlite3.Error | None) -> None:
        """Tell the writes that asked (``commit``) what became of their transaction."""
        commit, self._commit = self._commit, None
        if commit is not None and not commit.done():
            commit.set_result(error)
