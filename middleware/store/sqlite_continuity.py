"""Continuity (spec 001) in the SQLite store: work contexts, card sources, rollups,
living memory and job marks. Sessions and the channel history are in ``sqlite_sessions``;
captures, the log and its views in ``sqlite_continuity_log``.

Every public function here is a coroutine taking how to run a function of the
connection: ``read`` runs it in the reader's thread inside one read transaction (one
hop, one consistent view however many statements it takes), ``write`` runs it in the
store's writer (one savepoint of a group commit, so it is atomic).

A person's data is stored under the user key that made it and read across every key
linked to the same person (``PERSON_KEYS``), so linking and unlinking move nothing.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar, cast

import aiosqlite

from middleware.continuity.model import (
    DEFAULT_CONTEXT_PREFIX,
    UNLINKED_CONTEXT_PREFIX,
    CardSources,
    MemoryFact,
    MemoryKind,
    MemorySource,
    RollupSegment,
    WorkContext,
    unlinked_context_id,
)
from middleware.errors import NotFoundError, StoreError
from middleware.memory.confidence import (
    COMPACT_AFTER,
    base_confidence,
    is_forgettable,
    mentioned_again,
)
from middleware.store.migrations import from_db, to_db

T = TypeVar("T")

# The name of a user's unlinked bucket (``unlinked_context_id``).
UNLINKED_NAME = "unlinked"
# A named context's id: this prefix and random hex (never "unlinked", which is not hex).
NAMED_CONTEXT_PREFIX = "wc_"


class Run(Protocol):
    """How the store runs a function of its connection (``SqliteStore._snapshot`` for
    reads, ``SqliteStore._write`` for writes); ``action`` names it in errors."""

    async def __call__(self, action: str, fn: Callable[[sqlite3.Connection], T], /) -> T: ...


async def read_snapshot(conn: aiosqlite.Connection, read: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``read`` in ``conn``'s worker thread inside one read transaction.

    Like ``sqlite_writer``, this uses aiosqlite's ``_execute``/``_conn``: one thread hop
    for the whole read instead of one per statement.
    """
    result = await conn._execute(_in_snapshot, conn._conn, read)  # type: ignore[no-untyped-call]
    return cast(T, result)


def _in_snapshot(conn: sqlite3.Connection, read: Callable[[sqlite3.Connection], T]) -> T:
    conn.execute("BEGIN")
    try:
        return read(conn)
    finally:
        if conn.in_transaction:
            # Nothing was written: rolling back just ends the snapshot.
            conn.execute("ROLLBACK")


# Every key of the user's person, the user's own included (also when not linked).
PERSON_KEYS = """SELECT :user_key UNION SELECT o.user_key FROM users AS u
    JOIN users AS o ON o.person_id = u.person_id WHERE u.user_key = :user_key"""


def fold(text: str) -> str:
    """Context names and memory facts compare ignoring case and runs of spaces."""
    return " ".join(text.casefold().split())


def instant(value: str) -> datetime:
    """A NOT NULL instant column."""
    return cast(datetime, from_db(value))


def no_thread(thread_key: str) -> NotFoundError:
    return NotFoundError(
        f"no thread {thread_key!r}: the relay knows a thread once it has recorded a message in it"
    )


# --- work contexts ---------------------------------------------------------------------

_CONTEXT_FIELDS = "work_context_id, name, owner_key, named, created_at, last_active_at"
_CONTEXT_COLUMNS = "w.work_context_id, w.name, w.owner_key, w.named, w.created_at, w.last_active_at"

# One row per known thread; the context columns are NULL while its context is not made.
_THREAD_CONTEXT = f"""
SELECT t.thread_key, {_CONTEXT_COLUMNS}, w.constellation
FROM threads AS t LEFT JOIN work_contexts AS w
    ON w.work_context_id = COALESCE(t.work_context_id, :prefix || t.thread_key)
WHERE t.thread_key = :thread_key
"""

