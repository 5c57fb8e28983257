"""An agent framework's habits, through the real ``openai`` SDK, against the relay.

The agent resends its whole history every turn, edits it (a changed system prompt, its own
compaction), calls tools in parallel, retries after a timeout, abandons a stream, asks for
two answers, sends images, and lives through a relay restart. Over all of it the upstream
must see a conversation that only grows at its end (its prompt cache holds), and the
transcript must hold each thing the user said once. Then the agent gets things wrong, and
each mistake is a clear OpenAI-shaped error that loses nothing already accepted.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from datetime import UTC, datetime, timedelta
from typing import Any

import openai
import pytest

from middleware.clock.source import FakeClock
from proxy.keys import SERVICES
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream, Recorded, is_synthesis

THREAD = "agent:main:api:support"
WHO = {"X-Chronorelay-Thread": "support", "X-Chronorelay-User": "ana"}
KEY = "agent-key-0123456789"
AUTH = {"keys": [{"name": "agent", "key": KEY, "channels": ["api"]}]}


def _json(messages: list[Any]) -> str:
    return json.dumps(messages, ensure_ascii=False)


def chats(upstream: FakeUpstream) -> list[Recorded]:
    """The turns the upstream was asked, without the relay's own capture passes."""
    return [seen for seen in upstream.requests if not is_synthesis(seen.body)]


class Agent:
    """An agent as frameworks write them: one history, resent whole on every turn."""

    def __init__(self, relay: RunningServer, upstream: FakeUpstream, clock: FakeClock) -> None:
        self.history: list[dict[str, Any]] = [{"role": "system", "content": "You help Ana."}]
        self.upstream = upstream
        self.clock = clock
        self.sdk = self.connect(relay)
        # What the upstream saw this turn and the one before, each with the reply the
        # agent then appended.
        self.seen: list[Any] = []
        self.seen_before: list[Any] = []

    def connect(self, relay: RunningServer) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=f"{relay.url}/v1", api_key=KEY, max_retries=0)

    async def say(self, content: Any, *, after: timedelta = timedelta(minutes=5)) -> str:
        self.clock.advance(after)
        self.history.append({"role": "user", "content": content})
        return await self.send()

    async def send(self, **options: Any) -> str:
        done = await self.sdk.chat.completions.create(
            model="fake-model", messages=self.history, extra_headers=WHO, **options
        )
        text = done.choices[0].message.content or ""
        self.history.append({"role": "assistant", "content": text})
        forwarded = chats(self.upstream)[-1].body["messages"]
        self.seen_before, self.seen = self.seen, [*forwarded, self.history[-1]]
        return text

    def grew_at_its_end(self, skip: int = 0) -> bool:
        """Whether the upstream's last request began with all it saw the turn before
        (its messages after the first ``skip`` ones, which the agent itself changed)."""
        before = self.seen_before
        forwarded = chats(self.upstream)[-1].body["messages"]
        return _json(forwarded[skip : len(before)]) == _json(before[skip:])

    async def transcript(self, relay: RunningServer) -> list[tuple[str, str]]:
        messages = await relay.runner.app[SERVICES].store.transcript(THREAD, 500)
        return [(m.role, m.text) for m in messages]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 2, 8, 0, tzinfo=UTC))


