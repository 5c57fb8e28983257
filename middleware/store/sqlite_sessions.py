"""Sessions and channel history (spec 001) in the SQLite store; how ``read``/``write``
run is described in ``sqlite_continuity``, captures are in ``sqlite_continuity_log``.

A session row is written when it starts and when it is captured; its counts come from
``messages``: the thread's messages from its ``first_message_id`` up to (not including)
the next session's, so a turn writes nothing here and the counts never drift. A
thread's latest session is the one with the highest first message.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from middleware.continuity.model import DEFAULT_CONTEXT_PREFIX, CaptureMode, Session
from middleware.store.migrations import from_db, in_conversation, to_db
from middleware.store.records import Role, StoredMessage
from middleware.store.sqlite_continuity import (
    PERSON_KEYS,
    Run,
    instant,
    make_thread_context,
    no_thread,
)
from middleware.types import ChatType

# Above every message id: the end of a thread's latest session.
_NO_END = 2**63 - 1

# --- channel history -------------------------------------------------------------------

_HISTORY_START = "SELECT history_start_id FROM threads WHERE thread_key = ?"

_SET_HISTORY_START = """
UPDATE threads SET history_start_id = ? WHERE thread_key = ? RETURNING thread_key
"""

_MESSAGE_COLUMNS = (
    "m.id, m.thread_key, m.user_key, m.role, m.text, m.at, m.complete, m.speaker, m.command"
)

# Commands the relay answered itself ("/time") and its answers are left out: the model
# took no part in them, and its block measures the gap without them. A chat command is
# stored as one, so it never shows in one turn's history and not the next's. Each message
# names its speaker as stored with it: a rename or a namesake joining later changes no
# message the model has seen. A reply the user never received is left out: the model
# must not believe it was read.
_TRANSCRIPT_FROM = f"""
SELECT {_MESSAGE_COLUMNS}
FROM messages AS m
WHERE m.thread_key = ? AND m.id >= ? AND {in_conversation("m")} AND m.delivered = 1
ORDER BY m.id DESC LIMIT ?
"""


def _message(row: Sequence[Any]) -> StoredMessage:
    return StoredMessage(
        id=int(row[0]),
        thread_key=row[1],
        user_key=row[2],
        role=cast(Role, row[3]),
        text=row[4],
        at=instant(row[5]),
        complete=bool(row[6]),
        speaker_name=row[7],
        command=bool(row[8]),
    )


def _oldest_first(rows: list[Any]) -> list[StoredMessage]:
    return [_message(row) for row in reversed(rows)]


async def history_start(read: Run, thread_key: str) -> int | None:
    def start(conn: sqlite3.Connection) -> int | None:
        row = conn.execute(_HISTORY_START, (thread_key,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    return await read("read where a thread's history starts", start)


async def set_history_start(write: Run, thread_key: str, message_id: int) -> None:
    def change(conn: sqlite3.Connection) -> None:
        if not conn.execute(_SET_HISTORY_START, (message_id, thread_key)).fetchall():
            raise no_thread(thread_key)

    await write("set where a thread's history starts", change)


async def transcript_from(
    read: Run, thread_key: str, first_id: int | None, limit: int
) -> list[StoredMessage]:
    if limit <= 0:  # SQLite reads a negative LIMIT as "no limit"
        return []
    params = (thread_key, first_id or 0, limit)
    return await read(
        "read a transcript",
        lambda conn: _oldest_first(conn.execute(_TRANSCRIPT_FROM, params).fetchall()),
    )


# --- sessions --------------------------------------------------------------------------

# The sessions chosen by ``{source}`` (which names ``sessions AS s`` and ``threads AS t``),
# each with its counts. The bare ``m.user_key``/``m.at`` come from the row MAX(m.id)
# picked (SQLite's documented min/max bare-column rule): the session's last user message.
# Commands the relay answered itself ("/recap") are no turn: they are not counted.
_SESSIONS = """
WITH picked AS (
    SELECT s.*, t.channel, t.chat_type, (
        SELECT MIN(n.first_message_id) FROM sessions AS n
        WHERE n.thread_key = s.thread_key AND n.first_message_id > s.first_message_id
    ) AS end_id
    FROM {source}
)
SELECT p.session_id, p.thread_key, p.channel, p.work_context_id, p.user_key, p.started_at,
    p.first_message_id, p.tool_used, p.captured_message_id, p.last_capture_at, p.summary,
    p.summary_mode, p.cards_fingerprint, COUNT(m.id),
    COALESCE(SUM(m.id > COALESCE(p.captured_message_id, 0)), 0), MAX(m.id), m.user_key,
    m.at AS last_at, p.chat_type
