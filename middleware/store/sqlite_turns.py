"""A turn's messages in the SQLite store: the writes that record them, the reads of them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple, cast

from middleware.errors import StoreError
from middleware.store.migrations import from_db, move_contact_forward, to_db
from middleware.store.records import InboundRecord, Role, StoredMessage
from middleware.store.sqlite_clock_state import (
    CREATE_THREAD,
    PRIOR_MEMBER_NAME,
    PRIOR_PERSON_ID,
    PRIOR_THREAD_EXISTS,
    SELECT_PRIOR,
)
from middleware.store.sqlite_prior_cache import PriorRows, Row
from middleware.store.sqlite_transaction_outcomes import Commit
from middleware.store.sqlite_writer import GroupCommitWriter
from middleware.types import valid_text

RECORD_INBOUND = "record an inbound message"

# ``at`` is passed only when the turn counts across channels; a NULL leaves the stored
# value alone because ``NULL > x`` is not true. ``MIN``/``MAX`` keep created_at the
# earliest and the clock fields the latest instant, whatever order messages arrive in.
_UPSERT_USER = f"""
INSERT INTO users (
    user_key, channel, platform_user_id, display_name, created_at,
    last_interaction_any_channel_at, last_channel
) VALUES (:user_key, :channel, :platform_user_id, :display_name, :received_at, :any_at, :any_ch)
ON CONFLICT (user_key) DO UPDATE SET
    display_name = COALESCE(excluded.display_name, users.display_name),
    created_at = MIN(users.created_at, :received_at),
    {move_contact_forward(":any_at", ":any_ch", "users.")}
"""

# The name the member goes by in the thread, when their message comes with another one
# than stored (``PRIOR_MEMBER_NAME``): a Discord nickname is the server's, not the account's.
_SET_MEMBER_NAME = """
UPDATE thread_participants SET display_name = :display_name
WHERE thread_key = :thread_key AND user_key = :user_key
"""

# Another member's name as the message's mention shows it (``InboundRecord.member_names``),
# for one who wrote in the thread before: a write only when it changed.
_RENAME_MEMBER = """
UPDATE thread_participants SET display_name = :display_name
WHERE thread_key = :thread_key AND user_key = :user_key AND display_name IS NOT :display_name
"""

_MOVE_PERSON = f"""
UPDATE persons SET
    {move_contact_forward(":at", ":channel")}
WHERE person_id = :person_id
"""

_INSERT_MESSAGE = """
INSERT INTO messages (thread_key, user_key, role, text, at, complete, place_fingerprint,
    place_index)
VALUES (:thread_key, :user_key, :role, :text, :at, :complete, :place_fingerprint, :place_index)
"""

# What a user's message is said by (``Store.speaker_label``): their display name (the
# one it comes with, else the one they went by in the thread, else their account's),
# followed by their user key when another member of the group thread already goes by it
# there, case aside (``identity.name_key``, the rule ``member_labels`` applies). Decided
# once, when the message is stored: the history forwards it as stored.
SPEAKER_LABEL = """(
    SELECT CASE
        WHEN s.name IS NULL THEN NULL
        WHEN :chat_type = 'group' AND EXISTS (
            SELECT 1 FROM thread_participants AS p JOIN users AS o ON o.user_key = p.user_key
            WHERE p.thread_key = :thread_key AND p.user_key <> :user_key
                AND name_key(COALESCE(p.display_name, o.display_name)) = name_key(s.name))
        THEN s.name || ' (' || :user_key || ')'
        ELSE s.name END
    FROM (SELECT COALESCE(:display_name,
        (SELECT COALESCE(m.display_name, u.display_name) FROM users AS u
         LEFT JOIN thread_participants AS m
             ON m.thread_key = :thread_key AND m.user_key = u.user_key
         WHERE u.user_key = :user_key)) AS name) AS s)"""

# The speaker's label is decided in the insert itself: no statement of its own.
_INSERT_USER_MESSAGE = f"""
INSERT INTO messages (thread_key, user_key, role, text, at, complete, place_fingerprint,
    place_index, command, speaker)
