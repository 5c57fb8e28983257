"""The clock-state reads and writes of the SQLite store: the prior state a message sees,
and export/import of the spec 000 §10.2 snapshot.

Functions here take the aiosqlite connection to use; ``SqliteStore`` owns the connections,
the write lock, the transactions and the translation of SQLite errors.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import aiosqlite

from middleware.clock.zones import is_valid_zone
from middleware.errors import StoreError
from middleware.identity import split_user_key, thread_channel
from middleware.json_codec import peek
from middleware.store.clock_state import (
    ChannelTimes,
    ClockStateSnapshot,
    ImportCounts,
    ThreadClockState,
    UserClockState,
)
from middleware.store.migrations import from_db, move_contact_forward, to_db
from middleware.store.records import ClockData, PriorState, StatedLocation

log = logging.getLogger(__name__)

_PLACE_KINDS = ("current", "home")


# A linked user's clock data (policy overrides, calibration, latest actions) is the
# person's; ``owner_column`` reads a column from its owner in one expression.
def owner_column(column: str) -> str:
    return f"CASE WHEN u.person_id IS NULL THEN u.{column} ELSE per.{column} END"


# What "before" looks like for a message from user_key in thread_key. ``record_inbound``
# and ``queue_inbound`` read it just before their write, with no other write between;
# ``peek_prior`` reads it alone. Columns of ``SELECT_PRIOR``: the user's person, if
# linked, whether the thread has a row yet, and the name the user went by in the thread.
PRIOR_PERSON_ID = 12
PRIOR_THREAD_EXISTS = 19
PRIOR_MEMBER_NAME = 23
PRIOR_WIDTH = 24

SELECT_PRIOR = f"""
SELECT t.last_interaction_at, t.last_user_message_at, t.last_agent_message_at,
       p.last_user_message_at,
       u.last_interaction_any_channel_at, u.last_channel,
       per.last_interaction_any_channel_at, per.last_channel,
       {owner_column("default_tz")}, COALESCE(per.locale, u.locale),
       t.session_tz, t.kind, u.person_id, t.kind_source,
       {owner_column("policy_overrides")}, {owner_column("calibration")},
       {owner_column("latest_actions")}, {owner_column("located")},
       (SELECT h.expires_at FROM held_tool_calls AS h WHERE h.thread_key = :thread_key),
       t.thread_key IS NOT NULL, t.last_conversation_at, p.last_conversation_at,
       u.app_locale, p.display_name
FROM (SELECT 1)
LEFT JOIN threads AS t ON t.thread_key = :thread_key
LEFT JOIN thread_participants AS p ON p.thread_key = :thread_key AND p.user_key = :user_key
LEFT JOIN users AS u ON u.user_key = :user_key
LEFT JOIN persons AS per ON per.person_id = u.person_id
"""

# A linked user's zone and any-channel time are the person's: what the clock uses.
_EXPORT_USERS = f"""
SELECT u.user_key, {owner_column("default_tz")}, {owner_column("policy_overrides")},
       CASE WHEN u.person_id IS NULL THEN u.last_interaction_any_channel_at
            ELSE per.last_interaction_any_channel_at END,
       {owner_column("latest_actions")}, {owner_column("calibration")}, {owner_column("located")},
       u.display_name
FROM users AS u LEFT JOIN persons AS per ON per.person_id = u.person_id
ORDER BY u.user_key
"""

# The user's clock data, from the person's row when linked.
SELECT_CLOCK_DATA = f"""
SELECT u.person_id, {owner_column("policy_overrides")}, {owner_column("calibration")},
       {owner_column("latest_actions")}, {owner_column("located")}
FROM users AS u LEFT JOIN persons AS per ON per.person_id = u.person_id
WHERE u.user_key = ?
"""

_STORE_USER_DATA = """
UPDATE users SET policy_overrides = ?, calibration = ?, latest_actions = ?, located = ?
WHERE user_key = ?
"""

_STORE_PERSON_DATA = """
UPDATE persons SET policy_overrides = ?, calibration = ?, latest_actions = ?, located = ?
WHERE person_id = ?
"""

_EXPORT_THREADS = """
SELECT thread_key, kind, session_tz, last_interaction_at, last_agent_message_at, chat_type,
       kind_source
