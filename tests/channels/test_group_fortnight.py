"""A fortnight of two groups whose members live in four timezones, as they meet it.

Aiko (Tokyo), Bruno (Berlin), Cara (New York), Dev (Los Angeles) and Eli (no zone set)
share a Telegram group and a Discord server channel; the bot answers mentions and
commands. A fake clock moves over two weeks: people say times in their own terms, go
for a run, stay away four days, travel, change their name, join late and fall silent. At
each turn the test reads what the upstream was told (whose time a phrase is, each
member's local time, whose return it is) and what the members got back.
"""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from middleware.clock.source import FakeClock
from tests.channels.support import telegram_section
from tests.conftest import RelayFactory
from tests.fakes.discord_api import BOT, BOT_ID, FakeDiscordApi, user_payload
from tests.fakes.discord_api import TOKEN as DISCORD_TOKEN
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import FakeUpstream

# Monday 2 March 2026, 14:00 UTC: 23:00 in Tokyo, 15:00 in Berlin, 09:00 in New York,
# 06:00 in Los Angeles.
MONDAY = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
OPEN, CLOSE = "<relay_context>\n", "\n</relay_context>"
AIKO, BRUNO, CARA, DEV, ELI, FAY = 1, 2, 3, 4, 5, 6
NAMES = {AIKO: "Aiko", BRUNO: "Bruno", CARA: "Cara", DEV: "Dev", ELI: "Eli", FAY: "Fay"}
GROUP = -100555
SERVER, CHANNEL = 9000, 4242
MENTION = [{"type": "mention", "offset": 0, "length": 16}]  # "@chronorelay_bot"


class Fortnight:
    """The relay, both fakes and the clock, with one helper per thing a member does."""

    def __init__(
        self,
        upstream: FakeUpstream,
        telegram: FakeTelegramApi,
        discord: FakeDiscordApi,
    ) -> None:
        self.upstream, self.telegram, self.discord = upstream, telegram, discord
        self.clock = FakeClock(MONDAY)
        self.names = dict(NAMES)

    async def start(self, factory: RelayFactory) -> None:
        await factory(
            fake_clock=self.clock,
            channels={
                **telegram_section(self.telegram),
                "discord": {"enabled": True, "bot_token": DISCORD_TOKEN},
            },
            continuity={"mode": "deterministic"},
        )

    async def asks(self, text: str, user: int) -> list[dict[str, Any]]:
        """``user`` mentions the bot in the Telegram group; the messages sent back."""
        return await self._telegram(f"@chronorelay_bot {text}", user, MENTION)

    async def command(self, text: str, user: int, *, dm: bool = False) -> str:
        """``user`` sends a command in the group (or their DM); the one answer."""
        [answer] = await self._telegram(text, user, None, dm=dm)
        assert answer["chat_id"] == (user if dm else GROUP), "answered where it was asked"
        return str(answer["text"])

    async def chats(self, text: str, user: int) -> None:
        """``user`` talks to the others in the group, not to the bot: nothing comes back
        (the group's next answer shows the message was handled, in order)."""
        await self.telegram.push_message(text, **self._from(user, GROUP))

    async def _telegram(
        self, text: str, user: int, entities: list[dict[str, Any]] | None, *, dm: bool = False
    ) -> list[dict[str, Any]]:
        before = len(self.telegram.sent())
        fields = self._from(user, user if dm else GROUP)
        await self.telegram.push_message(text, entities=entities, **fields)
        count = before + 1
        await self.telegram.wait_for_sent(count)
        with contextlib.suppress(TimeoutError):
            while True:
                count = len(await self.telegram.wait_for_sent(count + 1, within=0.3))
        return self.telegram.sent()[before:]

    def _from(self, user: int, chat: int) -> dict[str, Any]:
        kind = "private" if chat == user else "supergroup"
        return {
            "user_id": user,
            "first_name": self.names[user],
            "date": self.clock.now(),
            "chat_id": chat,
            "chat_type": kind,
        }

    async def on_discord(self, text: str, user: int, *, mention: bool = True) -> dict[str, Any]:
        """``user`` (Discord id 100 + user) writes in the server channel; the answer."""
        before = len(self.discord.sent())
        await self.discord.push_message(
            f"<@{BOT_ID}> {text}" if mention else text,
            channel_id=CHANNEL,
            user_id=100 + user,
            author=user_payload(100 + user, self.names[user].lower()),
            guild_id=SERVER,
            mentions=[BOT] if mention else None,
            at=self.clock.now(),
        )
        return (await self.discord.wait_for_sent(before + 1))[-1]

    def block(self) -> str:
        """The block the upstream received with its newest message."""
        content = str(self.upstream.requests[-1].body["messages"][-1]["content"])
        return content.split(OPEN, 1)[1].split(CLOSE)[0]

    def local_times(self) -> dict[str, str]:
        """The members' local times the block listed, by name."""
        line = next(x for x in self.block().splitlines() if x.startswith("Participants'"))
        # "; " also parts a zone from where it was said: "(Europe/Lisbon; said they...)".
        listed = re.split(r"; (?=[A-Z])", line.split(": ", 1)[1].rstrip("."))
        return dict(member.split(": ", 1) for member in listed)