# A default context is named after its thread and owned by whoever spoke first there
# (the only user of a DM). It starts fresh: there is no log to build a view from yet.
# ``:touch`` moves an existing context's last activity (a session starting in it).
_MAKE_THREAD_CONTEXT = """
INSERT INTO work_contexts (work_context_id, owner_key, name, name_folded, named,
                           created_at, last_active_at, constellation_stale)
SELECT COALESCE(t.work_context_id, :prefix || t.thread_key),
    COALESCE(
        (SELECT m.user_key FROM messages AS m
         WHERE m.thread_key = t.thread_key AND m.role = 'user' ORDER BY m.id LIMIT 1),
        (SELECT MIN(p.user_key) FROM thread_participants AS p
         WHERE p.thread_key = t.thread_key),
        ''),
    t.thread_key, :folded, 0, :at, :at, 0
FROM threads AS t WHERE t.thread_key = :thread_key
ON CONFLICT (work_context_id) DO UPDATE SET last_active_at = CASE
    WHEN :touch THEN MAX(last_active_at, excluded.last_active_at) ELSE last_active_at END
"""

_FIND_NAMED = f"""
SELECT {_CONTEXT_COLUMNS} FROM work_contexts AS w
WHERE w.named = 1 AND w.name_folded = :folded AND w.owner_key IN ({PERSON_KEYS})
ORDER BY w.created_at, w.work_context_id LIMIT 1
"""

_INSERT_NAMED = """
INSERT INTO work_contexts (work_context_id, owner_key, name, name_folded, named,
                           created_at, last_active_at, constellation_stale)
VALUES (?, ?, ?, ?, 1, ?, ?, 0)
"""

_TOUCH_CONTEXT = f"""
UPDATE work_contexts SET last_active_at = MAX(last_active_at, ?)
WHERE work_context_id = ? RETURNING {_CONTEXT_FIELDS}
"""

_MOVE_THREAD = "UPDATE threads SET work_context_id = ? WHERE thread_key = ? RETURNING thread_key"

# Sessions already captured keep the context their entries went to.
_MOVE_SESSIONS = """
UPDATE sessions SET work_context_id = ? WHERE thread_key = ? AND captured_message_id IS NULL
"""

_RECENT_CONTEXTS = f"""
SELECT {_CONTEXT_COLUMNS} FROM work_contexts AS w
WHERE (w.named = 1 AND w.owner_key IN ({PERSON_KEYS}))
    OR w.work_context_id IN (
        SELECT :prefix || p.thread_key FROM thread_participants AS p
        JOIN threads AS t ON t.thread_key = p.thread_key
        WHERE p.user_key IN ({PERSON_KEYS}) AND p.last_user_message_at IS NOT NULL
            -- a thread moved into a named context has left its own one behind: listed
            -- only when asked for (its work still happened)
            AND (:unlisted OR t.work_context_id IS NULL
                 OR t.work_context_id = :prefix || t.thread_key))
    -- and, asked for, the person's unlinked buckets (API turns without a thread)
    OR (:unlisted AND w.owner_key IN ({PERSON_KEYS})
        AND w.work_context_id = :unlinked || w.owner_key)
ORDER BY w.last_active_at DESC, w.work_context_id LIMIT :limit
"""

_GET_CONTEXT = f"SELECT {_CONTEXT_FIELDS} FROM work_contexts WHERE work_context_id = ?"

# A user's unlinked bucket, made by the first thread or entry put there (``:stale``: 1
# when made by an entry, whose view then needs building).
MAKE_BUCKET = f"""
INSERT INTO work_contexts (work_context_id, owner_key, name, name_folded, named,
                           created_at, last_active_at, constellation_stale)
VALUES (:id, :owner, '{UNLINKED_NAME}', '{UNLINKED_NAME}', 0, :at, :at, :stale)
ON CONFLICT (work_context_id) DO UPDATE SET
    constellation_stale = MAX(constellation_stale, excluded.constellation_stale)
"""

# Who spoke since, with the zone the clock uses for them (the person's when linked).
_ACTIVE_USERS = """
SELECT u.user_key, CASE WHEN u.person_id IS NULL THEN u.default_tz ELSE per.default_tz END
FROM users AS u LEFT JOIN persons AS per ON per.person_id = u.person_id
WHERE EXISTS (
    SELECT 1 FROM thread_participants AS p
    WHERE p.user_key = u.user_key AND p.last_user_message_at >= ?)
ORDER BY u.user_key
"""

