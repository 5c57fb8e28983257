"""Work the relay does off a user's reply path (captures, bookkeeping writes), owned so
that shutdown can wait for it and nothing is silently lost."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Background:
    """A set of running tasks: failures are logged, shutdown drains them."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any], *, what: str) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._finished(done, what))
        return task

    def _finished(self, task: asyncio.Task[Any], what: str) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.error("background %s failed: %s", what, error, exc_info=error)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self, grace: float | None = None) -> None:
        """Wait for the running tasks (those spawned meanwhile too); cancel what is left
        after ``grace`` seconds (the ones left are cancelled: shutdown must end)."""
        deadline = None if grace is None else asyncio.get_running_loop().time() + grace
        while self._tasks:
            remaining = None if deadline is None else deadline - asyncio.get_running_loop().time()
            if remaining is not None and remaining <= 0:
                break
            await asyncio.wait(set(self._tasks), timeout=remaining)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