VALUES (:thread_key, :user_key, 'user', :text, :at, 1, :place_fingerprint, :place_index,
    :command, {SPEAKER_LABEL})
"""

SELECT_SPEAKER_LABEL = f"SELECT {SPEAKER_LABEL}"

_MARK_COMMAND = "UPDATE messages SET command = 1 WHERE id = ? AND role = 'user'"

_MARK_UNDELIVERED = "UPDATE messages SET delivered = 0 WHERE id = ? AND role = 'assistant'"

# A primary-key lookup: the user's newest message here.
SELECT_NEWEST_PLACE = """
SELECT place_fingerprint, place_index, at FROM messages
WHERE thread_key = ? AND user_key = ? AND role = 'user'
ORDER BY id DESC LIMIT 1
"""

SELECT_TRANSCRIPT = """
SELECT id, thread_key, user_key, role, text, at, complete, command
FROM messages WHERE thread_key = ? ORDER BY id DESC LIMIT ?
"""


class Landing:
    """Where an inbound message's write landed: the commit it waits for (``Durable``)."""

    __slots__ = ("commit", "writer")

    def __init__(self, writer: GroupCommitWriter) -> None:
        self.writer = writer
        # Set by the write as it runs; None until then, and on the worker thread.
        self.commit: Commit | None = None

    async def committed(self) -> None:
        """See ``Durable.committed``; call once the write was applied."""
        await self.writer.committed(RECORD_INBOUND, self.commit)


class InboundStart(NamedTuple):
    """What both ways of recording an inbound message begin with."""

    at: str  # its stored received_at
    read: Callable[[sqlite3.Connection], Any]  # its SELECT_PRIOR row
    write: Callable[[sqlite3.Connection, Any], int]  # given that row; its row id
    writer: GroupCommitWriter
    held: Row | None  # the pair's row, held: no read needed
    version: int  # the held rows' version once this message moved them
    landing: Landing  # the commit ``write`` lands in


def start_inbound(
    record: InboundRecord, group_writer: Callable[[], GroupCommitWriter], priors: PriorRows
) -> InboundStart:
    """``record``'s read and write; its pair's held row, looked up only once the loop's
    connection may write now (its transaction, in which no other connection can
    commit, is open); then the held rows moved as its write, issued next, will move
    the file. A write that fails drops every row (``on_failure``), these moves too.
    ``group_writer`` is the store's writer, or raises if the store is not open."""
    at = to_db(record.received_at)
    read, write = _inbound_writes(record, at)
    writer = group_writer()
    landing = Landing(writer)

    def landed(conn: sqlite3.Connection, row: Any) -> int:
        message_id = write(conn, row)
        landing.commit = writer.commit_of(conn)
        return message_id

    held = None
    if writer.may_write_now(RECORD_INBOUND):
        held = priors.get(record.thread_key, record.user_key)
    priors.inbound(record, at)
    return InboundStart(at, read, landed, writer, held, priors.version, landing)


def _inbound_writes(
    record: InboundRecord, at: str
) -> tuple[Callable[[sqlite3.Connection], Any], Callable[[sqlite3.Connection, Any], int]]:
    """The read of an inbound message's prior state (a ``SELECT_PRIOR`` row), and its
    write given that row, which returns the message's row id; ``at`` is its stored
    ``received_at``."""
    counts_as_contact = record.counts_as_contact
    any_at = at if counts_as_contact else None
    user = {
        "user_key": record.user_key,
        "channel": record.channel,
        "platform_user_id": record.platform_user_id,
        "display_name": record.display_name,
        "received_at": at,
        "any_at": any_at,
        "any_ch": record.channel if counts_as_contact else None,
    }
    thread = (record.thread_key, record.channel, record.chat_type, at)
    message = _message_params(
        record.thread_key, record.user_key, "user", record.text, at, place=record.place
    )
    message.update(
        command=int(record.command), chat_type=record.chat_type, display_name=record.display_name
    )
    keys = {"thread_key": record.thread_key, "user_key": record.user_key}
    name = record.display_name

    def read(conn: sqlite3.Connection) -> Any:
        return conn.execute(SELECT_PRIOR, keys).fetchone()

    def write(conn: sqlite3.Connection, row: Any) -> int:
        conn.execute(_UPSERT_USER, user)
        # The upsert never changes the user's person (a new user has none).
        person_id = row[PRIOR_PERSON_ID]
        if any_at is not None and person_id is not None:
            conn.execute(
                _MOVE_PERSON, {"at": at, "channel": record.channel, "person_id": person_id}
            )
        if not row[PRIOR_THREAD_EXISTS]:
            conn.execute(CREATE_THREAD, thread).fetchall()
        # Also moves the thread's times and the user's in the thread (migration 9's
        # triggers), making the user's row in the thread if it has none yet.
        message_id = _inserted_id(conn.execute(_INSERT_USER_MESSAGE, message))
        if name is not None and row[PRIOR_MEMBER_NAME] != name:
            conn.execute(_SET_MEMBER_NAME, {**keys, "display_name": name})
        for member, member_name in record.member_names:
            renamed = {"thread_key": record.thread_key, "user_key": member}
            conn.execute(_RENAME_MEMBER, {**renamed, "display_name": member_name})
        return message_id

    return read, write


