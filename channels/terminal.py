"""The terminal channel: ``chronorelay chat``, a REPL that is a real channel.

You type as a user; each line becomes a ``Turn`` with its own user and thread keys, goes
through the same pipeline as every other channel, and the reply is printed. The relay owns
the conversation here, so the forwarded history comes from the stored transcript.
"""

from __future__ import annotations

import asyncio
import getpass
import sys
from collections.abc import Callable
from typing import TextIO

from channels.base import answer
from channels.history import conversation_body
from middleware.types import Turn
from proxy.services import Services

PROMPT = "you> "


class TerminalChannel:
    """A line-oriented chat on stdin/stdout."""

    name = "terminal"

    def __init__(
        self,
        services: Services,
        *,
        user_id: str | None = None,
        thread_id: str = "local",
        read_line: Callable[[], str] | None = None,
        out: TextIO | None = None,
        history_limit: int = 40,
    ) -> None:
        self._services = services
        self._user_id = user_id or getpass.getuser()
        self._thread_id = thread_id
        self._read_line = read_line or (lambda: input(PROMPT))
        self._out = out or sys.stdout
        self._history_limit = history_limit
        self._running = False

    async def start(self) -> None:
        self._running = True

    async def stop(self) -> None:
        self._running = False

    async def send(self, thread_id: str, text: str) -> None:
        self._out.write(f"bot> {text}\n")
        self._out.flush()

    async def run(self) -> None:
        """Read lines until EOF or ``/quit``, answering each."""
        await self.start()
        self._out.write(f"chronorelay chat — you are terminal:{self._user_id}; /quit to leave\n")
        while self._running:
            try:
                line = await asyncio.to_thread(self._read_line)
            except (EOFError, KeyboardInterrupt):
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                break
            await self.send(self._thread_id, await self.handle(text))
        await self.stop()

    async def handle(self, text: str) -> str:
        """Run one user line through the pipeline and return the reply text."""
        turn = Turn(
            channel=self.name,
            thread_id=self._thread_id,
            user_id=self._user_id,
            text=text,
            received_at=self._services.clock.now(),
            body={},
        )
        turn.body = await conversation_body(self._services, turn, self._history_limit)
        return await answer(self._services, turn)