# ``:own`` is the thread whose default context it is (NULL for a named one).
_CONTEXT_THREADS = """
SELECT thread_key FROM threads WHERE work_context_id = :id
UNION SELECT thread_key FROM threads WHERE thread_key = :own AND work_context_id IS NULL
ORDER BY thread_key
"""


def _context(row: Sequence[Any]) -> WorkContext:
    return WorkContext(row[0], row[1], row[2], bool(row[3]), instant(row[4]), instant(row[5]))


def _thread_context_row(conn: sqlite3.Connection, thread_key: str) -> Any:
    params = {"prefix": DEFAULT_CONTEXT_PREFIX, "thread_key": thread_key}
    row = conn.execute(_THREAD_CONTEXT, params).fetchone()
    if row is None:
        raise no_thread(thread_key)
    return row


def read_thread_context(conn: sqlite3.Connection, thread_key: str) -> WorkContext | None:
    """The thread's context, ``None`` while not made. Raises ``NotFoundError`` for a
    thread never seen."""
    row = _thread_context_row(conn, thread_key)
    return None if row[1] is None else _context(row[1:7])


def make_thread_context(
    conn: sqlite3.Connection, thread_key: str, now: datetime, *, touch: bool
) -> WorkContext:
    """The thread's context, made if missing (a write); with ``touch`` its last activity
    moves to ``now``. Raises ``NotFoundError`` for a thread never seen."""
    params = {
        "prefix": DEFAULT_CONTEXT_PREFIX,
        "thread_key": thread_key,
        "folded": fold(thread_key),
        "at": to_db(now),
        "touch": int(touch),
    }
    conn.execute(_MAKE_THREAD_CONTEXT, params)
    made = read_thread_context(conn, thread_key)
    if made is None:  # the upsert above just made it
        raise StoreError(f"the work context of thread {thread_key!r} could not be made")
    return made


async def thread_work_context(read: Run, write: Run, thread_key: str, now: datetime) -> WorkContext:
    found = await read(
        "read a thread's work context", lambda conn: read_thread_context(conn, thread_key)
    )
    if found is not None:
        return found
    return await write(
        "make a thread's work context",
        lambda conn: make_thread_context(conn, thread_key, now, touch=False),
    )


async def use_work_context(
    write: Run, thread_key: str, user_key: str, name: str, now: datetime
) -> tuple[WorkContext, bool]:
    shown = " ".join(name.split())
    if not shown:
        raise ValueError("a work context needs a name")
    return await write(
        "move a thread into a work context",
        lambda conn: _use_work_context(conn, thread_key, user_key, shown, to_db(now)),
    )


def _use_work_context(
    conn: sqlite3.Connection, thread_key: str, user_key: str, name: str, at: str
) -> tuple[WorkContext, bool]:
    folded = fold(name)
    row = conn.execute(_FIND_NAMED, {"folded": folded, "user_key": user_key}).fetchone()
    made = row is None
    context_id = f"{NAMED_CONTEXT_PREFIX}{uuid.uuid4().hex[:16]}" if made else row[0]
    if made:
        conn.execute(_INSERT_NAMED, (context_id, user_key, name, folded, at, at))
    # Naming the thread's own context takes its work along; work done in another named
    # context ("billing launch") belongs there, not in the one moved to ("garden").
    was = read_thread_context(conn, thread_key)
    naming = was is None or not was.named
    return _move_thread(conn, thread_key, context_id, at, sessions=naming), made


def _move_thread(
    conn: sqlite3.Connection, thread_key: str, context_id: str, at: str, *, sessions: bool
) -> WorkContext:
    """Put the thread in an existing context, whose last activity moves to ``at``; with
    ``sessions``, its sessions not yet captured go along. A session left behind has
    ended: the thread's next message starts a new one (``current_session``)."""
    if not conn.execute(_MOVE_THREAD, (context_id, thread_key)).fetchall():
        raise no_thread(thread_key)
    if sessions:
        conn.execute(_MOVE_SESSIONS, (context_id, thread_key))
    return _context(conn.execute(_TOUCH_CONTEXT, (at, context_id)).fetchall()[0])


async def get_work_context(read: Run, work_context_id: str) -> WorkContext | None:
    def get(conn: sqlite3.Connection) -> WorkContext | None:
        row = conn.execute(_GET_CONTEXT, (work_context_id,)).fetchone()
        return None if row is None else _context(row)

    return await read("read a work context", get)