FROM picked AS p
LEFT JOIN messages AS m ON m.thread_key = p.thread_key AND m.role = 'user'
    AND m.command = 0 AND m.id >= p.first_message_id AND m.id < COALESCE(p.end_id, :no_end)
GROUP BY p.session_id
ORDER BY {order}
"""

_BY_ID = _SESSIONS.format(
    source="sessions AS s JOIN threads AS t ON t.thread_key = s.thread_key "
    "WHERE s.session_id = :session_id",
    order="p.session_id",
)

_LATEST_OF_THREAD = """(
    SELECT l.session_id FROM sessions AS l WHERE l.thread_key = {thread}
    ORDER BY l.first_message_id DESC LIMIT 1)"""

# A session left behind in the context a thread moved out of has ended: the thread has
# no current session until its next message starts one where it is now.
_CURRENT = _SESSIONS.format(
    source="sessions AS s JOIN threads AS t ON t.thread_key = s.thread_key "
    f"WHERE s.session_id = {_LATEST_OF_THREAD.format(thread=':thread_key')} "
    "AND s.work_context_id = COALESCE(t.work_context_id, :prefix || t.thread_key)",
    order="p.session_id",
)

# Per thread: one index probe for its latest session and one for a user message after
# that session's capture point, so the scan is over threads, not sessions or messages.
_CANDIDATES = _SESSIONS.format(
    source=f"""threads AS t
    JOIN sessions AS s ON s.session_id = {_LATEST_OF_THREAD.format(thread="t.thread_key")}
    WHERE EXISTS (
        SELECT 1 FROM messages AS m WHERE m.thread_key = t.thread_key AND m.role = 'user'
        AND m.command = 0 AND m.id > COALESCE(s.captured_message_id, s.first_message_id - 1))""",
    order="last_at, p.session_id",
)

_OF_CONTEXT = _SESSIONS.format(
    source="sessions AS s JOIN threads AS t ON t.thread_key = s.thread_key "
    "WHERE s.work_context_id = :work_context_id AND s.started_at >= :since",
    order="p.started_at DESC, p.session_id",
)

_INSERT_SESSION = """
INSERT INTO sessions (session_id, thread_key, work_context_id, user_key, started_at,
                      first_message_id)
VALUES (?, ?, ?, ?, ?, ?)
"""

_SET_CARDS = "UPDATE sessions SET cards_fingerprint = ? WHERE session_id = ?"
_TOOL_USED = "UPDATE sessions SET tool_used = 1 WHERE session_id = ?"

_LATEST_THREAD = f"""
SELECT thread_key FROM thread_participants
WHERE user_key IN ({PERSON_KEYS}) AND last_user_message_at IS NOT NULL
ORDER BY last_user_message_at DESC, thread_key LIMIT 1
"""

# A reply the user never received is left out, as from a turn's history: continuity
# reads what was said between the two, and an answer nobody read settles nothing.
_SESSION_MESSAGES = f"""
SELECT {_MESSAGE_COLUMNS}
FROM sessions AS s
JOIN messages AS m ON m.thread_key = s.thread_key AND m.id >= s.first_message_id
    AND m.delivered = 1 AND m.id < COALESCE((
        SELECT MIN(n.first_message_id) FROM sessions AS n
        WHERE n.thread_key = s.thread_key AND n.first_message_id > s.first_message_id
    ), :no_end)