def reply_write(
    thread_key: str, text: str, at: str, complete: bool
) -> Callable[[sqlite3.Connection], int]:
    """The write of a reply stored at ``at``, which returns its row id and raises
    ``StoreError`` for a thread never seen."""
    message = _message_params(thread_key, None, "assistant", text, at, complete=complete)

    def write(conn: sqlite3.Connection) -> int:
        # One statement: the insert also moves the thread's times (a trigger).
        try:
            return _inserted_id(conn.execute(_INSERT_MESSAGE, message))
        except sqlite3.IntegrityError as exc:
            if exc.sqlite_errorcode != sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
                raise
            raise StoreError(
                f"cannot record a reply in unknown thread {thread_key!r}: "
                "record the inbound message that started it first"
            ) from exc

    return write


def mark_command_write(message_id: int) -> Callable[[sqlite3.Connection], None]:
    """The write that marks the user's message ``message_id`` as a command."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(_MARK_COMMAND, (message_id,))

    return write


def mark_undelivered_write(message_id: int) -> Callable[[sqlite3.Connection], None]:
    """The write that marks the reply ``message_id`` as never delivered."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(_MARK_UNDELIVERED, (message_id,))

    return write


def newest_place_from_rows(
    rows: list[Any],
) -> tuple[tuple[str, int] | None, datetime] | None:
    """``Store.newest_message_place`` from the rows of ``SELECT_NEWEST_PLACE``."""
    if not rows:
        return None
    fingerprint, index, at = rows[0]
    place = (str(fingerprint), int(index)) if fingerprint is not None else None
    received = from_db(at)
    return None if received is None else (place, received)


def messages_from_rows(rows: list[Any]) -> list[StoredMessage]:
    """The messages of ``SELECT_TRANSCRIPT`` rows, oldest first (the rows are newest
    first; reversed in place)."""
    rows.reverse()
    return [
        StoredMessage(
            id=row[0],
            thread_key=row[1],
            user_key=row[2],
            role=cast(Role, row[3]),
            text=row[4],
            at=cast(datetime, from_db(row[5])),
            complete=bool(row[6]),
            command=bool(row[7]),
        )
        for row in rows
    ]


def _inserted_id(cursor: sqlite3.Cursor) -> int:
    """The row id of the row an INSERT just made (cheaper than ``RETURNING id``)."""
    row_id = cursor.lastrowid
    if row_id is None:
        raise sqlite3.InterfaceError("the INSERT reported no row id")
    return row_id


def _message_params(
    thread_key: str,
    user_key: str | None,
    role: Role,
    text: str,
    at: str,
    *,
    complete: bool = True,
    place: tuple[str, int] | None = None,
) -> dict[str, Any]:
    return {
        "place_fingerprint": place[0] if place is not None else None,
        "place_index": place[1] if place is not None else None,
        "thread_key": thread_key,
        "user_key": user_key,
        "role": role,
        # A reply may carry a lone surrogate from the upstream's JSON; SQLite takes UTF-8.
        "text": valid_text(text),
        "at": at,
        "complete": int(complete),
    }
