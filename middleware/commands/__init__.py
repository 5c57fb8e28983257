"""Chat commands (``/tz``, ``/time``, …): a cheap sync match, then an async handler.

Commands work on every channel; on the API channel only when the channel allows them
(``Turn.commands_allowed``). A command's reply is written by the relay and never forwarded.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass

from middleware.commands.catalog import COMMANDS
from middleware.pipeline import Handler, Stage
from middleware.types import COMMAND, Reply, Turn

_COMMAND = re.compile(r"^/([A-Za-z_]+)(?:@[A-Za-z0-9_]+)?(?:\s+(.*))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed ``/name args`` message (a Telegram ``@botname`` suffix is dropped)."""

    name: str
    args: str


# A handler answers with text, or with a whole ``Reply`` when it sets ``meta`` flags.
CommandHandler = Callable[[Turn, Command], Awaitable[str | Reply]]


def match_command(text: str) -> Command | None:
    """The command in ``text``, or ``None`` when it is an ordinary message."""
    if not text.startswith("/"):
        return None
    found = _COMMAND.match(text.strip())
    if found is None:
        return None
    return Command(found.group(1).lower(), (found.group(2) or "").strip())


def help_command(names: Collection[str]) -> CommandHandler:
    """``/help``: the catalog's commands among ``names`` (and itself), in catalog order."""
    lines = ["Commands:"] + [
        f"/{name} — {description}"
        for name, description in COMMANDS
        if name in names or name == "help"
    ]
    listing = "\n".join(lines)

    async def list_commands(turn: Turn, command: Command) -> str:
        return listing

    return list_commands


def command_names(handlers: Mapping[str, CommandHandler]) -> frozenset[str]:
    """The commands ``commands_stage(handlers)`` answers: ``handlers``' and ``/help``."""
    return frozenset({"help", *handlers})


def answers_itself(names: Collection[str]) -> Callable[[Turn], bool]:
    """Whether the commands stage answering ``names`` will answer a new turn itself, told
    before the turn is recorded, so its message is stored as a command from the start.
    Only a command of ``names`` where commands are allowed, in a turn the relay answers
    (one only witnessed is not); an unknown ``/foo`` or another bot's goes to the model."""

    def answered(turn: Turn) -> bool:
        if not turn.commands_allowed or turn.observe_only:
            return False
        command = match_command(turn.text)
        return command is not None and command.name in names

    return answered


def commands_stage(handlers: Mapping[str, CommandHandler]) -> Stage:
    """Answer known commands directly, ``/help`` included; let everything else through."""
    handlers = {"help": help_command(handlers), **handlers}

    async def commands(turn: Turn, call_next: Handler) -> Reply:
        command = match_command(turn.text) if turn.commands_allowed else None
        handler = handlers.get(command.name) if command else None
        # A command sent again (``resent``) is answered again, as the client asks.
        if command is None or handler is None or (turn.continuation and not turn.resent):
            return await call_next(turn)
        answer = await handler(turn, command)
        if isinstance(answer, Reply):
            answer.meta.setdefault(COMMAND, command.name)
            return answer
        return Reply(text=answer, meta={COMMAND: command.name})

    return commands