async def assign_unlinked_context(
    write: Run, thread_key: str, user_key: str, now: datetime
) -> WorkContext:
    bucket, at = unlinked_context_id(user_key), to_db(now)

    def assign(conn: sqlite3.Connection) -> WorkContext:
        conn.execute(MAKE_BUCKET, {"id": bucket, "owner": user_key, "at": at, "stale": 0})
        return _move_thread(conn, thread_key, bucket, at, sessions=True)

    return await write("put a thread in the unlinked bucket", assign)


async def active_users(read: Run, since: datetime) -> list[tuple[str, str | None]]:
    params = (to_db(since),)
    return await read(
        "read active users",
        lambda conn: [(row[0], row[1]) for row in conn.execute(_ACTIVE_USERS, params)],
    )


async def recent_work_contexts(
    read: Run, user_key: str, limit: int, *, unlisted: bool = False
) -> list[WorkContext]:
    if limit <= 0:  # SQLite reads a negative LIMIT as "no limit"
        return []
    params = {
        "user_key": user_key,
        "prefix": DEFAULT_CONTEXT_PREFIX,
        "limit": limit,
        "unlisted": unlisted,
        "unlinked": UNLINKED_CONTEXT_PREFIX,
    }
    return await read(
        "read recent work contexts",
        lambda conn: [_context(row) for row in conn.execute(_RECENT_CONTEXTS, params)],
    )


async def context_threads(read: Run, work_context_id: str) -> list[str]:
    own = None
    if work_context_id.startswith(DEFAULT_CONTEXT_PREFIX):
        own = work_context_id.removeprefix(DEFAULT_CONTEXT_PREFIX)
    params = {"id": work_context_id, "own": own}
    return await read(
        "read a work context's threads",
        lambda conn: [row[0] for row in conn.execute(_CONTEXT_THREADS, params)],
    )


# --- card sources ----------------------------------------------------------------------

_ROLLUPS = f"""
SELECT work_context_id, text, last_activity_at, generated_at FROM rollup_segments
WHERE user_key IN ({PERSON_KEYS}) ORDER BY last_activity_at DESC, work_context_id
"""

_FACT_COLUMNS = """fact_id, user_key, kind, text, source, created_at, confidence,
    COALESCE(last_mentioned_at, created_at), source_entry_id, committed"""

_MEMORY = f"""
SELECT {_FACT_COLUMNS} FROM memory_facts WHERE user_key IN ({PERSON_KEYS})
ORDER BY created_at, fact_id
"""

_CardParts = tuple[
    WorkContext | None, dict[str, Any] | None, tuple[RollupSegment, ...], tuple[MemoryFact, ...]
]


async def card_sources(
    read: Run, write: Run, thread_key: str, user_key: str, now: datetime
) -> CardSources:
    context, view, rollups, memory = await read(
        "read card sources", lambda conn: _card_parts(conn, thread_key, user_key)
    )
    if context is None:
        # The first use of the thread's default context: this one time, a write too.
        context = await write(
            "make a thread's work context",
            lambda conn: make_thread_context(conn, thread_key, now, touch=False),
        )
    return CardSources(context, view, rollups, memory)


def _card_parts(conn: sqlite3.Connection, thread_key: str, user_key: str) -> _CardParts:
    row = _thread_context_row(conn, thread_key)
    context = None if row[1] is None else _context(row[1:7])
    view = None if row[7] is None else json.loads(row[7])
    return context, view, tuple(_rollups(conn, user_key)), tuple(_memory(conn, user_key))


# --- rollups -----------------------------------------------------------------------------

# Each user keeps the rollup made for them; linked users' ones are read together.
_DELETE_ROLLUPS = "DELETE FROM rollup_segments WHERE user_key = ?"

_INSERT_ROLLUP = """
INSERT INTO rollup_segments (user_key, work_context_id, text, last_activity_at, generated_at)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (user_key, work_context_id) DO UPDATE SET text = excluded.text,
    last_activity_at = excluded.last_activity_at, generated_at = excluded.generated_at
"""


def _rollups(conn: sqlite3.Connection, user_key: str) -> list[RollupSegment]:
    segments: dict[str, RollupSegment] = {}
    for row in conn.execute(_ROLLUPS, {"user_key": user_key}):
        # Linked users each keep their own rollup of the person's contexts: a context
        # shows once, with its latest activity.
        segments.setdefault(row[0], RollupSegment(row[0], row[1], instant(row[2]), instant(row[3])))
    return list(segments.values())


