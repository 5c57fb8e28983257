"""The Discord adapter against a fake Discord API and gateway on loopback."""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace

import pytest

from channels.base import ATTACHED, EDIT_NOT_READ, TEXT_ONLY
from channels.discord import MESSAGE_LIMIT, discord_parts, readable_markup, readable_mentions
from middleware.commands.catalog import COMMANDS
from middleware.errors import ConfigError
from middleware.pipeline import Handler
from middleware.types import Reply, Turn
from tests.channels.support import handlers_done, running_discord, services_of
from tests.fakes.discord_api import (
    BOT,
    BOT_ID,
    FakeDiscordApi,
    message_payload,
    role_payload,
    user_payload,
)
from tests.fakes.upstream import RELAY_BLOCK, FakeUpstream

GUILD = 9000
CHANNEL = 4242


async def test_dm_is_answered_without_a_reply_reference(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=42)
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"] == "echo: hi"
    assert sent["channel_id"] == CHANNEL
    assert "message_reference" not in sent
    assert sent["allowed_mentions"]["parse"] == []


@pytest.mark.parametrize(
    ("locale", "shown"), [("de_DE", "So., 22. Nov. 2099"), ("en_US", "Sun, Nov 22, 2099")]
)
async def test_a_date_only_markup_is_written_in_the_users_locale(
    tmp_path: Path,
    fake_upstream: FakeUpstream,
    discord_api: FakeDiscordApi,
    locale: str,
    shown: str,
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=42)
        await discord_api.wait_for_sent(1)
    # Nothing a Discord message carries says the user's language: the store is told.
    with closing(sqlite3.connect(tmp_path / "relay.sqlite3")) as db, db:
        changed = db.execute("UPDATE users SET locale = ? WHERE user_key = 'discord:42'", [locale])
        assert changed.rowcount == 1
    # A year far off, so it is shown whatever year the test runs in.
    fake_upstream.reply_content = "The fair opens <time 2099-11-22>."
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message("when does the fair open?", channel_id=CHANNEL, user_id=42)
        [_, sent] = await discord_api.wait_for_sent(2)
    assert sent["content"] == f"The fair opens {shown}."


async def test_guild_message_needs_a_mention_and_gets_a_reply(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            "just chatting", channel_id=CHANNEL, user_id=42, guild_id=GUILD
        )
        message_id = await discord_api.push_message(
            f"<@{BOT_ID}> hello", channel_id=CHANNEL, user_id=42, guild_id=GUILD, mentions=[BOT]
        )
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"] == "echo: [Ada] hello"  # groups name the speaker
    assert int(sent["message_reference"]["message_id"]) == message_id
    assert len(fake_upstream.requests) == 1


async def test_mentions_reach_the_model_by_name_and_the_reply_pings_nobody(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    fake_upstream.reply_content = "Sure <@43>, and @everyone in <@&66>: <@!44>"
    bo, cy = user_payload(43, "bo"), user_payload(44, "cy")
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            f"<@{BOT_ID}> ask <@43> and <@!44> about <#5555>, <@&66> or <@99>",
            channel_id=CHANNEL,
            user_id=42,
            guild_id=GUILD,
            mentions=[BOT, bo, cy],
        )
        [sent] = await discord_api.wait_for_sent(1)
    said = fake_upstream.last.body["messages"][-1]["content"].split(RELAY_BLOCK)[0]
    # Users Discord resolved are named; what it did not resolve is left as written.
    assert said == "[Ada] ask @Bo and @Cy about <#5555>, <@&66> or <@99>"
    # The model's text goes out as written, but may ping no one, not even the asker.
    assert sent["content"] == fake_upstream.reply_content
    assert sent["allowed_mentions"] == {"parse": [], "replied_user": False}
    assert sent["message_reference"]


