"""The operator's health check of a store file: what start-up checks, and then SQLite's own
``PRAGMA quick_check`` (or ``integrity_check``), which reads every page and so finds the
corruption that start-up, reading only the schema, does not.

It only reads: it never creates, migrates or locks the file, and it is safe while a relay
serves it. With the relay's ``-wal`` and ``-shm`` files beside the store it is one more WAL
reader; without them (no relay has the file open) it opens the file ``immutable``, so that it
leaves no ``-wal``/``-shm`` files of its own behind (made by whoever runs the check, they
could lock the relay's user out), and checks again should the file change meanwhile.
"""

from __future__ import annotations

import asyncio
import shlex
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import aiosqlite

from middleware.errors import StoreError
from middleware.store.migrations import LATEST_VERSION, check_store_file, schema_version
from middleware.store.sqlite_errors import explained

# How long the check waits for a relay's lock on the file before failing.
_BUSY_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class StoreHealth:
    """What ``check_store_health`` found in one store file."""

    path: Path
    exists: bool
    size: int
    """Bytes of the file; 0 when it does not exist."""
    wal_size: int | None
    """Bytes of its ``-wal`` file (writes not yet checkpointed); ``None`` when there is none."""
    version: int | None
    """Its schema version; ``None`` when it could not be read."""
    check: str
    """The SQLite check run: ``quick_check`` or ``integrity_check``."""
    findings: tuple[str, ...] | None
    """What that check reported wrong, as SQLite words it: empty when it said ``ok``,
    ``None`` when it could not run (the file is missing or unreadable)."""
    problems: tuple[str, ...]
    """Each thing wrong with the file and what to do about it; empty when healthy."""

    @property
    def expected_version(self) -> int:
        """The schema version this relay writes."""
        return LATEST_VERSION

    @property
    def healthy(self) -> bool:
        """Whether ``serve`` can use the file as it is (a missing one it creates)."""
        return not self.problems


def recovery_advice(path: Path) -> str:
    """What to do with a corrupt store at ``path``: recover what is readable into a new file."""
    new = path.with_name(f"{path.stem}-recovered{path.suffix}")
    return (
        "stop the relay, keep a copy of the file (and of its -wal file, if there is one), "
        "recover what can be read into a new file with "
        f"`sqlite3 {shlex.quote(str(path))} .recover | sqlite3 {shlex.quote(str(new))}`, "
        "then set [store] path to the new file and start the relay"
    )


async def check_store_health(path: Path, *, full: bool = False) -> StoreHealth:
    """Check the store file at ``path`` without writing to it: start-up's checks (a store,
    at a schema version this relay knows), then ``PRAGMA quick_check`` (``full``:
    ``PRAGMA integrity_check``, which also compares every index with its table: slower).
    Problems are reported in the result, not raised."""
    check = "integrity_check" if full else "quick_check"
    before = await asyncio.to_thread(_look, path)
    if before is None:
        return StoreHealth(path, False, 0, None, None, check, None, ())
    if not before.is_file:
        problem = f"{path} is not a file: set [store] path to the relay's store, or to a new file"
        return StoreHealth(path, True, 0, None, None, check, None, (problem,))
    health = await _check_file(path, check, before)
    after = await asyncio.to_thread(_look, path)
    if not before.relay_has_it_open and after != before and after is not None:
        # A relay opened or wrote the file while it was read as immutable: that reading
        # may mix two states. Once more, as a WAL reader if the relay is still there.
        health = await _check_file(path, check, after)
    return health


@dataclass(frozen=True)
class _Look:
    """What the file system says of a store file, to see whether it changed."""

    is_file: bool
    size: int
    modified_ns: int
    wal_size: int | None
    relay_has_it_open: bool
    """Its ``-wal`` and ``-shm`` files are there: a relay has it open (or crashed)."""


def _look(path: Path) -> _Look | None:
    """How the file at ``path`` is now; ``None`` when there is none."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    wal, shm = (path.with_name(path.name + suffix) for suffix in ("-wal", "-shm"))
    try:
        wal_size: int | None = wal.stat().st_size
    except FileNotFoundError:
        wal_size = None
    return _Look(
        path.is_file(),
        stat.st_size,
        stat.st_mtime_ns,
        wal_size,
        wal_size is not None and shm.exists(),
    )


async def _check_file(path: Path, check: str, look: _Look) -> StoreHealth:
    # mode=ro never creates the file; immutable also takes no lock and makes no -shm.
    mode = "mode=ro" if look.relay_has_it_open else "immutable=1"
    uri = f"{(await asyncio.to_thread(path.resolve)).as_uri()}?{mode}"
    version: int | None = None
    findings: tuple[str, ...] | None = None
    problems: list[str] = []
    try:
        async with aiosqlite.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S) as conn:
            version = await schema_version(conn)
            try:
                await check_store_file(conn, str(path))
            except StoreError as exc:
                problems.append(str(exc))
            rows = await conn.execute_fetchall(f"PRAGMA {check}")
            # One row may hold several findings, a line each, under a heading per schema.
            lines = (line for row in rows for line in str(row[0]).splitlines())
            findings = tuple(line for line in lines if line != "ok" and not line.startswith("***"))
    except sqlite3.Error as exc:
        code = int(getattr(exc, "sqlite_errorcode", 0)) & 0xFF
        if code == sqlite3.SQLITE_CORRUPT:
            advice = recovery_advice(path)
            problems.append(f"the SQLite store at {path} is corrupt ({exc}): {advice}")
        else:
            todo = "check that the relay's user can read the file and its directory"
            problems.append(f"cannot check the SQLite store at {path}: {explained(exc, todo)}")
    if findings:
        problems.append(
            f"PRAGMA {check} found the SQLite store at {path} corrupt: {recovery_advice(path)}"
        )
    return StoreHealth(
        path, True, look.size, look.wal_size, version, check, findings, tuple(problems)
    )
