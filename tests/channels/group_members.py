"""Five members of a Telegram group and a Discord server channel in four timezones, and
one helper per thing a member does (``Fortnight``), shared by the group scenario tests."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import aiohttp

from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.channels.support import handlers_done, telegram_section
from tests.conftest import RelayFactory
from tests.fakes.discord_api import BOT, BOT_ID, FakeDiscordApi, user_payload
from tests.fakes.discord_api import TOKEN as DISCORD_TOKEN
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import RELAY_BLOCK, FakeUpstream

# Monday 2 March 2026, 14:00 UTC: 23:00 in Tokyo, 15:00 in Berlin, 09:00 in New York,
# 06:00 in Los Angeles.
MONDAY = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
OPEN, CLOSE = "<relay_context>\n", "\n</relay_context>"
AIKO, BRUNO, CARA, DEV, ELI, FAY = 1, 2, 3, 4, 5, 6
NAMES = {AIKO: "Aiko", BRUNO: "Bruno", CARA: "Cara", DEV: "Dev", ELI: "Eli", FAY: "Fay"}
GROUP = -100555
SERVER, CHANNEL = 9000, 4242
MENTION = [{"type": "mention", "offset": 0, "length": 16}]  # "@chronorelay_bot"
ADMIN_TOKEN = "admin-token-0123456789"
ADMIN_AUTH = {"admin_token": ADMIN_TOKEN}


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

    async def start(
        self, factory: RelayFactory, *, discord: dict[str, Any] | None = None, **sections: Any
    ) -> RunningServer:
        """The relay with both channels; ``discord`` adds to its Discord table
        (``member_events``), ``sections`` are more config tables (``auth``, ``store``)."""
        self.relay = await factory(
            fake_clock=self.clock,
            channels={
                **telegram_section(self.telegram),
                "discord": {"enabled": True, "bot_token": DISCORD_TOKEN, **(discord or {})},
            },
            continuity={"mode": "deterministic"},
            **sections,
        )
        return self.relay

    async def admin(self, method: str, path: str, body: Any = None) -> Any:
        """One call to the relay's admin API (``start`` with ``auth=ADMIN_AUTH``); its
        JSON answer."""
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        async with aiohttp.ClientSession() as http:
            url = f"{self.relay.url}{path}"
            async with http.request(method, url, json=body, headers=headers) as response:
                assert response.status == 200, await response.text()
                return await response.json()

    async def asks(self, text: str, user: int) -> dict[str, Any]:
        """``user`` mentions the bot in the Telegram group; the one answer."""
        [answer] = await self._telegram(f"@chronorelay_bot {text}", user, MENTION)
        assert answer["chat_id"] == GROUP, "answered where it was asked"
        return answer

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
        """Every message sent from this one's arrival until its handler, and those of the
        messages before it, returned."""
        before = len(self.telegram.sent())
        fields = self._from(user, user if dm else GROUP)
        await self.telegram.push_message(text, entities=entities, **fields)
        await self.telegram.wait_for_sent(before + 1)
        await handlers_done()
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
        """``user`` (Discord id 100 + user) writes in the server channel; the one answer."""
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
        await self.discord.wait_for_sent(before + 1)
        await handlers_done()
        [answer] = self.discord.sent()[before:]
        return answer

    async def discord_command(self, text: str, user: int) -> str:
        """``user`` types a command in the server channel (no mention); the answer."""
        return str((await self.on_discord(text, user, mention=False))["content"])

    async def chats_on_discord(self, text: str, user: int) -> None:
        """``user`` talks to the others in the server channel, not to the bot: nothing
        comes back (the channel's next answer shows the message was handled, in order)."""
        await self.discord.push_message(
            text,
            channel_id=CHANNEL,
            user_id=100 + user,
            author=user_payload(100 + user, self.names[user].lower()),
            guild_id=SERVER,
            at=self.clock.now(),
        )

    async def leaves_discord(self, user: int) -> None:
        """``user`` leaves the server (the relay needs ``member_events``; ``start`` with
        ``discord={"member_events": True}`` and ``push_guild`` first)."""
        payload = user_payload(100 + user, self.names[user].lower())
        await self.discord.push_member_remove(SERVER, payload)

    def said(self) -> list[str]:
        """The user messages the upstream received with its newest request, each as
        forwarded (``[speaker] text``), without the block."""
        messages = self.upstream.requests[-1].body["messages"]
        return [str(m["content"]).split(RELAY_BLOCK, 1)[0] for m in messages if m["role"] == "user"]

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