async def test_a_week_of_an_agents_turns_only_ever_grows_the_upstreams_prompt(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock, auth=AUTH)
    agent = Agent(relay, fake_upstream, clock)
    async with agent.sdk:
        # A long conversation over days: every turn resends it all.
        for day in range(3):
            for turn in range(8):
                await agent.say(f"day {day} turn {turn}", after=timedelta(minutes=41))
                assert agent.grew_at_its_end()
            clock.advance(timedelta(hours=14))
        newest = chats(fake_upstream)[-1].body["messages"][-1]["content"]
        assert newest.startswith("day 2 turn 7\n\n<relay_context>\nNow: Wed 4 Nov")

        # The agent's operator edits its system prompt: only that message changes.
        agent.history[0] = {"role": "system", "content": "You help Ana. Be brief."}
        await agent.say("still there?")
        assert agent.grew_at_its_end(skip=1)

        # Parallel tool calls, answered together: the turn stays the user's, and its
        # message keeps the block it was first sent with.
        await agent.say("weather in Lisbon and Oslo?")
        asked = agent.seen[-2]
        agent.history += [
            {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
            {"role": "tool", "tool_call_id": "c1", "content": "Lisbon: sunny"},
            {"role": "tool", "tool_call_id": "c2", "content": "Oslo: snow"},
        ]
        assert await agent.send() == "tool said: Oslo: snow"
        assert chats(fake_upstream)[-1].body["messages"][-5] == asked

        # An image with its question: the block rides as one more text part.
        photo = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}}
        await agent.say([{"type": "text", "text": "what is this?"}, photo])
        assert agent.grew_at_its_end()
        parts = chats(fake_upstream)[-1].body["messages"][-1]["content"]
        assert parts[:2] == [{"type": "text", "text": "what is this?"}, photo]
        assert parts[2]["text"].startswith("<relay_context>\nNow: ")

        # The agent compacts: a summary replaces its first 30 messages. What it kept
        # goes upstream exactly as before, blocks and all.
        kept = agent.history[31:]
        agent.history = [agent.history[0], {"role": "user", "content": "Summary: ..."}, *kept]
        before = agent.seen[-len(kept) :]
        await agent.say("and now?")
        forwarded = chats(fake_upstream)[-1].body["messages"]
        assert _json(forwarded[2 : 2 + len(kept)]) == _json(before)

    # The relay restarts between two turns, on the same SQLite file.
    await relay.stop()
    relay = await relay_factory(fake_clock=clock, auth=AUTH)
    agent.sdk = agent.connect(relay)
    async with agent.sdk:
        await agent.say("back after the weekend", after=timedelta(days=2))
        assert agent.grew_at_its_end()

    said = [text for role, text in await agent.transcript(relay) if role == "user"]
    assert said == [
        *(f"day {d} turn {t}" for d in range(3) for t in range(8)),
        "still there?",
        "weather in Lisbon and Oslo?",
        "what is this?\n[image]",
        "and now?",
        "back after the weekend",
    ]


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "weather", "arguments": "{}"}}


async def test_a_retry_after_a_timeout_is_the_same_message_with_the_same_block(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock, auth=AUTH)
    agent = Agent(relay, fake_upstream, clock)
    async with agent.sdk:
        await agent.say("hello")
        clock.advance(timedelta(hours=2))
        agent.history.append({"role": "user", "content": "are you slow today?"})
        fake_upstream.delay = 2
        with pytest.raises(openai.APITimeoutError):
            await agent.sdk.chat.completions.create(
                model="fake-model", messages=agent.history, extra_headers=WHO, timeout=0.3
            )
        fake_upstream.delay = 0
        # The framework sends the very same request again, a minute later.
        clock.advance(timedelta(minutes=1))
        await agent.send()
    timed_out, retried = chats(fake_upstream)[-2:]
    assert retried.body["messages"] == timed_out.body["messages"]
    assert "Last message here: 2 hours ago" in retried.body["messages"][-1]["content"]
    assert [t for r, t in await agent.transcript(relay) if r == "user"] == [
        "hello",
        "are you slow today?",
    ]


async def test_a_stream_abandoned_after_its_first_chunk_leaves_the_next_turn_whole(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock, auth=AUTH)
    agent = Agent(relay, fake_upstream, clock)
    async with agent.sdk:
        await agent.say("tell me a long story")
        clock.advance(timedelta(minutes=2))
        agent.history.append({"role": "user", "content": "a longer one"})
        fake_upstream.event_delay = 0.2
        stream = await agent.sdk.chat.completions.create(
            model="fake-model", messages=agent.history, extra_headers=WHO, stream=True
        )
        async for _ in stream:
            break  # the user pressed stop
        await stream.close()
        await asyncio.wait_for(fake_upstream.stream_cancelled.wait(), timeout=5)
        fake_upstream.event_delay = 0
        abandoned = chats(fake_upstream)[-1].body["messages"]
        # The framework drops the cut-off answer and goes on.
        await agent.say("never mind", after=timedelta(minutes=1))
    forwarded = chats(fake_upstream)[-1].body["messages"]
    assert forwarded[: len(abandoned)] == abandoned
    transcript = await relay.runner.app[SERVICES].store.transcript(THREAD, 10)
    assert [(m.role, m.complete) for m in transcript] == [
        ("user", True),
        ("assistant", True),
        ("user", True),
        ("assistant", False),  # the cut-off answer, marked as such
        ("user", True),
        ("assistant", True),
    ]


