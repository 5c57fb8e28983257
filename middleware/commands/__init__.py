"""Chat commands (``/tz``, ``/time``, …): a cheap sync match, then an async handler.

Commands work on every channel; on the API channel only when the channel allows them
(``Turn.commands_allowed``). A command's reply is written by the relay and never forwarded.

A message that is a command in shape but names none of the relay's (``/whoaim``,
``/tz-list``) is answered too, with the closest command and a pointer to ``/help``: whoever
types a slash command expects the relay, not the model, to take it. The shape is the
whole message: ``/name`` (letters and ``_``) with an optional ``@bot`` and arguments after
whitespace, or one lone slash word (``/tz-list``). So ``/usr/bin is full``, ``/tmp-dir is
full`` and "well, /shrug" are messages for the model. In a group a bare unknown command is
another bot's (``/roll``): only one named for this bot (``/roll@relay_bot``) is answered.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass

from middleware.commands.catalog import COMMANDS
from middleware.pipeline import Handler, Stage
from middleware.types import COMMAND, Reply, Turn

_COMMAND = re.compile(r"^/([A-Za-z_]+)(?:@([A-Za-z0-9_]+))?(?:\s+(.*))?$", re.DOTALL)
# One slash word and nothing else: a command in shape even where ``_COMMAND``'s names stop
# ("/tz-list", "/tz2"). With words after it, such a word is a path ("/tmp-dir is full").
_LONE_WORD = re.compile(r"/([A-Za-z][A-Za-z0-9_-]*)(?:@([A-Za-z0-9_]+))?")
# Sent by Telegram itself when someone opens the bot: a hello for the model to answer.
_PLATFORM_GREETINGS = frozenset({"start"})


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed ``/name args`` message; ``bot`` is a Telegram ``@botname`` suffix's name
    ("" when there is none), which the name leaves out."""

    name: str
    args: str
    bot: str = ""


# A handler answers with text, or with a whole ``Reply`` when it sets ``meta`` flags.
CommandHandler = Callable[[Turn, Command], Awaitable[str | Reply]]


def match_command(text: str) -> Command | None:
    """The command in ``text``, or ``None`` when it is an ordinary message."""
    if not text.startswith("/"):
        return None
    found = _COMMAND.match(text.strip())
    if found is None:
        return None
    return Command(found.group(1).lower(), (found.group(3) or "").strip(), found.group(2) or "")


def relay_command(turn: Turn, names: Collection[str]) -> Command | None:
    """The command the relay answers in ``turn``, known (one of ``names``) or unknown (see
    the module's docstring), or ``None`` for a message that goes on to the model."""
    if not turn.commands_allowed or not turn.text.startswith("/"):
        return None
    command = match_command(turn.text)
    if command is None:
        lone = _LONE_WORD.fullmatch(turn.text.strip())
        if lone is None:
            return None
        command = Command(lone.group(1).lower(), "", lone.group(2) or "")
    if command.name in names:
        return command
    if command.name in _PLATFORM_GREETINGS or (turn.chat_type == "group" and not command.bot):
        return None
    return command


def unknown_command(names: Collection[str]) -> CommandHandler:
    """The answer to a command that is none of ``names``: the closest of them, if one is
    close, and where to find the rest."""
    known = sorted(names)

    async def unknown(turn: Turn, command: Command) -> str:
        typed = f"/{command.name}"
        close = (
            difflib.get_close_matches(command.name, known, n=1)
            or [name for name in known if command.name.startswith(name)][-1:]
        )
        suggestion = f" Did you mean /{close[0]}?" if close else ""
        return f"Unknown command {typed}.{suggestion} /help lists the commands."

    return unknown


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
    Only a command where commands are allowed (``relay_command``: one of ``names``, or an
    unknown one the relay answers), in a turn the relay answers (one only witnessed is
    not)."""

    def answered(turn: Turn) -> bool:
        return not turn.observe_only and relay_command(turn, names) is not None

    return answered


def commands_stage(handlers: Mapping[str, CommandHandler]) -> Stage:
    """Answer commands directly, ``/help`` and unknown ones included
    (``relay_command``); let everything else through."""
    handlers = {"help": help_command(handlers), **handlers}
    unknown = unknown_command(handlers)

    async def commands(turn: Turn, call_next: Handler) -> Reply:
        command = relay_command(turn, handlers)
        # A command sent again (``resent``) is answered again, as the client asks.
        if command is None or (turn.continuation and not turn.resent):
            return await call_next(turn)
        handler = handlers.get(command.name, unknown)
        answer = await handler(turn, command)
        if isinstance(answer, Reply):
            answer.meta.setdefault(COMMAND, command.name)
            return answer
        return Reply(text=answer, meta={COMMAND: command.name})

    return commands
