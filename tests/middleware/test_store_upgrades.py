"""Upgrades: a store written by an older relay, opened by this one.

For each older schema version the store is built as the relay of that time left it (the
migrations up to that version, then rows of every table that existed, written with the
columns of the time), and the current relay is started on it. Every row is still there,
the file is at the latest version, and what the rows held reaches the product: the admin
API, the block of the next turn, the replayed block of an earlier message, living memory.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from middleware.clock.source import FakeClock
from middleware.injection import fingerprint
from middleware.store.migrations import LATEST_VERSION, MIGRATIONS
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream

ADMIN = "admin-token-0123456789"
KEY = "relay-key-0123456789abcdef"
AUTH: dict[str, Any] = {
    "admin_token": ADMIN,
    "keys": [{"name": "t", "key": KEY, "permissions": ["chat", "replay"]}],
}
THREAD = "agent:main:api:plan"
ASKED = "Can you book the dentist for Friday?"
ANSWERED = "Booked: Friday 10:00."
OLD_BLOCK = "<relay_context>\nNow: Mon 2 Mar 2026 09:00 (Europe/Lisbon).\n</relay_context>"
NOW = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)  # three days after the stored turn

# The versions a store is built at: the first, and every fifth (each adds tables or
# rebuilds one: 5 link codes, 6 continuity, 10 injections, 15 commands, 20 speakers).
VERSIONS = [1, 5, 6, 10, 15, 20]


def at(day: int, hour: int, minute: int = 0) -> str:
    """An instant as every relay version stored it (``migrations.to_db``)."""
    return datetime(2026, 3, day, hour, minute, tzinfo=UTC).isoformat(timespec="microseconds")


def build_store(path: Path, version: int) -> dict[str, int]:
    """The store as the relay at schema ``version`` left it: its migrations, then a user
    and her linked account, a thread with a turn (message, reply, injected block), and the
    rows of each later table that existed then. Returns each table's row count."""
    conn = sqlite3.connect(path, isolation_level=None)
    # As ``apply_migrations`` runs them: from a new file.
    conn.execute("CREATE TEMP TABLE upgrade_start (from_version INTEGER NOT NULL)")
    conn.execute("INSERT INTO temp.upgrade_start VALUES (0)")
    for number, script in MIGRATIONS:
        if number <= version:
            conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {number};\nCOMMIT;")
    conn.execute("BEGIN")
    since = {name: number for number, name in _ADDED if number <= version}
    for number, write in _ROWS:
        if number <= version:
            write(conn, since)
    conn.execute("COMMIT")
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    conn.close()
    return counts


Write = Callable[[sqlite3.Connection, dict[str, int]], None]

# Columns that a version added to a table that already existed, by the version.
_ADDED = [(2, "persons.default_tz"), (4, "persons.latest_actions")]


def _people(conn: sqlite3.Connection, since: dict[str, int]) -> None:
    # Linked accounts share a person's zone from version 2 on; before, each kept its own
    # (see the report on migration 2: it copied no zone to the person).
    linked = "persons.default_tz" in since
    if linked:
        conn.execute(
            "INSERT INTO persons (person_id, last_interaction_any_channel_at, last_channel, "
            "default_tz, locale) VALUES ('p1', ?, 'api', 'Europe/Lisbon', 'pt-PT')",
            (at(2, 9, 1),),
        )
    for key, channel, platform_id, name in [
        ("api:ana", "api", "ana", "Ana"),
        ("telegram:42", "telegram", "42", "Ana T"),
    ]:
        conn.execute(
            "INSERT INTO users (user_key, channel, platform_user_id, display_name, person_id, "
            "default_tz, locale, created_at, last_interaction_any_channel_at, last_channel) "
            "VALUES (?, ?, ?, ?, ?, 'Europe/Lisbon', 'pt-PT', ?, ?, 'api')",
            (key, channel, platform_id, name, "p1" if linked else None, at(1, 8), at(2, 9, 1)),
        )
    conn.execute(
        "INSERT INTO threads (thread_key, channel, chat_type, created_at, last_interaction_at, "
        "last_user_message_at, last_agent_message_at) VALUES (?, 'api', 'dm', ?, ?, ?, ?)",
        (THREAD, at(2, 9), at(2, 9, 1), at(2, 9), at(2, 9, 1)),
    )
    conn.execute(
        "INSERT INTO thread_participants (thread_key, user_key, last_user_message_at) "
        "VALUES (?, 'api:ana', ?)",
        (THREAD, at(2, 9)),
    )
    # Before migration 9 the relay moved the thread's times itself (done above); after
    # it, the triggers move them again to the same instants.
    conn.executemany(
        "INSERT INTO messages (thread_key, user_key, role, text, at) VALUES (?, ?, ?, ?, ?)",
        [
            (THREAD, "api:ana", "user", ASKED, at(2, 9)),
            (THREAD, None, "assistant", ANSWERED, at(2, 9, 1)),
        ],
    )


