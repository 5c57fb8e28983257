"""The writes the store's writer keeps across a failed commit, and those it gives up.

A write queued with ``keep`` (``GroupCommitWriter.submit``) is data nobody can send again:
a reply already shown to the user, an injected block, a mark on a committed message. When
the transaction it was applied in cannot commit because the file takes no writes (a full
disk, an I/O error, a read-only file: ``keeps_writes_out``), it is not failed: it waits
here, in order, and the writer applies it again first in its next transaction, before
anything written after it. A failure that may be the writes' own fault (a constraint
checked at commit) keeps nothing: applied again, they would fail every commit after.

At most ``MAX_KEPT`` writes wait; past that, or when the store closes with some still
waiting, a write fails as any other would (its caller logs it), is logged here and counted
(``lost``: ``Store.lost_writes``, the ``chronorelay_store_lost_writes_total`` metric).
"""

from __future__ import annotations

import logging
import sqlite3

from middleware.store.sqlite_write_steps import ErrorFor, Pending, keeps_writes_out, settle

log = logging.getLogger(__name__)

# A reply or a block, a few kB each: a few MB at most.
MAX_KEPT = 1000


class KeptWrites:
    """The writes waiting for the next transaction, oldest first; ``error_for`` makes
    the error of a write given up."""

    def __init__(self, error_for: ErrorFor) -> None:
        self._error_for = error_for
        self._waiting: list[Pending] = []
        # Writes given up since the store opened.
        self.lost = 0

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def take(self) -> list[Pending]:
        """The waiting writes, in order, for a transaction about to apply them first; they
        come back through ``keep_or_fail`` if it fails too."""
        taken, self._waiting = self._waiting, []
        return taken

    def keep_or_fail(self, writes: list[Pending], exc: sqlite3.Error) -> None:
        """``writes`` (in order) were rolled back by ``exc``: keep those asked to be kept,
        while the file cannot take writes and ``MAX_KEPT`` allows; the others fail with
        ``exc``."""
        keep = [pending for pending in writes if pending.keep]
        room = MAX_KEPT - len(self._waiting) if keeps_writes_out(exc) else 0
        kept, dropped = keep[:room], keep[room:]
        if kept:
            self._waiting.extend(kept)
            log.warning(
                "SQLite could not commit (%s); %d write(s) nobody can send again (%s) are "
                "kept, %d in all, and applied again first in the next transaction.",
                exc,
                len(kept),
                ", ".join(sorted({pending.action for pending in kept})),
                len(self._waiting),
            )
        self.give_up(dropped, exc)
        for pending in writes:
            if not pending.keep:
                settle(pending.future, (False, self._error_for(pending.action, exc)))

    def give_up(self, writes: list[Pending], exc: sqlite3.Error) -> None:
        """``writes``, asked to be kept, are lost: counted, logged, and their futures fail
        with ``exc``."""
        if not writes:
            return
        self.lost += len(writes)
        log.error(
            "SQLite could not commit; %d write(s) nobody can send again are lost (%s), "
            "%d since the store opened: %s",
            len(writes),
            ", ".join(sorted({pending.action for pending in writes})),
            self.lost,
            exc,
        )
        for pending in writes:
            settle(pending.future, (False, self._error_for(pending.action, exc)))
