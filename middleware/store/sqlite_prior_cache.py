"""The prior-state rows of recent (thread, user) pairs, kept as a fresh read would see them.

Every turn reads its ``SELECT_PRIOR`` row just before its message moves it. For a pair
seen recently, the row a read would return follows from the row after its last turn and
the writes since, when those are the store's own messages: an inbound message moves its
thread's times, its sender's time (and the name they go by) in the thread, the names of
the members it mentions there and (counting across channels) the sender's last contact;
a reply moves its thread's times. ``PriorRows`` applies exactly those moves, with the
SQL's rules (``MAX`` over fixed-width UTC text; the contact moves only forward, its
channel on a tie too), to the rows it holds, when the write is issued: the same moment
every later read would see it, since reads apply queued writes first.
Marking a message a command moves its thread's conversation time, and its sender's, back
to an older message, which no held row knows: that thread's rows go (``command``). A
message stored as a command moves neither, nor does the reply to it: which threads' newest
user message is a command is held too.

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
from typing import Any

from middleware.store.records import InboundRecord
from middleware.store.sqlite_clock_state import PRIOR_PERSON_ID, PRIOR_WIDTH

Row = tuple[Any, ...]

# ``SELECT_PRIOR``'s columns, by the row they come from. A row is held as its three parts,
# so a message moves each part once, however many pairs share it.
_THREAD_COLUMNS = (0, 1, 2, 10, 11, 13, 18, 19, 20)
_PARTICIPANT_COLUMNS = (3, 21, 23)
_USER_COLUMNS = (4, 5, 6, 7, 8, 9, 12, 14, 15, 16, 17, 22)
_WIDTH = PRIOR_WIDTH
# Places within the parts.
_LAST_INTERACTION, _LAST_USER_MESSAGE, _LAST_AGENT_MESSAGE, _LAST_CONVERSATION = 0, 1, 2, 8
_CONTACT_AT, _CONTACT_CHANNEL = 0, 1
_MEMBER_LAST_MESSAGE, _MEMBER_LAST_CONVERSATION, _MEMBER_NAME = 0, 1, 2

# Threads, users and pairs held, each; the oldest go first. ≈ 1 MB at most.
MAX_ROWS = 1024


def _later(stored: str | None, at: str) -> str:
    """``MAX(COALESCE(stored, ''), at)``: the triggers' rule for a thread's times."""
    return at if stored is None or at > stored else stored


def _move_thread(thread: list[Any], at: str, command: bool) -> None:
    """Trigger ``messages_user_moves_thread``, on the thread (a command is no message of
    the conversation)."""
    thread[_LAST_INTERACTION] = _later(thread[_LAST_INTERACTION], at)
    thread[_LAST_USER_MESSAGE] = _later(thread[_LAST_USER_MESSAGE], at)
    if not command:
        thread[_LAST_CONVERSATION] = _later(thread[_LAST_CONVERSATION], at)


def _move_member(member: list[Any], record: InboundRecord, at: str) -> None:
    """Trigger ``messages_user_moves_thread``, on the sender's row in the thread: its last
    message and (unless a command) its last message of the conversation; and the name the
    message came with, which the write keeps there (``sqlite_turns._SET_MEMBER_NAME``)."""
    member[_MEMBER_LAST_MESSAGE] = _later(member[_MEMBER_LAST_MESSAGE], at)
    if not record.command:
        member[_MEMBER_LAST_CONVERSATION] = _later(member[_MEMBER_LAST_CONVERSATION], at)
    if record.display_name is not None:
        member[_MEMBER_NAME] = record.display_name


def _move_contact(user: list[Any], at: str, channel: str) -> None:
    """``move_contact_forward``: both CASEs compare with the time stored before."""
    stored = user[_CONTACT_AT] or ""
    if at >= stored:
        user[_CONTACT_CHANNEL] = channel
    if at > stored:
        user[_CONTACT_AT] = at


class PriorRows:
    """``SELECT_PRIOR`` rows by (thread key, user key), moved by the store's own messages."""

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self._max_rows = max_rows
        self._threads: dict[str, list[Any]] = {}
        self._users: dict[str, list[Any]] = {}
        self._participants: dict[tuple[str, str], list[Any]] = {}
        # Held threads whose newest user message is a command: a reply to it moves no
        # conversation time (trigger ``messages_reply_moves_thread``).
        self._after_command: set[str] = set()
        self._data_version: int | None = None
        # Moves on every change: a row read before a change is not kept after it.
        self.version = 0

    def __len__(self) -> int:
        return len(self._participants)

    def pairs(self) -> list[tuple[str, str]]:
        """The (thread key, user key) pairs with a row held."""
        return [pair for pair in self._participants if self.get(*pair) is not None]

    def get(self, thread_key: str, user_key: str) -> Row | None:
        """The row a read would return now, if held."""
        member = self._participants.get((thread_key, user_key))
        thread = self._threads.get(thread_key)
        user = self._users.get(user_key)
        if member is None or thread is None or user is None:
            return None
        row: list[Any] = [None] * _WIDTH
        for column, value in zip(_THREAD_COLUMNS, thread, strict=True):
            row[column] = value
        for column, value in zip(_USER_COLUMNS, user, strict=True):
            row[column] = value
        for column, value in zip(_PARTICIPANT_COLUMNS, member, strict=True):
            row[column] = value
        return tuple(row)

    def clear(self) -> None:
        self.version += 1
        self._threads.clear()
        self._users.clear()
        self._participants.clear()
        self._after_command.clear()

    def began(self, conn: sqlite3.Connection) -> None:
        """Called inside each new ``BEGIN IMMEDIATE`` of the loop's connection: drop the
        rows if another connection committed since the last one."""
        (data_version,) = conn.execute("PRAGMA data_version").fetchone()
        if data_version != self._data_version:
            if self._data_version is not None:
                self.clear()
            self._data_version = data_version

    def inbound(self, record: InboundRecord, at: str) -> None:
        """``record``'s message (stored as ``at``) was written or queued: move the parts
        it moves."""
        self.version += 1
        pair = (record.thread_key, record.user_key)
        thread = self._threads.get(record.thread_key)
        if thread is not None:
            _move_thread(thread, at, record.command)
            self._newest_is_command(record.thread_key, record.command)
        member = self._participants.get(pair)
        if member is not None:
            _move_member(member, record, at)
        for other, name in record.member_names:
            # ``sqlite_turns._RENAME_MEMBER``: the name a mention shows them by.
            mentioned = self._participants.get((record.thread_key, other))
            if mentioned is not None:
                mentioned[_MEMBER_NAME] = name
        user = self._users.get(record.user_key)
        if record.counts_as_contact and user is not None:
            _move_contact(user, at, record.channel)

    def reply(self, thread_key: str, at: str) -> None:
        """A reply at ``at`` was written (or queued) in the thread."""
        self.version += 1
        thread = self._threads.get(thread_key)
        if thread is not None:
            # Trigger ``messages_reply_moves_thread``: the reply answers the newest user
            # message (marking an older one a command drops its thread).
            thread[_LAST_AGENT_MESSAGE] = _later(thread[_LAST_AGENT_MESSAGE], at)
            thread[_LAST_INTERACTION] = _later(thread[_LAST_INTERACTION], at)
            if thread_key not in self._after_command:
                thread[_LAST_CONVERSATION] = _later(thread[_LAST_CONVERSATION], at)

    def command(self, thread_key: str) -> None:
        """A message of the thread was marked a command: trigger
        ``messages_command_leaves_conversation`` moves the thread's conversation back to
        a message this cache never saw, and the sender's with it: the thread's rows go,
        its members' too (a thread held again later must not meet a member's old row)."""
        self.version += 1
        self._threads.pop(thread_key, None)
        self._after_command.discard(thread_key)
        for pair in [pair for pair in self._participants if pair[0] == thread_key]:
            del self._participants[pair]

    def keep(self, record: InboundRecord, at: str, before: Row) -> None:
        """Hold the row of ``record``'s pair as its message (stored as ``at``) leaves it,
        given the row read just before: only for a user who wrote in the thread before
        (so the user and the thread rows exist, with nothing the message's insert would
        fill in) and who is not linked to a person."""
        if before[_PARTICIPANT_COLUMNS[_MEMBER_LAST_MESSAGE]] is None or (
            before[PRIOR_PERSON_ID] is not None
        ):
            return
        thread = [before[column] for column in _THREAD_COLUMNS]
        _move_thread(thread, at, record.command)
        user = [before[column] for column in _USER_COLUMNS]
        if record.counts_as_contact:
            _move_contact(user, at, record.channel)
        member = [before[column] for column in _PARTICIPANT_COLUMNS]
        _move_member(member, record, at)
        _put(self._threads, record.thread_key, thread, self._max_rows)
        self._newest_is_command(record.thread_key, record.command)
        _put(self._users, record.user_key, user, self._max_rows)
        _put(self._participants, (record.thread_key, record.user_key), member, self._max_rows)

    def _newest_is_command(self, thread_key: str, command: bool) -> None:
        if command:
            self._after_command.add(thread_key)
        else:
            self._after_command.discard(thread_key)


def _put(held: dict[Any, Any], key: Any, value: Any, max_items: int) -> None:
    """Hold ``value`` as the newest; the oldest goes when ``held`` is full."""
    held.pop(key, None)
    if len(held) >= max_items:
        del held[next(iter(held))]
    held[key] = value
