"""The Telegram channel against a fake Bot API and a fake upstream, through the pipeline."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from telegram.error import NetworkError, TimedOut

from channels.base import ATTACHED, EDIT_NOT_READ, TEXT_ONLY
from channels.telegram import TelegramChannel
from channels.telegram_format import MESSAGE_LIMIT, telegram_parts
from middleware.commands.catalog import COMMANDS
from middleware.errors import ChannelError, ConfigError
from middleware.pipeline import Handler
from middleware.types import Reply, Turn
from proxy.config import parse_config
from proxy.services import open_services
from tests.channels.support import (
    handlers_done,
    running_telegram,
    services_of,
    telegram_section,
)
from tests.conftest import relay_config
from tests.fakes.telegram_api import TOKEN, FakeTelegramApi
from tests.fakes.upstream import RELAY_BLOCK, FakeUpstream, Scripted

MENTION = [{"type": "mention", "offset": 0, "length": 16}]


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


async def test_a_forwarded_message_is_someone_elses_words(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    await telegram_api.push_message("/tz Asia/Tokyo", forwarded_from="Bo")
    [sent] = await telegram_api.wait_for_sent(1)
    # Not run as this user's command: the model sees a forward and answers it.
    assert sent["text"] == "echo: [forwarded from Bo] /tz Asia/Tokyo"
    prior = await services_of(bot).store.peek_prior("", "telegram:42")
    assert prior.user_tz is None


async def test_a_captioned_photo_is_answered_by_its_caption(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    await telegram_api.push_message("what time is it there?", media="photo")
    [dm] = await telegram_api.wait_for_sent(1)
    assert dm["text"] == (
        "echo: [sent with a photo or file the relay does not pass on] what time is it there?"
    )
    group = -100260
    await telegram_api.push_message("nice view", chat_id=group, chat_type="group", media="photo")
    mention = "@chronorelay_bot where is this?"
    await telegram_api.push_message(
        mention,
        chat_id=group,
        chat_type="group",
        media="photo",
        entities=[{"type": "mention", "offset": 0, "length": 16}],
    )
    [_, answer] = await telegram_api.wait_for_sent(2)
    assert answer["text"].endswith(
        "[Ana] [sent with a photo or file the relay does not pass on] where is this?"
    )
    # The photo nobody asked about is recorded, not answered.
    assert len(fake_upstream.requests) == 2


async def test_what_is_shared_as_data_reaches_the_model_in_words(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    eiffel = {"latitude": 48.858370, "longitude": 2.294481}
    shared: list[tuple[str, dict[str, Any]]] = [
        ("location", eiffel),
        ("location", {**eiffel, "live_period": 900}),
        ("venue", {"location": eiffel, "title": "Eiffel Tower",
                   "address": "Champ de Mars, Paris"}),
        ("contact", {"phone_number": "+33612345678", "first_name": "Bo", "last_name": "Li"}),
        ("poll", {"id": "p1", "question": "Pizza tonight?", "total_voter_count": 0,
                  "is_closed": False, "is_anonymous": True, "type": "regular",
                  "allows_multiple_answers": False, "allows_revoting": False,
                  "members_only": False,
                  "options": [{"text": "yes", "voter_count": 0, "persistent_id": "o1"},
                              {"text": "no", "voter_count": 0, "persistent_id": "o2"}]}),
        ("sticker", {"file_id": "s1", "file_unique_id": "s1", "type": "regular",
                     "width": 512, "height": 512, "is_animated": False, "is_video": False,
                     "emoji": "👍"}),
        ("dice", {"emoji": "🎲", "value": 4}),
    ]  # fmt: skip
    for kind, attachment in shared:
        await telegram_api.push_message("", media=kind, attachment=attachment)
    await telegram_api.wait_for_sent(len(shared))
    said = [r.body["messages"][-1]["content"].split(RELAY_BLOCK)[0] for r in fake_upstream.requests]
    assert said == [
        "[shared a location: 48.85837, 2.29448]",
        "[shared their live location: 48.85837, 2.29448]",
        "[shared a place: Eiffel Tower, Champ de Mars, Paris (48.85837, 2.29448)]",
        "[shared a contact: Bo Li, +33612345678]",
        '[shared a poll: "Pizza tonight?" — yes / no]',
        "[sticker: 👍]",
        "[rolled a 🎲: 4]",
    ]
    assert TEXT_ONLY not in [r["text"] for r in telegram_api.sent()]


async def test_media_without_a_caption_is_told_the_relay_reads_text(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    for kind in ("photo", "sticker", "voice", "document"):
        await telegram_api.push_message("", media=kind)
    replies = await telegram_api.wait_for_sent(4)
    assert [r["text"] for r in replies] == [TEXT_ONLY] * 4
    assert all("reply_parameters" not in r for r in replies)
    group = -100270
    await telegram_api.push_message("", chat_id=group, chat_type="group", media="sticker")
    await telegram_api.push_message(
        "", chat_id=group, chat_type="group", media="voice", reply_to_bot=True
    )
    await telegram_api.push_message("/time", chat_id=group, chat_type="group")
    told, time = (await telegram_api.wait_for_sent(6))[4:]
    # In a group only the one replying to the bot is answered, quoting it.
    assert told["text"] == TEXT_ONLY and told["reply_parameters"]["message_id"] > 0
    assert time["text"].startswith("It's ")
    assert len(telegram_api.sent()) == 6
    assert fake_upstream.requests == []
    # Each was recorded for the clock as what it was, the group's unanswered one too.
    store = services_of(bot).store
    in_dm = await store.transcript("agent:main:telegram:dm:1001")
    kinds = ["photo", "sticker", "voice note", "file"]
    assert [m.text for m in in_dm] == [
        text for kind in kinds for text in (f"[{kind}, not passed on]", TEXT_ONLY)
    ]
    assert [m.role for m in in_dm] == ["user", "assistant"] * 4
    in_group = await store.transcript(f"agent:main:telegram:group:{group}")
    assert [m.text for m in in_group if m.role == "user"] == [
        "[sticker, not passed on]",
        "[voice note, not passed on]",
        "/time",
    ]
    # The answers, the relay's to the media one and the command's, are the bot's messages.
    answers = [m.text for m in in_group if m.role == "assistant"]
    assert answers[0] == TEXT_ONLY and answers[1].startswith("It's ") and len(answers) == 2


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


async def test_a_code_block_that_fits_in_a_message_is_not_cut_in_two(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    code = "\n".join(f"step_{i:03d} = run({i})  # and a comment" for i in range(80))
    fake_upstream.reply_content = (
        " ".join(["Here is the script."] * 100) + f"\n\n```python\n{code}\n```\n\nEnjoy."
    )
    await telegram_api.push_message("write me a script")
    prose, script = await telegram_api.wait_for_sent(2)
    assert len(code) < MESSAGE_LIMIT < len(prose["text"]) + len(code)
    # The code block starts a message of its own, whole: one block the user can copy.
    assert prose["text"].endswith("Here is the script.") and not prose["entities"]
    [pre] = script["entities"]
    assert pre["type"] == "pre" and pre["offset"] == 0
    assert script["text"][: pre["length"]] == code
    assert script["text"].endswith("Enjoy.")


def test_a_long_paragraph_is_cut_between_words() -> None:
    words = [f"w{i}" for i in range(1500)]  # one paragraph of about 7,400 characters
    parts = telegram_parts(" ".join(words))
    assert len(parts) == 2 and all(len(text) <= MESSAGE_LIMIT for text, _ in parts)
    assert [text.split(" ") for text, _ in parts] == [
        words[: len(parts[0][0].split(" "))],
        words[len(parts[0][0].split(" ")) :],
    ]


async def test_an_llm_that_cannot_be_reached_is_said_in_a_few_words(
    tmp_path: Path, telegram_api: FakeTelegramApi, caplog: pytest.LogCaptureFixture
) -> None:
    gone = FakeUpstream()
    gone.url = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    async with running_telegram(tmp_path, gone, telegram_api):
        await telegram_api.push_message("hello?")
        [sent] = await telegram_api.wait_for_sent(1)
    assert sent["text"] == (
        "[no answer: the LLM could not be reached — try again in a moment, and tell "
        "the relay's operator if it keeps happening]"
    )
    # The upstream's address is for the operator's log, not for everyone in the chat.
    assert "127.0.0.1" not in sent["text"]
    assert "no answer from the LLM for agent:main:telegram:dm:1001: cannot reach" in caplog.text


async def test_an_llm_that_takes_too_long_is_said_in_a_few_words(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    fake_upstream.delay = 2.0
    config = relay_config(
        tmp_path,
        fake_upstream.url,
        upstream={"read_timeout": 0.2, "retries": 0},
        channels=telegram_section(telegram_api),
    )
    async with open_services(config) as services:
        channel = TelegramChannel(services)
        await channel.start()
        try:
            await telegram_api.push_message("slow one")
            [sent] = await telegram_api.wait_for_sent(1)
        finally:
            await channel.stop()
    assert sent["text"] == (
        "[no answer: the LLM took too long to answer — try again in a moment, and tell "
        "the relay's operator if it keeps happening]"
    )


async def test_a_message_sent_again_after_the_llm_failed_keeps_its_cue(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    await telegram_api.push_message("heading to the gym now", chat_id=1001, user_id=42)
    await telegram_api.wait_for_sent(1)
    # Every attempt at the next message fails (the relay tries it three times).
    overloaded = {"error": {"message": "overloaded"}}
    fake_upstream.failures = [Scripted(503, overloaded, {"Retry-After": "0"})] * 3
    await telegram_api.push_message("ugh, I'm so sore", chat_id=1001, user_id=42)
    [_, refused] = await telegram_api.wait_for_sent(2)
    assert "overloaded" in refused["text"]
    assert "did you end up going to the gym" in fake_upstream.last.body["messages"][-1]["content"]

    # The model never heard the cue: the user's retry brings it again.
    await telegram_api.push_message("ugh, I'm so sore", chat_id=1001, user_id=42)
    await telegram_api.wait_for_sent(3)
    told = fake_upstream.last.body["messages"][-1]["content"]
    assert "did you end up going to the gym" in told

    # Once the model did hear it, it is not asked again.
    await telegram_api.push_message("still sore, honestly", chat_id=1001, user_id=42)
    await telegram_api.wait_for_sent(4)
    assert "did you end up going" not in fake_upstream.last.body["messages"][-1]["content"]


def utf16(text: str) -> int:
    """``text``'s length as Telegram counts entity offsets: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