FROM threads ORDER BY thread_key
"""

# Sorted so that a group's first key comes first; groups are ordered by it (person ids
# differ from store to store, user keys do not).
_EXPORT_LINKS = """
SELECT person_id, user_key FROM users WHERE person_id IS NOT NULL ORDER BY user_key
"""

_EXPORT_PARTICIPANTS = """
SELECT thread_key, user_key, last_user_message_at, left_at, display_name
FROM thread_participants ORDER BY thread_key, user_key
"""

CREATE_USER = """
INSERT INTO users (user_key, channel, platform_user_id, created_at)
VALUES (?, ?, ?, ?) ON CONFLICT (user_key) DO NOTHING RETURNING user_key
"""

# A NULL :at compares as not-true, so the ELSE keeps what is stored. A name stored here
# came with a message to this relay: newer than the file's, so it stays.
_MERGE_USER = f"""
UPDATE users SET
    display_name = COALESCE(display_name, :display_name),
    {move_contact_forward(":at", "channel")}
WHERE user_key = :user_key
"""

_MERGE_PERSON = f"""
UPDATE persons SET
    default_tz = COALESCE(:zone, default_tz),
    {move_contact_forward(":at", ":channel")}
WHERE person_id = :person_id
"""

_SET_USER_ZONE = "UPDATE users SET default_tz = ? WHERE user_key = ?"

# A thread's row if it has none yet (its times are set by its messages: migration 9).
CREATE_THREAD = """
INSERT INTO threads (thread_key, channel, chat_type, created_at)
VALUES (?, ?, ?, ?) ON CONFLICT (thread_key) DO NOTHING RETURNING thread_key
"""

_MERGE_THREAD = """
UPDATE threads SET
    kind = CASE WHEN :kind_chosen THEN :kind ELSE kind END,
    kind_source = CASE WHEN :kind_chosen THEN :kind_source ELSE kind_source END,
    chat_type = COALESCE(:chat_type, chat_type),
    session_tz = COALESCE(:session_tz, session_tz),
    last_interaction_at = CASE
        WHEN :interaction > COALESCE(last_interaction_at, '') THEN :interaction
        ELSE last_interaction_at END,
    last_user_message_at = CASE
        WHEN :user > COALESCE(last_user_message_at, '') THEN :user
        ELSE last_user_message_at END,
    last_agent_message_at = CASE
        WHEN :agent > COALESCE(last_agent_message_at, '') THEN :agent
        ELSE last_agent_message_at END,
    -- The file knows no commands: its last interaction was of the conversation, kept
    -- apart too since no message row holds it (marking a command falls back to it).
    last_conversation_at = CASE
        WHEN :interaction > COALESCE(last_conversation_at, '') THEN :interaction
        ELSE last_conversation_at END,
    imported_conversation_at = CASE
        WHEN :interaction > COALESCE(imported_conversation_at, '') THEN :interaction
        ELSE imported_conversation_at END
WHERE thread_key = :thread_key
"""

# The member's last message in the file was of the conversation, as the thread's. A
# leaving only moves the mark forward, as ``MARK_LEFT`` does. A name stored here came
# with a message to this relay: newer than the file's, so it stays (as ``_MERGE_USER``).
_MERGE_PARTICIPANT = """
INSERT INTO thread_participants (thread_key, user_key, last_user_message_at,
    last_conversation_at, imported_conversation_at, left_at, display_name)
VALUES (:thread_key, :user_key, :at, :at, :at, :left_at, :display_name)
ON CONFLICT (thread_key, user_key) DO UPDATE SET
    display_name = COALESCE(thread_participants.display_name, :display_name),
    left_at = CASE
        WHEN :left_at > COALESCE(thread_participants.left_at, '') THEN :left_at
        ELSE thread_participants.left_at END,
    last_user_message_at = CASE
        WHEN :at > COALESCE(thread_participants.last_user_message_at, '') THEN :at
        ELSE thread_participants.last_user_message_at END,
    last_conversation_at = CASE
        WHEN :at > COALESCE(thread_participants.last_conversation_at, '') THEN :at
        ELSE thread_participants.last_conversation_at END,
    imported_conversation_at = CASE
        WHEN :at > COALESCE(thread_participants.imported_conversation_at, '') THEN :at
        ELSE thread_participants.imported_conversation_at END
