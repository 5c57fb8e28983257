"""The prior-state rows of recent (thread, user) pairs, kept as a fresh read would see them.

Every turn reads its ``SELECT_PRIOR`` row just before its message moves it. For a pair
seen recently, the row a read would return follows from the row after its last turn and
the writes since, when those are the store's own messages: an inbound message moves its
thread's times, its sender's time in the thread and (counting across channels) the
sender's last contact; a reply moves its thread's times. ``PriorRows`` applies exactly
those moves, with the SQL's rules (``MAX`` over fixed-width UTC text; the contact moves
only forward, its channel on a tie too), to the rows it holds, when the write is issued:
the same moment every later read would see it, since reads apply queued writes first.

Anything else drops every row (``clear``): any other write of this store, a write or a
commit that failed, a rollback, and another connection's commit (``PRAGMA data_version``,
checked at each ``BEGIN IMMEDIATE`` of the loop's connection: while that transaction
holds the write lock, nobody else can commit). Rows are kept only for a user who wrote in
the thread before and is not linked to a person (a linked user's contact is the person's,
which other users move too), and not when another write was issued between the read and
its keeping (``version``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from middleware.store.sqlite_clock_state import PRIOR_PERSON_ID

# Columns of ``SELECT_PRIOR``.
_THREAD_LAST_INTERACTION = 0
_THREAD_LAST_USER = 1
_THREAD_LAST_AGENT = 2
_PARTICIPANT_LAST = 3
_USER_CONTACT_AT = 4
_USER_CONTACT_CHANNEL = 5

# Pairs kept; the oldest go first. A row is ~20 short values: ≈ 1 MB at most.
MAX_ROWS = 1024

Row = tuple[Any, ...]


def _later(stored: str | None, at: str) -> str:
    """``MAX(COALESCE(stored, ''), at)``: the triggers' rule for a thread's times."""
    return at if stored is None or at > stored else stored


class PriorRows:
    """``SELECT_PRIOR`` rows by (thread key, user key), moved by the store's own messages."""

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self._max_rows = max_rows
        self._rows: dict[tuple[str, str], Row] = {}
        self._users_of: dict[str, set[str]] = {}  # thread key -> user keys held
        self._threads_of: dict[str, set[str]] = {}  # user key -> thread keys held
        self._data_version: int | None = None
        # Moves on every change: a row read before a change is not kept after it.
        self.version = 0

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, thread_key: str, user_key: str) -> Row | None:
        """The row a read would return now, if held."""
        return self._rows.get((thread_key, user_key))

    def clear(self) -> None:
        self.version += 1
        self._rows.clear()
        self._users_of.clear()
        self._threads_of.clear()

    def began(self, conn: sqlite3.Connection) -> None:
        """Called inside each new ``BEGIN IMMEDIATE`` of the loop's connection: drop the
        rows if another connection committed since the last one."""
        (data_version,) = conn.execute("PRAGMA data_version").fetchone()
        if data_version != self._data_version:
            if self._data_version is not None:
                self.clear()
            self._data_version = data_version

    def inbound(
        self,
        thread_key: str,
        user_key: str,
        at: str,
        channel: str,
        *,
        cross_channel: bool,
    ) -> None:
        """A user's message at ``at`` was written (or queued): move the rows it moves."""
        self.version += 1
        for other in self._users_of.get(thread_key, ()):
            self._move(thread_key, other, _after_thread_inbound(at))
        if cross_channel:
            for thread in self._threads_of.get(user_key, ()):
                self._move(thread, user_key, _after_contact(at, channel))
        if (thread_key, user_key) in self._rows:
            self._move(thread_key, user_key, _after_participant(at))

    def reply(self, thread_key: str, at: str) -> None:
        """A reply at ``at`` was written (or queued) in the thread."""
        self.version += 1
        for user_key in self._users_of.get(thread_key, ()):
            self._move(thread_key, user_key, _after_reply(at))

    def keep(
        self,
        thread_key: str,
        user_key: str,
        before: Row,
        at: str,
        channel: str,
        *,
        cross_channel: bool,
    ) -> None:
        """Hold the row of a pair as its message (at ``at``) leaves it, given the row read
        just before: only for a user who wrote in the thread before (so the user and the
        thread rows exist, with nothing the message's insert would fill in) and who is
        not linked to a person."""
        if before[_PARTICIPANT_LAST] is None or before[PRIOR_PERSON_ID] is not None:
            return
        row = _after_thread_inbound(at)(before)
        row = _after_participant(at)(row)
        if cross_channel:
            row = _after_contact(at, channel)(row)
        if len(self._rows) >= self._max_rows:
            self._drop(*next(iter(self._rows)))
        self._rows[thread_key, user_key] = row
        self._users_of.setdefault(thread_key, set()).add(user_key)
        self._threads_of.setdefault(user_key, set()).add(thread_key)

    def _move(self, thread_key: str, user_key: str, change: Callable[[Row], Row]) -> None:
        self._rows[thread_key, user_key] = change(self._rows[thread_key, user_key])

    def _drop(self, thread_key: str, user_key: str) -> None:
        del self._rows[thread_key, user_key]
        for index, key, value in (
            (self._users_of, thread_key, user_key),
            (self._threads_of, user_key, thread_key),
        ):
            held = index[key]
            held.discard(value)
            if not held:
                del index[key]


def _replaced(row: Row, changes: dict[int, Any]) -> Row:
    return tuple(changes.get(column, value) for column, value in enumerate(row))


def _after_thread_inbound(at: str) -> Callable[[Row], Row]:
    # Trigger ``messages_user_moves_thread``, on the thread.
    def change(row: Row) -> Row:
        return _replaced(
            row,
            {
                _THREAD_LAST_INTERACTION: _later(row[_THREAD_LAST_INTERACTION], at),
                _THREAD_LAST_USER: _later(row[_THREAD_LAST_USER], at),
            },
        )

    return change


def _after_participant(at: str) -> Callable[[Row], Row]:
    # Trigger ``messages_user_moves_thread``, on the sender's row in the thread.
    def change(row: Row) -> Row:
        return _replaced(row, {_PARTICIPANT_LAST: _later(row[_PARTICIPANT_LAST], at)})

    return change


def _after_contact(at: str, channel: str) -> Callable[[Row], Row]:
    # ``move_contact_forward``: both CASEs compare with the stored time before the update.
    def change(row: Row) -> Row:
        stored = row[_USER_CONTACT_AT] or ""
        return _replaced(
            row,
            {
                _USER_CONTACT_AT: at if at > stored else row[_USER_CONTACT_AT],
                _USER_CONTACT_CHANNEL: channel if at >= stored else row[_USER_CONTACT_CHANNEL],
            },
        )

    return change


def _after_reply(at: str) -> Callable[[Row], Row]:
    # Trigger ``messages_reply_moves_thread``.
    def change(row: Row) -> Row:
        return _replaced(
            row,
            {
                _THREAD_LAST_AGENT: _later(row[_THREAD_LAST_AGENT], at),
                _THREAD_LAST_INTERACTION: _later(row[_THREAD_LAST_INTERACTION], at),
            },
        )

    return change
