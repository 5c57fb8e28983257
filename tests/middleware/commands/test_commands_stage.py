"""The command router: which messages the relay answers itself, known or unknown, and which
go on to the model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from middleware.commands import Command, answers_itself, commands_stage
from middleware.types import COMMAND, ChatType, Reply, Turn

NOW = datetime(2026, 11, 21, 12, tzinfo=UTC)


async def whoami(turn: Turn, command: Command) -> str:
    return "you are ana"


async def tz(turn: Turn, command: Command) -> str:
    return f"zone {command.args}"


HANDLERS = {"whoami": whoami, "tz": tz, "time": whoami}


async def to_model(turn: Turn) -> Reply:
    return Reply(text="the model's answer")


async def routed(text: str, chat_type: ChatType = "dm") -> Reply:
    turn = Turn(
        channel="telegram", thread_id="1", user_id="ana", text=text, received_at=NOW, body={}
    )
    turn.chat_type = chat_type
    reply = await commands_stage(HANDLERS)(turn, to_model)
    # Told before recording: stored as a command exactly when the relay answers it.
    assert answers_itself({"help", *HANDLERS})(turn) == (COMMAND in reply.meta)
    return reply


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("/whoaim", "Unknown command /whoaim. Did you mean /whoami? /help lists the commands."),
        ("/stats", "Unknown command /stats. /help lists the commands."),
        ("/tz-list", "Unknown command /tz-list. Did you mean /tz? /help lists the commands."),
        ("/TIEM now", "Unknown command /tiem. Did you mean /time? /help lists the commands."),
        ("/whoaim@relay_bot", "Unknown command /whoaim. Did you mean /whoami? /help lists"),
        ("/usr", "Unknown command /usr."),
    ],
)
async def test_an_unknown_command_is_answered_by_the_relay(text: str, answer: str) -> None:
    reply = await routed(text)
    assert reply.text.startswith(answer), reply.text
    assert COMMAND in reply.meta


@pytest.mark.parametrize(
    "text",
    [
        "/usr/bin is full",
        "/tmp-dir is full",  # a path with words after it
        "/r/python is great",
        "well, /shrug",
        " /whoaim",
        "/123",
        "/",
        "/time?",
        "/start",  # Telegram's own hello when someone opens the bot
    ],
)
async def test_a_message_that_only_looks_like_one_goes_to_the_model(text: str) -> None:
    reply = await routed(text)
    assert reply.text == "the model's answer"
    assert COMMAND not in reply.meta


async def test_in_a_group_only_an_unknown_command_named_for_this_bot_is_answered() -> None:
    # A bare one is another bot's in the room; the channel passes on only this bot's name.
    assert (await routed("/roll 2d6", "group")).text == "the model's answer"
    named = await routed("/roll@relay_bot 1d20", "group")
    assert named.text == "Unknown command /roll. /help lists the commands."
    assert (await routed("/tz Asia/Tokyo", "group")).text == "zone Asia/Tokyo"


async def test_known_commands_are_still_answered_by_their_handlers() -> None:
    assert (await routed("/tz@relay_bot Europe/Berlin")).text == "zone Europe/Berlin"
    assert (await routed("/help")).text.startswith("Commands:")