WHERE s.session_id = :session_id ORDER BY m.id DESC LIMIT :limit
"""


def _session(row: Sequence[Any]) -> Session:
    spoke = row[15] is not None  # the session has a user message
    return Session(
        session_id=row[0],
        thread_key=row[1],
        channel=row[2],
        work_context_id=row[3],
        speaker_key=row[16] if spoke else row[4],
        started_at=instant(row[5]),
        first_message_id=int(row[6]),
        last_turn_at=instant(row[17] if spoke else row[5]),
        user_turns=int(row[13]),
        dirty_turns=int(row[14]),
        tool_used=bool(row[7]),
        captured_message_id=row[8],
        last_capture_at=from_db(row[9]),
        summary=row[10],
        summary_mode=cast(CaptureMode | None, row[11]),
        cards_fingerprint=row[12],
        chat_type=cast(ChatType, row[18]),
    )


def _sessions(conn: sqlite3.Connection, statement: str, **params: Any) -> list[Session]:
    return [_session(row) for row in conn.execute(statement, {"no_end": _NO_END, **params})]


def _one(conn: sqlite3.Connection, statement: str, **params: Any) -> Session | None:
    found = _sessions(conn, statement, **params)
    return found[0] if found else None


def _start_session(
    conn: sqlite3.Connection,
    session_id: str,
    thread_key: str,
    user_key: str,
    started_at: datetime,
    first_message_id: int,
) -> Session:
    context = make_thread_context(conn, thread_key, started_at, touch=True)
    conn.execute(
        _INSERT_SESSION,
        (
            session_id,
            thread_key,
            context.work_context_id,
            user_key,
            to_db(started_at),
            first_message_id,
        ),
    )
    return cast(Session, _one(conn, _BY_ID, session_id=session_id))


async def start_session(
    write: Run,
    session_id: str,
    thread_key: str,
    user_key: str,
    started_at: datetime,
    first_message_id: int,
) -> Session:
    return await write(
        "start a session",
        lambda conn: _start_session(
            conn, session_id, thread_key, user_key, started_at, first_message_id
        ),
    )


async def current_session(read: Run, thread_key: str) -> Session | None:
    return await read(
        "read a thread's session",
        lambda conn: _one(conn, _CURRENT, thread_key=thread_key, prefix=DEFAULT_CONTEXT_PREFIX),
    )


async def get_session(read: Run, session_id: str) -> Session | None:
    return await read("read a session", lambda conn: _one(conn, _BY_ID, session_id=session_id))


async def set_session_cards(write: Run, session_id: str, fingerprint: str | None) -> None:
    await write(
        "set a session's cards",
        lambda conn: conn.execute(_SET_CARDS, (fingerprint, session_id)).close(),
    )


async def mark_session_tool_use(write: Run, session_id: str) -> None:
    await write(
        "mark a session's tool use", lambda conn: conn.execute(_TOOL_USED, (session_id,)).close()
    )


async def capture_candidates(read: Run) -> list[Session]:
    return await read("read capture candidates", lambda conn: _sessions(conn, _CANDIDATES))


async def latest_thread_of(read: Run, user_key: str) -> str | None:
    def latest(conn: sqlite3.Connection) -> str | None:
        row = conn.execute(_LATEST_THREAD, {"user_key": user_key}).fetchone()
        return None if row is None else str(row[0])

    return await read("read a user's latest thread", latest)


async def session_messages(read: Run, session_id: str, limit: int) -> list[StoredMessage]:
    if limit <= 0:  # SQLite reads a negative LIMIT as "no limit"
        return []
    params = {"session_id": session_id, "limit": limit, "no_end": _NO_END}
    return await read(
        "read a session's messages",
        lambda conn: _oldest_first(conn.execute(_SESSION_MESSAGES, params).fetchall()),
    )


async def context_sessions(read: Run, work_context_id: str, since: datetime) -> list[Session]:
    params = {"work_context_id": work_context_id, "since": to_db(since)}
    return await read(
        "read a work context's sessions", lambda conn: _sessions(conn, _OF_CONTEXT, **params)
    )
