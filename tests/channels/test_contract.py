"""One contract for every channel: inbound → Turn, reply delivery, splitting, commands.

Each adapter gets a driver that plays a user writing in a DM and returns what the bot
delivered; the pipeline is wrapped to see the ``Turn`` the adapter built.
"""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, timedelta
from pathlib import Path
from typing import Protocol

import pytest

from channels.base import TEXT_ONLY
from channels.terminal import TerminalChannel
from middleware.commands.catalog import COMMANDS
from middleware.errors import StoreError
from middleware.pipeline import Handler
from middleware.store import Store
from middleware.types import Reply, Turn
from proxy.services import open_services
from tests.channels.support import handlers_done, running_discord, running_telegram, services_of
from tests.conftest import relay_config
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.upstream import FakeUpstream, Scripted


class Driver(Protocol):
    name: str
    turns: list[Turn]
    watch: Watch

    @property
    def limit(self) -> int | None:
        """The most characters one delivered message may hold; None when unlimited."""
        ...

    async def say(self, text: str) -> list[str]:
        """Send ``text`` as the user; return the messages the bot delivered for it."""
        ...


@dataclass
class Watch:
    turns: list[Turn] = field(default_factory=list)
    # When set, the pipeline raises it for every turn (after noting the turn).
    failure: Exception | None = None

    def wrap(self, pipeline: Handler) -> Handler:
        async def watched(turn: Turn) -> Reply:
            self.turns.append(turn)
            if self.failure is not None:
                raise self.failure
            return await pipeline(turn)

        return watched


class TerminalDriver:
    name = "terminal"
    limit = None

    def __init__(self, channel: TerminalChannel, out: io.StringIO, watch: Watch) -> None:
        self._channel = channel
        self._out = out
        self.watch = watch
        self.turns = watch.turns

    async def say(self, text: str) -> list[str]:
        before = len(self._out.getvalue())
        # What ``run`` does with each line read.
        await self._channel.send("local", await self._channel._answer(text))
        printed = self._out.getvalue()[before:]
        assert printed.startswith("bot> ") and printed.endswith("\n")
        return [printed[len("bot> ") : -1]]


class PlatformDriver(ABC):
    """A chat platform behind a fake API: push a user message, collect the parts sent."""

    name: str
    limit: int
    text_field: str

    def __init__(self, api: FakeTelegramApi | FakeDiscordApi, watch: Watch, store: Store) -> None:
        self._api = api
        self.store = store
        self.watch = watch
        self.turns = watch.turns

    @abstractmethod
    async def push(self, text: str) -> None:
        """Deliver ``text`` to the fake API as a message from the user."""

    @abstractmethod
    async def push_photo(self) -> None:
        """Deliver a photo without any text to the fake API as a message from the user."""

    async def say(self, text: str) -> list[str]:
        return await self._exchange(lambda: self.push(text))

    async def send_photo(self) -> list[str]:
        """Send a photo alone as the user; return the messages the bot delivered for it."""
        return await self._exchange(self.push_photo)

    async def _exchange(self, push: Callable[[], Awaitable[None]]) -> list[str]:
        before = len(self._api.sent())
        count = len(self.turns)
        await push()
        # Wait for the turn's first part, then for its handler to send the rest and return.
        await self._api.wait_for_sent(before + 1)
        await handlers_done()
        sent = self._api.sent()
        assert len(self.turns) == count + 1
        return [message[self.text_field] for message in sent[before:]]


class TelegramDriver(PlatformDriver):
    name, limit, text_field = "telegram", 4096, "text"

    async def push(self, text: str) -> None:
        assert isinstance(self._api, FakeTelegramApi)
        await self._api.push_message(text, chat_id=1001, user_id=42)

    async def push_photo(self) -> None:
        assert isinstance(self._api, FakeTelegramApi)
        await self._api.push_message("", chat_id=1001, user_id=42, media="photo")


class DiscordDriver(PlatformDriver):
    name, limit, text_field = "discord", 2000, "content"

    async def push(self, text: str) -> None:
        assert isinstance(self._api, FakeDiscordApi)
        await self._api.push_message(text, channel_id=1001, user_id=42)

    async def push_photo(self) -> None:
        assert isinstance(self._api, FakeDiscordApi)
        await self._api.push_message("", channel_id=1001, user_id=42, files=["cat.png"])


@pytest.fixture(params=["terminal", "telegram", "discord"])
async def driver(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    fake_upstream: FakeUpstream,
    telegram_api: FakeTelegramApi,
    discord_api: FakeDiscordApi,
) -> AsyncIterator[Driver]:
    watch = Watch()
    async with AsyncExitStack() as stack:
        if request.param == "terminal":
            config = relay_config(tmp_path, fake_upstream.url)
            services = await stack.enter_async_context(open_services(config))
            services.pipeline = watch.wrap(services.pipeline)
            out = io.StringIO()
            channel = TerminalChannel(services, user_id="42", out=out)
            yield TerminalDriver(channel, out, watch)
        elif request.param == "telegram":
            telegram = await stack.enter_async_context(
                running_telegram(tmp_path, fake_upstream, telegram_api, wrap=watch.wrap)
            )
            yield TelegramDriver(telegram_api, watch, services_of(telegram).store)
        else:
            discord = await stack.enter_async_context(
                running_discord(tmp_path, fake_upstream, discord_api, wrap=watch.wrap)
            )
            yield DiscordDriver(discord_api, watch, services_of(discord).store)