"""


def usable_zone(zone: str | None) -> str | None:
    """A stored zone as the clock may use it: one the relay no longer accepts (written by
    an older version, e.g. ``Etc/GMT+2`` through ``/tz``) reads as unset, so its owner's
    turns fall back to UTC instead of failing."""
    if zone is None or is_valid_zone(zone):
        return zone
    log.warning(
        "stored timezone %r is not one the relay accepts; it reads as unset until set "
        "again (/tz, or PUT /admin/users/{user_key}/timezone)",
        zone,
    )
    return None


def prior_from_row(row: Any) -> PriorState:
    """The ``PriorState`` of one ``SELECT_PRIOR`` row."""
    person_id = row[PRIOR_PERSON_ID]
    linked = person_id is not None
    return PriorState(
        thread_last_interaction_at=from_db(row[0]),
        thread_last_user_message_at=from_db(row[1]),
        thread_last_agent_message_at=from_db(row[2]),
        user_last_message_here_at=from_db(row[3]),
        thread_last_conversation_at=from_db(row[20]),
        user_last_conversation_here_at=from_db(row[21]),
        any_channel_at=from_db(row[6] if linked else row[4]),
        any_channel=row[7] if linked else row[5],
        user_tz=usable_zone(row[8]),
        user_locale=row[9],
        app_locale=row[22],
        thread_tz=usable_zone(row[10]),
        thread_kind=row[11],
        person_id=person_id,
        thread_kind_source=row[13],
        clock_data=clock_data_from_row(row[14:18], person_id or "?"),
        held_call_expires_at=from_db(row[18]),
    )


def clock_data_from_row(row: Any, owner: str) -> ClockData:
    """``ClockData`` from its four JSON columns (policy overrides, calibration, actions,
    the stated location)."""
    if row[0] is None and row[1] is None and row[2] is None and row[3] is None:
        return ClockData()
    return ClockData(
        _load(row[0], {}, owner),
        _load(row[1], {}, owner),
        _load(row[2], [], owner),
        stated_location_from_db(row[3], owner),
    )


def store_clock_data(
    conn: sqlite3.Connection, user_key: str, person_id: str | None, data: ClockData
) -> None:
    """Write ``data`` to its owner's row: the person's when linked, else the user's."""
    values = clock_data_columns(data)
    if person_id is None:
        conn.execute(_STORE_USER_DATA, (*values, user_key))
    else:
        conn.execute(_STORE_PERSON_DATA, (*values, person_id))


def clock_data_columns(data: ClockData) -> tuple[str | None, str | None, str | None, str | None]:
    """The four stored columns of ``data`` (NULL for what is empty)."""
    return (
        json.dumps(data.policy_overrides) if data.policy_overrides else None,
        json.dumps(data.calibration) if data.calibration else None,
        json.dumps(data.latest_actions) if data.latest_actions else None,
        stated_location_to_db(data.located),
    )


def stated_location_to_db(located: StatedLocation | None) -> str | None:
    if located is None:
        return None
    return json.dumps(
        {
            "zone": located.zone,
            "place": located.place,
            "kind": located.kind,
            "said_at": to_db(located.said_at),
        }
    )


def stated_location_from_db(value: str | None, owner: str) -> StatedLocation | None:
    """The stored stated location; ``None`` (logged) for one this relay cannot use."""
    if value is None:
        return None
    try:
        raw = peek(value)
        zone, place, kind, said_at = raw["zone"], raw["place"], raw["kind"], raw["said_at"]
        if not (isinstance(zone, str) and isinstance(place, str) and kind in _PLACE_KINDS):
            raise ValueError("zone and place must be text, kind 'current' or 'home'")
        instant = from_db(said_at)
    except (ValueError, TypeError, KeyError) as exc:
        log.warning("ignoring the stored location of %s, which cannot be read: %s", owner, exc)
        return None
    if instant is None or not is_valid_zone(zone):
        return None
    return StatedLocation(zone, place, kind, instant)