def _injections(conn: sqlite3.Connection, since: dict[str, int]) -> None:
    key = fingerprint({"role": "user", "content": ASKED})
    conn.execute(
        "INSERT INTO injections (thread_key, fingerprint, ordinal, text, at) "
        "VALUES (?, ?, 0, ?, ?)",
        (THREAD, key, OLD_BLOCK, at(2, 9)),
    )


def _clock_data(conn: sqlite3.Connection, since: dict[str, int]) -> None:
    action = {"id": "a1", "label": "dentist", "recorded_iso": "2026-03-02T09:00:00+00:00"}
    # A linked user's clock data is the person's from version 4 on.
    owner = "persons" if "persons.latest_actions" in since else "users"
    conn.execute(
        f"UPDATE {owner} SET latest_actions = ?, policy_overrides = ?",
        (json.dumps([action]), json.dumps({"mode": "full"})),
    )


def _held_call(conn: sqlite3.Connection, since: dict[str, int]) -> None:
    conn.execute(
        "INSERT INTO held_tool_calls (thread_key, user_key, message, names, model, held_at, "
        "expires_at) VALUES (?, 'api:ana', '{}', '[\"send_email\"]', 'm', ?, ?)",
        (THREAD, at(2, 9, 1), at(2, 9, 11)),
    )


def _link_code(conn: sqlite3.Connection, since: dict[str, int]) -> None:
    conn.execute(
        "INSERT INTO link_codes (code, user_key, expires_at) VALUES ('K7Q2X9', 'api:ana', ?)",
        (at(2, 9, 10),),
    )


def _continuity(conn: sqlite3.Connection, since: dict[str, int]) -> None:
    context = f"wc:{THREAD}"
    conn.execute(
        "INSERT INTO work_contexts (work_context_id, owner_key, name, name_folded, created_at, "
        "last_active_at) VALUES (?, 'api:ana', 'plan', 'plan', ?, ?)",
        (context, at(2, 9), at(2, 9, 1)),
    )
    conn.execute(
        "INSERT INTO sessions (session_id, thread_key, work_context_id, user_key, started_at, "
        "first_message_id, captured_message_id, last_capture_at, summary, summary_mode) "
        "VALUES ('s1', ?, ?, 'api:ana', ?, 1, 2, ?, 'Booking the dentist.', 'deterministic')",
        (THREAD, context, at(2, 9), at(2, 9, 2)),
    )
    conn.execute(
        "INSERT INTO continuity_entries (entry_id, work_context_id, entry_type, "
        "source_session_id, captured_at, capture_mode, content, decay_at) "
        "VALUES ('e1', ?, 'open_question', 's1', ?, 'deterministic', ?, ?)",
        (context, at(2, 9, 2), json.dumps({"question": "Which dentist?"}), at(30, 9)),
    )
    conn.execute(
        "INSERT INTO rollup_segments (user_key, work_context_id, text, last_activity_at, "
        "generated_at) VALUES ('api:ana', ?, 'plan: booking the dentist', ?, ?)",
        (context, at(2, 9, 1), at(2, 23)),
    )
    conn.execute(
        "INSERT INTO memory_facts (user_key, kind, text, text_folded, source, created_at) "
        "VALUES ('api:ana', 'preference', 'Ana prefers mornings.', 'ana prefers mornings.', "
        "'user', ?)",
        (at(2, 9),),
    )
    conn.execute(
        "INSERT INTO job_marks (job, scope, mark, at) VALUES ('nightly', 'p1', '2026-03-02', ?)",
        (at(2, 23),),
    )


def _location(conn: sqlite3.Connection, since: dict[str, int]) -> None:
    located = {"zone": "Europe/Lisbon", "place": "Lisbon", "kind": "home", "said_at": at(2, 9)}
    conn.execute("UPDATE persons SET located = ? WHERE person_id = 'p1'", (json.dumps(located),))
    conn.execute(
        "UPDATE users SET located = ? WHERE user_key = 'telegram:42'", (json.dumps(located),)
    )


def _link_misses(conn: sqlite3.Connection, since: dict[str, int]) -> None:
    conn.execute(
        "INSERT INTO link_code_misses (user_key, window_start, misses) VALUES ('api:ana', ?, 2)",
        (at(2, 9),),
    )


