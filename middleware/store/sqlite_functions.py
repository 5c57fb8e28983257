"""The SQL functions the store's statements call, registered on every connection it opens
(the loop's writer, the threaded writer that migrates, the reader): a statement that
calls one fails with "no such function" on a connection that lacks it.

Each is deterministic (same arguments, same result), so SQLite may evaluate it once per
distinct argument and allow it wherever a deterministic function may go.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import aiosqlite

from middleware.identity import name_key

# name, number of arguments, the Python function.
FUNCTIONS: tuple[tuple[str, int, Callable[..., Any]], ...] = (
    # ``name_key(display_name)``: what namesakes are compared by, the rule the block's
    # list applies too (SQLite's NOCASE folds ASCII letters only: "Élodie" <> "élodie").
    ("name_key", 1, name_key),
)


def add_functions(conn: sqlite3.Connection) -> None:
    """Register ``FUNCTIONS`` on ``conn``."""
    for name, arity, function in FUNCTIONS:
        conn.create_function(name, arity, function, deterministic=True)


async def add_functions_async(conn: aiosqlite.Connection) -> None:
    """Register ``FUNCTIONS`` on the aiosqlite connection ``conn``."""
    for name, arity, function in FUNCTIONS:
        await conn.create_function(name, arity, function, deterministic=True)
