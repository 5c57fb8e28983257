"""Notices: something the relay must tell a user who is not the one it is answering now.

Linking accounts (``/link CODE``, ``/admin link``, ``POST /admin/links``) changes what the
other accounts see — which timezone won, say. The relay cannot write first on every
channel, so a notice waits for the user's next forwarded message and rides in the
injected block as an instruction to the model to pass it on. Notices live in memory: a
restart drops the ones not yet delivered (they are courtesy; ``/whoami`` shows the state).

A notice may come with the condition that makes it true ("still linked to that account"),
checked when it is delivered: news of an account joining, days later and after it was
unlinked again, would send the user to undo what is already undone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from middleware.pipeline import Handler, Stage
from middleware.types import Reply, Turn

# A user who never comes back must not grow the dict without bound.
_MAX_PER_USER = 5

Holds = Callable[[], Awaitable[bool]]


class Notices:
    """Notices waiting for their users, by user key."""

    def __init__(self) -> None:
        self._waiting: defaultdict[str, list[tuple[str, Holds | None]]] = defaultdict(list)

    def add(self, user_key: str, text: str, *, holds: Holds | None = None) -> None:
        """Keep ``text`` for ``user_key``'s next forwarded message; ``holds``, when given,
        says at delivery whether it is still true (if not, it is dropped unsaid)."""
        waiting = self._waiting[user_key]
        waiting.append((text, holds))
        del waiting[:-_MAX_PER_USER]

    def waiting_for(self, user_key: str) -> bool:
        """Whether ``user_key`` has notices waiting: the one check an ordinary turn makes."""
        return user_key in self._waiting

    def drop(self, user_key: str) -> None:
        """Forget what waits for ``user_key`` unsaid (``/forget``: the news is about
        accounts and links the relay no longer holds for them)."""
        self._waiting.pop(user_key, None)

    async def take(self, user_key: str) -> list[str]:
        """The user's notices still true, oldest first; they are delivered now, so
        forgotten (those no longer true too)."""
        return [text for text, _ in await self._take_true(user_key)]

    @asynccontextmanager
    async def delivering(self, user_key: str) -> AsyncIterator[list[str]]:
        """The user's notices still true, oldest first, for the turn run inside: forgotten
        once it is through, waiting again for the next message if it fails (the model
        never answered, so never told them)."""
        taken = await self._take_true(user_key)
        try:
            yield [text for text, _ in taken]
        except BaseException:
            if taken:
                waiting = self._waiting[user_key]
                waiting[:0] = taken
                del waiting[:-_MAX_PER_USER]
            raise

    async def _take_true(self, user_key: str) -> list[tuple[str, Holds | None]]:
        return [
            (text, holds)
            for text, holds in self._waiting.pop(user_key, [])
            if holds is None or await holds()
        ]


def notices_stage(notices: Notices) -> Stage:
    """Hand the speaker's waiting notices to the model. Place it after the commands (a
    command's reply is the relay's own) and after the clock (its line comes first)."""

    async def deliver(turn: Turn, call_next: Handler) -> Reply:
        if turn.continuation or not notices.waiting_for(turn.user_key):
            return await call_next(turn)
        async with notices.delivering(turn.user_key) as waiting:
            if waiting:
                turn.context.sections.append(
                    "The relay has news for the user; tell them in your reply, briefly and "
                    "in your own words: " + " ".join(waiting)
                )
            return await call_next(turn)

    return deliver