async def read_prior(conn: aiosqlite.Connection, thread_key: str, user_key: str) -> PriorState:
    """Run ``SELECT_PRIOR`` on ``conn``; it always yields exactly one row."""
    keys = {"thread_key": thread_key, "user_key": user_key}
    return prior_from_row(list(await conn.execute_fetchall(SELECT_PRIOR, keys))[0])


async def export_snapshot(conn: aiosqlite.Connection) -> ClockStateSnapshot:
    """Every user and thread with their clock fields. Run it inside one transaction."""
    user_rows = list(await conn.execute_fetchall(_EXPORT_USERS))
    thread_rows = list(await conn.execute_fetchall(_EXPORT_THREADS))
    member_rows = list(await conn.execute_fetchall(_EXPORT_PARTICIPANTS))
    agent_at = {row[0]: from_db(row[4]) for row in thread_rows}
    members: dict[str, list[str]] = {}
    by_user: dict[str, dict[str, datetime]] = {}
    left: dict[str, dict[str, datetime]] = {}
    names: dict[str, dict[str, str]] = {}
    channels: dict[str, dict[str, ChannelTimes]] = {}
    for thread_key, user_key, raw_at, raw_left_at, name in member_rows:
        at, left_at = from_db(raw_at), from_db(raw_left_at)
        members.setdefault(thread_key, []).append(user_key)
        if name is not None:
            names.setdefault(thread_key, {})[user_key] = name
        if at is not None:
            by_user.setdefault(thread_key, {})[user_key] = at
        if left_at is not None:
            left.setdefault(thread_key, {})[user_key] = left_at
        channels.setdefault(user_key, {})[thread_key] = ChannelTimes(at, agent_at.get(thread_key))
    users = tuple(
        UserClockState(
            user_key=row[0],
            default_tz=row[1],
            policy_overrides=_load(row[2], {}, row[0]),
            last_interaction_any_channel_at=from_db(row[3]),
            channels=channels.get(row[0], {}),
            latest_actions=_load(row[4], [], row[0]),
            calibration=_load(row[5], {}, row[0]),
            located=stated_location_from_db(row[6], row[0]),
            display_name=row[7],
        )
        for row in user_rows
    )
    threads = tuple(
        ThreadClockState(
            thread_key=row[0],
            kind=row[1],
            session_tz=row[2],
            participants=tuple(members.get(row[0], ())),
            last_interaction_at=from_db(row[3]),
            last_user_message_by_user=by_user.get(row[0], {}),
            chat_type=row[5],
            kind_source=row[6],
            left_by_user=left.get(row[0], {}),
            display_name_by_user=names.get(row[0], {}),
        )
        for row in thread_rows
    )
    return ClockStateSnapshot(users=users, threads=threads, links=await _export_links(conn))


async def _export_links(conn: aiosqlite.Connection) -> tuple[tuple[str, ...], ...]:
    persons: dict[str, list[str]] = {}
    for person_id, user_key in await conn.execute_fetchall(_EXPORT_LINKS):
        persons.setdefault(person_id, []).append(user_key)
    # A person keeps at least two users (unlinking deletes one left with fewer).
    return tuple(sorted(tuple(keys) for keys in persons.values() if len(keys) > 1))