async def test_inbound_message_becomes_a_turn(driver: Driver) -> None:
    await driver.say("hello relay")
    [turn] = driver.turns
    assert turn.channel == driver.name
    assert turn.user_id == "42"
    assert turn.user_key == f"{driver.name}:42"
    assert turn.thread_id
    assert turn.thread_key.startswith(f"agent:main:{driver.name}:dm:")
    assert turn.chat_type == "dm"
    assert turn.text == "hello relay"
    assert turn.received_at.utcoffset() == timedelta(0)
    assert turn.received_at.tzinfo is UTC or turn.received_at.tzname() == "UTC"
    assert turn.commands_allowed
    assert turn.body["model"] == "fake-model"
    # The forwarded body's newest message is the user's (with the relay's block).
    assert turn.body["messages"][-1]["role"] == "user"
    assert turn.body["messages"][-1]["content"].startswith("hello relay\n\n<relay_context>")


async def test_reply_is_delivered(driver: Driver, fake_upstream: FakeUpstream) -> None:
    assert await driver.say("ping") == ["echo: ping"]
    assert len(fake_upstream.requests) == 1


async def test_history_is_forwarded_with_the_next_message(
    driver: Driver, fake_upstream: FakeUpstream
) -> None:
    await driver.say("first")
    await driver.say("second")
    messages = fake_upstream.last.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0] == fake_upstream.requests[0].body["messages"][-1]


async def test_a_failing_turn_is_answered_not_silent(
    driver: Driver, fake_upstream: FakeUpstream
) -> None:
    driver.watch.failure = StoreError("cannot write /var/lib/chronorelay/relay.sqlite3")
    [answer] = await driver.say("are you there?")
    assert answer.startswith("[") and "error" in answer
    driver.watch.failure = None
    assert await driver.say("and now?") == ["echo: and now?"]


async def test_an_upstream_refusal_is_explained(
    driver: Driver, fake_upstream: FakeUpstream
) -> None:
    error = {"message": "This model's maximum context length is 8192 tokens", "type": "x"}
    fake_upstream.failures = [Scripted(400, {"error": error})]
    [answer] = await driver.say("a very long question")
    assert answer == (
        "[the LLM refused the request (HTTP 400): This model's maximum context length is "
        "8192 tokens — tell the relay's operator if it keeps happening]"
    )


async def test_long_replies_fit_the_platform(driver: Driver, fake_upstream: FakeUpstream) -> None:
    lines = [f"line {i:03d} " + "x" * 90 for i in range(100)]  # about 10,000 characters
    fake_upstream.reply_content = "\n".join(lines)
    delivered = await driver.say("a long one please")
    if driver.limit is not None:
        assert len(delivered) > 1
        assert all(len(part) <= driver.limit for part in delivered)
    # Nothing lost, nothing reordered, no line cut in two.
    assert "\n".join(delivered).split("\n") == lines


async def test_commands_are_answered_by_the_relay(
    driver: Driver, fake_upstream: FakeUpstream
) -> None:
    [answer] = await driver.say("/tz Europe/Berlin")
    assert "Europe/Berlin" in answer
    [answer] = await driver.say("/time")
    assert "for you" in answer
    assert fake_upstream.requests == []


async def test_help_lists_the_command_catalog(driver: Driver, fake_upstream: FakeUpstream) -> None:
    [answer] = await driver.say("/help")
    assert answer.splitlines() == ["Commands:"] + [
        f"/{name} — {description}" for name, description in COMMANDS
    ]
    assert fake_upstream.requests == []


async def test_a_photo_alone_is_recorded_for_the_clock(
    driver: Driver, fake_upstream: FakeUpstream
) -> None:
    if not isinstance(driver, PlatformDriver):
        pytest.skip("the terminal has no media")
    assert await driver.send_photo() == [TEXT_ONLY]
    [photo] = driver.turns
    assert photo.observe_only and photo.text == "[photo, not passed on]"
    # The user did write: the thread and the user's last contact moved to the photo; the
    # relay's answer is the bot's message, as a command's answer is.
    thread = await driver.store.get_thread(photo.thread_key)
    user = await driver.store.get_user(photo.user_key)
    assert thread is not None and thread.last_user_message_at == photo.received_at
    assert thread.last_agent_message_at is not None
    assert thread.last_agent_message_at >= photo.received_at
    transcript = await driver.store.transcript(photo.thread_key)
    assert [(m.role, m.text) for m in transcript] == [
        ("user", "[photo, not passed on]"),
        ("assistant", TEXT_ONLY),
    ]
    assert user is not None and user.last_interaction_any_channel_at == photo.received_at
    assert fake_upstream.requests == []
    # The model later sees that a photo came, and nothing it could mistake for its content.
    await driver.say("did you get it?")
    [request] = fake_upstream.requests
    assert request.body["messages"][:2] == [
        {"role": "user", "content": "[photo, not passed on]"},
        {"role": "assistant", "content": TEXT_ONLY},
    ]
