"""A week of the chat channels, as their users meet them.

Kai (Tokyo) talks to the bot on Telegram and on Discord, and links the two accounts. Kai,
Lena (Berlin) and Sam (New York) share a Telegram group; Kai and Mo share a Discord
server channel where the bot answers only when mentioned. A fake clock moves from Monday
to Sunday: minutes, hours, days away, and a relay restart on the same store mid-week.
The real relay runs both real chat libraries against the fake Telegram Bot API and the
fake Discord gateway. At each turn the test reads what the upstream was told (the
speaker's time and zone, the members' zones, the cards) and what the user got back.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.channels.support import handlers_done, telegram_section
from tests.conftest import RelayFactory
from tests.fakes.discord_api import BOT, BOT_ID, FakeDiscordApi, user_payload
from tests.fakes.discord_api import TOKEN as DISCORD_TOKEN
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import FakeUpstream, Scripted
from tests.proxy.test_admin import ADMIN, call

MONDAY = datetime(2026, 3, 2, 0, 30, tzinfo=UTC)  # 09:30 in Tokyo
OPEN, CLOSE = "<relay_context>\n", "\n</relay_context>"
# Telegram: Kai's DM is chat 42; the group has Kai (42), Lena (43) and Sam (44).
KAI, LENA, SAM = 42, 43, 44
GROUP = -100777
# Discord: Kai is user 420 (DM channel 5555); Mo (430) shares server channel 4242.
KAI_DC, MO = 420, 430
DM_DC, SERVER, CHANNEL = 5555, 9000, 4242
MENTION = [{"type": "mention", "offset": 0, "length": 16}]  # "@chronorelay_bot"


class Week:
    """The relay, both fakes and the clock, with one helper per thing a user does."""

    def __init__(
        self,
        factory: RelayFactory,
        upstream: FakeUpstream,
        telegram: FakeTelegramApi,
        discord: FakeDiscordApi,
    ) -> None:
        self.factory, self.upstream = factory, upstream
        self.telegram, self.discord = telegram, discord
        self.clock = FakeClock(MONDAY)
        self.relay: RunningServer | None = None
        self.asked = 0  # upstream requests seen so far

    async def start(self) -> None:
        self.relay = await self.factory(
            fake_clock=self.clock,
            auth={"admin_token": ADMIN},
            channels={
                **telegram_section(self.telegram),
                "discord": {"enabled": True, "bot_token": DISCORD_TOKEN},
            },
            # No capture pass through the upstream: it would add requests to the recording.
            continuity={"mode": "deterministic"},
        )

    async def restart(self) -> None:
        assert self.relay is not None
        await self.relay.stop()
        await self.start()

    async def telegram_says(
        self, text: str, user: int, *, group: bool = False, mention: bool = False
    ) -> list[dict[str, Any]]:
        """``user`` writes ``text`` in their DM or the group; the messages sent back."""
        names = {KAI: "Kai", LENA: "Lena", SAM: "Sam"}
        where: dict[str, Any] = (
            {"chat_id": GROUP, "chat_type": "supergroup"} if group else {"chat_id": user}
        )
        before = len(self.telegram.sent())
        await self.telegram.push_message(
            f"@chronorelay_bot {text}" if mention else text,
            user_id=user,
            first_name=names[user],
            date=self.clock.now(),
            entities=MENTION if mention else None,
            **where,
        )
        return await self._new(self.telegram, before)

    async def discord_says(
        self, text: str, user: int, *, server: bool = False, mention: bool = False
    ) -> list[dict[str, Any]]:
        """``user`` writes ``text`` in their DM or the server channel; what came back."""
        names = {KAI_DC: "kai", MO: "mo"}
        before = len(self.discord.sent())
        await self.discord.push_message(
            f"<@{BOT_ID}> {text}" if mention else text,
            channel_id=CHANNEL if server else DM_DC,
            user_id=user,
            author=user_payload(user, names[user]),
            guild_id=SERVER if server else None,
            mentions=[BOT] if mention else None,
            at=self.clock.now(),
        )
        return await self._new(self.discord, before)

    async def said_to_the_room(self, text: str, user: int) -> None:
        """``user`` writes in the Telegram group without addressing the bot: nothing comes
        back (the group's next answer shows it was handled, in order)."""
        names = {KAI: "Kai", LENA: "Lena", SAM: "Sam"}
        await self.telegram.push_message(
            text,
            user_id=user,
            first_name=names[user],
            date=self.clock.now(),
            chat_id=GROUP,
            chat_type="supergroup",
        )

    @staticmethod
    async def _new(fake: FakeTelegramApi | FakeDiscordApi, before: int) -> list[dict[str, Any]]:
        """The messages ``fake`` was sent after the first ``before``: the first, then any
        more its handler sent before it returned (the parts of a long reply)."""
        await fake.wait_for_sent(before + 1)
        await handlers_done()
        return fake.sent()[before:]

    def upstream_asked(self) -> bool:
        """Whether the upstream was asked since the last call."""
        asked, self.asked = len(self.upstream.requests) > self.asked, len(self.upstream.requests)
        return asked

    def block(self) -> str:
        """The block the upstream received with its newest message."""
        content = str(self.upstream.requests[-1].body["messages"][-1]["content"])
        return content.split(OPEN, 1)[1].split(CLOSE)[0]

    def members_line(self) -> str:
        return next(line for line in self.block().splitlines() if line.startswith("Particip"))

    async def set_timezone(self, user_key: str, zone: str) -> None:
        relay = self.relay
        assert relay is not None
        status, user = await call(
            relay, "PUT", f"/admin/users/{user_key}/timezone", {"timezone": zone}
        )
        assert status == 200, user


async def test_a_week_of_chat_on_telegram_and_discord(
    # The fakes first: they outlive the relay, which stops its channels before them.
    telegram_api: FakeTelegramApi,
    discord_api: FakeDiscordApi,
    fake_upstream: FakeUpstream,
    relay_factory: RelayFactory,
) -> None:
    week = Week(relay_factory, fake_upstream, telegram_api, discord_api)
    await week.start()
    clock = week.clock

    # -- Monday 09:30 Tokyo: Kai sets a zone on Telegram and says what they do -----------
    [told] = await week.telegram_says("/tz Asia/Tokyo", KAI)
    assert "Asia/Tokyo" in told["text"] and not week.upstream_asked()
    [answer] = await week.telegram_says("Morning! I'm a nurse.", KAI)
    assert answer["text"] == "echo: Morning! I'm a nurse." and answer["chat_id"] == KAI
    assert "reply_parameters" not in answer  # a DM reply quotes nothing
    assert week.upstream_asked()
    assert "Mon 2 Mar 2026 09:30 (Asia/Tokyo" in week.block()

    # -- Kai links Discord: never with a code shown to the group, then from the DM -------
    [refused] = await week.telegram_says("/link", KAI, group=True)
    assert "direct chat" in refused["text"] and "link code is" not in refused["text"]
    assert refused["chat_id"] == GROUP
    [code_message] = await week.telegram_says("/link", KAI)
    code = code_message["text"].split("code is ")[1].split(".")[0]
    [linked] = await week.discord_says(f"/link {code}", KAI_DC)
    assert linked["content"].startswith("Linked:") and "telegram:42" in linked["content"]

    # -- 09:35: on Discord the same person, in their zone, with their facts -------------
    clock.advance(timedelta(minutes=5))
    await week.discord_says("what time is it for me?", KAI_DC)
    block = week.block()
    assert "Mon 2 Mar 2026 09:35 (Asia/Tokyo" in block
    assert "nurse" in block
    [told] = await week.discord_says("/time", KAI_DC)
    assert "09:35 (Asia/Tokyo" in told["content"]

    # -- 10:35: the Telegram group; Lena's zone set by the admin, Sam's by /tz ---------
    clock.advance(timedelta(hours=1))
    week.upstream_asked()
    await week.said_to_the_room("morning all, I'm a pilot by the way", LENA)
    [told] = await week.telegram_says("/tz America/New_York", SAM, group=True)
    assert told["reply_parameters"]["message_id"] > 0  # a group answer quotes its message
    await week.set_timezone("telegram:43", "Europe/Berlin")
    assert not week.upstream_asked(), "an unaddressed message is not answered"
    replies = await week.telegram_says("when should we meet?", KAI, group=True, mention=True)
    assert [r["text"] for r in replies] == ["echo: [Kai] when should we meet?"]
    block = week.block()
    assert "Mon 2 Mar 2026 10:35 (Asia/Tokyo" in block and "Speaker: Kai." in block
    members = week.members_line()
    assert "Kai: Mon 10:35 (Asia/Tokyo)" in members
    assert "Lena: Mon 02:35 (Europe/Berlin)" in members
    assert "Sam: Sun 20:35 (America/New_York)" in members
    assert "nurse" not in block, "Kai's private facts stay out of the group"
    # Lena's remark was history for the model, never learned as a fact about her.
    history = [m["content"] for m in fake_upstream.requests[-1].body["messages"][:-1]]
    assert "[Lena] morning all, I'm a pilot by the way" in history
    assert "pilot" not in block

    # -- Sam asks in the group: Sam's own time, not Kai's -------------------------------
    await week.telegram_says("what time is it here for me?", SAM, group=True, mention=True)
    assert "Sun 1 Mar 2026 20:35 (America/New_York" in week.block()
    assert "Speaker: Sam." in week.block()
    [told] = await week.telegram_says("/time", LENA, group=True)
    lines = told["text"].splitlines()
    assert lines[0].startswith("It's Mon 2 Mar 2026 02:35 (Europe/Berlin")
    assert {line.split(":")[0] for line in lines[1:]} == {"Sam", "Kai"}

    # -- A long answer in the group: split, the first part quoting the question --------
    fake_upstream.reply_content = "\n".join(f"point {i}: " + "x" * 80 for i in range(60))
    parts = await week.telegram_says("the plan in detail please", LENA, group=True, mention=True)
    fake_upstream.reply_content = None
    assert len(parts) == 2 and all(len(p["text"]) <= 4096 for p in parts)
    assert "reply_parameters" in parts[0] and "reply_parameters" not in parts[1]
    assert {p["chat_id"] for p in parts} == {GROUP}

    # -- The Discord server: only a mention is answered; Mo's chat is history ----------
    week.upstream_asked()
    before = len(discord_api.sent())
    await discord_api.push_message(
        "just chatting",
        channel_id=CHANNEL,
        user_id=MO,
        author=user_payload(MO, "mo"),
        guild_id=SERVER,
        at=clock.now(),
    )
    [answer] = await week.discord_says("what do I do for work?", KAI_DC, server=True, mention=True)
    assert len(discord_api.sent()) == before + 1, "Mo's message was not answered"
    assert answer["content"] == "echo: [Kai] what do I do for work?"
    assert answer["message_reference"]["channel_id"] == CHANNEL
    assert "Speaker: Kai." in week.block()
    assert "Mon 10:35 (Asia/Tokyo)" in week.members_line()
    assert "nurse" not in week.block(), "the server is a group: private facts stay out"

    # -- 10:40: Kai heads to the gym (Telegram); back three hours later on Discord -----
    clock.advance(timedelta(minutes=5))
    await week.telegram_says("clock it: heading to the gym", KAI)
    clock.advance(timedelta(hours=3))
    await week.discord_says("hey", KAI_DC)
    assert "Check-in" in week.block() and "gym" in week.block()
    [listed] = await week.discord_says("/actions", KAI_DC)
    assert "Go to the gym" in listed["content"]

    # -- The LLM refuses a request: the user is told why, in the right place ----------
    fake_upstream.failures.append(Scripted(400, {"error": {"message": "context too long"}}))
    [refusal] = await week.discord_says("one more thing", KAI_DC, server=True, mention=True)
    assert "context too long" in refusal["content"] and "Traceback" not in refusal["content"]
    assert refusal["channel_id"] == CHANNEL

    # -- Wednesday: the relay restarts on the same store --------------------------------
    clock.set(datetime(2026, 3, 4, 1, 0, tzinfo=UTC))
    await week.restart()

    # -- Thursday 10:00 Tokyo, after days away: Kai comes back on Discord ---------------
    clock.set(datetime(2026, 3, 5, 1, 0, tzinfo=UTC))
    await week.discord_says("back again", KAI_DC)
    block = week.block()
    assert "Thu 5 Mar 2026 10:00 (Asia/Tokyo" in block
    assert "Last message here: 2 days 20 hours ago" in block
    assert "Gap:" in block
    assert "nurse" in block, "the linked person's facts survive the restart"
    [who] = await week.telegram_says("/whoami", KAI)
    assert "discord:420" in who["text"]
    [who] = await week.telegram_says("/whoami", KAI, group=True)
    assert "discord:420" not in who["text"], "the group is not told Kai's other accounts"

    # -- Sunday: Sam moved to London; the group sees the new zone, not the old one ----
    clock.set(datetime(2026, 3, 8, 12, 0, tzinfo=UTC))
    await week.telegram_says("/tz Europe/London", SAM)
    await week.telegram_says("see you all tomorrow?", LENA, group=True, mention=True)
    members = week.members_line()
    assert "Sam: Sun 12:00 (Europe/London)" in members
    assert "Kai: Sun 21:00 (Asia/Tokyo)" in members
    assert "Lena: Sun 13:00 (Europe/Berlin)" in members
    assert "Speaker: Lena." in week.block()
