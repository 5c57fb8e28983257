"""A store connection whose commits fail as on a full disk, a given number of times."""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

import pytest

from middleware.store import sqlite_connection


class FullDisk(sqlite3.Connection):
    """The loop's store connection: its next ``failing`` COMMITs fail with SQLITE_FULL
    (SQLite leaves the transaction open; the writer rolls it back)."""

    failing = 0

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "COMMIT" and FullDisk.failing > 0:
            FullDisk.failing -= 1
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[misc]
            error.sqlite_errorname = "SQLITE_FULL"  # type: ignore[misc]
            raise error
        return super().execute(sql, *args)


def use_full_disk(monkeypatch: pytest.MonkeyPatch) -> type[FullDisk]:
    """Stores opened from now on write through ``FullDisk`` (none failing yet)."""
    monkeypatch.setattr(
        sqlite_connection,
        "connect_inline",
        functools.partial(sqlite_connection.connect_inline, factory=FullDisk),
    )
    monkeypatch.setattr(FullDisk, "failing", 0)
    return FullDisk
