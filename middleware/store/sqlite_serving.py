"""One relay serves an SQLite store at a time.

A serving relay keeps what it learnt of each thread in memory beside the file (the blocks
it injected, each pair's newest message), so a second relay answering turns from the same
file forwards conversations the first one changed without knowing it (a block the other
relay injected goes missing from the replayed history, which breaks the upstream's prompt
cache and what the model was told). DESIGN.md: several replicas are for a shared database
server, not an embedded file. So a serving relay holds an exclusive lock on a file beside
the store, ``<store>-relay.lock``, for as long as the store is open; a second one is
refused at start, naming the first one's process id. The one-shot commands (export,
import) take no such lock: each is one transaction of its own.

``flock`` locks belong to the open file and are released by the kernel when the process
ends however it ends (``kill -9`` included): a crashed relay never blocks the next start.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from middleware.errors import StoreError


def lock_path(store: Path) -> Path:
    """The lock file of the store at ``store``."""
    return store.with_name(f"{store.name}-relay.lock")


class ServingLock:
    """The exclusive lock of one serving relay on one store file."""

    def __init__(self, store: Path) -> None:
        self._store = store
        self._path = lock_path(store)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise ``StoreError`` saying which process holds it and what to
        do. ``OSError`` when the lock file cannot be made (the store's directory then
        cannot take the store either)."""
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(
                f"another relay (process {holder}) is serving the SQLite store at "
                f"{self._store}: two relays on one store file would each forward "
                "conversations the other changed. Stop that relay first, or give this one "
                "another [store] path"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        """Let another relay serve the store; safe to call twice."""
        if self._fd is not None:
            # Closing the file releases its lock; the file stays, for the next relay.
            os.close(self._fd)
            self._fd = None
