"""Forgetting a user in the SQLite store: every row kept about one user key, deleted in
one transaction (``/forget``).

What counts as the user's:

- their DM threads, whole: a DM thread they are the only participant of, with every
  message in it (the relay's replies too), its injections, held tool calls, sessions,
  default work context and job marks;
- everywhere else, their own rows: their messages in groups, the relay's replies to them
  and any reply of the relay's that names their key (a link confirmation, say), the
  injected blocks made for their messages (known by thread and instant) or naming their
  key, their group memberships, tool
  calls held for them, link codes, the work contexts they own (with their sessions and
  log entries), their sessions and what was captured from them, the group sessions they
  spoke in (whole, with their captures: those quote them) and the group views and
  everyone's rollup lines made from those (rebuilt by the nightly job from what is
  left), rollup segments, living memory, job marks scoped to them, and their user row
  (timezone, last contact, clock data) — all but their count of wrong link codes, which
  is kept until its window ends so that /forget does not reset the guessing limit;
- when linked, they are unlinked first (as ``unlink_user`` does: a person left with
  fewer than two users is dissolved) and the actions they clocked are taken out of the
  person's shared list, so what the other accounts keep holds nothing of theirs;
- the copies of their actions other rows hold: an account once linked to theirs kept a
  copy of the shared list when it was unlinked, and so did any person it joined since.

Children are deleted before their parents, rather than left to ``ON DELETE CASCADE``, so
each kind is counted. A dry run does all of it inside a savepoint it then rolls back, so
the preview counts are exactly what the real deletion removes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from middleware.continuity.model import (
    DEFAULT_CONTEXT_PREFIX,
    default_context_id,
    unlinked_context_id,
)
from middleware.store import sqlite_links as links
from middleware.store.records import ForgetReport

_SELECT_USER = "SELECT person_id, latest_actions FROM users WHERE user_key = ?"

# DM threads the user is the only participant of.
_SELECT_DM_THREADS = """
SELECT t.thread_key FROM threads AS t
JOIN thread_participants AS p ON p.thread_key = t.thread_key
WHERE p.user_key = :user_key AND t.chat_type = 'dm'
  AND NOT EXISTS (SELECT 1 FROM thread_participants AS o
                  WHERE o.thread_key = t.thread_key AND o.user_key <> :user_key)
ORDER BY t.thread_key
"""

# A group's own context they happened to start goes to the group's latest other speaker.
_HAND_OVER_CONTEXTS = """
UPDATE work_contexts SET owner_key = COALESCE((
    SELECT p.user_key FROM thread_participants AS p
    WHERE :prefix || p.thread_key = work_contexts.work_context_id AND p.user_key <> :user_key
    ORDER BY p.last_user_message_at DESC LIMIT 1), '')
WHERE owner_key = :user_key
"""

# Sessions of threads that stay (groups) in which the user spoke: a session holds the
# thread's messages from its first one up to the next session's first.
_SPOKE_IN = """
SELECT s.session_id FROM sessions AS s WHERE EXISTS (
    SELECT 1 FROM messages AS m
    WHERE m.thread_key = s.thread_key AND m.user_key = ? AND m.id >= s.first_message_id
      AND m.id < COALESCE((SELECT MIN(n.first_message_id) FROM sessions AS n
                           WHERE n.thread_key = s.thread_key
                             AND n.first_message_id > s.first_message_id),
                          9223372036854775807))
"""

# A context whose log loses entries: its stored view (and every rollup line made from
# it) quoted them. Dropped, to be rebuilt from what is left by the nightly job.
_DROP_VIEWS = """
UPDATE work_contexts SET constellation = NULL, constellation_built_at = NULL,
    constellation_stale = 1
