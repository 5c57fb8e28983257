"""Commands the relay answers itself are no turn of the conversation the model sees.

A user back after a day who first sends ``/recap`` (or ``/memory``) has not resumed the
conversation yet: the command's answer never reaches the model. If that command counted as
the thread's last message, their next real message would continue yesterday's session, so
it would neither start a new session nor bring the tier cards (spec 001 §6: "fresh-surface
boot"), and the new day's work would be captured as part of the old session.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime

from middleware.commands import match_command
from middleware.pipeline import Handler, Stage
from middleware.types import COMMAND, Reply, Turn

_REMEMBERED_THREADS = 4096


class CommandPauses:
    """Per thread, when its last message before the relay-answered commands since then
    was received (``None``: the thread had none). Kept in memory only: after a restart a
    command again counts as the thread's last message."""

    def __init__(self, max_threads: int = _REMEMBERED_THREADS) -> None:
        self._max_threads = max_threads
        self._before: OrderedDict[str, datetime | None] = OrderedDict()

    def answered(self, thread_key: str, last_before: datetime | None) -> None:
        """A command was answered in ``thread_key``, whose previous message was received at
        ``last_before``; the first of several commands in a row keeps its time."""
        if thread_key in self._before:
            return
        self._before[thread_key] = last_before
        if len(self._before) > self._max_threads:
            self._before.popitem(last=False)

    def last_turn_at(self, thread_key: str, last_message_at: datetime | None) -> datetime | None:
        """When the thread's last turn the model saw was received, given its last message's
        time; forgets the thread's commands (this turn goes to the model)."""
        if thread_key not in self._before:
            return last_message_at
        return self._before.pop(thread_key)


def command_pause_stage(pauses: CommandPauses) -> Stage:
    """Before the commands stage: note each command the relay answers itself."""

    async def stage(turn: Turn, call_next: Handler) -> Reply:
        reply = await call_next(turn)
        if (
            not turn.continuation
            and turn.commands_allowed
            and COMMAND in reply.meta
            and match_command(turn.text) is not None
        ):
            prior = turn.prior
            pauses.answered(turn.thread_key, prior.thread_last_interaction_at if prior else None)
        return reply

    return stage