async def replace_rollup(
    write: Run, user_key: str, segments: Sequence[RollupSegment], generated_at: datetime
) -> None:
    at = to_db(generated_at)
    rows = [(user_key, s.work_context_id, s.text, to_db(s.last_activity_at), at) for s in segments]

    def replace(conn: sqlite3.Connection) -> None:
        conn.execute(_DELETE_ROLLUPS, (user_key,))
        conn.executemany(_INSERT_ROLLUP, rows)

    await write("replace a rollup", replace)


async def rollup_segments(read: Run, user_key: str) -> list[RollupSegment]:
    return await read("read rollup segments", lambda conn: _rollups(conn, user_key))


# --- living memory ---------------------------------------------------------------------

# A name said again is the one kept, not one replaced (it gains confidence instead).
_DROP_KIND = f"""
DELETE FROM memory_facts WHERE kind = :kind AND text_folded != :folded
    AND user_key IN ({PERSON_KEYS})
"""

_KNOWN_FACT = f"""
SELECT fact_id, confidence, text, source FROM memory_facts
WHERE text_folded = :folded AND user_key IN ({PERSON_KEYS})
"""

# Asked to keep once, it stays kept when said again plainly.
_MENTIONED = """
UPDATE memory_facts SET confidence = ?,
    last_mentioned_at = MAX(COALESCE(last_mentioned_at, created_at), ?), text = ?, source = ?,
    committed = MAX(committed, ?)
WHERE fact_id = ?
"""

_INSERT_FACT = f"""
INSERT INTO memory_facts (user_key, kind, text, text_folded, source, created_at,
                          confidence, last_mentioned_at, source_entry_id, committed)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {_FACT_COLUMNS}
"""

_DELETE_FACT = f"""
DELETE FROM memory_facts WHERE fact_id = :fact_id AND user_key IN ({PERSON_KEYS})
RETURNING fact_id
"""

# What may have aged below the compactor's threshold: unmentioned since ``before``, and
# of a kind that ages (``middleware.memory.confidence.is_forgettable`` decides each one,
# and whether one the user asked to keep still is: "… this week" is not after it).
_UNMENTIONED = f"""
SELECT {_FACT_COLUMNS} FROM memory_facts
WHERE COALESCE(last_mentioned_at, created_at) <= ? AND kind != 'correction'
    AND source != 'admin'
"""


def _fact(row: Sequence[Any]) -> MemoryFact:
    return MemoryFact(
        fact_id=int(row[0]),
        user_key=row[1],
        kind=cast(MemoryKind, row[2]),
        text=row[3],
        source=cast(MemorySource, row[4]),
        created_at=instant(row[5]),
        confidence=float(row[6]),
        last_mentioned_at=instant(row[7]),
        source_entry_id=row[8],
        committed=bool(row[9]),
    )


def _memory(conn: sqlite3.Connection, user_key: str) -> list[MemoryFact]:
    return [_fact(row) for row in conn.execute(_MEMORY, {"user_key": user_key})]


async def add_memory_fact(
    write: Run,
    user_key: str,
    kind: MemoryKind,
    text: str,
    source: MemorySource,
    at: datetime,
    source_entry_id: str | None,
    replaces_kind: bool,
    replaces: Sequence[int],
    committed: bool,
) -> MemoryFact | None:
    stored = text.strip()
    folded = fold(stored)
    if not folded:
        raise ValueError("a memory fact needs some text")
    when = to_db(at)
    confidence = base_confidence(kind, source)
    row = (
        *(user_key, kind, stored, folded, source, when),
        *(confidence, when, source_entry_id, int(committed)),
    )
    person = {"folded": folded, "user_key": user_key}

    def add(conn: sqlite3.Connection) -> MemoryFact | None:
        if replaces_kind:
            conn.execute(_DROP_KIND, {"kind": kind, **person})
        for fact_id in replaces:
            conn.execute(_DELETE_FACT, {"fact_id": fact_id, "user_key": user_key}).fetchall()
        known = conn.execute(_KNOWN_FACT, person).fetchall()
        for fact_id, was, written, kept_from in known:
            # Said again: not stored twice, but surer of and mentioned now (spec 003 §8).
            surer = mentioned_again(was, kind, source)
            better = _better_written(written, stored)
            stated = _stated(kept_from, source)
            conn.execute(_MENTIONED, (surer, when, better, stated, int(committed), fact_id))
        if known:
            return None
        return _fact(conn.execute(_INSERT_FACT, row).fetchall()[0])

    return await write("add a memory fact", add)


