"""Identity linking in the SQLite store (spec 000 §7.0): users linked to one person, and
the one-time codes that let a user link two of their accounts.

A linked user's timezone, locale, last contact on any channel and clock data (policy
overrides, calibration, latest actions) live on the person's row; the users keep their
own rows for what is per channel. Linking merges everything the users (and any persons
they were already linked to) held onto one person; unlinking gives the user a copy back.

The write functions run inside the store's writer (one savepoint of a group commit), so
each is atomic: a concurrent turn sees the users either all linked or not at all.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import aiosqlite

from middleware.errors import NotFoundError
from middleware.store.migrations import to_db
from middleware.store.records import ClockData, LinkCodeTry
from middleware.store.sqlite_clock_state import clock_data_from_row, store_clock_data

_USER_COLUMNS = """user_key, person_id, default_tz, locale, last_interaction_any_channel_at,
       last_channel, policy_overrides, calibration, latest_actions, located"""

_SELECT_PERSON = """
SELECT person_id, default_tz, locale, last_interaction_any_channel_at, last_channel,
       policy_overrides, calibration, latest_actions, located
FROM persons WHERE person_id = ?
"""

_UPSERT_PERSON = """
INSERT INTO persons (person_id, default_tz, locale, last_interaction_any_channel_at,
                     last_channel)
VALUES (:person_id, :zone, :locale, :at, :channel)
ON CONFLICT (person_id) DO UPDATE SET
    default_tz = excluded.default_tz, locale = excluded.locale,
    last_interaction_any_channel_at = excluded.last_interaction_any_channel_at,
    last_channel = excluded.last_channel
"""

# The person owns the clock data now; the users' own default_tz stays as it was.
_ATTACH_USER = """
UPDATE users SET person_id = ?, policy_overrides = NULL, calibration = NULL,
    latest_actions = NULL, located = NULL
WHERE user_key = ?
"""

_SELECT_LINK = """
SELECT u.person_id, per.default_tz, per.locale, per.policy_overrides, per.calibration,
       per.latest_actions, per.located
FROM users AS u JOIN persons AS per ON per.person_id = u.person_id
WHERE u.user_key = ?
"""

# A detached user keeps a copy of what the person held, so nothing they had disappears.
_DETACH_USER = """
UPDATE users SET person_id = NULL,
    default_tz = COALESCE(:zone, default_tz), locale = COALESCE(:locale, locale),
    policy_overrides = :overrides, calibration = :calibration, latest_actions = :actions,
    located = :located
WHERE user_key = :user_key
"""

_PERSON_USERS = "SELECT user_key FROM users WHERE person_id = ? ORDER BY user_key"

# Each user row keeps its own last contact while linked: the person's becomes the latest
# of the users it still has (the one leaving may have spoken last).
_RECOUNT_CONTACT = """
UPDATE persons SET (last_interaction_any_channel_at, last_channel) = (
    SELECT last_interaction_any_channel_at, last_channel FROM users
    WHERE person_id = :person_id ORDER BY last_interaction_any_channel_at DESC LIMIT 1)
