"""The injected time-awareness blocks of each thread in the SQLite store: their SQL and write."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping

from middleware.store.sqlite_continuity import PERSON_KEYS

SELECT_INJECTIONS = """
SELECT fingerprint, ordinal, text FROM injections WHERE thread_key = ?
ORDER BY at, fingerprint, ordinal
"""

HAS_INJECTIONS = "SELECT EXISTS (SELECT 1 FROM injections WHERE thread_key = ?)"

# A primary-key lookup: the block of ``key`` on the user's newest message.
SELECT_NEWEST_INJECTED = """
SELECT p.last_user_message_at FROM thread_participants AS p
JOIN injections AS i ON i.thread_key = p.thread_key AND i.fingerprint = ? AND i.ordinal = ?
    AND i.at = p.last_user_message_at
WHERE p.thread_key = ? AND p.user_key = ?
"""

# Joined from the keys so each one is a primary-key lookup (a row-value IN list would scan
# the whole thread). Two parameters a key: a batch stays within SQLite's oldest default
# limit of 999 parameters.
INJECTION_KEYS_PER_QUERY = 400


def select_injections_for(count: int) -> str:
    keys = ", ".join(["(?, ?)"] * count)
    return f"""
WITH wanted (fingerprint, ordinal) AS (VALUES {keys})
SELECT i.fingerprint, i.ordinal, i.text FROM wanted AS w
JOIN injections AS i
  ON i.thread_key = ? AND i.fingerprint = w.fingerprint AND i.ordinal = w.ordinal
"""


_INSERT_INJECTION = """
INSERT INTO injections (thread_key, fingerprint, ordinal, text, at, context)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_key, fingerprint, ordinal) DO UPDATE SET text = excluded.text,
    at = excluded.at, context = COALESCE(excluded.context, context)
"""

_SET_INJECTION_CONTEXT = """
UPDATE injections SET context = ?
WHERE thread_key = ? AND fingerprint = ? AND ordinal = ? AND context IS NULL
"""

SELECT_REPEATED_INJECTIONS = """
SELECT fingerprint, ordinal, context FROM injections
WHERE thread_key = ? AND context IS NOT NULL
"""


def save_injection_write(
    thread_key: str,
    fingerprint: str,
    ordinal: int,
    text: str,
    at: str,
    contexts: Mapping[int, str] | None,
) -> tuple[Callable[[sqlite3.Connection], None], bool]:
    """The write of ``Store.save_injection`` (``at`` stored), and whether it is one
    statement."""
    others = {copy: ctx for copy, ctx in (contexts or {}).items() if copy != ordinal}
    own = contexts.get(ordinal) if contexts else None
    params = (thread_key, fingerprint, ordinal, text, at, own)

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(_INSERT_INJECTION, params)
        conn.executemany(
            _SET_INJECTION_CONTEXT,
            [(ctx, thread_key, fingerprint, copy) for copy, ctx in others.items()],
        )

    return write, not others


# The blocks holding ``marker`` in the threads the person (any of their linked accounts)
# wrote in.
_SELECT_PERSON_INJECTIONS = f"""
SELECT thread_key, fingerprint, ordinal, text FROM injections
WHERE instr(text, :marker) > 0 AND thread_key IN (
    SELECT thread_key FROM thread_participants WHERE user_key IN ({PERSON_KEYS}))
"""

# Only the text read: a block saved for the message since is the one to keep.
_UPDATE_INJECTION_TEXT = """
UPDATE injections SET text = ?
WHERE thread_key = ? AND fingerprint = ? AND ordinal = ? AND text = ?
"""

_DELETE_INJECTION = """
DELETE FROM injections
WHERE thread_key = ? AND fingerprint = ? AND ordinal = ? AND text = ?
"""


def edit_injections_write(
    user_key: str, marker: str, edit: Callable[[str], str | None]
) -> Callable[[sqlite3.Connection], set[str]]:
    """The write of ``Store.edit_injections``."""

    def write(conn: sqlite3.Connection) -> set[str]:
        rows = conn.execute(
            _SELECT_PERSON_INJECTIONS, {"marker": marker, "user_key": user_key}
        ).fetchall()
        edited: set[str] = set()
        for thread_key, fingerprint, ordinal, text in rows:
            new = edit(text)
            if new == text:
                continue
            key = (thread_key, fingerprint, ordinal, text)
            if new is None:
                conn.execute(_DELETE_INJECTION, key)
            else:
                conn.execute(_UPDATE_INJECTION_TEXT, (new, *key))
            edited.add(thread_key)
        return edited

    return write