async def test_a_fortnight_of_two_groups_across_four_timezones(
    # The fakes first: they outlive the relay, which stops its channels before them.
    telegram_api: FakeTelegramApi,
    discord_api: FakeDiscordApi,
    fake_upstream: FakeUpstream,
    relay_factory: RelayFactory,
) -> None:
    two = Fortnight(fake_upstream, telegram_api, discord_api)
    await two.start(relay_factory)
    clock = two.clock

    # -- Monday: four members set their zones in the group; Eli does not ---------------
    for user, zone in [
        (AIKO, "Asia/Tokyo"),
        (BRUNO, "Europe/Berlin"),
        (CARA, "America/New_York"),
        (DEV, "America/Los_Angeles"),
    ]:
        assert zone in await two.command(f"/tz {zone}", user)
    assert "don't know your timezone" in await two.command("/tz", ELI)
    await two.chats("hi all", ELI)

    # Bruno's "5pm my time" is Berlin's 17:00, and not asked about: he said whose it is.
    await two.asks("let's meet at 5pm my time", BRUNO)
    block = two.block()
    assert "Speaker: Bruno." in block
    assert '"at 5pm" = 2026-03-02T17:00:00+01:00 (Europe/Berlin)' in block
    assert "confirm whose time is meant" not in block
    assert two.local_times() == {
        "Aiko": "Mon 23:00 (Asia/Tokyo)",
        "Bruno": "Mon 15:00 (Europe/Berlin)",
        "Cara": "Mon 09:00 (America/New_York)",
        "Dev": "Mon 06:00 (America/Los_Angeles)",
        "Eli": "timezone unknown",  # never the server's zone
    }

    # Cara (New York) says "9am Pacific": Pacific's 9am is asked about, never New York's.
    await two.asks("9am Pacific works for me", CARA)
    block = two.block()
    assert "Pacific" in block and "America/Los_Angeles)?" in block
    assert "2026-03-03T09:00:00-05:00" not in block

    # Eli asks: the block says Eli's zone is unknown, and /time says so to Eli.
    await two.asks("what time is it for everyone?", ELI)
    assert "the user's timezone is unknown" in two.block()
    told = (await two.command("/time", ELI)).splitlines()
    assert "don't know your timezone" in told[0]
    assert {line.split(":")[0] for line in told[1:]} == {"Aiko", "Bruno", "Cara", "Dev"}

    # -- 17:00 UTC: Tuesday 02:00 in Tokyo, still Monday in Los Angeles -----------------
    clock.advance(timedelta(hours=3))
    await two.asks("tomorrow morning works", AIKO)
    block = two.block()
    assert "Now: Tue 3 Mar 2026 02:00 (Asia/Tokyo" in block
    # Not yet slept in Tokyo: which morning is asked (tests/channels/test_group_small_hours.py).
    assert "Tuesday 3 March (the day that has just begun) or Wednesday 4 March?" in block
    assert "confirm whose time is meant" in block, "17 hours apart: whose morning?"
    assert two.local_times()["Dev"] == "Mon 09:00 (America/Los_Angeles)"

    # Dev heads out for a run; three hours on Cara's message says nothing of it, Dev's does.
    await two.asks("I'm about to go for a run", DEV)
    clock.advance(timedelta(hours=3))
    await two.asks("back, what did I miss?", CARA)
    assert "for a run" not in two.block().lower(), "Dev's action is Dev's alone"
    await two.asks("hey, I'm back", DEV)
    block = two.block()
    assert "for a run" in block.lower(), "Dev's own run is his to be asked about"
    assert "Dev's own last message here: 3 hours ago" in block

    # Eli tells the others where they are: the group's times now show it.
    await two.chats("greetings from Lisbon! I'm in Lisbon this week", ELI)
    await two.asks("what time is it for Eli?", BRUNO)
    assert "Europe/Lisbon" in two.local_times()["Eli"]

    # -- The Discord channel: its members are others until they set a zone there ---------
    assert "Asia/Tokyo" in (await two.on_discord("/tz Asia/Tokyo", AIKO, mention=False))["content"]
    answer = await two.on_discord("what time is it for each of us?", BRUNO)
    assert answer["message_reference"]["channel_id"] == CHANNEL
    times = two.local_times()
    assert times["Aiko"] == "Tue 05:00 (Asia/Tokyo)"
    assert times["Bruno"] == "timezone unknown", "Telegram Bruno is not Discord Bruno"
    told = await two.on_discord("/time", CARA, mention=False)
    assert told["channel_id"] == CHANNEL and "Aiko: Tue 3 Mar 2026 05:00" in told["content"]

    # -- Four busy days without Bruno; then he is back ---------------------------------
    for _day in range(4):
        clock.advance(timedelta(days=1))
        for user in (CARA, DEV, ELI):
            await two.chats("busy busy", user)
            clock.advance(timedelta(minutes=10))
    await two.asks("I'm back, anything new?", BRUNO)
    block = two.block()
    assert "Last message here: 10 minutes ago" in block
    assert "Bruno's own last message here: 4 days" in block

    # -- Week two: Dev flies to Tokyo and says so with /tz in a DM ---------------------
    clock.advance(timedelta(days=2))
    assert "Asia/Tokyo" in await two.command("/tz Asia/Tokyo", DEV, dm=True)
    await two.asks("landed! what's the time difference with Bruno?", DEV)
    times = two.local_times()
    assert times["Dev"] == times["Aiko"] and "(Asia/Tokyo)" in times["Dev"]
    assert "Speaker: Dev." in two.block()

    # Cara now goes by Caroline: one member, the new name, never both.
    two.names[CARA] = "Caroline"
    await two.asks("call me Caroline from now on", CARA)
    times = two.local_times()
    assert "Caroline" in times and "Cara" not in times
    assert "(America/New_York)" in times["Caroline"]

    # Fay joins late: her first message is said to be her first, her zone unknown.
    await two.asks("hi, I'm new here", FAY)
    assert "First message here from Fay." in two.block()
    assert two.local_times()["Fay"] == "timezone unknown"

    # -- Day 15: Aiko, silent since the first week, is no longer listed ----------------
    clock.set(MONDAY + timedelta(days=15))
    await two.asks("who's around this week?", BRUNO)
    assert "Aiko" not in two.local_times()
    assert set(two.local_times()) >= {"Bruno", "Dev", "Caroline", "Fay"}