async def test_formatted_dates_reach_the_model_as_utc_instants(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    # Telegram shows a date_time entity to each reader in their own zone: the model must
    # see the instant itself, and the clock read it as that instant, not in the speaker's
    # zone. A mention of someone without a username reaches it as their name.
    await telegram_api.push_message("/tz Europe/Berlin")
    await telegram_api.wait_for_sent(1)
    text = "🚀 launch 18:46 tomorrow, party at 19:46, ask Bo"
    formatted, plain, bo = text.index("18:46"), text.index("19:46"), text.index("Bo")
    await telegram_api.push_message(
        text,
        entities=[
            {"type": "date_time", "offset": utf16(text[:formatted]), "length": 14,
             "unix_time": 1900000000, "date_time_format": "wDT"},
            {"type": "date_time", "offset": utf16(text[:plain]), "length": 5,
             "unix_time": 1900003600},
            {"type": "text_mention", "offset": utf16(text[:bo]), "length": 2,
             "user": {"id": 77, "is_bot": False, "first_name": "Bo"}},
        ],
    )  # fmt: skip
    await telegram_api.wait_for_sent(2)
    said, block = fake_upstream.last.body["messages"][-1]["content"].split(RELAY_BLOCK)
    # The formatted one shows no words of its own; the plain one keeps them.
    assert said == (
        "🚀 launch 2030-03-17 17:46:40 UTC, party at 19:46 (2030-03-17 18:46:40 UTC), ask Bo"
    )
    assert '"2030-03-17 17:46:40 UTC" = 2030-03-17T17:46:40+00:00 (UTC)' in block
    # A photo's caption likewise.
    await telegram_api.push_message(
        "here at 18:46",
        media="photo",
        entities=[{"type": "date_time", "offset": 8, "length": 5, "unix_time": 1900000000,
                   "date_time_format": "t"}],
    )  # fmt: skip
    await telegram_api.wait_for_sent(3)
    said = fake_upstream.last.body["messages"][-1]["content"].split(RELAY_BLOCK)[0]
    assert said == f"{ATTACHED} here at 2030-03-17 17:46:40 UTC"


async def test_links_under_words_reach_the_model_with_their_address(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    # A reader taps "the menu" and sees where it goes; the model must be told.
    text = "🍕 see the menu, ask Bo, or example.com"
    menu, bo, site = text.index("the menu"), text.index("Bo"), text.index("example.com")
    await telegram_api.push_message(
        text,
        entities=[
            {"type": "text_link", "offset": utf16(text[:menu]), "length": 8,
             "url": "https://pizza.example/menu"},
            {"type": "text_link", "offset": utf16(text[:bo]), "length": 2,
             "url": "tg://user?id=77"},
            {"type": "text_link", "offset": utf16(text[:site]), "length": 11,
             "url": "https://example.com/"},
        ],
    )  # fmt: skip
    await telegram_api.wait_for_sent(1)
    said = fake_upstream.last.body["messages"][-1]["content"].split(RELAY_BLOCK)[0]
    # A link to a user is a mention (their name); one whose words are its address says it.
    assert said == "🍕 see the menu (https://pizza.example/menu), ask Bo, or example.com"


async def test_a_reply_to_someone_quotes_what_it_replies_to(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    # Ana, Bo and Cy in a group: Bo's plan, then questions about "that" addressed to
    # the bot, which could not tell which message was meant.
    group: dict[str, Any] = {"chat_id": -100300, "chat_type": "supergroup"}
    at_bot = {**group, "entities": [{"type": "mention", "offset": 0, "length": 16}]}
    plan = await telegram_api.push_message(
        "Dinner at Luigi's,\nThursday at 8", user_id=43, first_name="Bo", **group
    )
    photo = await telegram_api.push_message("", user_id=44, first_name="Cy", media="photo", **group)
    await telegram_api.push_message(
        "@chronorelay_bot is that too late for me?", replying_to=plan, **at_bot
    )
    await telegram_api.push_message(
        "@chronorelay_bot where is it?", replying_to=plan, quote="Luigi's", **at_bot
    )
    await telegram_api.push_message("@chronorelay_bot nice?", replying_to=photo, **at_bot)
    # A command replying to someone still runs: it must stay first.
    await telegram_api.push_message("/time", replying_to=plan, **group)
    # Replying to the bot is how a group addresses it: its words are in the history;
    # a part of them quoted is named.
    await telegram_api.push_message("and after?", reply_to_bot=True, **group)
    await telegram_api.push_message("why?", reply_to_bot=True, quote="an earlier", **group)
    await telegram_api.wait_for_sent(6)
    said = [r.body["messages"][-1]["content"].split(RELAY_BLOCK)[0] for r in fake_upstream.requests]
    assert said == [
        '[Ana] [replying to Bo: "Dinner at Luigi\'s, Thursday at 8"] is that too late for me?',
        '[Ana] [replying to Bo: "Luigi\'s"] where is it?',
        "[Ana] [replying to Cy: [photo, not passed on]] nice?",
        "[Ana] and after?",
        '[Ana] [replying to you: "an earlier"] why?',
    ]
    assert telegram_api.sent()[3]["text"].startswith("It's ")


async def test_an_edit_of_a_message_for_the_bot_is_told_it_was_not_read(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    # The relay reads a message once: the user fixing "9" to "10" must not believe the
    # model saw the fix.
    first = await telegram_api.push_message("meet at 9?")
    await telegram_api.wait_for_sent(1)
    await telegram_api.push_edit(first, "meet at 10?")
    await telegram_api.push_edit(first, "meet at 10 then?")
    group: dict[str, Any] = {"chat_id": -100310, "chat_type": "supergroup"}
    chatter = await telegram_api.push_message("just chatting", **group)
    await telegram_api.push_edit(chatter, "just chatting, really")
    await telegram_api.wait_for_sent(2)
    await handlers_done()
    told = telegram_api.sent()[1]
    assert told["text"] == EDIT_NOT_READ
    assert told["reply_parameters"]["message_id"] == first["message_id"]
    # Once per message; an edit of a group message not for the bot is not answered.
    assert len(telegram_api.sent()) == 2
    assert len(fake_upstream.requests) == 1


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
    # In groups the model sees who speaks.
    assert sent["text"] == "echo: [Bo] what's up?"
    assert sent["reply_parameters"]["message_id"] > 0
    await telegram_api.push_message(
        "thanks!", chat_id=group, chat_type="supergroup", reply_to_bot=True
    )
    await telegram_api.wait_for_sent(2)
    # The un-addressed message was not answered and caused no request of its own ...
    said = [r.body["messages"][-1]["content"].split(RELAY_BLOCK)[0] for r in fake_upstream.requests]
    assert said == ["[Bo] what's up?", "[Ana] thanks!"]
    assert len(telegram_api.sent()) == 2
    # ... but it is in the transcript, so it is part of the group's history.
    history = [m["content"] for m in fake_upstream.requests[0].body["messages"][:-1]]
    assert history == ["[Ana] just chatting"]


async def test_other_bots_commands_in_groups_are_not_answered(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    group = -100250
    for text in ("/roll 2d6", "/whoami@other_bot", "/start"):
        await telegram_api.push_message(text, chat_id=group, chat_type="supergroup")
    await telegram_api.push_message("/roll@chronorelay_bot 1d20", chat_id=group, chat_type="group")
    await telegram_api.push_message("/time", chat_id=group, chat_type="supergroup")
    unknown, told = await telegram_api.wait_for_sent(2)
    # Only the command named for this bot is answered: by the relay, which knows no /roll.
    assert unknown["text"] == "Unknown command /roll. /help lists the commands."
    assert told["text"].startswith("It's ")
    assert fake_upstream.requests == []
    transcript = await services_of(bot).store.transcript(f"agent:main:telegram:group:{group}")
    assert [m.text for m in transcript if m.role == "user"][:3] == [
        "/roll 2d6",
        "/whoami@other_bot",
        "/start",
    ]


async def test_group_policy_all_answers_everything(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    async with running_telegram(tmp_path, fake_upstream, telegram_api, group_policy="all"):
        await telegram_api.push_message("anyone?", chat_id=-5, chat_type="group")
        [sent] = await telegram_api.wait_for_sent(1)
    assert sent["text"] == "echo: [Ana] anyone?"


async def test_a_name_is_learned_from_a_group_only_when_asked_of_the_bot(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    """With group_policy "all" every message is answered, but a bare "Call me Annie." may
    be said to the room; mentioning the bot or replying to it makes it asked of the bot."""
    async with running_telegram(
        tmp_path, fake_upstream, telegram_api, group_policy="all"
    ) as channel:
        store = services_of(channel).store
        await telegram_api.push_message("Call me Annie.", chat_id=-5, chat_type="group")
        await telegram_api.push_message("call me when you land", chat_id=-5, chat_type="group")
        await telegram_api.wait_for_sent(2)
        assert await store.memory_facts("telegram:42") == []
        await telegram_api.push_message(
            "@chronorelay_bot Call me Annie.",
            chat_id=-5,
            chat_type="group",
            entities=[{"type": "mention", "offset": 0, "length": 16}],
        )
        await telegram_api.push_message(
            "Call me Jo.", chat_id=-5, chat_type="group", user_id=43, reply_to_bot=True
        )
        await telegram_api.wait_for_sent(4)
        assert [f.text for f in await store.memory_facts("telegram:42")] == ["Name: Annie"]
        assert [f.text for f in await store.memory_facts("telegram:43")] == ["Name: Jo"]


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


async def test_angle_brackets_are_shown_not_dropped_as_html(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    # The relay's own hints name arguments in angle brackets.
    await telegram_api.push_message("/whoami")
    [whoami] = await telegram_api.wait_for_sent(1)
    assert whoami["text"].endswith("(set it with /tz <zone or city>).")
    fake_upstream.reply_content = (
        "Use Vec<u8> when a<b and c>d.\n\n<details>\nhidden\n</details>\nend"
    )
    await telegram_api.push_message("types?")
    [_, answer] = await telegram_api.wait_for_sent(2)
    assert answer["text"] == "Use Vec<u8> when a<b and c>d.\n\n<details>\nhidden\n</details>\nend"


def test_only_html_is_escaped_code_and_links_are_untouched() -> None:
    [(text, entities)] = telegram_parts("`a<b>` then <https://example.com> and <br>")
    assert text == "a<b> then https://example.com and <br>"
    assert [(e.type, e.offset, e.length) for e in entities] == [
        ("code", 0, 4),
        ("text_link", 10, 19),
    ]
    assert telegram_parts("```html\n<b>x</b>\n```")[0][0] == "<b>x</b>"


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


class TickingClock:
    """A monotonic clock that moves ``step`` seconds each time it is read; ``sleep``
    moves it instead of waiting, and remembers how long it was asked to wait."""

    def __init__(self, step: float = 0.3) -> None:
        self.now = 0.0
        self.step = step
        self.slept: list[float] = []

    def monotonic(self) -> float:
        self.now += self.step
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@asynccontextmanager
async def telegram_with_clock(
    tmp_path: Path,
    upstream: FakeUpstream,
    api: FakeTelegramApi,
    clock: TickingClock,
    **settings: Any,
) -> AsyncIterator[TelegramChannel]:
    """A started Telegram channel whose edit throttle and flood waits use ``clock``."""
    config = relay_config(tmp_path, upstream.url, channels=telegram_section(api, **settings))
    async with open_services(config) as services:
        channel = TelegramChannel(services, monotonic=clock.monotonic, sleep=clock.sleep)
        await channel.start()
        try:
            yield channel
        finally:
            await channel.stop()


async def test_the_command_menu_is_registered(
    bot: TelegramChannel, telegram_api: FakeTelegramApi
) -> None:
    commands = telegram_api.params("setMyCommands")["commands"]
    assert commands == [{"command": name, "description": text} for name, text in COMMANDS]
    assert {c["command"] for c in commands} >= {"tz", "time", "link", "whoami", "admin"}


async def test_an_unaddressed_group_message_is_recorded_not_answered(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    group = -100400
    said_at = datetime(2026, 3, 1, 11, 30, tzinfo=UTC)
    await telegram_api.push_message(
        "back from lunch", chat_id=group, chat_type="group", user_id=44, date=said_at
    )
    # A command afterwards (answered by the relay) shows the first one was handled.
    await telegram_api.push_message("/time", chat_id=group, chat_type="group", user_id=45)
    await telegram_api.wait_for_sent(1)
    store = services_of(bot).store
    key = f"agent:main:telegram:group:{group}"
    transcript = await store.transcript(key)
    assert [(m.user_key, m.text) for m in transcript[:1]] == [("telegram:44", "back from lunch")]
    thread = await store.get_thread(key)
    assert thread is not None
    assert thread.last_user_message_by_user["telegram:44"] == said_at
    user = await store.get_user("telegram:44")
    assert user is not None and user.display_name == "Ana"
    assert fake_upstream.requests == []
    assert len(telegram_api.sent()) == 1


async def test_a_place_a_member_says_between_members_shows_in_the_group_block(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    group = -100410
    said_at = datetime(2026, 3, 1, 11, 30, tzinfo=UTC)
    # Said to the others, not to the bot: recorded, not answered, and where Ana is kept.
    await telegram_api.push_message(
        "I'm in Tokyo this week", chat_id=group, chat_type="group", user_id=44, date=said_at
    )
    await telegram_api.push_message(
        "@chronorelay_bot when should we call Ana?",
        chat_id=group,
        chat_type="group",
        user_id=45,
        first_name="Bo",
        entities=[{"type": "mention", "offset": 0, "length": 16}],
    )
    await telegram_api.wait_for_sent(1)
    [asked] = fake_upstream.requests
    content = asked.body["messages"][-1]["content"]
    members = next(line for line in content.splitlines() if line.startswith("Participants'"))
    assert "Ana: Sun 21:00 (Asia/Tokyo; said they are in Tokyo)" in members


async def test_allow_lists_ignore_everyone_else(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    allowed: dict[str, Any] = {"allowed_user_ids": [42, 47], "allowed_chat_ids": [-100500]}
    async with running_telegram(tmp_path, fake_upstream, telegram_api, **allowed) as channel:
        await telegram_api.push_message("let me in", chat_id=43, user_id=43)
        await telegram_api.push_message(
            "@chronorelay_bot hi",
            chat_id=-100500,
            chat_type="supergroup",
            user_id=46,
            entities=[{"type": "mention", "offset": 0, "length": 16}],
        )
        await telegram_api.push_message("/time", chat_id=-100600, chat_type="group", user_id=42)
        await telegram_api.push_message("hi, it's me", chat_id=42, user_id=42)
        await telegram_api.push_message("/time", chat_id=-100500, chat_type="group", user_id=47)
        await telegram_api.wait_for_sent(2)
        store = services_of(channel).store
        # Ignored means not recorded either: no user, no thread.
        for outsider in ("telegram:43", "telegram:46"):
            assert await store.get_user(outsider) is None
        assert await store.get_thread("agent:main:telegram:group:-100600") is None
    assert sorted(m["chat_id"] for m in telegram_api.sent()) == [-100500, 42]
    said = [r.body["messages"][-1]["content"].split(RELAY_BLOCK)[0] for r in fake_upstream.requests]
    assert said == ["hi, it's me"]


async def test_admin_user_ids_are_chat_admins(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    async with running_telegram(tmp_path, fake_upstream, telegram_api, admin_user_ids=[42]):
        await telegram_api.push_message("/admin whois telegram:42", chat_id=42, user_id=42)
        [answer] = await telegram_api.wait_for_sent(1)
        await telegram_api.push_message("/admin whois telegram:42", chat_id=43, user_id=43)
        refused = (await telegram_api.wait_for_sent(2))[1]
    assert answer["text"].startswith("telegram:42")
    assert "Only relay admins" in refused["text"]


async def test_flood_control_is_waited_out(
    tmp_path: Path,
    fake_upstream: FakeUpstream,
    telegram_api: FakeTelegramApi,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # PTB warns that retry_after becomes a timedelta; opt in (the channel takes both).
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    clock = TickingClock()
    telegram_api.flood("sendMessage", retry_after=7)
    async with telegram_with_clock(tmp_path, fake_upstream, telegram_api, clock):
        await telegram_api.push_message("busy day")
        # The first attempt was refused with 429; the same message went again.
        refused, sent = await telegram_api.wait_for_sent(2)
    assert refused == sent and sent["text"] == "echo: busy day"
    assert 7 in clock.slept
    assert [m for m in telegram_api.methods() if m == "sendMessage"] == ["sendMessage"] * 2


async def test_a_reply_telegram_failed_to_take_is_sent_again(
    tmp_path: Path,
    fake_upstream: FakeUpstream,
    telegram_api: FakeTelegramApi,
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = TickingClock()
    telegram_api.fail("sendMessage", 502, "Bad Gateway")
    async with telegram_with_clock(tmp_path, fake_upstream, telegram_api, clock):
        await telegram_api.push_message("are you there?")
        failed, sent = await telegram_api.wait_for_sent(2)
    # Telegram's own failure showed nothing: the same reply went again after a pause.
    assert failed == sent and sent["text"] == "echo: are you there?"
    assert clock.slept == [1.0]
    assert "a reply to chat 1001 failed (Bad Gateway); trying again in 1s" in caplog.text


async def test_a_reply_the_bot_may_not_send_is_logged_and_the_chat_goes_on(
    bot: TelegramChannel,
    telegram_api: FakeTelegramApi,
    fake_upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    telegram_api.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    await telegram_api.push_message("hello?")
    await fake_upstream.wait_for_requests(1)
    await handlers_done()
    # A refusal is final: not sent again, and said in the log with the chat it was for.
    assert len(telegram_api.sent()) == 1
    assert "Telegram refused a reply to chat 1001: Forbidden: bot was blocked" in caplog.text
    transcript = await services_of(bot).store.transcript("agent:main:telegram:dm:1001")
    assert [m.text for m in transcript][:1] == ["hello?"]
    # The poller goes on: the user's next message (once unblocked) is answered.
    await telegram_api.push_message("back again")
    [*_, answer] = await telegram_api.wait_for_sent(2)
    assert answer["text"].endswith("back again")


async def test_a_reply_that_never_reached_the_user_is_not_forwarded_again(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    # The user blocked the bot, then came back: the model must not believe its answer to
    # "hello?" was read, nor must it forget the user asked.
    fake_upstream.reply_content = "The meeting moved to 3pm."
    telegram_api.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    await telegram_api.push_message("hello?")
    await fake_upstream.wait_for_requests(1)
    await handlers_done()
    fake_upstream.reply_content = "Here again."
    await telegram_api.push_message("anything new?")
    await telegram_api.wait_for_sent(2)
    forwarded = [(m["role"], m["content"]) for m in fake_upstream.last.body["messages"]]
    assert [role for role, _ in forwarded] == ["user", "user"]
    assert forwarded[0][1].startswith("hello?")
    # Kept in the transcript, which says what the relay did.
    transcript = await services_of(bot).store.transcript("agent:main:telegram:dm:1001")
    assert "The meeting moved to 3pm." in [m.text for m in transcript]


async def test_a_reply_that_never_reached_the_user_answers_no_question_of_theirs(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    # The user asked, the bot was blocked: for all the user knows the question is still
    # open, so the session's capture must keep it open, not read it as answered.
    fake_upstream.reply_content = "Yes, Friday works: the venue is free that day."
    telegram_api.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    await telegram_api.push_message("Should we move the launch to Friday?")
    await fake_upstream.wait_for_requests(1)
    await handlers_done()
    services = services_of(bot)
    thread = "agent:main:telegram:dm:1001"
    assert await services.continuity.capture_thread(thread, "manual_request") is not None
    session = await services.store.current_session(thread)
    assert session is not None
    entries = await services.store.continuity_entries(
        session.work_context_id, now=services.clock.now()
    )
    questions = [e.content["question"] for e in entries if e.entry_type == "open_question"]
    assert any("Friday" in question for question in questions), entries


async def test_a_reply_cut_off_after_its_first_part_is_still_forwarded(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    # The user read its beginning: the model must know it said that.
    fake_upstream.reply_content = "first part\n\n" + "x" * MESSAGE_LIMIT
    telegram_api.fail("sendMessage", 400, "Bad Request: chat not found", after=1)
    await telegram_api.push_message("tell me everything")
    await telegram_api.wait_for_sent(1)
    await handlers_done()
    assert len(telegram_api.sent()) == 2  # the second part was refused
    fake_upstream.reply_content = "ok"
    await telegram_api.push_message("and?")
    await fake_upstream.wait_for_requests(2)
    roles = [m["role"] for m in fake_upstream.last.body["messages"]]
    assert roles == ["user", "assistant", "user"]


@pytest.mark.parametrize(
    ("failure", "attempts"),
    [
        # Nothing left: a connection that could not be made is tried again.
        (httpx.ConnectError("[Errno 111] Connection refused"), 3),
        (httpx.PoolTimeout("all connections busy"), 3),
        # Sent, no answer in time: it may have arrived, so it is not sent twice.
        (httpx.ReadTimeout("timed out"), 1),
        (httpx.RemoteProtocolError("Server disconnected without sending a response."), 1),
    ],
)
async def test_only_a_send_that_surely_did_not_leave_is_tried_again(
    tmp_path: Path,
    fake_upstream: FakeUpstream,
    telegram_api: FakeTelegramApi,
    failure: httpx.HTTPError,
    attempts: int,
) -> None:
    clock = TickingClock()
    tried: list[int] = []

    async def request() -> int:
        # As PTB's HTTPXRequest raises them.
        tried.append(1)
        error = TimedOut() if isinstance(failure, httpx.TimeoutException) else NetworkError("x")
        raise error from failure

    async with telegram_with_clock(tmp_path, fake_upstream, telegram_api, clock) as channel:
        with pytest.raises(ChannelError, match="chat 1001"):
            await channel._call(request, "1001", retry=True)
    assert len(tried) == attempts
    assert clock.slept == [1.0, 2.0][: attempts - 1]


async def test_stream_edits_show_the_reply_while_it_is_written(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    clock = TickingClock()
    fake_upstream.event_delay = 0.002
    fake_upstream.reply_content = " ".join(f"w{i}" for i in range(60)) + " **done**"
    async with telegram_with_clock(tmp_path, fake_upstream, telegram_api, clock, stream_edits=True):
        await telegram_api.push_message("stream please")
        [first] = await telegram_api.wait_for_sent(1)
        final = " ".join(f"w{i}" for i in range(60)) + " done"
        [message] = telegram_api.texts  # (chat id, message id) of the one message
        await telegram_api.wait_until(lambda: telegram_api.texts[message] == final)
    assert fake_upstream.last.body["stream"] is True
    edits = telegram_api.edits()
    # The first message showed a beginning; every edit shows more of the same text.
    shown = [first["text"], *(e["text"] for e in edits)]
    assert shown[-1] == final
    assert all(final.startswith(text) for text in shown)
    assert len(first["text"]) < len(final) and len(edits) >= 2
    assert edits[-1]["entities"] == [{"type": "bold", "offset": len(final) - 4, "length": 4}]
    assert all(e["message_id"] == edits[0]["message_id"] for e in edits)
    # Edits were throttled: the final one waited out the rest of the interval.
    assert all(0 < wait <= 1.0 for wait in clock.slept)
    assert len(telegram_api.sent()) == 1


async def test_stream_edits_split_a_long_final_reply(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    clock = TickingClock()
    lines = [f"line {i:03d} " + "x" * 90 for i in range(100)]  # about 10,000 characters
    fake_upstream.reply_content = "\n".join(lines)
    async with telegram_with_clock(tmp_path, fake_upstream, telegram_api, clock, stream_edits=True):
        await telegram_api.push_message("a long one")
        await telegram_api.wait_for_sent(3)
    messages = [text for _, text in sorted(telegram_api.texts.items())]
    assert len(messages) == 3
    assert all(len(text) <= MESSAGE_LIMIT for text in messages)
    assert "\n".join(messages).split("\n") == lines


async def test_a_reply_whose_formatting_is_refused_is_sent_as_plain_text(
    bot: TelegramChannel,
    telegram_api: FakeTelegramApi,
    fake_upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_upstream.reply_content = "**Note:** the `gym` closes at 9"
    telegram_api.refuse_entities()
    await telegram_api.push_message("when does it close?")
    refused, plain = await telegram_api.wait_for_sent(2)
    # The same text went again, without the formatting Telegram could not apply.
    assert refused["text"] == plain["text"] == "Note: the gym closes at 9"
    assert refused["entities"] and not plain.get("entities")
    assert "sent as plain text" in caplog.text and "parse entities" in caplog.text
    # The next reply is formatted again.
    await telegram_api.push_message("thanks")
    [*_, next_reply] = await telegram_api.wait_for_sent(3)
    assert next_reply["entities"]


async def test_a_streamed_reply_whose_formatting_is_refused_ends_as_plain_text(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    clock = TickingClock()
    fake_upstream.reply_content = "see you at **nine**"
    telegram_api.refuse_entities("editMessageText", times=10)
    telegram_api.refuse_entities("sendMessage", times=10)
    async with telegram_with_clock(tmp_path, fake_upstream, telegram_api, clock, stream_edits=True):
        await telegram_api.push_message("when?")
        await telegram_api.wait_until(lambda: "see you at nine" in telegram_api.texts.values())
    final = telegram_api.edits()[-1] if telegram_api.edits() else telegram_api.sent()[-1]
    assert final["text"] == "see you at nine" and not final.get("entities")


async def test_two_members_with_one_name_are_told_apart(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    """Two "Alex"es in a group: the block and /time name each with their account, so one
    Alex's clock is never read as the other's."""
    group = -100420
    alex = {"chat_id": group, "chat_type": "supergroup", "first_name": "Alex"}
    await telegram_api.push_message("/tz Asia/Tokyo", user_id=51, **alex)
    await telegram_api.push_message("/tz America/New_York", user_id=52, **alex)
    await telegram_api.push_message(
        "@chronorelay_bot when do we meet?", user_id=51, entities=MENTION, **alex
    )
    await telegram_api.push_message("/time", user_id=52, **alex)
    *_, told = await telegram_api.wait_for_sent(4)
    content = fake_upstream.requests[-1].body["messages"][-1]["content"]
    assert "Speaker: Alex (telegram:51)." in content
    members = next(line for line in content.splitlines() if line.startswith("Participants'"))
    assert "Alex (telegram:51): Sun 21:00 (Asia/Tokyo)" in members
    assert "Alex (telegram:52): Sun 07:00 (America/New_York)" in members
    assert told["text"].splitlines()[1].startswith("Alex (telegram:51): Sun 1 Mar 2026 21:00")


async def test_a_forwarded_message_teaches_nothing_about_the_user(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    # Bo's words, forwarded by Ana to ask about them: Bo is vegan, works at Google, will
    # call the bank, is in Tokyo, decided on Postgres and must write the migration.
    turns: list[Turn] = []
    bo = (
        "I'm vegan and I work at Google. I'll call the bank tomorrow at 9. I'm in Tokyo "
        "this week. We decided to go with Postgres. I still need to write the migration."
    )
    async with running_telegram(
        tmp_path, fake_upstream, telegram_api, wrap=watching(turns)
    ) as channel:
        store = services_of(channel).store
        await telegram_api.push_message(bo, forwarded_from="Bo")
        await telegram_api.push_message("/capture")
        await telegram_api.push_message("/recap")
        *_, recap = await telegram_api.wait_for_sent(3)
        assert await store.memory_facts("telegram:42") == []
        data = await store.get_clock_data("telegram:42")
        assert data is None or (data.latest_actions == [] and data.located is None)
        # Bo's "tomorrow at 9" is in a zone the relay does not know: not read as Ana's.
        assert turns[0].time_expressions == ()
        assert "Postgres" not in recap["text"] and "migration" not in recap["text"]
        # The model, and the transcript it is given later, have Bo's words whole.
        assert (
            fake_upstream.requests[0]
            .body["messages"][-1]["content"]
            .startswith(f"[forwarded from Bo] {bo}")
        )
        [said, *_] = await store.transcript(turns[0].thread_key)
        assert said.text == f"[forwarded from Bo] {bo}"


def watching(turns: list[Turn]) -> Callable[[Handler], Handler]:
    """A pipeline wrapper noting each turn that goes through it (to read what the stages
    set on it once it went through)."""

    def wrap(pipeline: Handler) -> Handler:
        async def watched(turn: Turn) -> Reply:
            turns.append(turn)
            return await pipeline(turn)

        return watched

    return wrap


async def test_only_the_words_after_a_reply_quote_are_the_users(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    turns: list[Turn] = []
    async with running_telegram(
        tmp_path, fake_upstream, telegram_api, wrap=watching(turns)
    ) as channel:
        store = services_of(channel).store
        # In her DM Ana plans a call, forwards Bo's message, then answers it.
        await telegram_api.push_message("I'll call the bank")
        bo = await telegram_api.push_message(
            "I'm vegan and I live in Madrid. I called the bank, heading to the gym at 9",
            forwarded_from="Bo",
        )
        await telegram_api.push_message("same here haha", replying_to=bo)
        await telegram_api.wait_for_sent(3)
        assert await store.memory_facts("telegram:42") == []
        assert turns[2].time_expressions == ()
        await telegram_api.push_message("I'm vegan too", replying_to=bo)
        await telegram_api.wait_for_sent(4)
        assert [f.text for f in await store.memory_facts("telegram:42")] == ["Is vegan"]
        data = await store.get_clock_data("telegram:42")
        # Bo's call is done, not hers; his gym is not hers.
        assert data is not None
        assert [(a["label"], a["status"]) for a in data.latest_actions] == [
            ("Call the bank", "planned")
        ]

        # In a group Cy replies to Bo's plan: his own request is kept, Bo's plan is not his.
        group: dict[str, Any] = {"chat_id": -100400, "chat_type": "supergroup"}
        plan = await telegram_api.push_message(
            "heading to the gym", user_id=43, first_name="Bo", **group
        )
        await telegram_api.push_message(
            "@chronorelay_bot remember that I'm allergic to nuts",
            replying_to=plan,
            user_id=44,
            first_name="Cy",
            entities=MENTION,
            **group,
        )
        # Said to the room, Bo's whereabouts forwarded by Cy are not Cy's.
        await telegram_api.push_message(
            "I'm in Tokyo this week", forwarded_from="Bo", user_id=44, first_name="Cy", **group
        )
        await telegram_api.wait_for_sent(5)
        await handlers_done()
        assert [f.text for f in await store.memory_facts("telegram:44")] == ["Is allergic to nuts"]
        data = await store.get_clock_data("telegram:44")
        assert data is None or (data.latest_actions == [] and data.located is None)
        # The model reads whose words are whose.
        said = [
            r.body["messages"][-1]["content"].split(RELAY_BLOCK)[0] for r in fake_upstream.requests
        ]
        assert said[2] == (
            "[replying to Bo: \"I'm vegan and I live in Madrid. I called the bank, heading to "
            'the gym at 9"] same here haha'
        )
        assert said[4] == (
            '[Cy] [replying to Bo: "heading to the gym"] remember that I\'m allergic to nuts'
        )


async def test_a_forwarded_correction_does_not_change_the_users_decision(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    await telegram_api.push_message(
        "We should move the billing service to Postgres. I still need to write the "
        "migration. Actually, our docs site goes on Sphinx.",
        forwarded_from="Bo",
    )
    await telegram_api.push_message("Let's go with MkDocs for our docs site.")
    await telegram_api.push_message("/capture")
    await telegram_api.push_message("/recap")
    *_, captured, recap = await telegram_api.wait_for_sent(4)
    # The session was on what Ana said, in her two messages; Bo's "actually" corrects
    # nothing of hers.
    assert "Summary: On “Let's go with MkDocs for our docs site.” (2 messages)" in captured["text"]
    assert "Decided: go with MkDocs for our docs site" in recap["text"]
    assert "Sphinx" not in captured["text"] + recap["text"]
    assert "migration" not in recap["text"]


async def test_a_german_telegram_user_gets_dates_in_german(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.reply_content = "Bis <time 2026-11-22T15:00:00Z>!"
    await telegram_api.push_message("wann?", user_id=42, language_code="de")
    [sent] = await telegram_api.wait_for_sent(1)
    assert sent["text"] == "Bis So., 22. Nov., 15:00 UTC!"


async def test_a_language_the_user_chose_wins_over_their_apps(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.reply_content = "See you <time 2026-11-22T15:00:00Z>."
    await telegram_api.push_message("/lang fr", user_id=42, language_code="de")
    [chosen] = await telegram_api.wait_for_sent(1)
    assert chosen["text"].startswith(
        "Dates are now written for you in French — français (fr), as in"
    )
    await telegram_api.push_message("when?", user_id=42, language_code="de")
    [_, french] = await telegram_api.wait_for_sent(2)
    assert french["text"] == "See you dim. 22 nov., 15:00 UTC."
    # Back to what the app says.
    await telegram_api.push_message("/lang auto", user_id=42, language_code="de")
    await telegram_api.push_message("and now?", user_id=42, language_code="de")
    [*_, german] = await telegram_api.wait_for_sent(4)
    assert german["text"] == "See you So., 22. Nov., 15:00 UTC."


async def test_a_language_code_nothing_knows_is_ignored(
    bot: TelegramChannel, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    fake_upstream.reply_content = "See you <time 2026-11-22T15:00:00Z>."
    await telegram_api.push_message("when?", user_id=42, language_code="pt-br")
    await telegram_api.push_message("and?", user_id=42, language_code="zz-nope")
    [first, second] = await telegram_api.wait_for_sent(2)
    # The Brazilian app's language stays: an unknown code neither fails nor clears it.
    assert first["text"] == second["text"] == "See you dom., 22 de nov. 15:00 UTC."
    await telegram_api.push_message("/lang klingon", user_id=42)
    [*_, refused] = await telegram_api.wait_for_sent(3)
    assert refused["text"] == (
        "I don't know the language 'klingon'. Send a language code, e.g. /lang de, /lang fr "
        "or /lang pt-BR."
    )