WHERE person_id = :person_id
"""

_LINKED_USERS = """
SELECT o.user_key FROM users AS u JOIN users AS o ON o.person_id = u.person_id
WHERE u.user_key = ? ORDER BY o.user_key
"""

_USER_EXISTS = "SELECT 1 FROM users WHERE user_key = ?"
_DELETE_USER_CODES = "DELETE FROM link_codes WHERE user_key = ?"
_INSERT_CODE = "INSERT INTO link_codes (code, user_key, expires_at) VALUES (?, ?, ?)"
_DELETE_EXPIRED_CODES = "DELETE FROM link_codes WHERE expires_at <= ?"
_SELECT_CODE = "SELECT user_key FROM link_codes WHERE code = ?"
_DELETE_CODE = "DELETE FROM link_codes WHERE code = ?"
_SELECT_LIVE_CODE = "SELECT user_key FROM link_codes WHERE code = ? AND expires_at > ?"
_DELETE_PAST_MISSES = "DELETE FROM link_code_misses WHERE window_start <= ?"
_SELECT_MISSES = "SELECT window_start, misses FROM link_code_misses WHERE user_key = ?"
_COUNT_MISS = """
INSERT INTO link_code_misses (user_key, window_start, misses) VALUES (?, ?, 1)
ON CONFLICT (user_key) DO UPDATE SET misses = misses + 1
"""


@dataclass(frozen=True, slots=True)
class _Holder:
    """A row (person or user) whose clock fields a link merges."""

    zone: str | None
    locale: str | None
    at: str | None
    channel: str | None
    data: ClockData


def link_users(conn: sqlite3.Connection, user_keys: Sequence[str], now: datetime) -> str:
    """Link ``user_keys`` (at least two distinct) to one person; return its id.

    Raises ``NotFoundError`` naming the keys never seen, ``ValueError`` for fewer than two.
    Codes expired by ``now`` are dropped on the way (nothing else cleans them up).
    """
    keys = list(dict.fromkeys(user_keys))
    if len(keys) < 2:
        raise ValueError("linking needs at least two different user keys")
    marks = ", ".join("?" for _ in keys)
    rows = {
        row[0]: row
        for row in conn.execute(
            f"SELECT {_USER_COLUMNS} FROM users WHERE user_key IN ({marks})", keys
        )
    }
    unknown = [key for key in keys if key not in rows]
    if unknown:
        raise NotFoundError(
            f"cannot link: no user {', '.join(map(repr, unknown))}. The relay links only "
            "users it has seen a message from; user keys look like '<channel>:<platform "
            "user id>', e.g. 'telegram:123456'"
        )
    person_ids = list(dict.fromkeys(rows[key][1] for key in keys if rows[key][1] is not None))
    persons = [_person(conn, person_id) for person_id in person_ids]
    # Users already linked bring their person's other users along.
    members = dict.fromkeys(keys)
    for person_id in person_ids:
        members.update(dict.fromkeys(r[0] for r in conn.execute(_PERSON_USERS, (person_id,))))
    # The existing persons come first, so their values win over a user's own.
    users = [_user_holder(rows[key]) for key in keys]
    own_data = [holder for key, holder in zip(keys, users, strict=True) if rows[key][1] is None]
    target = person_ids[0] if person_ids else uuid.uuid4().hex
    merged = _merge([*persons, *users], [*persons, *own_data])
    conn.execute(
        _UPSERT_PERSON,
        {
            "person_id": target,
            "zone": merged.zone,
            "locale": merged.locale,
            "at": merged.at,
            "channel": merged.channel,
        },
    )
    store_clock_data(conn, "", target, merged.data)
    for key in members:
        conn.execute(_ATTACH_USER, (target, key))
    for person_id in person_ids[1:]:
        conn.execute("DELETE FROM persons WHERE person_id = ?", (person_id,))
    conn.execute(_DELETE_EXPIRED_CODES, (to_db(now),))
    return target


def unlink_user(conn: sqlite3.Connection, user_key: str) -> bool:
    """Detach the user from its person, with a copy of the person's zone and clock data.

    A person left with fewer than two users is deleted, its last user detached the same
    way; else its last contact becomes that of the users it keeps. ``False`` if the user
    is unknown or not linked.
    """
    row = conn.execute(_SELECT_LINK, (user_key,)).fetchone()
    if row is None:
        return False
    person_id = row[0]
    copy = {
        "zone": row[1],
        "locale": row[2],
        "overrides": row[3],
        "calibration": row[4],
        "actions": row[5],
        "located": row[6],
    }
    conn.execute(_DETACH_USER, {**copy, "user_key": user_key})
    left = [r[0] for r in conn.execute(_PERSON_USERS, (person_id,))]
    if len(left) < 2:
        for key in left:
            conn.execute(_DETACH_USER, {**copy, "user_key": key})
        conn.execute("DELETE FROM persons WHERE person_id = ?", (person_id,))
    else:
        conn.execute(_RECOUNT_CONTACT, {"person_id": person_id})
    return True


async def linked_users(conn: aiosqlite.Connection, user_key: str) -> list[str]:
    """Every key of the user's person (theirs included), sorted; ``[]`` when not linked."""
    return [row[0] for row in await conn.execute_fetchall(_LINKED_USERS, (user_key,))]


def create_link_code(
    conn: sqlite3.Connection, user_key: str, code: str, expires_at: datetime
) -> None:
    """Store ``code`` for the user, replacing any code they made before.

    Raises ``NotFoundError`` for a user never seen; ``sqlite3.IntegrityError`` if another
    user holds the same code.
    """
    if conn.execute(_USER_EXISTS, (user_key,)).fetchone() is None:
        raise NotFoundError(f"no user {user_key!r}: a link code needs a user the relay has seen")
    conn.execute(_DELETE_USER_CODES, (user_key,))
    conn.execute(_INSERT_CODE, (normal_code(code), user_key, to_db(expires_at)))