WHERE work_context_id IN ({marks})
"""

_COUNT_MISSES = "SELECT COUNT(*) FROM link_code_misses WHERE user_key = ?"
_SELECT_LINKED = "SELECT user_key FROM users WHERE person_id = ? AND user_key <> ? ORDER BY 1"

# Rows whose latest actions may hold one of the user's (the key as stored JSON spells it).
_ACTION_HOLDERS = {
    "users": "SELECT user_key, latest_actions FROM users "
    "WHERE user_key <> :user_key AND instr(latest_actions, :spelled) > 0",
    "persons": "SELECT person_id, latest_actions FROM persons "
    "WHERE instr(latest_actions, :spelled) > 0",
}
_SET_ACTIONS = {
    "users": "UPDATE users SET latest_actions = ? WHERE user_key = ?",
    "persons": "UPDATE persons SET latest_actions = ? WHERE person_id = ?",
}


def forget_user(conn: sqlite3.Connection, user_key: str, *, dry_run: bool) -> ForgetReport | None:
    """Delete everything stored about ``user_key``; ``None`` if the user is unknown.

    Runs inside the store's writer, so it is one transaction with nothing interleaved.
    With ``dry_run`` nothing changes and the report says what would be deleted.
    """
    conn.execute("SAVEPOINT forget_user")
    try:
        report = _forget(conn, user_key)
    except BaseException:
        conn.execute("ROLLBACK TO forget_user")
        conn.execute("RELEASE forget_user")
        raise
    if dry_run:
        conn.execute("ROLLBACK TO forget_user")
    conn.execute("RELEASE forget_user")
    return report


def _forget(conn: sqlite3.Connection, user_key: str) -> ForgetReport | None:
    user = conn.execute(_SELECT_USER, (user_key,)).fetchone()
    if user is None:
        return None
    person_id, own_actions = user
    threads = [row[0] for row in conn.execute(_SELECT_DM_THREADS, {"user_key": user_key})]
    default_contexts = [default_context_id(key) for key in threads]
    # Their named contexts; a group's own context is the group's, whoever made it.
    contexts = _column(
        conn,
        "SELECT work_context_id FROM work_contexts WHERE owner_key = ? AND named = 1",
        [user_key],
    )
    # Work may hang off a context id with no row of its own yet (made on first use).
    contexts = sorted({*contexts, *default_contexts, unlinked_context_id(user_key)})
    in_threads = f"thread_key IN ({_marks(threads) or 'NULL'})"
    in_contexts = f"work_context_id IN ({_marks(contexts)})"
    # A subquery rather than a list of ids: a user of years has many sessions.
    # A group session they spoke in goes whole: its captures quote them, and the
    # others' words in it cannot be told apart from theirs.
    their_sessions = (
        f"SELECT session_id FROM sessions WHERE user_key = ? OR {in_threads} OR {in_contexts}"
        f" OR session_id IN ({_SPOKE_IN})"
    )
    session_params = [user_key, *threads, *contexts, user_key]
    their_entries = (
        f"continuity_entries WHERE {in_contexts} OR source_session_id IN ({their_sessions})"
    )
    entry_params = [*contexts, *session_params]
    # The contexts that stay but lose entries (a group's own): their views go too.
    touched = [
        context
        for context in _column(
            conn, f"SELECT DISTINCT work_context_id FROM {their_entries}", entry_params
        )
        if context not in contexts
    ]
    counts: dict[str, int] = {}
    counts["continuity_entries"] = _delete(conn, their_entries, entry_params)
    if touched:
        conn.execute(_DROP_VIEWS.format(marks=_marks(touched)), touched)
    counts["sessions"] = _delete(
        conn, f"sessions WHERE session_id IN ({their_sessions})", session_params
    )
    counts["rollup_segments"] = _delete(
        conn,
        f"rollup_segments WHERE user_key = ? OR work_context_id IN "
        f"({_marks([*contexts, *touched])})",
        [user_key, *contexts, *touched],
    )
    # Threads that stay (groups) but were moved into a context that goes: back to their own.
    conn.execute(
        f"UPDATE threads SET work_context_id = NULL WHERE {in_contexts}",
        contexts,
    )
    counts["work_contexts"] = _delete(conn, f"work_contexts WHERE {in_contexts}", contexts)
    conn.execute(_HAND_OVER_CONTEXTS, {"user_key": user_key, "prefix": DEFAULT_CONTEXT_PREFIX})
    counts["memory_facts"] = _delete(conn, "memory_facts WHERE user_key = ?", [user_key])
    counts["job_marks"] = _delete(
        conn,
        f"job_marks WHERE scope = ? OR scope IN ({_marks(threads) or 'NULL'}) "
        f"OR scope IN ({_marks(contexts)})",
        [user_key, *threads, *contexts],
    )
    # A block injected into a group message is stored under the message's instant.
    counts["injections"] = _delete(
        conn,
        f"injections WHERE {in_threads} OR instr(text, ?) > 0 OR EXISTS (SELECT 1 FROM "
        "messages AS m WHERE m.user_key = ? AND m.thread_key = injections.thread_key "
        "AND m.at = injections.at)",
        [*threads, user_key, user_key],
    )
    counts["held_tool_calls"] = _delete(
        conn, f"held_tool_calls WHERE {in_threads} OR user_key = ?", [*threads, user_key]
    )
    # The relay's replies to them in groups (each follows the message it answers; a
    # conversation's turns are answered in order), and any reply of the relay's naming them.
    replies = _delete(
        conn,
        "messages WHERE role = 'assistant' AND (instr(text, :user_key) > 0 OR :user_key = "
        "(SELECT m.user_key FROM messages AS m WHERE m.thread_key = messages.thread_key "
        "AND m.role = 'user' AND m.id < messages.id ORDER BY m.id DESC LIMIT 1))",
        {"user_key": user_key},
    )
    counts["messages"] = replies + _delete(
        conn, f"messages WHERE {in_threads} OR user_key = ?", [*threads, user_key]
    )
    counts["thread_memberships"] = _delete(
        conn, f"thread_participants WHERE {in_threads} OR user_key = ?", [*threads, user_key]
    )
    counts["threads"] = _delete(conn, f"threads WHERE {in_threads}", threads)
    counts["link_codes"] = _delete(conn, "link_codes WHERE user_key = ?", [user_key])
    # Their count of wrong link codes stays, until its window ends (the next code anyone
    # tries deletes it then): a guesser must not reset the limit with /forget. It holds
    # no words of theirs, only the key, when the window began and how many.
    kept = conn.execute(_COUNT_MISSES, (user_key,)).fetchone()[0]
    # Their own list may hold copies of a once-linked account's actions: not theirs.
    theirs = [a for a in _actions(own_actions) if _owner(a) in ("", user_key)]
    linked: tuple[str, ...] = ()
    if person_id is not None:
        linked = tuple(row[0] for row in conn.execute(_SELECT_LINKED, (person_id, user_key)))
    theirs += _drop_actions_elsewhere(conn, user_key)
    if person_id is not None:
        links.unlink_user(conn, user_key)
    conn.execute("DELETE FROM users WHERE user_key = ?", (user_key,))
    return ForgetReport(
        **counts,
        actions=_distinct(theirs),
        unlinked_from=linked,
        link_code_misses_kept=bool(kept),
    )


def _drop_actions_elsewhere(conn: sqlite3.Connection, user_key: str) -> list[Any]:
    """Take the user's actions out of every other row's list (their person's shared one,
    and the copies unlinked accounts kept); return the entries taken."""
    taken: list[Any] = []
    spelled = json.dumps(user_key)[1:-1]
    for table, select in _ACTION_HOLDERS.items():
        rows = conn.execute(select, {"user_key": user_key, "spelled": spelled}).fetchall()
        for owner, raw in rows:
            stored = _actions(raw)
            kept = [a for a in stored if _owner(a) != user_key]
            if len(kept) != len(stored):
                taken += [a for a in stored if _owner(a) == user_key]
                conn.execute(_SET_ACTIONS[table], (json.dumps(kept) if kept else None, owner))
    return taken


def _owner(action: Any) -> str:
    found = action.get("user_key") if isinstance(action, dict) else None
    return found if isinstance(found, str) else ""


def _distinct(actions: list[Any]) -> int:
    """How many actions, a copy held in several rows counted once (by its id)."""
    ids = {a["id"] for a in actions if isinstance(a, dict) and isinstance(a.get("id"), str)}
    without_id = [a for a in actions if not (isinstance(a, dict) and isinstance(a.get("id"), str))]
    return len(ids) + len(without_id)


def _actions(raw: str | None) -> list[Any]:
    try:
        parsed = json.loads(raw) if raw else []
    except ValueError:
        return []
    return parsed if isinstance(parsed, list) else []


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def _column(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> list[str]:
    return [str(row[0]) for row in conn.execute(sql, params)]


def _delete(
    conn: sqlite3.Connection, where: str, params: Sequence[object] | dict[str, object]
) -> int:
    return conn.execute(f"DELETE FROM {where}", params).rowcount
