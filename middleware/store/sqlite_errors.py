"""What an SQLite failure means for the operator, and what to do about it."""

from __future__ import annotations

import sqlite3

# By SQLite's primary result code (the low byte of an extended one).
_ADVICE = {
    sqlite3.SQLITE_BUSY: (
        "another process holds a write lock on the file (another relay, or a tool such as "
        "sqlite3 in a transaction): stop it or let it finish, then try again"
    ),
    sqlite3.SQLITE_LOCKED: (
        "another connection holds a lock on the file: stop what else uses it, then try again"
    ),
    sqlite3.SQLITE_READONLY: (
        "the file is read-only: make it and its directory writable by the relay's user "
        "(SQLite keeps its -wal and -shm files beside it)"
    ),
    sqlite3.SQLITE_FULL: "the disk is full: free space on it (nothing stored so far is lost)",
    sqlite3.SQLITE_IOERR: (
        "the file system failed to read or write the file: check the disk and the system log"
    ),
    sqlite3.SQLITE_CORRUPT: (
        "the file is corrupt: stop the relay and restore the file from a backup, or move it "
        "aside to start an empty store"
    ),
    sqlite3.SQLITE_NOTADB: (
        "the file is not an SQLite database: set [store] path to the relay's store, or to a "
        "new file"
    ),
}


def advice(exc: sqlite3.Error) -> str | None:
    """What to do about ``exc``, when its cause is one the operator can act on."""
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else _ADVICE.get(int(code) & 0xFF)


def explained(exc: sqlite3.Error, otherwise: str = "") -> str:
    """SQLite's message for ``exc``, then what to do: ``advice`` or ``otherwise``."""
    todo = advice(exc) or otherwise
    return f"{exc}; {todo}" if todo else str(exc)
