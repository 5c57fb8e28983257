"""Notices: something the relay must tell a user who is not the one it is answering now.

Linking two accounts from one of them (``/link CODE``, ``/admin link``) changes what the
other accounts see — which timezone won, say. The relay cannot write first on every
channel, so a notice waits for the user's next forwarded message and rides in the
injected block as an instruction to the model to pass it on. Notices live in memory: a
restart drops the ones not yet delivered (they are courtesy; ``/whoami`` shows the state).
"""

from __future__ import annotations

from collections import defaultdict

from middleware.pipeline import Handler, Stage
from middleware.types import Reply, Turn

# A user who never comes back must not grow the dict without bound.
_MAX_PER_USER = 5


class Notices:
    """Notices waiting for their users, by user key."""

    def __init__(self) -> None:
        self._waiting: defaultdict[str, list[str]] = defaultdict(list)

    def add(self, user_key: str, text: str) -> None:
        """Keep ``text`` for ``user_key``'s next forwarded message."""
        waiting = self._waiting[user_key]
        waiting.append(text)
        del waiting[:-_MAX_PER_USER]

    def take(self, user_key: str) -> list[str]:
        """The user's notices, oldest first; they are delivered now, so forgotten."""
        return self._waiting.pop(user_key, [])


def notices_stage(notices: Notices) -> Stage:
    """Hand the speaker's waiting notices to the model. Place it after the commands (a
    command's reply is the relay's own) and after the clock (its line comes first)."""

    async def deliver(turn: Turn, call_next: Handler) -> Reply:
        waiting = notices.take(turn.user_key) if not turn.continuation else []
        if waiting:
            turn.context.sections.append(
                "The relay has news for the user; tell them in your reply, briefly and "
                "in your own words: " + " ".join(waiting)
            )
        return await call_next(turn)

    return deliver
