"""Group conversations through the Telegram channel: who said what, and what the model
sees of commands, as several members' turns come and go."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from channels.telegram import TelegramChannel
from tests.channels.support import running_telegram
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import RELAY_BLOCK, FakeUpstream, is_synthesis

GROUP = -100500
MENTION = [{"type": "mention", "offset": 0, "length": 16}]


@pytest.fixture
async def bot(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> AsyncIterator[TelegramChannel]:
    async with running_telegram(tmp_path, fake_upstream, telegram_api) as channel:
        yield channel


def said(body: dict[str, Any]) -> list[str]:
    """What the model was shown: each message without the relay's block."""
    return [m["content"].split(RELAY_BLOCK)[0] for m in body["messages"]]


def chats(fake_upstream: FakeUpstream) -> list[dict[str, Any]]:
    """The conversation requests the upstream received (no capture passes)."""
    return [r.body for r in fake_upstream.requests if not is_synthesis(r.body)]


def assert_prefixes_only_grow(bodies: list[dict[str, Any]]) -> None:
    """Each request holds the one before it byte for byte (blocks included), then more."""
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert after["messages"][: len(before["messages"])] == before["messages"]


async def ask(telegram_api: FakeTelegramApi, text: str, user_id: int, name: str, sent: int) -> None:
    """``name`` (user ``user_id``) says ``text`` to the bot in the group; waits for the
    ``sent``-th message the bot sends."""
    await telegram_api.push_message(
        f"@chronorelay_bot {text}",
        chat_id=GROUP,
        chat_type="supergroup",
        user_id=user_id,
        first_name=name,
        entities=MENTION,
    )
    await telegram_api.wait_for_sent(sent)


async def test_namesakes_are_told_apart_from_the_second_one_on_and_no_label_changes(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    await ask(telegram_api, "hi all", 51, "Alex", 1)
    await ask(telegram_api, "me too", 52, "Alex", 2)
    await ask(telegram_api, "who's in?", 51, "Alex", 3)
    # The first Alex was alone when she first spoke; from the second one on, each of
    # them is named with their account, in the history as in the block.
    bodies = chats(fake_upstream)
    assert said(bodies[-1])[::2] == [
        "[Alex] hi all",
        "[Alex (telegram:52)] me too",
        "[Alex (telegram:51)] who's in?",
    ]
    block = bodies[-1]["messages"][-1]["content"].split(RELAY_BLOCK)[1]
    assert "Alex (telegram:51)" in block and "Alex (telegram:52)" in block
    # The second Alex renames herself: what she said before keeps its name.
    await ask(telegram_api, "call me Sam", 52, "Sam", 4)
    bodies = chats(fake_upstream)
    assert said(bodies[-1])[2::2] == [
        "[Alex (telegram:52)] me too",
        "[Alex (telegram:51)] who's in?",
        "[Sam] call me Sam",
    ]
    assert_prefixes_only_grow(bodies)


async def test_a_command_is_no_turn_of_the_conversation_while_it_is_answered(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    """/capture reads the session while it is being answered: the /capture itself is no
    message of it, so a second one right after has nothing new."""
    await ask(telegram_api, "we ship on friday", 51, "Ana", 1)
    for sent in (2, 3):
        await telegram_api.push_message(
            "/capture", chat_id=GROUP, chat_type="supergroup", user_id=52, first_name="Bo"
        )
        await telegram_api.wait_for_sent(sent)
    captured, again = (m["text"] for m in telegram_api.sent()[1:])
    assert "(1 message)" in captured
    assert again == "Nothing new to capture in this session yet."
    [synthesis] = [r.body for r in fake_upstream.requests if is_synthesis(r.body)]
    assert "/capture" not in synthesis["messages"][-1]["content"]


async def test_a_command_sent_during_another_members_turn_never_reaches_the_model(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.delay = 0.3
    await telegram_api.push_message(
        "@chronorelay_bot plan?", chat_id=GROUP, chat_type="supergroup", entities=MENTION
    )
    await fake_upstream.wait_for_requests(1)  # Ana's turn is with the upstream
    for text in ("/time", "/foo bar"):
        await telegram_api.push_message(
            text, chat_id=GROUP, chat_type="supergroup", user_id=43, first_name="Bo"
        )
    await ask(telegram_api, "and now?", 42, "Ana", 3)
    await ask(telegram_api, "last", 42, "Ana", 4)
    bodies = chats(fake_upstream)
    # Bo's /time is answered by the relay, never shown to the model; the unknown /foo
    # is Bo's message like any other.
    assert [m for m in said(bodies[-1]) if not m.startswith("echo: ")] == [
        "[Ana] plan?",
        "[Bo] /foo bar",
        "[Ana] and now?",
        "[Ana] last",
    ]
    assert telegram_api.sent()[1]["text"].startswith("It's ")
    assert_prefixes_only_grow(bodies)
