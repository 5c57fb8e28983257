"""One write of the store's writer, applied on a connection: in a savepoint of its own
or as one statement, alone or as a batch in a transaction of the worker thread, and its
future settled with the outcome (see :mod:`middleware.store.sqlite_writer`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import Any, NamedTuple

Write = Callable[[sqlite3.Connection], Any]
# Turns an SQLite failure during ``action`` into the error the caller sees.
ErrorFor = Callable[[str, sqlite3.Error], Exception]


class Pending(NamedTuple):
    """A queued write."""

    action: str  # what it does, for errors
    write: Write
    future: asyncio.Future[Any]
    savepoint: bool  # runs in a savepoint of its own (see ``submit``)
    resolves_applied: bool  # its future resolves once applied, not committed (``queue``)
    # Re-applied in the next transaction when its own fails to commit (``submit``).
    keep: bool = False


Outcome = tuple[bool, Any]  # (True, result) or (False, the exception it raised)


def settle(future: asyncio.Future[Any], outcome: Outcome) -> None:
    if future.done():
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def caller_error(error_for: ErrorFor, action: str, exc: BaseException) -> BaseException:
    """What the caller of a write that raised ``exc`` sees: what ``error_for`` makes of an
    SQLite failure; any other exception as it is."""
    return error_for(action, exc) if isinstance(exc, sqlite3.Error) else exc


def settle_write(pending: Pending, outcome: Outcome, error_for: ErrorFor) -> None:
    """Settle ``pending``'s future with ``outcome``, its error as its caller sees it."""
    ok, value = outcome
    settle(
        pending.future, outcome if ok else (False, caller_error(error_for, pending.action, value))
    )


# SQLite's primary result codes that say the file cannot take writes now, whatever the write.
_UNWRITABLE = frozenset(
    {
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_CORRUPT,
        sqlite3.SQLITE_NOTADB,
        sqlite3.SQLITE_CANTOPEN,
    }
)


def keeps_writes_out(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and int(code) & 0xFF in _UNWRITABLE


def is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return int(code) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def apply_one(conn: sqlite3.Connection, write: Write, *, savepoint: bool = True) -> Outcome:
    """Run ``write`` in its own savepoint of the open transaction; a write that raises is
    rolled back alone. Without ``savepoint``, ``write`` is one statement, which SQLite
    rolls back alone."""
    if not savepoint:
        try:
            return True, write(conn)
        except Exception as exc:
            if isinstance(exc, sqlite3.Error) and not conn.in_transaction:
                # SQLite rolled back the whole transaction (a full disk, an I/O error):
                # the writes before this one are gone too, so the caller aborts it.
                raise
            return False, exc
    conn.execute("SAVEPOINT write")
    try:
        result = write(conn)
    except Exception as exc:
        conn.execute("ROLLBACK TO write")
        conn.execute("RELEASE write")
        return False, exc
    conn.execute("RELEASE write")
    return True, result


def apply_batch(conn: sqlite3.Connection, writes: list[tuple[Write, bool]]) -> list[Outcome]:
    """One transaction, each write in a savepoint if it asks for one; runs on the worker
    thread."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        outcomes = [apply_one(conn, write, savepoint=savepoint) for write, savepoint in writes]
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return outcomes