def _stated(kept_from: MemorySource, again: MemorySource) -> MemorySource:
    """The source of a known fact said again from ``again``: what the relay only
    inferred becomes the user's (or the operator's) once they state it themselves, since
    a manual source supersedes an automatic one (spec 002 A4); it then ages, and is
    listed, as theirs."""
    return again if kept_from == "promoted" else kept_from


def _better_written(stored: str, again: str) -> str:
    """Of two writings of one fact, ``again`` when it only adds capitals to ``stored``:
    "Works at Deutsche Bank" said after "Works at deutsche bank" (texted in lowercase) is
    kept as written then; a writing that drops a capital, or shouts, is not."""
    was, now = " ".join(stored.split()), " ".join(again.split())
    if len(was) != len(now) or was == now or now.isupper():
        return stored
    pairs = zip(was, now, strict=True)
    return again if all(a == b or (a.islower() and b == a.upper()) for a, b in pairs) else stored


async def memory_facts(read: Run, user_key: str) -> list[MemoryFact]:
    return await read("read memory facts", lambda conn: _memory(conn, user_key))


async def delete_memory_fact(write: Run, user_key: str, fact_id: int) -> bool:
    params = {"fact_id": fact_id, "user_key": user_key}
    return await write(
        "delete a memory fact", lambda conn: bool(conn.execute(_DELETE_FACT, params).fetchall())
    )


async def compact_memory(
    write: Run, now: datetime, user_keys: Collection[str] | None
) -> list[MemoryFact]:
    """Delete the facts the compactor's rule forgets (``is_forgettable``), of
    ``user_keys`` (everyone's when ``None``); return them."""
    before = to_db(now - COMPACT_AFTER)

    def compact(conn: sqlite3.Connection) -> list[MemoryFact]:
        gone = [
            fact
            for fact in map(_fact, conn.execute(_UNMENTIONED, (before,)))
            if (user_keys is None or fact.user_key in user_keys) and is_forgettable(fact, now)
        ]
        conn.executemany("DELETE FROM memory_facts WHERE fact_id = ?", [(f.fact_id,) for f in gone])
        return gone

    return await write("compact living memory", compact)


# --- jobs ------------------------------------------------------------------------------

_JOB_MARK = "SELECT mark FROM job_marks WHERE job = ? AND scope = ?"

_SET_JOB_MARK = """
INSERT INTO job_marks (job, scope, mark, at) VALUES (?, ?, ?, ?)
ON CONFLICT (job, scope) DO UPDATE SET mark = excluded.mark, at = excluded.at
"""


# Only a later mark replaces one: of several processes claiming the same night, one row
# comes back (to the one that runs the job).
_CLAIM_JOB_MARK = """
INSERT INTO job_marks (job, scope, mark, at) VALUES (?, ?, ?, ?)
ON CONFLICT (job, scope) DO UPDATE SET mark = excluded.mark, at = excluded.at
WHERE job_marks.mark < excluded.mark
RETURNING mark
"""


async def job_mark(read: Run, job: str, scope: str) -> str | None:
    def mark(conn: sqlite3.Connection) -> str | None:
        row = conn.execute(_JOB_MARK, (job, scope)).fetchone()
        return None if row is None else str(row[0])

    return await read("read a job mark", mark)


async def set_job_mark(write: Run, job: str, scope: str, mark: str, at: datetime) -> None:
    params = (job, scope, mark, to_db(at))
    await write("set a job mark", lambda conn: conn.execute(_SET_JOB_MARK, params).close())


async def claim_job_mark(write: Run, job: str, scope: str, mark: str, at: datetime) -> bool:
    params = (job, scope, mark, to_db(at))
    return await write(
        "claim a job mark",
        lambda conn: bool(conn.execute(_CLAIM_JOB_MARK, params).fetchall()),
    )
