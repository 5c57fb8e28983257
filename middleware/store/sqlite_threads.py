"""Users, threads and group participants in the SQLite store: their reads and timezones."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import aiosqlite

from middleware.identity import split_user_key
from middleware.store.migrations import from_db, to_db
from middleware.store.records import ParticipantState, ThreadState, UserState
from middleware.store.sqlite_clock_state import (
    CREATE_USER,
    owner_column,
    stated_location_from_db,
    usable_zone,
)
from middleware.types import ChatType

_SET_USER_TZ = """
UPDATE users SET default_tz = :zone WHERE user_key = :user_key AND person_id IS NULL
RETURNING user_key
"""

_SET_PERSON_TZ = """
UPDATE persons SET default_tz = :zone
WHERE person_id = (SELECT person_id FROM users WHERE user_key = :user_key)
RETURNING person_id
"""

_SET_USER_LOCALE = """
UPDATE users SET locale = :locale WHERE user_key = :user_key AND person_id IS NULL
RETURNING user_key
"""

_SET_PERSON_LOCALE = """
UPDATE persons SET locale = :locale
WHERE person_id = (SELECT person_id FROM users WHERE user_key = :user_key)
RETURNING person_id
"""

# Linked users keep a copy of their person's locale (for an unlink), which the clock
# reads when the person has none (``COALESCE(per.locale, u.locale)``): cleared with it.
_SET_LINKED_USERS_LOCALE = """
UPDATE users SET locale = :locale
WHERE person_id = (SELECT person_id FROM users WHERE user_key = :user_key)
"""

SET_APP_LOCALE = "UPDATE users SET app_locale = :locale WHERE user_key = :user_key"

_SET_THREAD_TZ = """
UPDATE threads SET session_tz = :zone WHERE thread_key = :thread_key RETURNING thread_key
"""

# A member as ``participants_from_rows`` reads them, from ``thread_participants AS p``,
# named as they were when they last wrote in the thread (migration 26), else by their
# account's name.
_PARTICIPANT = """
SELECT p.user_key, COALESCE(p.display_name, u.display_name),
       CASE WHEN u.person_id IS NULL THEN u.default_tz ELSE per.default_tz END,
       COALESCE(per.locale, u.locale, u.app_locale), p.last_user_message_at,
       CASE WHEN u.person_id IS NULL THEN u.located ELSE per.located END,
       EXISTS (
           SELECT 1 FROM thread_participants AS q JOIN users AS o ON o.user_key = q.user_key
           WHERE q.thread_key = p.thread_key AND q.user_key <> p.user_key
               AND name_key(COALESCE(q.display_name, o.display_name))
                   = name_key(COALESCE(p.display_name, u.display_name)))
FROM thread_participants AS p
JOIN users AS u ON u.user_key = p.user_key
LEFT JOIN persons AS per ON per.person_id = u.person_id
"""

SELECT_PARTICIPANTS = f"""{_PARTICIPANT}
WHERE p.thread_key = ? AND p.last_user_message_at >= ?
    AND (p.left_at IS NULL OR p.left_at < p.last_user_message_at)
ORDER BY p.last_user_message_at DESC, p.user_key LIMIT ?
"""

# Members whose stored actions (their person's, when linked) hold one they clocked for
# this group thread: however long ago they last wrote there, and whether or not they left
# since. Its expiry is the reader's to judge (the actions are read after).
_ACTIONS = owner_column("latest_actions")
SELECT_GROUP_PLAN_HOLDERS = f"""{_PARTICIPANT}
WHERE p.thread_key = :thread_key AND p.last_user_message_at IS NOT NULL AND EXISTS (
    SELECT 1 FROM json_each(CASE WHEN json_valid({_ACTIONS}) THEN {_ACTIONS} END) AS a
    WHERE json_extract(a.value, '$.scope') = 'group'
        AND json_extract(a.value, '$.thread_key') = p.thread_key
        AND json_extract(a.value, '$.user_key') = p.user_key)
ORDER BY p.last_user_message_at DESC, p.user_key LIMIT :limit
"""

# The member's row in the thread and in its topics' threads (``identity.thread_key``); a
# later leaving only moves the mark forward.
MARK_LEFT = """
UPDATE thread_participants SET left_at = MAX(COALESCE(left_at, ''), :at)
WHERE user_key = :user_key AND (thread_key = :thread_key
    OR substr(thread_key, 1, length(:thread_key) + 7) = :thread_key || ':topic:')
