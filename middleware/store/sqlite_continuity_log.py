"""The continuity log (spec 001 §3.2) in the SQLite store: captures, entries and their
lifecycle, and the constellations (derived views) the log's changes make stale.

How ``read``/``write`` run is described in ``sqlite_continuity``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, cast

from middleware.continuity.model import (
    DEFAULT_CONTEXT_PREFIX,
    UNLINKED_CONTEXT_PREFIX,
    CaptureMode,
    ContinuityEntry,
    EntryType,
)
from middleware.errors import NotFoundError
from middleware.store.migrations import from_db, to_db
from middleware.store.sqlite_continuity import MAKE_BUCKET, Run, fold, instant

# --- the log ---------------------------------------------------------------------------

_ENTRY_COLUMNS = """entry_id, entry_type, work_context_id, source_session_id, captured_at,
    capture_mode, content, decay_at, delivered, delivered_at, promoted_to_graph,
    promoted_node_id, linked_entity_ids, source_agent_id, schema_version"""

_INSERT_ENTRY = f"""
INSERT INTO continuity_entries ({_ENTRY_COLUMNS})
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

# An entry is decayed once its decay_at has come: live means decay_at > now.
_CONTEXT_ENTRIES = f"""
SELECT {_ENTRY_COLUMNS} FROM continuity_entries
WHERE work_context_id = ? AND decay_at > ? ORDER BY captured_at, entry_id
"""

_LIVE_ENTRIES = f"""
SELECT {_ENTRY_COLUMNS} FROM continuity_entries WHERE decay_at > ?
ORDER BY captured_at, entry_id
"""

_DECAY = "DELETE FROM continuity_entries WHERE decay_at <= ? RETURNING work_context_id"
_DECAY_IN_CONTEXT = """
DELETE FROM continuity_entries WHERE decay_at <= ? AND work_context_id = ?
RETURNING work_context_id
"""

_MARK_STALE = "UPDATE work_contexts SET constellation_stale = 1 WHERE work_context_id = ?"

# Entry fields ``update_entry`` may change, with the SET clause each one makes.
_ENTRY_UPDATES = {
    "content": "content = ?",
    "decay_at": "decay_at = ?",
    "delivered_at": "delivered = 1, delivered_at = ?",
    "promoted_node_id": "promoted_to_graph = 1, promoted_node_id = ?",
}


def _entry_row(entry: ContinuityEntry) -> tuple[Any, ...]:
    """The ``_INSERT_ENTRY`` parameters of an entry."""
    return (
        entry.entry_id,
        entry.entry_type,
        entry.work_context_id,
        entry.source_session_id,
        to_db(entry.captured_at),
        entry.capture_mode,
        json.dumps(entry.content),
        to_db(entry.decay_at),
        int(entry.delivered),
        None if entry.delivered_at is None else to_db(entry.delivered_at),
        int(entry.promoted_to_graph),
        entry.promoted_node_id,
        json.dumps(list(entry.linked_entity_ids)),
        entry.source_agent_id,
        entry.schema_version,
    )


def _entry(row: Sequence[Any]) -> ContinuityEntry:
    return ContinuityEntry(
        entry_id=row[0],
        entry_type=cast(EntryType, row[1]),
        work_context_id=row[2],
        source_session_id=row[3],
        captured_at=instant(row[4]),
        capture_mode=cast(CaptureMode, row[5]),
        content=json.loads(row[6]),
        decay_at=instant(row[7]),
        delivered=bool(row[8]),
        delivered_at=from_db(row[9]),
        promoted_to_graph=bool(row[10]),
        promoted_node_id=row[11],
        linked_entity_ids=tuple(json.loads(row[12])),
        source_agent_id=row[13],
        schema_version=int(row[14]),
    )


async def continuity_entries(
    read: Run, work_context_id: str, now: datetime
) -> list[ContinuityEntry]:
    params = (work_context_id, to_db(now))
    return await read(
        "read a work context's log",
        lambda conn: [_entry(row) for row in conn.execute(_CONTEXT_ENTRIES, params)],
    )


async def all_live_entries(read: Run, now: datetime) -> list[ContinuityEntry]:
    params = (to_db(now),)
    return await read(
        "read the continuity log",
        lambda conn: [_entry(row) for row in conn.execute(_LIVE_ENTRIES, params)],
    )


async def update_entry(write: Run, entry_id: str, changes: dict[str, Any]) -> None:
    """Apply ``changes`` (``update_entry``'s keyword arguments; ``None`` = unchanged)."""
    given = {name: value for name, value in changes.items() if value is not None}
    if not given:
        return
    sets = ", ".join(_ENTRY_UPDATES[name] for name in given)
    params = [_entry_value(name, value) for name, value in given.items()]
    statement = f"UPDATE continuity_entries SET {sets} WHERE entry_id = ? RETURNING work_context_id"

    def change(conn: sqlite3.Connection) -> None:
        for (context_id,) in conn.execute(statement, (*params, entry_id)).fetchall():
            conn.execute(_MARK_STALE, (context_id,))

    await write("update a continuity entry", change)


def _entry_value(name: str, value: Any) -> Any:
    if name == "content":
        return json.dumps(value)
    return to_db(value) if isinstance(value, datetime) else value


