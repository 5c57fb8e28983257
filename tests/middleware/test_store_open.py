"""Opening a store file the relay cannot use: refused at open, saying what the file is and
what to do, and leaving the file as it was."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from middleware.errors import StoreError
from middleware.store import SqliteStore, sqlite_connection


async def make_store(path: Path) -> None:
    """A store the relay made, closed."""
    store = SqliteStore(path)
    await store.open()
    await store.close()


def file_bytes(path: Path, *, missing: bytes | None = None) -> bytes:
    """The file's bytes; ``missing`` when it does not exist, if given."""
    if missing is not None and not path.exists():
        return missing
    return path.read_bytes()


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` read-only for this process, root included (root writes through file
    modes; an immutable file refuses it too)."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        yield
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
        pytest.skip("cannot make a file read-only for root here (chattr)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def write_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def truncate(path: Path, size: int) -> None:
    with path.open("r+b") as file:
        file.truncate(size)


async def refused(path: Path) -> str:
    store = SqliteStore(path)
    with pytest.raises(StoreError) as info:
        await store.open()
    assert not await store.ping()
    await store.close()
    message = str(info.value)
    assert str(path) in message
    return message


async def test_a_read_only_store_is_refused_at_open_not_at_the_first_message(
    db_path: Path,
) -> None:
    await make_store(db_path)
    with read_only(db_path):
        message = await refused(db_path)
    assert "read-only" in message
    assert "writable by the relay's user" in message


async def test_a_file_that_is_not_sqlite_is_refused_with_what_to_do(db_path: Path) -> None:
    write_file(db_path, b"name,zone\nana,Europe/Lisbon\n" * 200)
    untouched = file_bytes(db_path)

    message = await refused(db_path)

    assert "not an SQLite database" in message
    assert "set [store] path" in message
    assert file_bytes(db_path) == untouched


async def test_a_corrupt_store_is_refused_with_what_to_do(db_path: Path) -> None:
    await make_store(db_path)
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE filler (x)")
    conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,)] * 200)
    conn.commit()
    conn.close()
    truncate(db_path, 3000)

    message = await refused(db_path)

    assert "corrupt" in message
    assert "restore the file from a backup" in message


async def test_another_programs_database_is_refused_and_left_untouched(db_path: Path) -> None:
    write_file(db_path, b"")
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()
    untouched = file_bytes(db_path)

    message = await refused(db_path)

    assert "not a Chronorelay store (it holds invoices)" in message
    assert "set [store] path" in message
    assert file_bytes(db_path) == untouched
    assert file_bytes(db_path.with_name(db_path.name + "-wal"), missing=b"") == b""


async def test_a_store_another_process_holds_locked_is_refused_naming_the_lock(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await make_store(db_path)
    monkeypatch.setattr(sqlite_connection, "BUSY_TIMEOUT_MS", 50)
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        message = await refused(db_path)
    finally:
        holder.close()
    assert "another process holds a write lock" in message


async def test_a_second_serving_relay_is_refused_until_the_first_closes(db_path: Path) -> None:
    first = SqliteStore(db_path, serving=True)
    await first.open()
    try:
        message = await refused_serving(db_path)
        assert f"another relay (process {os.getpid()}) is serving" in message
        assert "Stop that relay first, or give this one another [store] path" in message
        # A one-shot command (export, import) is no relay: it opens beside it.
        beside = SqliteStore(db_path)
        await beside.open()
        await beside.close()
    finally:
        await first.close()
    second = SqliteStore(db_path, serving=True)
    await second.open()
    await second.close()


async def refused_serving(path: Path) -> str:
    store = SqliteStore(path, serving=True)
    with pytest.raises(StoreError) as info:
        await store.open()
    assert not await store.ping()
    await store.close()
    return str(info.value)
