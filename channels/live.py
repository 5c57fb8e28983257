"""Replies shown while they are written: one message, edited in place as text arrives.

Platforms limit how often a message may be edited (Telegram: about once a second per
chat), so edits are throttled: text arriving sooner than ``interval`` after the last edit
waits for the next one, and the final text, which is always delivered, waits out the
interval since the last edit. The platform supplies how to start, edit and finish the
message; this class only decides when.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from middleware.errors import ChannelError

log = logging.getLogger(__name__)

H = TypeVar("H")


class LiveMessage(Generic[H]):
    """A reply shown while it is written (``channels.base.LiveReply``).

    ``start(text)`` sends the first text as a new message and returns its handle;
    ``edit(handle, text)`` shows newer text in it; ``finish(handle, text)`` delivers the
    whole reply (``handle`` is ``None`` when nothing was shown: deliver it as usual). A
    ``ChannelError`` from ``start`` or ``edit`` ends the previews, not the reply.
    ``monotonic`` and ``sleep`` are injectable so tests need not wait.
    """

    def __init__(
        self,
        *,
        start: Callable[[str], Awaitable[H]],
        edit: Callable[[H, str], Awaitable[None]],
        finish: Callable[[H | None, str], Awaitable[None]],
        interval: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._start = start
        self._edit = edit
        self._finish = finish
        self._interval = interval
        self._monotonic = monotonic
        self._sleep = sleep
        self._handle: H | None = None
        self._shown = ""
        self._last = 0.0
        self._failed = False

    async def update(self, text: str) -> None:
        """Show ``text`` (the reply so far) unless the last edit was too recent."""
        if self._failed or not text.strip() or text == self._shown:
            return
        if self._handle is not None and self._monotonic() - self._last < self._interval:
            return
        try:
            if self._handle is None:
                self._handle = await self._start(text)
            else:
                await self._edit(self._handle, text)
        except ChannelError as exc:
            # Showing progress is a courtesy; the final delivery does not depend on it.
            log.warning("could not show a reply while it was written: %s", exc)
            self._failed = True
            return
        self._shown = text
        # The interval runs from when the edit landed, not from when it was asked for.
        self._last = self._monotonic()

    async def finish(self, text: str) -> None:
        """Deliver the whole reply, after waiting out the interval since the last edit."""
        if self._handle is not None:
            wait = self._interval - (self._monotonic() - self._last)
            if wait > 0:
                await self._sleep(wait)
        await self._finish(self._handle, text)