async def decay_entries(
    write: Run, now: datetime, work_context_ids: Collection[str] | None
) -> list[str]:
    at = to_db(now)

    def decay(conn: sqlite3.Connection) -> list[str]:
        if work_context_ids is None:
            rows = conn.execute(_DECAY, (at,)).fetchall()
        else:
            rows = [
                row
                for context_id in sorted(work_context_ids)
                for row in conn.execute(_DECAY_IN_CONTEXT, (at, context_id)).fetchall()
            ]
        contexts = sorted({row[0] for row in rows})
        conn.executemany(_MARK_STALE, [(context_id,) for context_id in contexts])
        return contexts

    return await write("decay continuity entries", decay)


# --- captures --------------------------------------------------------------------------

_SESSION_OWNER = "SELECT user_key FROM sessions WHERE session_id = ?"

# The capture point never moves back (a late capture of fewer turns leaves it alone);
# a summary kept keeps its mode.
_CAPTURED = """
UPDATE sessions SET summary = COALESCE(:summary, summary),
    summary_mode = CASE WHEN :summary IS NULL AND summary IS NOT NULL
        THEN summary_mode ELSE :mode END,
    last_capture_at = :at,
    captured_message_id = MAX(COALESCE(captured_message_id, 0), :through)
WHERE session_id = :session_id
"""

# An entry's context is normally made already (a session started in it); if not, it is
# made here as a default one, like ``sqlite_continuity`` makes a thread's.
_MAKE_STALE = """
INSERT INTO work_contexts (work_context_id, owner_key, name, name_folded, named,
                           created_at, last_active_at, constellation_stale)
VALUES (:id, :owner, :name, :folded, 0, :at, :at, 1)
ON CONFLICT (work_context_id) DO UPDATE SET constellation_stale = 1
"""

_EVICT = """
DELETE FROM continuity_entries WHERE work_context_id = :id AND entry_id NOT IN (
    SELECT entry_id FROM continuity_entries WHERE work_context_id = :id
    ORDER BY captured_at DESC, entry_id DESC LIMIT :cap)
"""


def _record_capture(
    conn: sqlite3.Connection,
    session_id: str,
    params: dict[str, Any],
    entries: Sequence[ContinuityEntry],
    unlinked_cap: int,
) -> None:
    row = conn.execute(_SESSION_OWNER, (session_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no session {session_id!r} to record a capture for")
    conn.executemany(_INSERT_ENTRY, [_entry_row(entry) for entry in entries])
    conn.execute(_CAPTURED, params)
    for context_id in dict.fromkeys(entry.work_context_id for entry in entries):
        owner = _unlinked_owner(context_id)
        if owner is not None:
            made = {"id": context_id, "owner": owner, "at": params["at"], "stale": 1}
            conn.execute(MAKE_BUCKET, made)
            conn.execute(_EVICT, {"id": context_id, "cap": max(unlinked_cap, 0)})
            continue
        name = context_id.removeprefix(DEFAULT_CONTEXT_PREFIX)
        made = {"id": context_id, "owner": row[0], "name": name, "folded": fold(name)}
        conn.execute(_MAKE_STALE, {**made, "at": params["at"]})


async def record_capture(
    write: Run,
    session_id: str,
    *,
    through_message_id: int,
    at: datetime,
    summary: str | None,
    mode: str,
    entries: Sequence[ContinuityEntry],
    unlinked_cap: int,
) -> None:
    params = {
        "session_id": session_id,
        "summary": summary,
        "mode": mode,
        "at": to_db(at),
        "through": through_message_id,
    }
    entries = tuple(entries)
    await write(
        "record a capture",
        lambda conn: _record_capture(conn, session_id, params, entries, unlinked_cap),
    )


# --- constellations ----------------------------------------------------------------------

_SAVE_VIEW = """
UPDATE work_contexts SET constellation = ?, constellation_built_at = ?, constellation_stale = 0
WHERE work_context_id = ? RETURNING work_context_id
"""

_VIEW = "SELECT constellation FROM work_contexts WHERE work_context_id = ?"

_STALE = """
SELECT work_context_id FROM work_contexts WHERE constellation_stale = 1 ORDER BY work_context_id
"""


async def save_constellation(
    write: Run, work_context_id: str, view: dict[str, Any], built_at: datetime
) -> None:
    params = (json.dumps(view), to_db(built_at), work_context_id)

    def save(conn: sqlite3.Connection) -> None:
        if not conn.execute(_SAVE_VIEW, params).fetchall():
            raise NotFoundError(f"no work context {work_context_id!r} to keep a view of")

    await write("save a constellation", save)


async def constellation(read: Run, work_context_id: str) -> dict[str, Any] | None:
    def view(conn: sqlite3.Connection) -> dict[str, Any] | None:
        row = conn.execute(_VIEW, (work_context_id,)).fetchone()
        return None if row is None or row[0] is None else cast(dict[str, Any], json.loads(row[0]))

    return await read("read a constellation", view)


async def stale_constellations(read: Run) -> list[str]:
    return await read(
        "read stale constellations", lambda conn: [row[0] for row in conn.execute(_STALE)]
    )


def _unlinked_owner(work_context_id: str) -> str | None:
    """The user whose unlinked bucket the context is, ``None`` for any other context."""
    if work_context_id.startswith(UNLINKED_CONTEXT_PREFIX):
        return work_context_id.removeprefix(UNLINKED_CONTEXT_PREFIX)
    return None
