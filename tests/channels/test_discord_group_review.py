"""A Discord server channel as its members meet it, through the real relay and the fake
gateway: what the model is told when one member talks about another, replies to them,
or goes by a server nickname."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from tests.channels.group_members import AIKO, BRUNO, CARA, CHANNEL, DEV, NAMES, SERVER, Fortnight
from tests.channels.support import handlers_done
from tests.conftest import RelayFactory
from tests.fakes.discord_api import BOT, BOT_ID, message_payload, user_payload


def member(user: int, name: str) -> dict[str, object]:
    return user_payload(100 + user, name)


async def asks_in_channel(
    group: Fortnight,
    text: str,
    user: int,
    *,
    mentions: Sequence[dict[str, object]] = (),
    replying_to: dict[str, object] | None = None,
) -> None:
    """``user`` mentions the bot in the server channel with ``text`` (and ``mentions``
    more), in reply to ``replying_to``; back once the relay answered and its handlers are
    done."""
    before = len(group.discord.sent())
    await group.discord.push_message(
        f"<@{BOT_ID}> {text}",
        channel_id=CHANNEL,
        user_id=100 + user,
        author=member(user, NAMES[user].lower()),
        guild_id=SERVER,
        mentions=[BOT, *mentions],
        replying_to=replying_to,
        at=group.clock.now(),
    )
    await group.discord.wait_for_sent(before + 1)
    await handlers_done()


async def test_a_place_said_of_a_mentioned_member_is_nobodys(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    """Bruno writes that Dev (mentioned, ``<@104>``) is in Tokyo: the place is Dev's, said
    by someone else, so it is learned neither for Bruno nor for Dev."""
    await group.start(relay_factory)
    await group.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    await group.discord.push_message(
        f"<@{100 + DEV}> currently in Tokyo, so mornings are hard for him",
        channel_id=CHANNEL,
        user_id=100 + BRUNO,
        author=member(BRUNO, "bruno"),
        guild_id=SERVER,
        mentions=[member(DEV, "dev")],
        at=group.clock.now(),
    )
    await group.on_discord("so when do we meet?", BRUNO)
    assert group.said()[-2] == "[Bruno] @Dev currently in Tokyo, so mornings are hard for him"
    assert group.local_times() == {"Bruno": "timezone unknown"}
    assert "the user's timezone is unknown" in group.block()
    await group.on_discord("hi all", DEV)
    assert group.local_times() == {"Bruno": "timezone unknown", "Dev": "timezone unknown"}


async def test_a_reply_names_the_member_replied_to_by_their_server_nickname(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    """Bruno takes the server nickname "Brunissimo": his new messages, the block and a
    reply quoting him all name him so (what Discord shows), his earlier message keeps the
    name it was said under. Discord sends a message replied to with its author's account
    only; the reply's ping carries him as the server's member."""
    await group.start(relay_factory)
    await group.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    bruno = member(BRUNO, "bruno")
    nickname = {
        "nick": "Brunissimo",
        "roles": [],
        "joined_at": "2026-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "flags": 0,
    }
    first = await group.discord.push_message(
        "meet at 9?",
        channel_id=CHANNEL,
        user_id=100 + BRUNO,
        author=bruno,
        guild_id=SERVER,
        at=group.clock.now(),
    )
    await group.discord.push_message(
        "or at 10",
        channel_id=CHANNEL,
        user_id=100 + BRUNO,
        author=bruno,
        guild_id=SERVER,
        fields={"member": nickname},
        at=group.clock.now(),
    )
    plan = message_payload(first, "meet at 9?", channel_id=CHANNEL, author=bruno)
    await asks_in_channel(
        group,
        "is that too late?",
        CARA,
        mentions=[{**bruno, "member": nickname}],
        replying_to=plan,
    )
    assert group.said() == [
        "[Bruno] meet at 9?",
        "[Brunissimo] or at 10",
        '[Cara] [replying to Brunissimo: "meet at 9?"] is that too late?',
    ]
    assert set(group.local_times()) == {"Brunissimo", "Cara"}


async def test_whose_time_is_asked_and_the_time_written_for_each_reader(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    """Members in Tokyo, Berlin and New York: "let's meet at 3pm" asks whose 3pm, and the
    model is told to write the agreed time as a tag, never to convert it by hand (the
    markup instruction forbids that); the answer carries a native timestamp each member
    reads in their own zone."""
    await group.start(relay_factory)
    await group.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    for user, zone in [(AIKO, "Asia/Tokyo"), (BRUNO, "Europe/Berlin"), (CARA, "America/New_York")]:
        assert zone in await group.discord_command(f"/tz {zone}", user)
    group.clock.advance(timedelta(hours=1))
    group.upstream.reply_content = "Whose 3pm? Bruno's would be <time 2026-03-03T14:00:00Z>."
    answer = await group.on_discord("let's meet at 3pm", BRUNO)
    block = group.block()
    assert group.local_times() == {
        "Aiko": "Tue 00:00 (Asia/Tokyo)",
        "Bruno": "Mon 16:00 (Europe/Berlin)",
        "Cara": "Mon 10:00 (America/New_York)",
    }
    assert (
        "Members' local clocks are up to 14 hours apart, so times in this message mean "
        "different hours to different people: confirm whose time is meant, then write it as "
        "one <time> tag, which shows it to each member in their own zone."
    ) in block
    assert "Do not convert between timezones" in block
    assert answer["content"] == "Whose 3pm? Bruno's would be <t:1772546400:f>."


async def test_a_reply_to_one_of_two_namesakes_says_which_one_it_quotes(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    """Two members go by "Cara" (New York and Los Angeles): the block and the history name
    them with their user keys, and so does a reply quoting one of them."""
    await group.start(relay_factory)
    await group.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    group.names[DEV] = "Cara"
    await group.on_discord("here in New York, evenings are fine", CARA)
    await group.on_discord("I'm in Los Angeles, mornings for me", DEV)
    cara = member(CARA, "cara")
    evenings = await group.discord.push_message(
        "evenings work",
        channel_id=CHANNEL,
        user_id=100 + CARA,
        author=cara,
        guild_id=SERVER,
        at=group.clock.now(),
    )
    plan = message_payload(evenings, "evenings work", channel_id=CHANNEL, author=cara)
    await asks_in_channel(group, "fine by me", BRUNO, replying_to=plan)
    assert group.said()[-3:] == [
        "[Cara (discord:104)] I'm in Los Angeles, mornings for me",
        "[Cara (discord:103)] evenings work",
        '[Bruno] [replying to Cara (discord:103): "evenings work"] fine by me',
    ]
    assert set(group.local_times()) == {"Bruno", "Cara (discord:103)", "Cara (discord:104)"}


NICKNAME = {
    "nick": "Brunissimo",
    "roles": [],
    "joined_at": "2026-01-01T00:00:00+00:00",
    "deaf": False,
    "mute": False,
    "flags": 0,
}
DM_CHANNEL = 7777


async def test_a_server_nickname_outlives_a_dm_under_the_account_name(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    """Bruno is "Brunissimo" in the server; he then DMs the bot, where Discord shows his
    account's name "Bruno". The server still names him by his nickname: its participants
    line, ``/time`` and a question about "Brunissimo"'s time. His DM keeps "Bruno"."""
    await group.start(relay_factory)
    await group.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    bruno = member(BRUNO, "bruno")
    assert "Europe/Berlin" in await group.discord_command("/tz Europe/Berlin", BRUNO)
    before = len(group.discord.sent())
    first = await group.discord.push_message(
        f"<@{BOT_ID}> meet at 9?",
        channel_id=CHANNEL,
        user_id=100 + BRUNO,
        author=bruno,
        guild_id=SERVER,
        mentions=[BOT],
        fields={"member": NICKNAME},
        at=group.clock.now(),
    )
    await group.discord.wait_for_sent(before + 1)
    group.clock.advance(timedelta(minutes=5))
    await group.discord.push_message(
        "hi, just me",
        channel_id=DM_CHANNEL,
        user_id=100 + BRUNO,
        author=bruno,
        at=group.clock.now(),
    )
    await group.discord.wait_for_sent(before + 2)
    await handlers_done()
    assert group.said()[-1] == "hi, just me"
    group.clock.advance(timedelta(minutes=5))
    await group.on_discord("what time is it for Brunissimo?", CARA)
    assert group.local_times() == {
        "Brunissimo": "Mon 15:10 (Europe/Berlin)",
        "Cara": "timezone unknown",
    }
    shown = await group.discord_command("/time", CARA)
    assert "Brunissimo: Mon 2 Mar 2026 15:10" in shown and "Bruno:" not in shown
    # A reply that does not ping him carries his account only: the quote still names him
    # as the server does.
    plan = message_payload(first, "meet at 9?", channel_id=CHANNEL, author=bruno)
    await asks_in_channel(group, "too early for me", CARA, replying_to=plan)
    assert group.said()[-1] == '[Cara] [replying to Brunissimo: "meet at 9?"] too early for me'


async def test_a_member_mentioned_under_a_new_nickname_is_listed_under_it(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    """Bruno wrote as "Bruno", then took the nickname "Brunissimo" and has not written
    since; Cara mentions him, and Discord sends him as the server's member: the group
    lists him under the name the server shows, as the mention in her message does."""
    await group.start(relay_factory)
    await group.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    await group.on_discord("morning", BRUNO)
    assert set(group.local_times()) == {"Bruno"}
    await asks_in_channel(
        group,
        f"is <@{100 + BRUNO}> awake yet?",
        CARA,
        mentions=[{**member(BRUNO, "bruno"), "member": NICKNAME}],
    )
    assert group.said()[-1] == "[Cara] is @Brunissimo awake yet?"
    await group.on_discord("anyone?", CARA)
    assert set(group.local_times()) == {"Brunissimo", "Cara"}