@pytest.mark.parametrize("stream", [False, True])
async def test_two_answers_asked_for_record_the_first(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock, stream: bool
) -> None:
    relay = await relay_factory(fake_clock=clock, auth=AUTH)
    agent = Agent(relay, fake_upstream, clock)
    agent.history.append({"role": "user", "content": "two taglines please"})
    async with agent.sdk:
        if stream:
            chunks = await agent.sdk.chat.completions.create(
                model="fake-model", messages=agent.history, extra_headers=WHO, n=2, stream=True
            )
            answers: dict[int, str] = {}
            async for chunk in chunks:
                for choice in chunk.choices:
                    answers[choice.index] = answers.get(choice.index, "")
                    answers[choice.index] += choice.delta.content or ""
        else:
            done = await agent.sdk.chat.completions.create(
                model="fake-model", messages=agent.history, extra_headers=WHO, n=2
            )
            answers = {c.index: c.message.content or "" for c in done.choices}
    assert answers == {0: "echo: two taglines please", 1: "alternative 1"}
    assert await agent.transcript(relay) == [
        ("user", "two taglines please"),
        ("assistant", "echo: two taglines please"),
    ]


async def test_the_sync_client_gets_the_same_turns(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock, auth=AUTH)

    def converse() -> list[str]:
        history: list[Any] = []
        with openai.OpenAI(base_url=f"{relay.url}/v1", api_key=KEY, max_retries=0) as sdk:
            for text in ("hi", "and again"):
                history.append({"role": "user", "content": text})
                done = sdk.chat.completions.create(
                    model="fake-model", messages=history, extra_headers=WHO
                )
                history.append({"role": "assistant", "content": done.choices[0].message.content})
        return [m["content"] for m in history]

    # The sync client blocks, so it runs in a thread while the relay serves on this loop.
    assert await asyncio.to_thread(converse) == ["hi", "echo: hi", "and again", "echo: and again"]
    first, second = chats(fake_upstream)
    assert second.body["messages"][0] == first.body["messages"][0]


async def test_an_agents_mistakes_are_clear_errors_that_lose_nothing(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await relay_factory(fake_clock=clock, auth=AUTH)
    agent = Agent(relay, fake_upstream, clock)
    async with agent.sdk:
        await agent.say("remember: the launch is on Friday")
        accepted = agent.seen[:-1]
        create = agent.sdk.chat.completions.create

        with pytest.raises(openai.BadRequestError) as empty:
            await create(model="fake-model", messages=[], extra_headers=WHO)
        assert empty.value.param == "messages"
        assert "messages must be a non-empty list of messages" in empty.value.message

        wrong = [*agent.history, {"role": "user", "content": 42}]
        with pytest.raises(openai.BadRequestError) as typed:
            await create(model="fake-model", messages=wrong, extra_headers=WHO)  # type: ignore[arg-type]
        assert typed.value.param == "messages[3].content"
        assert "must be a string, a list of content parts, or null" in typed.value.message

        as_telegram = {**WHO, "X-Chronorelay-Channel": "telegram"}
        with pytest.raises(openai.PermissionDeniedError) as foreign:
            await create(model="fake-model", messages=agent.history, extra_headers=as_telegram)
        assert "may not speak for channel 'telegram' (it may for: api)" in foreign.value.message

        # A pasted log of 5 MB is under the relay's 8 MiB limit: it goes through whole.
        with warnings.catch_warnings():
            # aiohttp's note on a large in-memory body, for the upstream's own client.
            warnings.simplefilter("ignore", ResourceWarning)
            await agent.say("here is the log:\n" + "x" * 5_000_000)
        assert len(chats(fake_upstream)[-1].body["messages"][-1]["content"]) > 5_000_000

        # The OpenAI ``user`` field names the person when no header does.
        await agent.sdk.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "hi from Bo"}],
            user="bo smith",
        )

    # Nothing refused reached the upstream or the transcript; what was accepted holds.
    assert len(chats(fake_upstream)) == 3
    assert chats(fake_upstream)[1].body["messages"][: len(accepted)] == accepted
    said = [text[:20] for role, text in await agent.transcript(relay) if role == "user"]
    assert said == ["remember: the launch", "here is the log:\nxxx"]
    bo = await relay.runner.app[SERVICES].store.transcript("agent:main:api:bo%20smith", 5)
    assert [m.text for m in bo] == ["hi from Bo", "echo: hi from Bo"]