"""

SELECT_USER = """
SELECT user_key, channel, platform_user_id, display_name, person_id, default_tz, locale,
       last_interaction_any_channel_at, last_channel, app_locale
FROM users WHERE user_key = ?
"""

# One statement, so the thread and its participants come from the same snapshot.
SELECT_THREAD = """
SELECT t.thread_key, t.channel, t.chat_type, t.kind, t.session_tz, t.last_interaction_at,
       t.last_user_message_at, t.last_agent_message_at, p.user_key, p.last_user_message_at
FROM threads AS t LEFT JOIN thread_participants AS p ON p.thread_key = t.thread_key
WHERE t.thread_key = ?
"""


async def write_user_timezone(
    conn: aiosqlite.Connection, user_key: str, zone: str | None, *, create_at: datetime | None
) -> bool:
    """``Store.set_user_timezone`` in the writer's open transaction ``conn``; with
    ``create_at``, the user is created first if unknown (an operator's, before their first
    message)."""
    if create_at is not None:
        channel, platform_user_id = split_user_key(user_key)
        user = (user_key, channel, platform_user_id, to_db(create_at))
        await conn.execute_fetchall(CREATE_USER, user)
    params = {"user_key": user_key, "zone": zone}
    changed = list(await conn.execute_fetchall(_SET_USER_TZ, params))
    if not changed:
        changed = list(await conn.execute_fetchall(_SET_PERSON_TZ, params))
    return bool(changed)


async def write_user_locale(conn: aiosqlite.Connection, user_key: str, locale: str | None) -> bool:
    """``Store.set_user_locale`` in the writer's open transaction ``conn``."""
    params = {"user_key": user_key, "locale": locale}
    changed = list(await conn.execute_fetchall(_SET_USER_LOCALE, params))
    if not changed:
        changed = list(await conn.execute_fetchall(_SET_PERSON_LOCALE, params))
        if changed:
            await conn.execute(_SET_LINKED_USERS_LOCALE, params)
    return bool(changed)


async def write_thread_timezone(
    conn: aiosqlite.Connection, thread_key: str, zone: str | None
) -> bool:
    """``Store.set_thread_timezone`` in the writer's open transaction ``conn``."""
    params = {"thread_key": thread_key, "zone": zone}
    changed = list(await conn.execute_fetchall(_SET_THREAD_TZ, params))
    return bool(changed)


def participants_from_rows(rows: list[Any]) -> list[ParticipantState]:
    """The participants of ``SELECT_PARTICIPANTS`` rows."""
    return [
        ParticipantState(
            row[0],
            row[1],
            usable_zone(row[2]),
            row[3],
            cast(datetime, from_db(row[4])),
            stated_location_from_db(row[5], row[0]),
            bool(row[6]),
        )
        for row in rows
    ]


def user_from_row(row: Any) -> UserState:
    """The user of a ``SELECT_USER`` row."""
    return UserState(
        user_key=row[0],
        channel=row[1],
        platform_user_id=row[2],
        display_name=row[3],
        person_id=row[4],
        default_tz=row[5],
        locale=row[6],
        last_interaction_any_channel_at=from_db(row[7]),
        last_channel=row[8],
        app_locale=row[9],
    )


def thread_from_rows(rows: list[Any]) -> ThreadState:
    """The thread of its (at least one) ``SELECT_THREAD`` rows, one per participant."""
    first = rows[0]
    by_user: dict[str, datetime] = {}
    members: list[str] = []
    for row in rows:
        seen = from_db(row[9])
        if row[8] is not None:
            members.append(row[8])
            if seen is not None:
                by_user[row[8]] = seen
    return ThreadState(
        thread_key=first[0],
        channel=first[1],
        chat_type=cast(ChatType, first[2]),
        kind=first[3],
        session_tz=first[4],
        last_interaction_at=from_db(first[5]),
        last_user_message_at=from_db(first[6]),
        last_agent_message_at=from_db(first[7]),
        last_user_message_by_user=by_user,
        participants=tuple(sorted(members)),
    )
