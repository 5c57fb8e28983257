"""Two weeks of one person on three apps, linked and unlinked.

Mia (Berlin) talks to the bot on Telegram in the morning, on Discord at work and through
an OpenAI-API agent at night. She finds /link through /help, links the three accounts,
misuses the command on the way (a wrong code, an expired one, her own, linking twice),
later unlinks her Discord account, links a new work account instead, and asks the relay
to forget the old one. Noor, on Telegram, tries to join Mia's accounts; when a code of
Mia's does reach her, Mia is told and takes Noor's account out. The real relay runs both
chat libraries against the fake Telegram Bot API and the fake Discord gateway, the agent
speaks HTTP, and a fake clock moves through the fortnight. At each turn the test reads
what the upstream was told ("since they last spoke" across the linked channels only,
where she last spoke, the living memory) and what Mia got back.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp

from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.channels.conftest import discord_api, telegram_api
from tests.channels.support import telegram_section
from tests.conftest import RelayFactory
from tests.fakes.discord_api import TOKEN as DISCORD_TOKEN
from tests.fakes.discord_api import FakeDiscordApi, user_payload
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import FakeUpstream

__all__ = ["discord_api", "telegram_api"]  # the channel tests' fixtures, used here too

# Monday 9 November 2026, 06:30 UTC: 07:30 in Berlin.
MONDAY = datetime(2026, 11, 9, 6, 30, tzinfo=UTC)
OPEN, CLOSE = "<relay_context>\n", "\n</relay_context>"
MIA_TG, NOOR_TG = 7, 8
# Discord: Mia's own account (DM channel 7010), later her new work account (7020).
MIA_DC, MIA_WORK = 701, 702
DMS = {MIA_DC: 7010, MIA_WORK: 7020}
NAMES = {MIA_TG: "Mia", NOOR_TG: "Noor", MIA_DC: "mia", MIA_WORK: "mia.work"}
ANY_CHANNEL = "Last contact on any channel"


class Fortnight:
    """The relay, both fakes, the agent and the clock; one helper per thing Mia does."""

    def __init__(
        self,
        upstream: FakeUpstream,
        telegram: FakeTelegramApi,
        discord: FakeDiscordApi,
    ) -> None:
        self.upstream, self.telegram, self.discord = upstream, telegram, discord
        self.clock = FakeClock(MONDAY)
        self.relay: RunningServer | None = None

    async def start(self, factory: RelayFactory) -> None:
        self.relay = await factory(
            fake_clock=self.clock,
            # The agent sends chat commands too (/link, /forget).
            server={"api_commands": True},
            channels={
                **telegram_section(self.telegram),
                "discord": {"enabled": True, "bot_token": DISCORD_TOKEN},
            },
            continuity={"mode": "deterministic"},
        )

    async def telegram_says(self, text: str, user: int = MIA_TG) -> str:
        """``user`` writes in their Telegram DM; every message sent back, as one text."""
        before = len(self.telegram.sent())
        await self.telegram.push_message(
            text, user_id=user, first_name=NAMES[user], date=self.clock.now(), chat_id=user
        )
        return "\n".join(m["text"] for m in await self._new(self.telegram, before))

    async def discord_says(self, text: str, user: int = MIA_DC) -> str:
        """``user`` writes in their Discord DM; every message sent back, as one text."""
        before = len(self.discord.sent())
        await self.discord.push_message(
            text,
            channel_id=DMS[user],
            user_id=user,
            author=user_payload(user, NAMES[user]),
            at=self.clock.now(),
        )
        return "\n".join(m["content"] for m in await self._new(self.discord, before))

    async def agent_says(self, text: str) -> str:
        """Mia's night-time agent sends ``text`` as user ``mia`` in its thread ``night``."""
        assert self.relay is not None
        headers = {
            "X-Chronorelay-Received-At": self.clock.now().isoformat(),
            "X-Chronorelay-User": "mia",
            "X-Chronorelay-Thread": "night",
        }
        body = {"model": "m", "messages": [{"role": "user", "content": text}]}
        url = f"{self.relay.url}/v1/chat/completions"
        async with aiohttp.ClientSession() as http, http.post(url, json=body, headers=headers) as r:
            assert r.status == 200, await r.text()
            return str((await r.json())["choices"][0]["message"]["content"])

    @staticmethod
    async def _new(fake: FakeTelegramApi | FakeDiscordApi, before: int) -> list[dict[str, Any]]:
        """The messages ``fake`` was sent after the first ``before`` (a long reply's parts
        too, until none comes for a moment)."""
        count = before + 1
        await fake.wait_for_sent(count)
        with contextlib.suppress(TimeoutError):
            while True:
                count = len(await fake.wait_for_sent(count + 1, within=0.3))
        return fake.sent()[before:]

    def block(self) -> str:
        """The block the upstream received with its newest message."""
        content = str(self.upstream.requests[-1].body["messages"][-1]["content"])
        return content.split(OPEN, 1)[1].split(CLOSE)[0]

    def later(self, **delta: float) -> None:
        self.clock.advance(timedelta(**delta))