class _Plan:
    """What an import moves, gathered from both sides of the snapshot (users' ``channels``
    and threads' ``last_user_message_iso_by_user`` describe the same participants)."""

    def __init__(self, snapshot: ClockStateSnapshot) -> None:
        self.users: dict[str, datetime | None] = {}
        self.threads: dict[str, datetime | None] = {}
        self.members: dict[tuple[str, str], datetime | None] = {}
        self.left: dict[tuple[str, str], datetime] = {}
        self.names: dict[tuple[str, str], str] = {}
        self.user_at: dict[str, datetime | None] = {}
        self.agent_at: dict[str, datetime | None] = {}
        for user in snapshot.users:
            self._user(user.user_key, user.last_interaction_any_channel_at)
            for thread_key, times in user.channels.items():
                self._member(thread_key, user.user_key, times.last_user_message_at)
                self._thread(thread_key, times.last_agent_message_at)
                self.agent_at[thread_key] = _later(
                    self.agent_at.get(thread_key), times.last_agent_message_at
                )
        for thread in snapshot.threads:
            self._thread(thread.thread_key, thread.last_interaction_at)
            for user_key in thread.participants:
                self._member(thread.thread_key, user_key, None)
            for user_key, at in thread.last_user_message_by_user.items():
                self._member(thread.thread_key, user_key, at)
            for user_key, at in thread.left_by_user.items():
                self._member(thread.thread_key, user_key, None)
                self.left[(thread.thread_key, user_key)] = at
            for user_key, name in thread.display_name_by_user.items():
                self._member(thread.thread_key, user_key, None)
                self.names[(thread.thread_key, user_key)] = name

    def _user(self, user_key: str, at: datetime | None) -> None:
        self.users[user_key] = _earlier(self.users.get(user_key), at)

    def _thread(self, thread_key: str, at: datetime | None) -> None:
        self.threads[thread_key] = _earlier(self.threads.get(thread_key), at)

    def _member(self, thread_key: str, user_key: str, at: datetime | None) -> None:
        self._user(user_key, at)
        self._thread(thread_key, at)
        key = (thread_key, user_key)
        self.members[key] = _later(self.members.get(key), at)
        self.user_at[thread_key] = _later(self.user_at.get(thread_key), at)


# Links the users of one group to one person, on the import's own transaction.
Linker = Callable[[Sequence[str]], Awaitable[object]]


async def import_snapshot(
    conn: aiosqlite.Connection, snapshot: ClockStateSnapshot, now: datetime, link: Linker
) -> ImportCounts:
    """Merge ``snapshot`` (see ``Store.import_clock_state``). Run it inside one transaction;
    ``link`` links a group of ``snapshot.links`` once its users exist.

    Raises ``ValueError`` for a key that is not a user or thread key.
    """
    plan = _Plan(snapshot)
    users_created = 0
    # ``earliest`` is the first instant the snapshot knows for the row: its creation time.
    for user_key, earliest in plan.users.items():
        channel, platform_id = split_user_key(user_key)
        params = (user_key, channel, platform_id, to_db(earliest or now))
        users_created += len(list(await conn.execute_fetchall(CREATE_USER, params)))
    # Linked before their values merge: a linked user's values (which an export writes
    # under each of its users) then land once, on the person, instead of as a copy each.
    for group in snapshot.links:
        await link(group)
    for user in snapshot.users:
        await _merge_user(conn, user)

    threads_created = 0
    by_thread = {thread.thread_key: thread for thread in snapshot.threads}
    for thread_key, earliest in plan.threads.items():
        thread = by_thread.get(thread_key)
        channel, key_chat_type = thread_channel(thread_key)
        chat_type = thread.chat_type if thread and thread.chat_type else key_chat_type
        params = (thread_key, channel, chat_type, to_db(earliest or now))
        threads_created += len(list(await conn.execute_fetchall(CREATE_THREAD, params)))
        user_at = plan.user_at.get(thread_key)
        agent_at = plan.agent_at.get(thread_key)
        interaction = _latest([thread.last_interaction_at if thread else None, user_at, agent_at])
        await conn.execute_fetchall(
            _MERGE_THREAD,
            {
                "thread_key": thread_key,
                **_kind_params(thread),
                "chat_type": thread.chat_type if thread else None,
                "session_tz": thread.session_tz if thread else None,
                "interaction": _db(interaction),
                "user": _db(user_at),
                "agent": _db(agent_at),
            },
        )
    for (thread_key, user_key), at in plan.members.items():
        member = {
            "thread_key": thread_key,
            "user_key": user_key,
            "at": _db(at),
            "left_at": _db(plan.left.get((thread_key, user_key))),
            "display_name": plan.names.get((thread_key, user_key)),
        }
        await conn.execute_fetchall(_MERGE_PARTICIPANT, member)
    return ImportCounts(
        users_created=users_created,
        users_merged=len(plan.users) - users_created,
        threads_created=threads_created,
        threads_merged=len(plan.threads) - threads_created,
        links=len(snapshot.links),
    )


