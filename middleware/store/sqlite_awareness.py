"""The temporal-awareness writes of the SQLite store: a user's clock data (policy
overrides, calibration, latest actions), the thread's kind, and held tool calls.

Each function here runs inside the store's writer (one savepoint of a group commit), so a
read-change-write on the user's clock data is atomic against concurrent turns.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

from middleware.identity import split_user_key
from middleware.store.migrations import from_db, to_db
from middleware.store.records import ClockData, ClockDataChange, HeldToolCall
from middleware.store.sqlite_clock_state import (
    CREATE_USER,
    SELECT_CLOCK_DATA,
    clock_data_from_row,
    store_clock_data,
)

_SET_KIND_EXPLICIT = """
UPDATE threads SET kind = ?, kind_source = 'explicit' WHERE thread_key = ? RETURNING kind
"""

# An inference never overwrites a kind somebody chose (or an earlier inference).
_SET_KIND_INFERRED = """
UPDATE threads SET kind = ?, kind_source = 'inferred'
WHERE thread_key = ? AND kind_source = 'default' RETURNING kind
"""

_HOLD = """
INSERT INTO held_tool_calls (thread_key, user_key, message, names, model, held_at, expires_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_key) DO UPDATE SET
    user_key = excluded.user_key, message = excluded.message, names = excluded.names,
    model = excluded.model, held_at = excluded.held_at, expires_at = excluded.expires_at
"""

_TAKE = """
DELETE FROM held_tool_calls WHERE thread_key = ?
RETURNING thread_key, user_key, message, names, model, held_at, expires_at
"""


def update_clock_data(
    conn: sqlite3.Connection,
    user_key: str,
    change: ClockDataChange,
    create_at: datetime | None = None,
) -> ClockData | None:
    """Read the user's clock data, apply ``change``, write the result if there is one; with
    ``create_at``, the user is created first if unknown (an operator's, before their first
    message)."""
    if create_at is not None:
        channel, platform_user_id = split_user_key(user_key)
        conn.execute(CREATE_USER, (user_key, channel, platform_user_id, to_db(create_at)))
    row = conn.execute(SELECT_CLOCK_DATA, (user_key,)).fetchone()
    if row is None:
        return None
    person_id = row[0]
    current = clock_data_from_row(row[1:5], person_id or user_key)
    changed = change(current)
    if changed is None:
        return current
    store_clock_data(conn, user_key, person_id, changed)
    return changed


def set_thread_kind(conn: sqlite3.Connection, thread_key: str, kind: str, explicit: bool) -> bool:
    statement = _SET_KIND_EXPLICIT if explicit else _SET_KIND_INFERRED
    return bool(conn.execute(statement, (kind, thread_key)).fetchall())


def hold_tool_call(conn: sqlite3.Connection, held: HeldToolCall) -> None:
    conn.execute(
        _HOLD,
        (
            held.thread_key,
            held.user_key,
            json.dumps(held.message),
            json.dumps(list(held.names)),
            held.model,
            to_db(held.held_at),
            to_db(held.expires_at),
        ),
    )


def take_held_tool_call(conn: sqlite3.Connection, thread_key: str) -> HeldToolCall | None:
    rows = conn.execute(_TAKE, (thread_key,)).fetchall()
    if not rows:
        return None
    row = rows[0]
    return HeldToolCall(
        thread_key=row[0],
        user_key=row[1],
        message=json.loads(row[2]),
        names=tuple(json.loads(row[3])),
        model=row[4],
        held_at=_instant(row[5]),
        expires_at=_instant(row[6]),
    )


def _instant(value: str) -> datetime:
    instant = from_db(value)
    assert instant is not None
    return instant
