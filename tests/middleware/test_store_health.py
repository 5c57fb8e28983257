"""The operator's store check (``check-config``): read-only, beside a running relay, and
finding with ``PRAGMA quick_check`` the corruption that start-up does not."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from middleware.store import InboundRecord, SqliteStore, sqlite_health
from middleware.store.migrations import LATEST_VERSION
from middleware.store.sqlite_health import StoreHealth, check_store_health

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def message(n: int) -> InboundRecord:
    return InboundRecord(
        user_key="telegram:42",
        channel="telegram",
        platform_user_id="42",
        display_name="Ada",
        thread_key="agent:main:telegram:dm:42",
        chat_type="dm",
        text=f"message {n}: " + "the quick brown fox jumps over the lazy dog " * 8,
        received_at=T0 + timedelta(minutes=n),
    )


async def make_store(path: Path, *, messages: int = 0) -> None:
    """A store the relay made, holding ``messages`` messages, closed."""
    store = SqliteStore(path)
    await store.open()
    try:
        for n in range(messages):
            await store.record_inbound(message(n))
    finally:
        await store.close()


def file_bytes(path: Path) -> bytes:
    return path.read_bytes()


def write_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def files_beside(path: Path) -> list[str]:
    return sorted(entry.name for entry in path.parent.iterdir())


def page_of(path: Path, table: str) -> tuple[int, int]:
    """The page size, and the number of a leaf page holding rows of ``table``."""
    with sqlite3.connect(path) as conn:
        [(page,)] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        [(page_size,)] = conn.execute("PRAGMA page_size")
    conn.close()
    header = read_at(path, (page - 1) * page_size, 12)
    if header[0] == 0x05:  # an interior page: its right-most child, a leaf here
        page = int.from_bytes(header[8:12], "big")
    return int(page_size), int(page)


def read_at(path: Path, offset: int, size: int) -> bytes:
    with path.open("rb") as file:
        file.seek(offset)
        return file.read(size)


def overwrite(path: Path, offset: int, data: bytes) -> None:
    """As a failing disk or a stray write would."""
    with path.open("r+b") as file:
        file.seek(offset)
        file.write(data)


async def starts_up(path: Path) -> None:
    """The relay opens the store: start-up found nothing wrong."""
    store = SqliteStore(path)
    await store.open()
    await store.close()


async def test_a_good_store_is_healthy_and_left_as_it_was(db_path: Path) -> None:
    await make_store(db_path, messages=20)
    before = file_bytes(db_path)
    health = await check_store_health(db_path)
    assert health.healthy and health.problems == ()
    assert health.exists and health.version == LATEST_VERSION == health.expected_version
    assert health.check == "quick_check" and health.findings == ()
    assert health.size == len(before) and health.wal_size is None
    # Nothing written, and no -wal or -shm left behind to be owned by whoever ran it.
    assert file_bytes(db_path) == before
    assert files_beside(db_path) == ["relay.db"]


async def test_full_runs_integrity_check(db_path: Path) -> None:
    await make_store(db_path, messages=3)
    health = await check_store_health(db_path, full=True)
    assert health.check == "integrity_check" and health.findings == () and health.healthy


async def test_a_missing_store_is_not_created(db_path: Path) -> None:
    health = await check_store_health(db_path)
    assert not health.exists and health.healthy and health.findings is None
    assert not db_path.parent.exists()


async def test_quick_check_finds_the_corruption_start_up_does_not(db_path: Path) -> None:
    await make_store(db_path, messages=200)
    page_size, page = page_of(db_path, "messages")
    assert page > 1  # not the schema's page, which start-up reads
    overwrite(db_path, (page - 1) * page_size + page_size // 2, b"\xff" * 256)
    await starts_up(db_path)

    health = await check_store_health(db_path)
    assert not health.healthy and health.version == LATEST_VERSION
    assert health.findings and f"On tree page {page} cell" in health.findings[0]
    [problem] = health.problems
    assert f"PRAGMA quick_check found the SQLite store at {db_path} corrupt" in problem
    assert "stop the relay, keep a copy of the file" in problem
    recovered = db_path.with_name("relay-recovered.db")
    assert f"`sqlite3 {db_path} .recover | sqlite3 {recovered}`" in problem
    assert "set [store] path to the new file" in problem


async def test_a_page_too_damaged_to_check_is_reported_corrupt(db_path: Path) -> None:
    await make_store(db_path, messages=200)
    with sqlite3.connect(db_path) as conn:
        [(root,)] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'messages'")
        [(page_size,)] = conn.execute("PRAGMA page_size")
    conn.close()
    overwrite(db_path, (root - 1) * page_size, b"\xff" * 64)  # the table's b-tree header
    await starts_up(db_path)

    health = await check_store_health(db_path)
    assert health.findings is None
    [problem] = health.problems
    assert f"the SQLite store at {db_path} is corrupt (database disk image is malformed)" in (
        problem
    )
    assert ".recover | sqlite3" in problem


async def test_a_store_from_a_newer_relay_says_to_upgrade(db_path: Path) -> None:
    await make_store(db_path)
    with sqlite3.connect(db_path) as conn:
        conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    health = await check_store_health(db_path)
    assert health.version == LATEST_VERSION + 1 and health.findings == ()
    [problem] = health.problems
    assert f"schema version {LATEST_VERSION + 1}, newer than this relay" in problem
    assert "upgrade chronorelay" in problem


async def test_a_file_that_is_not_sqlite_says_what_to_do(db_path: Path) -> None:
    write_file(db_path, b"not a database, just some notes\n" * 200)
    health = await check_store_health(db_path)
    assert health.version is None and health.findings is None
    [problem] = health.problems
    assert "is not an SQLite database: set [store] path" in problem


async def test_another_programs_database_is_named(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    with sqlite3.connect(db_path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.close()
    [problem] = (await check_store_health(db_path)).problems
    assert "is not a Chronorelay store (it holds invoices)" in problem


async def test_checks_beside_a_serving_relay_which_goes_on_writing(db_path: Path) -> None:
    serving = SqliteStore(db_path, serving=True)
    await serving.open()
    try:
        await serving.record_inbound(message(0))
        health = await check_store_health(db_path)
        assert health.healthy and health.findings == () and health.version == LATEST_VERSION
        assert health.wal_size is not None and health.wal_size > 0
        await serving.record_inbound(message(1))
        assert len(await serving.transcript("agent:main:telegram:dm:42")) == 2
    finally:
        await serving.close()


async def test_a_relay_starting_during_the_check_gets_it_checked_again(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await make_store(db_path, messages=3)
    relay = SqliteStore(db_path, serving=True)
    check_file = sqlite_health._check_file
    shared: list[bool] = []

    async def relay_starts_meanwhile(path: Path, check: str, look: Any) -> StoreHealth:
        shared.append(look.relay_has_it_open)
        if len(shared) == 1:
            await relay.open()
            await relay.record_inbound(message(3))
        return await check_file(path, check, look)

    monkeypatch.setattr(sqlite_health, "_check_file", relay_starts_meanwhile)
    try:
        health = await check_store_health(db_path)
    finally:
        await relay.close()
    # Read as immutable first; then, the relay's files there, as one more WAL reader.
    assert shared == [False, True]
    assert health.healthy and health.wal_size is not None