def redeem_link_code(
    conn: sqlite3.Connection,
    code: str,
    user_key: str,
    now: datetime,
    max_misses: int,
    window: timedelta,
) -> LinkCodeTry:
    """See ``Store.redeem_link_code``: refused after ``max_misses`` unknown codes within
    ``window``; else the user whose live code it is, the code then deleted."""
    conn.execute(_DELETE_EXPIRED_CODES, (to_db(now),))
    conn.execute(_DELETE_PAST_MISSES, (to_db(now - window),))
    missed = conn.execute(_SELECT_MISSES, (user_key,)).fetchone()
    if missed is not None and missed[1] >= max_misses:
        return LinkCodeTry(refused_until=datetime.fromisoformat(missed[0]) + window)
    row = conn.execute(_SELECT_CODE, (normal_code(code),)).fetchone()
    if row is None:
        conn.execute(_COUNT_MISS, (user_key, to_db(now)))
        return LinkCodeTry()
    if row[0] == user_key:
        return LinkCodeTry(own_code=True)
    conn.execute(_DELETE_CODE, (normal_code(code),))
    return LinkCodeTry(owner=str(row[0]))


async def link_code_owner(conn: aiosqlite.Connection, code: str, now: datetime) -> str | None:
    """Whose live code ``code`` is, without using it up; ``None`` if unknown or expired."""
    rows = list(await conn.execute_fetchall(_SELECT_LIVE_CODE, (normal_code(code), to_db(now))))
    return str(rows[0][0]) if rows else None


def normal_code(code: str) -> str:
    """Codes compare case-insensitively and without surrounding spaces."""
    return code.strip().upper()


def merge_clock_data(sources: Sequence[ClockData]) -> ClockData:
    """The clock data of several holders as one, earlier sources winning conflicts.

    Policy overrides and calibration merge key by key; a calibrated activity
    (``calibration.activity_overrides``) takes the entry with the newest ``updated_iso``;
    latest actions are concatenated, one per ``id``; the place said most recently wins.
    """
    overrides: dict[str, Any] = {}
    calibration: dict[str, Any] = {}
    activities: dict[str, Any] = {}
    actions: list[dict[str, Any]] = []
    seen: set[str] = set()
    for data in sources:
        for key, value in data.policy_overrides.items():
            overrides.setdefault(key, value)
        for key, value in data.calibration.items():
            if key == "activity_overrides" and isinstance(value, dict):
                for activity, entry in value.items():
                    current = activities.get(activity)
                    if current is None or _updated(entry) > _updated(current):
                        activities[activity] = entry
            else:
                calibration.setdefault(key, value)
        for action in data.latest_actions:
            found = action.get("id") if isinstance(action, dict) else None
            if isinstance(found, str):
                if found in seen:
                    continue
                seen.add(found)
            elif action in actions:
                continue
            actions.append(action)
    if activities:
        calibration["activity_overrides"] = activities
    said = [data.located for data in sources if data.located is not None]
    located = max(said, key=lambda place: place.said_at, default=None)
    return ClockData(overrides, calibration, actions, located)


def _merge(holders: Sequence[_Holder], data_holders: Sequence[_Holder]) -> _Holder:
    latest = max((h for h in holders if h.at is not None), key=lambda h: h.at or "", default=None)
    return _Holder(
        zone=next((h.zone for h in holders if h.zone is not None), None),
        locale=next((h.locale for h in holders if h.locale is not None), None),
        # Fixed-format UTC text: string order is time order.
        at=latest.at if latest else None,
        channel=latest.channel if latest else None,
        data=merge_clock_data([h.data for h in data_holders]),
    )


def _person(conn: sqlite3.Connection, person_id: str) -> _Holder:
    row = conn.execute(_SELECT_PERSON, (person_id,)).fetchone()
    return _Holder(row[1], row[2], row[3], row[4], clock_data_from_row(row[5:9], person_id))


def _user_holder(row: Any) -> _Holder:
    return _Holder(row[2], row[3], row[4], row[5], clock_data_from_row(row[6:10], row[0]))


def _updated(entry: Any) -> datetime:
    raw = entry.get("updated_iso") if isinstance(entry, dict) else None
    try:
        parsed = datetime.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        parsed = None
    if parsed is None:
        return datetime.min.replace(tzinfo=UTC)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
