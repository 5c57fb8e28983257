"""The Telegram channel against a fake Bot API and a fake upstream, through the pipeline."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from channels.telegram import MESSAGE_LIMIT, TelegramChannel, telegram_parts
from middleware.errors import ConfigError
from proxy.config import parse_config
from tests.channels.support import running_telegram, services_of
from tests.fakes.telegram_api import TOKEN, FakeTelegramApi
from tests.fakes.upstream import RELAY_BLOCK, FakeUpstream


@pytest.fixture
async def bot(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> AsyncIterator[TelegramChannel]:
    async with running_telegram(tmp_path, fake_upstream, telegram_api) as channel:
        yield channel


async def test_dm_goes_through_the_relay_and_the_reply_comes_back(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    await telegram_api.push_message("hello there", chat_id=1001, user_id=42)
    [sent] = await telegram_api.wait_for_sent(1)
    assert sent["chat_id"] == 1001
    assert sent["text"] == "echo: hello there"
    assert "reply_parameters" not in sent  # DMs don't quote the message
    forwarded = fake_upstream.last.body
    assert forwarded["model"] == "fake-model"
    assert forwarded["messages"][-1]["content"].startswith("hello there" + RELAY_BLOCK)
    assert telegram_api.methods()[:1] == ["getMe"]
    assert "sendChatAction" in telegram_api.methods()

    # The second message carries the first exchange, its block replayed byte for byte.
    await telegram_api.push_message("and again", chat_id=1001, user_id=42)
    await telegram_api.wait_for_sent(2)
    second = fake_upstream.last.body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[0] == forwarded["messages"][-1]
    assert second[1]["content"] == "echo: hello there"


async def test_time_command_is_answered_without_the_upstream(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    await telegram_api.push_message("/time")
    [sent] = await telegram_api.wait_for_sent(1)
    assert "It's" in sent["text"] and "/tz" in sent["text"]
    assert fake_upstream.requests == []


async def test_long_reply_is_split_on_line_boundaries(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    paragraph = "word " * 150  # 750 characters
    fake_upstream.reply_content = "\n\n".join(f"{i} {paragraph.strip()}" for i in range(12))
    await telegram_api.push_message("tell me everything")
    await telegram_api.wait_for_sent(2)
    await telegram_api.wait_for_sent(3)
    parts = telegram_api.sent()
    assert len(parts) == 3
    assert all(len(p["text"]) <= MESSAGE_LIMIT for p in parts)
    # No paragraph is cut: every part starts with a paragraph's number.
    starts = [p["text"].split(" ", 1)[0] for p in parts]
    assert starts == ["0", starts[1], starts[2]] and all(s.isdigit() for s in starts)
    assert sum(p["text"].count("word") for p in parts) == 12 * 150


async def test_groups_answer_only_when_addressed(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    group = -100200
    await telegram_api.push_message("just chatting", chat_id=group, chat_type="supergroup")
    mention = "@chronorelay_bot what's up?"
    await telegram_api.push_message(
        mention,
        chat_id=group,
        chat_type="supergroup",
        user_id=43,
        first_name="Bo",
        entities=[{"type": "mention", "offset": 0, "length": 16}],
    )
    [sent] = await telegram_api.wait_for_sent(1)
    assert sent["chat_id"] == group
    assert sent["text"] == "echo: what's up?"
    assert sent["reply_parameters"]["message_id"] > 0
    await telegram_api.push_message(
        "thanks!", chat_id=group, chat_type="supergroup", reply_to_bot=True
    )
    await telegram_api.wait_for_sent(2)
    # The un-addressed message never reached the upstream.
    said = [r.body["messages"][-1]["content"].split(RELAY_BLOCK)[0] for r in fake_upstream.requests]
    assert said == ["what's up?", "thanks!"]


async def test_group_policy_all_answers_everything(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    async with running_telegram(tmp_path, fake_upstream, telegram_api, group_policy="all"):
        await telegram_api.push_message("anyone?", chat_id=-5, chat_type="group")
        [sent] = await telegram_api.wait_for_sent(1)
    assert sent["text"] == "echo: anyone?"


async def test_forum_topic_is_the_thread_and_the_reply_stays_in_it(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    await telegram_api.push_message("/whoami@other_bot", chat_id=-100300, chat_type="supergroup")
    await telegram_api.push_message(
        "/time@chronorelay_bot", chat_id=-100300, chat_type="supergroup", topic_id=42
    )
    [sent] = await telegram_api.wait_for_sent(1)
    assert sent["message_thread_id"] == 42
    transcript = await services_of(bot).store.transcript(
        "agent:main:telegram:group:-100300:topic:42"
    )
    assert [m.role for m in transcript] == ["user", "assistant"]


async def test_markdown_special_characters_survive(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.reply_content = (
        "**Note:** 1+1=2 (really) [sic] {ok} #tag a_b c*d ~e~ |f| g! h. i>j k-l `x_y*z`\n\n"
        "```python\nprint('a_b*c')\n```"
    )
    await telegram_api.push_message("format test")
    [sent] = await telegram_api.wait_for_sent(1)
    text = sent["text"]
    assert "parse_mode" not in sent  # entities, so nothing needs escaping
    assert "1+1=2 (really) [sic] {ok} #tag a_b c*d" in text
    assert "g! h. i>j k-l x_y*z" in text
    assert "print('a_b*c')" in text
    types = {entity["type"] for entity in sent["entities"]}
    assert {"bold", "code", "pre"} <= types
    bold = next(e for e in sent["entities"] if e["type"] == "bold")
    assert text[bold["offset"] : bold["offset"] + bold["length"]] == "Note:"


def test_parts_keep_entities_on_their_text() -> None:
    parts = telegram_parts("intro\n\n" + "x" * 30 + "\n\n**bold end**", limit=20)
    assert [p[0] for p in parts] == ["intro", "x" * 20, "x" * 10 + "\n\nbold end"]
    last_text, last_entities = parts[-1]
    assert [(e.type, e.offset, e.length) for e in last_entities] == [("bold", 12, 8)]
    assert last_text[12:20] == "bold end"


def test_enabled_without_a_token_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="bot_token is required"):
        parse_config("[channels.telegram]\nenabled = true\n")


def test_token_comes_from_the_environment_and_is_not_shown() -> None:
    config = parse_config(
        '[channels.telegram]\nenabled = true\nbot_token = "${TELEGRAM_BOT_TOKEN}"\n',
        env={"TELEGRAM_BOT_TOKEN": TOKEN},
    )
    assert config.channels.telegram.bot_token.get_secret_value() == TOKEN
    assert TOKEN not in repr(config)


async def test_a_rejected_token_is_a_config_error(
    tmp_path: Path, fake_upstream: FakeUpstream
) -> None:
    api = FakeTelegramApi(token="999:other")
    await api.start()
    try:
        with pytest.raises(ConfigError, match="bot_token was rejected"):
            async with running_telegram(tmp_path, fake_upstream, api):
                pass
    finally:
        await api.stop()