async def test_the_bots_own_role_addresses_it_and_other_roles_do_not(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    # The role Discord made for this bot, another bot's, and an ordinary one.
    own, others, mods = 1_100_000_000_000_001, 1_100_000_000_000_002, 1_100_000_000_000_003
    roles = [
        role_payload(own, "Chronorelay", bot_id=BOT_ID),
        role_payload(others, "Dicebot", bot_id=BOT_ID + 1),
        role_payload(mods, "mods"),
    ]
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_guild(GUILD, roles)
        for role in (others, mods):
            await discord_api.push_message(
                f"<@&{role}> anyone?",
                channel_id=CHANNEL,
                user_id=42,
                guild_id=GUILD,
                mention_roles=[role],
            )
        message_id = await discord_api.push_message(
            f"<@&{own}> what about <@&{own}> and <@&{mods}>?",
            channel_id=CHANNEL,
            user_id=42,
            guild_id=GUILD,
            mention_roles=[own, mods],
        )
        [sent] = await discord_api.wait_for_sent(1)
    # Answered like a mention of the bot itself: the leading one dropped, the rest named
    # as the bot, as its user mention would be.
    assert int(sent["message_reference"]["message_id"]) == message_id
    said = fake_upstream.last.body["messages"][-1]["content"].split(RELAY_BLOCK)[0]
    assert said == "[Ada] what about @chronorelay and @mods?"
    assert len(fake_upstream.requests) == 1 and len(discord_api.sent()) == 1


def test_readable_mentions_name_users_roles_and_channels() -> None:
    text = "<@1> <@!1> <@&2> <#3> <@4> <#5> @everyone"
    named = readable_mentions(text, users={1: "Ada"}, roles={2: "mods"}, channels={3: "general"})
    assert named == "@Ada @Ada @mods #general <@4> <#5> @everyone"


async def test_timestamps_reach_the_model_as_utc_instants_and_emoji_by_name(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    # Discord shows each reader <t:…> in their own zone ("R": "in 3 years"); the model
    # must see the instant itself, and the clock read it as that instant, not in the
    # speaker's zone.
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message("/tz Europe/Berlin", channel_id=CHANNEL, user_id=42)
        await discord_api.wait_for_sent(1)
        await discord_api.push_message(
            "launch <t:1900000000:F> (<t:1900000000:R>), party <t:1900003600> "
            "<:blob_wave:1234567> <a:party_parrot:7654321>",
            channel_id=CHANNEL,
            user_id=42,
        )
        await discord_api.wait_for_sent(2)
    said, block = fake_upstream.last.body["messages"][-1]["content"].split(RELAY_BLOCK)
    assert said == (
        "launch 2030-03-17 17:46:40 UTC (2030-03-17 17:46:40 UTC), party "
        "2030-03-17 18:46:40 UTC :blob_wave: :party_parrot:"
    )
    assert '"2030-03-17 18:46:40 UTC" = 2030-03-17T18:46:40+00:00 (UTC)' in block


async def test_slash_command_mentions_reach_the_model_as_the_command(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    # Discord shows </name:id> as a clickable "/name"; the model must read the same.
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            "try </tz:1200000000000000001> or </remind set:1200000000000000002>, "
            "then </settings zone clear:1200000000000000003>",
            channel_id=CHANNEL,
            user_id=42,
        )
        await discord_api.wait_for_sent(1)
    said = fake_upstream.last.body["messages"][-1]["content"].split(RELAY_BLOCK)[0]
    assert said == "try /tz or /remind set, then /settings zone clear"


def test_command_mention_lookalikes_stay_as_written() -> None:
    odd = "</tz> </tz:abc> </:1> a</b> </one two three four:1>"
    assert readable_markup(odd) == odd


def test_malformed_timestamps_stay_as_written() -> None:
    assert readable_markup("<t:1790000040:d> <t:-1:T>") == (
        "2026-09-21 14:14 UTC 1969-12-31 23:59:59 UTC"
    )
    # Not seconds, a year past 9999, a style Discord does not know, an emoji without id.
    odd = "<t:abc> <t:99999999999999999:R> <t:253402300800> <t:1790000000:X> <:blob:>"
    assert readable_markup(odd) == odd


async def test_a_slash_that_is_no_relay_command_is_not_for_the_bot(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        for text in ("/r/python is great", "/roll 2d6"):
            await discord_api.push_message(text, channel_id=CHANNEL, user_id=42, guild_id=GUILD)
        await discord_api.push_message("/time", channel_id=CHANNEL, user_id=42, guild_id=GUILD)
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"].startswith("It's ")
    assert fake_upstream.requests == []
    assert len(discord_api.sent()) == 1


async def test_an_unaddressed_guild_message_is_recorded_not_answered(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api) as channel:
        await discord_api.push_message(
            "back from lunch", channel_id=CHANNEL, user_id=44, guild_id=GUILD
        )
        # A mention afterwards (answered in order) shows the first one was handled.
        await discord_api.push_message(
            f"<@{BOT_ID}> hello", channel_id=CHANNEL, user_id=42, guild_id=GUILD, mentions=[BOT]
        )
        await discord_api.wait_for_sent(1)
        store = services_of(channel).store
        key = f"agent:main:discord:group:{CHANNEL}"
        transcript = await store.transcript(key)
        thread = await store.get_thread(key)
    assert (transcript[0].user_key, transcript[0].text) == ("discord:44", "back from lunch")
    assert thread is not None and "discord:44" in thread.last_user_message_by_user
    # Only the mention went upstream, with the earlier message as named history.
    [request] = fake_upstream.requests
    assert [m["content"] for m in request.body["messages"]][0] == "[Ada] back from lunch"


async def test_files_are_not_passed_on_and_without_text_the_sender_is_told(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api) as bot:
        await discord_api.push_message("", channel_id=CHANNEL, user_id=42, files=["cat.png"])
        [told] = await discord_api.wait_for_sent(1)
        await discord_api.push_message(
            "what is this?", channel_id=CHANNEL, user_id=42, files=["cat.png"]
        )
        [_, asked] = await discord_api.wait_for_sent(2)
        # In a server a bare file is for the bot only when it replies to it.
        bots = message_payload(asked["id"], asked["content"], channel_id=7, author=BOT)
        await discord_api.push_message("", channel_id=7, user_id=42, guild_id=GUILD, files=["a"])
        await discord_api.push_message(
            "", channel_id=7, user_id=42, guild_id=GUILD, files=["b"], replying_to=bots
        )
        [*_, in_server] = await discord_api.wait_for_sent(3)
        store = services_of(bot).store
        dm = await store.transcript(f"agent:main:discord:dm:{CHANNEL}")
        server = await store.transcript("agent:main:discord:group:7")
    assert told["content"] == TEXT_ONLY and "message_reference" not in told
    assert asked["content"] == f"echo: {ATTACHED} what is this?"
    assert in_server["content"] == TEXT_ONLY and in_server["message_reference"]
    assert len(discord_api.sent()) == 3 and len(fake_upstream.requests) == 1
    # Each bare file was recorded for the clock, the server's unanswered one too.
    # The relay's answers are the bot's messages, after the files they answer.
    assert [m.text for m in dm[:2]] == ["[photo, not passed on]", TEXT_ONLY]
    assert [(m.role, m.text) for m in server] == [
        ("user", "[file, not passed on]"),
        ("user", "[file, not passed on]"),
        ("assistant", TEXT_ONLY),
    ]


async def test_a_poll_and_a_sticker_alone_reach_the_model_in_words(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    poll = {
        "question": {"text": "Pizza tonight?"},
        "answers": [
            {"answer_id": 1, "poll_media": {"text": "yes"}},
            {"answer_id": 2, "poll_media": {"text": "no"}},
        ],
        "expiry": "2030-01-01T00:00:00+00:00",
        "allow_multiselect": False,
        "layout_type": 1,
    }
    sticker = {"id": "1300000000000000001", "name": "Wave", "format_type": 1}
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message("", channel_id=CHANNEL, user_id=42, fields={"poll": poll})
        await discord_api.push_message(
            "", channel_id=CHANNEL, user_id=42, fields={"sticker_items": [sticker]}
        )
        await discord_api.wait_for_sent(2)
    said = [r.body["messages"][-1]["content"].split(RELAY_BLOCK)[0] for r in fake_upstream.requests]
    assert said == ['[shared a poll: "Pizza tonight?" — yes / no]', "[sticker: Wave]"]


async def test_system_messages_are_nobodys_words(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api, group_policy="all") as bot:
        # Discord announces a new thread in its channel, with the thread's name as content.
        await discord_api.push_message(
            "planning", channel_id=CHANNEL, user_id=42, guild_id=GUILD, message_type=18
        )
        await discord_api.push_message("hello", channel_id=CHANNEL, user_id=42, guild_id=GUILD)
        [sent] = await discord_api.wait_for_sent(1)
        transcript = await services_of(bot).store.transcript(f"agent:main:discord:group:{CHANNEL}")
    assert sent["content"] == "echo: [Ada] hello"
    assert [m.text for m in transcript if m.role == "user"] == ["hello"]
    assert len(fake_upstream.requests) == 1


async def test_rate_limited_replies_are_sent_once_the_limit_passes(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    discord_api.flood(retry_after=0.05, times=2)
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=42)
        [sent] = await discord_api.wait_for_sent(1)
    # discord.py waited out both 429s; the reply went once it was allowed.
    assert sent["content"] == "echo: hi" and discord_api.refused_posts == 2


async def test_an_unreachable_llm_is_a_short_message_without_its_address(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api) as channel:
        await fake_upstream.stop()
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=42)
        [sent] = await discord_api.wait_for_sent(1, within=10)
        transcript = await services_of(channel).store.transcript(f"agent:main:discord:dm:{CHANNEL}")
    assert sent["content"] == (
        "[no answer: the LLM could not be reached — try again in a moment, and tell the "
        "relay's operator if it keeps happening]"
    )
    assert transcript[0].text == "hi"  # the user's message is kept for the clock


async def test_without_read_message_history_the_answer_goes_out_unquoted(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    discord_api.cannot_read_history.add(CHANNEL)
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            f"<@{BOT_ID}> hello", channel_id=CHANNEL, user_id=42, guild_id=GUILD, mentions=[BOT]
        )
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"] == "echo: [Ada] hello" and "message_reference" not in sent


async def test_a_channel_the_bot_may_not_write_in_is_logged_with_what_to_do(
    tmp_path: Path,
    fake_upstream: FakeUpstream,
    discord_api: FakeDiscordApi,
    caplog: pytest.LogCaptureFixture,
) -> None:
    discord_api.cannot_send.add(CHANNEL)
    caplog.set_level(logging.ERROR, logger="channels.discord")
    async with running_discord(tmp_path, fake_upstream, discord_api) as channel:
        await discord_api.push_message(
            f"<@{BOT_ID}> hello", channel_id=CHANNEL, user_id=42, guild_id=GUILD, mentions=[BOT]
        )
        # The bot goes on answering elsewhere.
        await discord_api.push_message("hi", channel_id=7, user_id=42)
        [sent] = await discord_api.wait_for_sent(1)
        await handlers_done()
        transcript = await services_of(channel).store.transcript(
            f"agent:main:discord:group:{CHANNEL}"
        )
    assert sent["channel_id"] == 7
    [error] = [r.getMessage() for r in caplog.records if r.name == "channels.discord"]
    assert "Missing Permissions" in error and 'give the bot "Send Messages" there' in error
    assert transcript[0].text == "hello"  # the message still counts for the clock


async def test_a_reply_that_never_reached_the_channel_is_not_forwarded_again(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    # Missing Permissions, then the permission given: the model must not believe its
    # first answer was read, nor must it forget it was asked.
    discord_api.cannot_send.add(CHANNEL)
    fake_upstream.reply_content = "The meeting moved to 3pm."
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            f"<@{BOT_ID}> hello?", channel_id=CHANNEL, user_id=42, guild_id=GUILD, mentions=[BOT]
        )
        await fake_upstream.wait_for_requests(1)
        await handlers_done()
        discord_api.cannot_send.clear()
        fake_upstream.reply_content = "Here again."
        await discord_api.push_message(
            f"<@{BOT_ID}> anything new?",
            channel_id=CHANNEL,
            user_id=42,
            guild_id=GUILD,
            mentions=[BOT],
        )
        await discord_api.wait_for_sent(1)
    forwarded = [(m["role"], m["content"]) for m in fake_upstream.last.body["messages"]]
    assert [role for role, _ in forwarded] == ["user", "user"]
    assert forwarded[0][1].startswith("[Ada] hello?")


@pytest.mark.parametrize("member_events", [False, True])
async def test_a_new_display_name_reaches_the_relay_in_dms(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi, member_events: bool
) -> None:
    """A DM carries no member, and nothing updates a User discord.py kept: each DM's
    author must be read afresh, with or without the members intent."""
    names: list[str | None] = []

    def watch(handler: Handler) -> Handler:
        async def watched(turn: Turn) -> Reply:
            names.append(turn.display_name)
            return await handler(turn)

        return watched

    async with running_discord(
        tmp_path, fake_upstream, discord_api, wrap=watch, member_events=member_events
    ):
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=42)
        await discord_api.wait_for_sent(1)
        renamed = {**user_payload(42), "global_name": "Annie"}
        await discord_api.push_message("hi again", channel_id=CHANNEL, user_id=42, author=renamed)
        await discord_api.wait_for_sent(2)
    assert names == ["Ada", "Annie"]


async def test_bots_are_ignored(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            "beep", channel_id=CHANNEL, user_id=5, author=user_payload(5, "other", bot=True)
        )
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=42)
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"] == "echo: hi"


async def test_rejected_token_is_a_config_error(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    discord_api.token = "another-token"
    with pytest.raises(ConfigError, match="bot_token was rejected"):
        async with running_discord(tmp_path, fake_upstream, discord_api):
            pass


async def test_a_privileged_intent_turned_off_is_named_at_start(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    discord_api.refuse_identify = 4014  # Discord's "Disallowed intent(s)" close code
    with pytest.raises(ConfigError, match='turn on "Message Content Intent" for the bot'):
        async with running_discord(tmp_path, fake_upstream, discord_api):
            pass


async def test_a_session_refused_while_running_is_logged_with_what_to_do(
    tmp_path: Path,
    fake_upstream: FakeUpstream,
    discord_api: FakeDiscordApi,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api) as channel:
        # A dropped connection is resumed, and messages are answered again.
        await discord_api.close_gateway(4000)
        await discord_api.wait_for_connections(2)
        await discord_api.push_message("still there?", channel_id=CHANNEL, user_id=42)
        [answered] = await discord_api.wait_for_sent(1)
        # The operator turns the Message Content intent off: Discord ends the session.
        discord_api.refuse_identify = 4014
        with caplog.at_level(logging.ERROR, logger="channels.discord"):
            await discord_api.close_gateway(4014)
            assert channel._task is not None
            await asyncio.wait({channel._task}, timeout=5)
    assert answered["content"] == "echo: still there?"
    [error] = [r.getMessage() for r in caplog.records if r.name == "channels.discord"]
    assert "no longer receives messages" in error
    assert 'turn on "Message Content Intent"' in error and "restart the relay" in error


def test_parts_split_on_lines_within_the_limit() -> None:
    lines = [f"{i:04d} " + "y" * 95 for i in range(60)]
    parts = discord_parts("\n".join(lines))
    assert len(parts) > 1
    assert all(len(part) <= MESSAGE_LIMIT for part in parts)
    assert "\n".join(parts).split("\n") == lines


def test_a_long_paragraph_is_split_between_words() -> None:
    # Models write paragraphs of several thousand characters without a line break.
    text = " ".join(f"word{i}" for i in range(900))
    parts = discord_parts(text)
    assert len(parts) == 4 and all(len(part) <= MESSAGE_LIMIT for part in parts)
    assert " ".join(parts) == text  # nothing lost, in order, no word cut in two
    assert all(part.split(" ")[-1].startswith("word") for part in parts)


def test_an_overlong_line_is_cut() -> None:
    parts = discord_parts("z" * 4500)
    assert [len(p) for p in parts] == [2000, 2000, 500]
    assert discord_parts("  \n\n ") == []


async def test_slash_commands_are_synced_at_start(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        pass
    synced = {command["name"]: command for command in discord_api.commands}
    assert list(synced) == [name for name, _ in COMMANDS]
    tz = synced["tz"]
    assert tz["description"] == dict(COMMANDS)["tz"]
    [option] = tz["options"]
    assert (option["name"], option["type"], option.get("required", False)) == ("text", 3, False)


async def test_a_slash_command_runs_like_the_typed_one(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api) as channel:
        await discord_api.push_interaction(
            "tz", "Europe/Paris", channel_id=CHANNEL, user_id=42, guild_id=GUILD
        )
        [answer] = await discord_api.wait_for_sent(1)
        await discord_api.push_message("/tz", channel_id=CHANNEL, user_id=42, guild_id=GUILD)
        [_, typed] = await discord_api.wait_for_sent(2)
        transcript = await channel._services.store.transcript(
            f"agent:main:discord:group:{CHANNEL}", 10
        )
    # Acknowledged at once ("thinking…"), answered as the follow-up.
    assert [callback["type"] for callback in discord_api.callbacks] == [5]
    assert answer["interaction"] and answer["allowed_mentions"]["parse"] == []
    assert answer["content"].startswith("Your timezone is now Europe/Paris.")
    # The typed command sees what the slash command set: same user, same store.
    assert typed["content"].startswith("Your timezone is Europe/Paris.")
    assert [m.text for m in transcript if m.role == "user"] == ["/tz Europe/Paris", "/tz"]
    assert fake_upstream.requests == []


async def test_a_slash_command_in_a_dm(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_interaction("whoami", channel_id=CHANNEL, user_id=42)
        [answer] = await discord_api.wait_for_sent(1)
    assert answer["content"].startswith("You are discord:42 (Ada).")


async def test_allow_lists_refuse_other_users_and_channels(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    lists = {"allowed_user_ids": [42, 43], "allowed_channel_ids": [CHANNEL]}
    async with running_discord(tmp_path, fake_upstream, discord_api, **lists):
        await discord_api.push_message("hi", channel_id=CHANNEL, user_id=99)  # user not listed
        await discord_api.push_message("/time", channel_id=7, user_id=42, guild_id=GUILD)
        await discord_api.push_interaction("time", channel_id=7, user_id=43, guild_id=GUILD)
        await discord_api.push_message("/time", channel_id=CHANNEL, user_id=42, guild_id=GUILD)
        [sent] = await discord_api.wait_for_sent(1)
        await discord_api.push_message("hello", channel_id=55, user_id=43)  # a DM: no list
        [_, dm] = await discord_api.wait_for_sent(2)
        [refusal] = await discord_api.wait_for_callbacks(1)
    assert sent["channel_id"] == CHANNEL and sent["content"].startswith("It's ")
    assert dm["channel_id"] == 55 and dm["content"] == "echo: hello"
    # The refused slash command is told so, privately (flags 64: ephemeral).
    assert refusal["type"] == 4 and refusal["data"]["flags"] == 64
    assert "allow-lists" in refusal["data"]["content"]
    assert len(fake_upstream.requests) == 1


def test_a_thread_counts_as_its_parent_channel() -> None:
    from channels.discord import DiscordChannel
    from tests.channels.support import discord_settings

    channel = DiscordChannel.__new__(DiscordChannel)
    channel._settings = discord_settings(allowed_channel_ids=[CHANNEL])
    assert channel._allowed(1, SimpleNamespace(id=5, parent_id=CHANNEL), True)
    assert not channel._allowed(1, SimpleNamespace(id=5, parent_id=6), True)
    assert channel._allowed(1, SimpleNamespace(id=5), False)  # DMs: users only


async def test_discord_admins_may_use_admin_commands(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api, admin_user_ids=[42]):
        await discord_api.push_message("/admin whois discord:43", channel_id=1, user_id=43)
        await discord_api.wait_for_sent(1)
        await discord_api.push_message("/admin whois discord:43", channel_id=2, user_id=42)
        [refused, answered] = await discord_api.wait_for_sent(2)
    assert refused["content"].startswith("Only relay admins")
    assert answered["content"].startswith("discord:43 (Ada)")


async def test_group_policy_all_answers_every_server_message(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api, group_policy="all"):
        await discord_api.push_message(
            "just chatting", channel_id=CHANNEL, user_id=42, guild_id=GUILD
        )
        [sent] = await discord_api.wait_for_sent(1)
    assert sent["content"] == "echo: [Ada] just chatting"


async def test_a_reply_to_the_bot_is_answered(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            f"<@{BOT_ID}> hello", channel_id=CHANNEL, user_id=42, guild_id=GUILD, mentions=[BOT]
        )
        [first] = await discord_api.wait_for_sent(1)
        bots = message_payload(first["id"], first["content"], channel_id=CHANNEL, author=BOT)
        other = message_payload(1, "someone else", channel_id=CHANNEL, author=user_payload(7))
        await discord_api.push_message(
            "not to the bot", channel_id=CHANNEL, user_id=42, guild_id=GUILD, replying_to=other
        )
        await discord_api.push_message(
            "and then?", channel_id=CHANNEL, user_id=42, guild_id=GUILD, replying_to=bots
        )
        [_, second] = await discord_api.wait_for_sent(2)
    assert second["content"] == "echo: [Ada] and then?"
    assert len(fake_upstream.requests) == 2


async def test_a_reply_to_someone_quotes_what_it_replies_to_and_a_forward_is_read(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    bo = user_payload(43, "bo")
    plan = message_payload(
        7, "Dinner at <t:1790000000:t>,\nask <@44>", channel_id=CHANNEL, author=bo,
        mentions=[user_payload(44, "cy")],
    )  # fmt: skip
    snapshot = {
        "message": {
            "type": 0, "content": "/tz Asia/Tokyo, says Bo", "embeds": [], "attachments": [],
            "timestamp": "2026-09-21T10:00:00+00:00", "edited_timestamp": None,
        }
    }  # fmt: skip
    forward = {
        "message_reference": {"type": 1, "channel_id": "77", "message_id": "78"},
        "message_snapshots": [snapshot],
    }
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message(
            f"<@{BOT_ID}> is that too late?",
            channel_id=CHANNEL,
            user_id=42,
            guild_id=GUILD,
            mentions=[BOT],
            replying_to=plan,
        )
        await discord_api.wait_for_sent(1)
        # A command replying to someone still runs: it must stay first.
        await discord_api.push_message(
            "/time", channel_id=CHANNEL, user_id=42, guild_id=GUILD, replying_to=plan
        )
        await discord_api.wait_for_sent(2)
        # A forward: Discord sends the words as a snapshot, without its author.
        await discord_api.push_message("", channel_id=5, user_id=42, fields=forward)
        await discord_api.wait_for_sent(3)
    said = [r.body["messages"][-1]["content"].split(RELAY_BLOCK)[0] for r in fake_upstream.requests]
    assert said == [
        '[Ada] [replying to Bo: "Dinner at 2026-09-21 14:13:20 UTC, ask @Cy"] is that too late?',
        "[forwarded] /tz Asia/Tokyo, says Bo",
    ]
    assert discord_api.sent()[1]["content"].startswith("It's ")


async def test_an_edit_of_a_message_for_the_bot_is_told_it_was_not_read(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    async with running_discord(tmp_path, fake_upstream, discord_api):
        at_bot = {"channel_id": CHANNEL, "user_id": 42, "guild_id": GUILD, "mentions": [BOT]}
        first = await discord_api.push_message(f"<@{BOT_ID}> meet at 9?", **at_bot)
        await discord_api.wait_for_sent(1)
        # Discord adding a link's preview is no edit.
        await discord_api.push_edit(first, f"<@{BOT_ID}> meet at 9?", edited=False, **at_bot)
        await discord_api.push_edit(first, f"<@{BOT_ID}> meet at 10?", **at_bot)
        await discord_api.push_edit(first, f"<@{BOT_ID}> meet at 10 then?", **at_bot)
        chatter = await discord_api.push_message(
            "just chatting", channel_id=CHANNEL, user_id=43, guild_id=GUILD
        )
        await discord_api.push_edit(
            chatter, "just chatting, really", channel_id=CHANNEL, user_id=43, guild_id=GUILD
        )
        await discord_api.wait_for_sent(2)
        await handlers_done()
    told = discord_api.sent()[1]
    assert told["content"] == EDIT_NOT_READ
    assert int(told["message_reference"]["message_id"]) == first
    # Once per message; an edit of a message not for the bot is not answered.
    assert len(discord_api.sent()) == 2
    assert len(fake_upstream.requests) == 1


async def test_times_are_native_discord_timestamps(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    fake_upstream.reply_content = "See you at <time 2026-11-22T08:00:00Z>."
    async with running_discord(tmp_path, fake_upstream, discord_api) as channel:
        await discord_api.push_message("when?", channel_id=CHANNEL, user_id=42)
        [sent] = await discord_api.wait_for_sent(1)
        [_, reply] = await channel._services.store.transcript(f"agent:main:discord:dm:{CHANNEL}")
    assert sent["content"] == "See you at <t:1795334400:f>."
    # The transcript keeps the markup, so the model sees the instant it wrote.
    assert reply.text == "See you at <time 2026-11-22T08:00:00Z>."


async def test_a_long_code_block_is_split_with_its_fences(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    code = [f"    total += {i}  # " + "c" * 60 for i in range(100)]
    fake_upstream.reply_content = "Here:\n```python\n" + "\n".join(code) + "\n```\nDone."
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_message("code please", channel_id=CHANNEL, user_id=42)
        await discord_api.wait_for_sent(4)
    parts = [sent["content"] for sent in discord_api.sent()]
    assert all(len(part) <= MESSAGE_LIMIT for part in parts)
    for part in parts:
        # Every message renders on its own: its fences pair up, Python highlighting kept.
        fences = re.findall(r"^```.*$", part, re.MULTILINE)
        assert len(fences) == 2 and fences[0] == "```python" and fences[1] == "```"
    assert parts[0].startswith("Here:\n```python\n") and parts[-1].endswith("```\nDone.")
    inside = [line for part in parts for line in part.split("\n") if line.startswith("    total")]
    assert inside == code


def test_parts_keep_a_fence_language_and_plain_text_untouched() -> None:
    text = "intro\n~~~js\n" + "\n".join(f"f({i});" + "x" * 40 for i in range(120)) + "\n~~~"
    parts = discord_parts(text, limit=1000)
    assert len(parts) > 1
    assert all(len(part) <= 1000 for part in parts)
    assert all(part.count("~~~") == 2 for part in parts)
    assert all(part.startswith("~~~js\n") for part in parts[1:])
    # Closing fences longer than the opening one still close it; inner shorter ones don't.
    assert discord_parts("````md\n```\ninner\n```\n````\nafter") == [
        "````md\n```\ninner\n```\n````\nafter"
    ]


async def test_a_name_is_learned_from_a_server_only_when_asked_of_the_bot(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    """With group_policy "all" every server message is answered, but a bare "Call me
    Annie." may be said to the room (``Turn.addressed`` is False); mentioning the bot or
    replying to it makes it asked of the bot."""
    async with running_discord(tmp_path, fake_upstream, discord_api, group_policy="all") as channel:
        store = services_of(channel).store
        await discord_api.push_message(
            "Call me Annie.", channel_id=CHANNEL, user_id=42, guild_id=GUILD
        )
        [first] = await discord_api.wait_for_sent(1)
        assert await store.memory_facts("discord:42") == []
        await discord_api.push_message(
            f"<@{BOT_ID}> Call me Annie.",
            channel_id=CHANNEL,
            user_id=42,
            guild_id=GUILD,
            mentions=[BOT],
        )
        bots = message_payload(first["id"], first["content"], channel_id=CHANNEL, author=BOT)
        await discord_api.push_message(
            "Call me Jo.", channel_id=CHANNEL, user_id=43, guild_id=GUILD, replying_to=bots
        )
        await discord_api.wait_for_sent(3)
        assert [f.text for f in await store.memory_facts("discord:42")] == ["Name: Annie"]
        assert [f.text for f in await store.memory_facts("discord:43")] == ["Name: Jo"]


async def test_addressed_is_false_only_for_server_messages_said_to_the_room(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    seen: dict[str, bool] = {}

    def watch(handler: Handler) -> Handler:
        async def watched(turn: Turn) -> Reply:
            seen[turn.text] = turn.addressed
            return await handler(turn)

        return watched

    async with running_discord(
        tmp_path, fake_upstream, discord_api, group_policy="all", wrap=watch
    ):
        await discord_api.push_message("in a dm", channel_id=CHANNEL + 1, user_id=42)
        await discord_api.push_message(
            "to the room", channel_id=CHANNEL, user_id=42, guild_id=GUILD
        )
        await discord_api.push_message(
            f"<@{BOT_ID}> to the bot",
            channel_id=CHANNEL,
            user_id=42,
            guild_id=GUILD,
            mentions=[BOT],
        )
        await discord_api.wait_for_sent(3)
    assert seen == {"in a dm": True, "to the room": False, "to the bot": True}


async def test_someone_elses_words_in_a_forward_or_a_reply_are_not_learned(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    snapshot = {
        "message": {
            "type": 0, "content": "I'm vegan and I work at Google. I'm in Tokyo this week",
            "embeds": [], "attachments": [],
            "timestamp": "2026-09-21T10:00:00+00:00", "edited_timestamp": None,
        }
    }  # fmt: skip
    forward = {
        "message_reference": {"type": 1, "channel_id": "77", "message_id": "78"},
        "message_snapshots": [snapshot],
    }
    plan = message_payload(
        7, "heading to the gym", channel_id=CHANNEL, author=user_payload(43, "bo")
    )
    async with running_discord(tmp_path, fake_upstream, discord_api) as channel:
        store = services_of(channel).store
        await discord_api.push_message("", channel_id=5, user_id=42, fields=forward)
        await discord_api.wait_for_sent(1)
        assert await store.memory_facts("discord:42") == []
        data = await store.get_clock_data("discord:42")
        assert data is None or data.located is None
        # Replying to Bo, Ada's own words count, Bo's plan is not hers.
        await discord_api.push_message(
            f"<@{BOT_ID}> remember that I'm allergic to nuts",
            channel_id=CHANNEL,
            user_id=42,
            guild_id=GUILD,
            mentions=[BOT],
            replying_to=plan,
        )
        await discord_api.wait_for_sent(2)
        assert [f.text for f in await store.memory_facts("discord:42")] == ["Is allergic to nuts"]
        data = await store.get_clock_data("discord:42")
        assert data is None or data.latest_actions == []


async def test_a_slash_command_tells_the_users_language(
    tmp_path: Path, fake_upstream: FakeUpstream, discord_api: FakeDiscordApi
) -> None:
    """A message carries no language; the user's client says it with each slash command,
    and their later messages are written in it."""
    fake_upstream.reply_content = "The fair opens <time 2099-11-22>."
    async with running_discord(tmp_path, fake_upstream, discord_api):
        await discord_api.push_interaction("lang", channel_id=CHANNEL, user_id=42, locale="de")
        [shown] = await discord_api.wait_for_sent(1)
        await discord_api.push_message("when does the fair open?", channel_id=CHANNEL, user_id=42)
        [_, sent] = await discord_api.wait_for_sent(2)
    assert shown["content"].startswith("Dates follow your app's language, German — Deutsch (de)")
    assert sent["content"] == "The fair opens So., 22. Nov. 2099."