def code_in(offer: str) -> str:
    assert "Your link code is " in offer, offer
    return offer.split("Your link code is ")[1][:6]


async def test_two_weeks_of_one_person_on_three_apps(
    # The fakes first: they outlive the relay, which stops its channels before them.
    telegram_api: FakeTelegramApi,
    discord_api: FakeDiscordApi,
    fake_upstream: FakeUpstream,
    relay_factory: RelayFactory,
) -> None:
    mia = Fortnight(fake_upstream, telegram_api, discord_api)
    await mia.start(relay_factory)

    # -- Monday 07:30, Telegram: her zone and something to remember ---------------------
    assert "Europe/Berlin" in await mia.telegram_says("/tz Europe/Berlin")
    await mia.telegram_says("remember that I play the violin in an orchestra")
    assert "Mon 9 Nov 2026 07:30 (Europe/Berlin" in mia.block()

    # -- 10:00, Discord at work: a stranger to the relay until she links ----------------
    mia.later(hours=2, minutes=30)
    await mia.discord_says("morning, at the office now")
    block = mia.block()
    assert "(UTC; the user's timezone is unknown" in block
    assert "First message in this thread." in block
    assert ANY_CHANNEL not in block, "an unlinked Telegram is another person"
    assert "violin" not in block
    listed = await mia.discord_says("/help")
    assert "/link — Link your accounts on other channels" in listed
    assert "/unlink — Unlink this account, or another of yours: /unlink <account>" in listed

    offer = await mia.discord_says("/link")
    assert "send /link" in offer and "share it with nobody" in offer
    assert "what I remember about you" in offer
    code = code_in(offer)
    # Misuse on the way: her own code, a typo, then the code after its ten minutes.
    own = await mia.discord_says(f"/link {code}")
    assert own == (
        f"{code} is this account's own code. Send /link {code} from the other account you "
        "want to link."
    )
    typo = await mia.telegram_says("/link ABCDEF")
    assert "I don't know the link code 'ABCDEF', or it has expired" in typo
    assert "Send /link on your other account for a new code" in typo
    mia.later(minutes=11)
    late = await mia.telegram_says(f"/link {code}")
    assert "or it has expired (codes last 10 minutes and work once)" in late

    # A fresh code, typed in lower case on Telegram: linked.
    code = code_in(await mia.discord_says("/link"))
    linked = await mia.telegram_says(f"/link {code.lower()}")
    assert linked.startswith("Linked: discord:701 (Mia); telegram:7 (Mia), this account.")
    assert "what I remember about you (/memory)" in linked
    # Linking twice is harmless and says so.
    again = await mia.telegram_says(f"/link {code_in(await mia.discord_says('/link'))}")
    assert again == (
        "These accounts are already linked: discord:701 (Mia); telegram:7 (Mia), this account."
    )

    # -- 10:30 on Discord: her zone, and what she told Telegram -------------------------
    mia.later(minutes=19)
    await mia.discord_says("what should I practise tonight?")
    block = mia.block()
    assert "Mon 9 Nov 2026 10:30 (Europe/Berlin" in block
    # The code was Discord's: it hears which account sent it back.
    assert "An account was linked to the user's with a link code: telegram:7 (Mia)." in block
    assert "violin" in await mia.discord_says("/memory")

    # -- 21:30, the agent at night: not linked yet, then linked from Telegram's code ---
    mia.later(hours=11)
    await mia.agent_says("good evening")
    block = mia.block()
    assert "(UTC; the user's timezone is unknown" in block and ANY_CHANNEL not in block
    code = code_in(await mia.telegram_says("/link"))
    linked = await mia.agent_says(f"/link {code}")
    assert linked.startswith("Linked: api:mia, this account; discord:701 (Mia); telegram:7 (Mia).")
    mia.later(minutes=5)
    await mia.agent_says("what is on tomorrow?")
    block = mia.block()
    assert "Mon 9 Nov 2026 21:35 (Europe/Berlin" in block

    # -- Tuesday 07:30, Telegram: the night's contact counted, and where it was --------
    mia.later(hours=10)
    await mia.telegram_says("morning!")
    block = mia.block()
    assert "Last message here: 1 day 5 minutes ago" in block
    assert f"{ANY_CHANNEL}: 10 hours ago (API)." in block
    assert "An account was linked to the user's with a link code: api:mia." in block
    assert "violin" in block, "a new day's session starts with the living memory"

    # -- Tuesday 10:05, Discord: it hears the agent joined too; a new fact ------------
    mia.later(hours=2, minutes=30)
    await mia.discord_says("remember that my desk is on the third floor")
    block = mia.block()
    assert "An account was linked to the user's with a link code: api:mia." in block
    assert f"{ANY_CHANNEL}: 2 hours 30 minutes ago (Telegram)." in block
    both = await mia.telegram_says("/memory")
    assert "violin" in both and "third floor" in both, "memory follows the link both ways"

    # -- Wednesday: Noor tries to join Mia's accounts -----------------------------------
    mia.later(days=1)
    await mia.telegram_says("hi, I'm Noor", NOOR_TG)
    guessed = await mia.telegram_says(f"/link {code}", NOOR_TG)  # Mia's used code
    assert "I don't know the link code" in guessed
    assert "isn't linked to any other" in await mia.telegram_says("/unlink telegram:7", NOOR_TG)
    # Noor's own code links nobody until one of Mia's accounts sends it: Mia's consent.
    code_in(await mia.telegram_says("/link", NOOR_TG))
    who = await mia.telegram_says("/whoami", NOOR_TG)
    assert "Linked accounts: none." in who
    # Mia pastes a fresh code into the wrong chat, and Noor sends it first.
    code = code_in(await mia.telegram_says("/link"))
    joined = await mia.telegram_says(f"/link {code}", NOOR_TG)
    assert joined.startswith("Linked: ")
    mia.later(minutes=5)
    await mia.telegram_says("anything new?")
    block = mia.block()
    assert "An account was linked to the user's with a link code: telegram:8 (Noor)." in block
    assert "/unlink telegram:8 sent here takes it out." in block
    out = await mia.telegram_says("/unlink telegram:8")
    assert out.startswith("telegram:8 is no longer linked to your accounts.")
    assert "Linked accounts: none." in await mia.telegram_says("/whoami", NOOR_TG)
    assert "violin" not in await mia.telegram_says("/memory", NOOR_TG)
    who = await mia.telegram_says("/whoami")
    assert "Linked accounts: api:mia; discord:701 (Mia);" in who

    # -- Monday of week two: Discord is unlinked; the others stop counting it ----------
    mia.clock.set(datetime(2026, 11, 16, 9, 0, tzinfo=UTC))
    gone = await mia.discord_says("/unlink")
    assert gone.startswith("This account (discord:701) is no longer linked to api:mia, telegram:7.")
    mia.later(hours=1)
    await mia.telegram_says("back from the break")
    block = mia.block()
    assert "Discord" not in block, "the unlinked account's /unlink is no contact of hers"
    mine = await mia.telegram_says("/memory")
    assert "violin" in mine and "third floor" not in mine, "Discord's fact went with it"
    mia.later(minutes=10)
    await mia.discord_says("still at work")
    block = mia.block()
    assert ANY_CHANNEL not in block and "Telegram" not in block
    assert "Noor" not in block, "news of Noor is stale: she was taken out days ago"
    theirs = await mia.discord_says("/memory")
    assert "third floor" in theirs and "violin" not in theirs
    assert "(Europe/Berlin" in block, "it keeps a copy of the zone it had"

    # -- Tuesday: a new work account, linked instead ------------------------------------
    mia.clock.set(datetime(2026, 11, 17, 9, 0, tzinfo=UTC))
    await mia.discord_says("hello from my new work account", MIA_WORK)
    code = code_in(await mia.agent_says("/link"))
    linked = await mia.discord_says(f"/link {code}", MIA_WORK)
    assert "discord:702 (Mia.Work), this account" in linked and "discord:701" not in linked
    mia.later(minutes=30)
    await mia.discord_says("what do I play?", MIA_WORK)
    assert "Tue 17 Nov 2026 10:30 (Europe/Berlin" in mia.block()
    assert "violin" in await mia.discord_says("/memory", MIA_WORK)

    # -- Thursday: she asks the relay to forget the old Discord account ----------------
    mia.clock.set(datetime(2026, 11, 19, 18, 0, tzinfo=UTC))
    preview = await mia.discord_says("/forget")
    assert "This deletes everything I store about you (discord:701)" in preview
    assert "1 remembered fact" in preview and "link to" not in preview
    done = await mia.discord_says("/forget confirm")
    assert done.startswith("Done. I deleted everything I stored about you (discord:701)")
    # Nothing of her linked accounts went with it.
    who = await mia.telegram_says("/whoami")
    assert "Linked accounts: api:mia; discord:702 (Mia.Work);" in who
    assert "Timezone: Europe/Berlin." in who
    mine = await mia.telegram_says("/memory")
    assert "violin" in mine and "third floor" not in mine
    await mia.agent_says("good night")
    block = mia.block()
    assert "Thu 19 Nov 2026 19:00 (Europe/Berlin" in block
    # /forget, /whoami and /memory are commands, no contact: her last words were at work.
    assert f"{ANY_CHANNEL}: 2 days 8 hours ago (Discord)." in block
    assert "with a link code: discord:702 (Mia.Work)." in block and "Noor" not in block
    assert "violin" in block and "third floor" not in block
    # The forgotten account starts from scratch.
    await mia.discord_says("hello?")
    block = mia.block()
    assert "First message in this thread." in block and "(UTC;" in block
    assert "third floor" not in await mia.discord_says("/memory")