# What each version's relay wrote, by the version whose tables it needs.
_ROWS: list[tuple[int, Write]] = [
    (1, _people),
    (2, _injections),
    (3, _clock_data),
    (4, _held_call),
    (5, _link_code),
    (6, _continuity),
    (11, _location),
    (12, _link_misses),
]


async def admin(relay: RunningServer, path: str) -> Any:
    headers = {"Authorization": f"Bearer {ADMIN}"}
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}{path}", headers=headers) as response:
            assert response.status == 200, await response.text()
            return await response.json()


async def ask(relay: RunningServer, messages: list[dict[str, str]]) -> None:
    headers = {
        "Authorization": f"Bearer {KEY}",
        "X-Chronorelay-User": "ana",
        "X-Chronorelay-Thread": "plan",
    }
    body = {"model": "m", "messages": messages}
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{relay.url}/v1/chat/completions", json=body, headers=headers
        ) as response:
            assert response.status == 200, await response.text()


def counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    finally:
        conn.close()


def user_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_store_from_an_older_relay_keeps_every_row_and_serves_it(
    version: int, tmp_path: Path, relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    path = tmp_path / "relay.sqlite3"  # the store relay_factory's config names
    before = build_store(path, version)

    relay = await relay_factory(fake_clock=FakeClock(NOW), auth=AUTH)

    assert user_version(path) == LATEST_VERSION
    # Every row is still there (a turn below adds its own).
    after = counts(path)
    assert {table: after[table] for table in before} == before

    user = await admin(relay, "/admin/users/api:ana")
    assert (user["display_name"], user["person_id"]) == ("Ana", "p1" if version >= 2 else None)
    assert user["effective_tz"] == "Europe/Lisbon"
    if version >= 3:
        assert [action["label"] for action in user["latest_actions"]] == ["dentist"]
    thread = await admin(relay, f"/admin/threads/{THREAD}/clock")
    assert thread["last_user_message_at"].startswith("2026-03-02T09:00:00")
    assert thread["last_agent_message_at"].startswith("2026-03-02T09:01:00")
    if version >= 6:
        facts = (await admin(relay, "/admin/users/api:ana/memory"))["facts"]
        assert [fact["text"] for fact in facts] == ["Ana prefers mornings."]

    # The next turn: the earlier message is replayed with the block it was sent with,
    # and the new block measures the gap from the stored turn, in the user's zone.
    history = [
        {"role": "user", "content": ASKED},
        {"role": "assistant", "content": ANSWERED},
        {"role": "user", "content": "Is it still on?"},
    ]
    await ask(relay, history)
    forwarded = fake_upstream.last.body["messages"]
    if version >= 2:
        assert forwarded[0]["content"] == f"{ASKED}\n\n{OLD_BLOCK}"
    block = forwarded[-1]["content"]
    assert "Europe/Lisbon" in block
    assert "Last message here: 2 days 23 hours ago (Mon 2 Mar 09:01)" in block, block
    if version >= 6:
        assert "mornings" in block, block


async def test_a_store_from_a_newer_relay_is_refused_and_left_untouched(
    tmp_path: Path, relay_factory: RelayFactory
) -> None:
    path = tmp_path / "relay.sqlite3"
    build_store(path, LATEST_VERSION)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    untouched = path.read_bytes()

    with pytest.raises(Exception, match="newer than this relay understands") as refused:
        await relay_factory()

    assert "upgrade chronorelay" in str(refused.value)
    assert path.read_bytes() == untouched


def _link_by_hand(path: Path, version: int) -> None:
    """Link the store's two accounts to a person made by hand, with no zone of its own (a
    v1 relay had no linking: an operator wrote the row; a later one: cleared with /tz)."""
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("INSERT OR IGNORE INTO persons (person_id) VALUES ('p1')")
        if version >= 2:
            conn.execute("UPDATE persons SET default_tz = NULL")
        conn.execute("UPDATE users SET person_id = 'p1'")
    conn.close()


@pytest.mark.parametrize(("version", "zone"), [(1, "Europe/Lisbon"), (20, None)])
async def test_a_person_linked_by_hand_on_schema_1_keeps_the_users_zone(
    version: int, zone: str | None, tmp_path: Path, relay_factory: RelayFactory
) -> None:
    """Migration 2 gave a person made by hand on schema 1 no zone, and the clock reads the
    person's: the users' own zone is theirs again. A later store's person without a zone
    cleared it, and stays without."""
    path = tmp_path / "relay.sqlite3"
    build_store(path, version)
    _link_by_hand(path, version)

    relay = await relay_factory(fake_clock=FakeClock(NOW), auth=AUTH)

    user = await admin(relay, "/admin/users/api:ana")
    assert (user["person_id"], user["effective_tz"]) == ("p1", zone)
