"""The SQLite store's aiosqlite connections: how each one is opened and set up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiosqlite

# How long a statement waits for another process's lock on the file before failing.
BUSY_TIMEOUT_MS = 5000


async def connect(path: Path) -> aiosqlite.Connection:
    """An autocommit connection to ``path`` with foreign keys on and the busy timeout set."""
    # isolation_level=None: no implicit BEGINs from the sqlite3 module; transactions
    # are exactly the store's BEGIN IMMEDIATE ... COMMIT blocks.
    conn = aiosqlite.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        await conn
    except BaseException:
        # On a failed connect aiosqlite stops its worker thread without waiting for
        # it; if the event loop is gone before the thread hands back its last result,
        # the thread dies with "Event loop is closed". Wait for it to finish.
        await asyncio.to_thread(conn._thread.join, 5)
        raise
    try:
        await conn.executescript(
            f"PRAGMA foreign_keys = ON; PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d};"
        )
    except BaseException:
        await conn.close()
        raise
    return conn
