"""A real SQLite store in ``tmp_path`` for the middleware tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from middleware.store import SqliteStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    # A directory that does not exist yet: opening must create it.
    return tmp_path / "state" / "relay.db"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SqliteStore]:
    opened = SqliteStore(db_path)
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()