def _kind_params(thread: ThreadClockState | None) -> dict[str, Any]:
    """Whether the snapshot's kind replaces the stored one, and with which source.

    "conversation" is every thread's default (and what a document says when nobody
    chose): it replaces a kind only when the snapshot says someone chose it. A kind
    without a source (from elsewhere) counts as chosen explicitly.
    """
    kind = thread.kind if thread else None
    source = thread.kind_source if thread else None
    chosen = kind is not None and (kind != "conversation" or source in ("inferred", "explicit"))
    return {
        "kind": kind,
        "kind_chosen": chosen,
        "kind_source": source if source in ("inferred", "explicit") else "explicit",
    }


async def _merge_user(conn: aiosqlite.Connection, user: UserClockState) -> None:
    [row] = list(await conn.execute_fetchall(SELECT_CLOCK_DATA, (user.user_key,)))
    person_id, overrides, calibration, actions, located = row
    at = _db(user.last_interaction_any_channel_at)
    params = {"user_key": user.user_key, "at": at, "display_name": user.display_name}
    await conn.execute_fetchall(_MERGE_USER, params)
    merged = (
        _merge_object(overrides, user.policy_overrides, user.user_key),
        _merge_object(calibration, user.calibration, user.user_key),
        _merge_actions(actions, user.latest_actions, user.user_key),
        _merge_located(located, user.located, user.user_key),
    )
    if person_id is None:
        await conn.execute_fetchall(_STORE_USER_DATA, (*merged, user.user_key))
    else:
        await conn.execute_fetchall(_STORE_PERSON_DATA, (*merged, person_id))
    if person_id is not None:
        # Linked: the person's zone and any-channel time are the ones the clock reads.
        channel, _ = split_user_key(user.user_key)
        await conn.execute_fetchall(
            _MERGE_PERSON,
            {"zone": user.default_tz, "at": at, "channel": channel, "person_id": person_id},
        )
    elif user.default_tz is not None:
        await conn.execute_fetchall(_SET_USER_ZONE, (user.default_tz, user.user_key))


def _merge_located(
    stored: str | None, imported: StatedLocation | None, user_key: str
) -> str | None:
    """The place said last, of the stored one and the imported one."""
    if imported is None:
        return stored
    current = stated_location_from_db(stored, user_key)
    if current is not None and current.said_at >= imported.said_at:
        return stored
    return stated_location_to_db(imported)


def _merge_object(stored: str | None, imported: dict[str, Any], user_key: str) -> str | None:
    if not imported:
        return stored
    current: dict[str, Any] = _load(stored, {}, user_key)
    return json.dumps({**current, **imported})


def _merge_actions(stored: str | None, imported: list[dict[str, Any]], user_key: str) -> str | None:
    """Imported actions replace stored ones with the same ``id``; others are appended."""
    if not imported:
        return stored
    merged: list[Any] = list(_load(stored, [], user_key))
    index = {_action_id(a): i for i, a in enumerate(merged) if _action_id(a) is not None}
    for action in imported:
        action_id = _action_id(action)
        if action_id is not None and action_id in index:
            merged[index[action_id]] = action
        elif action not in merged:
            if action_id is not None:
                index[action_id] = len(merged)
            merged.append(action)
    return json.dumps(merged)


def _action_id(action: Any) -> str | None:
    found = action.get("id") if isinstance(action, dict) else None
    return found if isinstance(found, str) else None


def _load(text: str | None, empty: Any, user_key: str) -> Any:
    if text is None:
        return empty
    try:
        value = peek(text)
    except ValueError as exc:
        raise StoreError(
            f"the stored clock data of user {user_key!r} is not valid JSON ({exc}); "
            "fix or clear that column, or restore the database from a backup"
        ) from exc
    return value if isinstance(value, type(empty)) else empty


def _db(instant: datetime | None) -> str | None:
    return None if instant is None else to_db(instant)


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    return _latest([a, b])


def _earlier(a: datetime | None, b: datetime | None) -> datetime | None:
    known = [x for x in (a, b) if x is not None]
    return min(known) if known else None


def _latest(instants: Iterable[datetime | None]) -> datetime | None:
    known = [x for x in instants if x is not None]
    return max(known) if known else None
