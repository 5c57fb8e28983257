"""A week of one agent on the OpenAI-compatible API, as its developer meets it.

One agent (the real ``openai`` SDK) serves two users, Alice (Berlin) and Bob (New York),
in three threads: Alice's DM, Bob's DM and a "standup" group they share. A fake clock
moves from Monday morning to Sunday: gaps of minutes, hours and days, streaming and not,
a tool call, a client timeout and the resend that follows, the agent compacting its
history, and a relay restart on the same store. At each turn the test reads what the
upstream received (the block, where it rides, the earlier blocks replayed) and what the
client got back.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import openai

from middleware.clock.source import FakeClock
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream
from tests.proxy.test_admin import ADMIN, call

MONDAY = datetime(2026, 3, 2, 7, 30, tzinfo=UTC)
OPEN, CLOSE = "<relay_context>\n", "\n</relay_context>"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
Messages = list[dict[str, Any]]


class Agent:
    """The agent under test: the real SDK against the relay, one user and thread per call."""

    def __init__(self, relay: RunningServer, upstream: FakeUpstream, clock: FakeClock) -> None:
        self.relay, self.upstream, self.clock = relay, upstream, clock
        self.sdk = openai.AsyncOpenAI(base_url=f"{relay.url}/v1", api_key="k", max_retries=0)

    @staticmethod
    def headers(user: str, thread: str, chat_type: str = "dm") -> dict[str, str]:
        return {
            "X-Chronorelay-User": user,
            "X-Chronorelay-User-Name": user.capitalize(),
            "X-Chronorelay-Thread": thread,
            "X-Chronorelay-Chat-Type": chat_type,
        }

    async def turn(
        self, user: str, thread: str, messages: Messages, *, chat_type: str = "dm"
    ) -> openai.types.chat.ChatCompletion:
        """Send ``messages``; append the assistant's answer to them, as an agent does."""
        raw = await self.sdk.chat.completions.with_raw_response.create(
            model="fake-model",
            messages=messages,  # type: ignore[arg-type]
            extra_headers=self.headers(user, thread, chat_type),
        )
        assert raw.headers["X-Chronorelay-Thread-Key"] == f"agent:main:api:{thread}"
        completion = raw.parse()
        messages.append({"role": "assistant", "content": completion.choices[0].message.content})
        return completion

    async def set_timezone(self, user_key: str, zone: str) -> None:
        relay = self.relay
        assert relay is not None
        status, user = await call(
            relay, "PUT", f"/admin/users/{user_key}/timezone", {"timezone": zone}
        )
        assert status == 200, user

    def forwarded(self) -> Messages:
        return list(self.upstream.last.body["messages"])

    def block(self) -> str:
        """The block the upstream received with the newest message ('' for none)."""
        content = str(self.forwarded()[-1]["content"])
        return content.split(OPEN, 1)[1].split(CLOSE)[0] if OPEN in content else ""


async def start_relay(factory: RelayFactory, clock: FakeClock) -> RunningServer:
    return await factory(
        fake_clock=clock,
        auth={"admin_token": ADMIN},
        server={"api_commands": True},
        # No capture pass through the upstream: it would add requests to the recording.
        continuity={"mode": "deterministic"},
    )


def user_contents(messages: Messages) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "user"]


async def test_a_week_of_one_agent_two_users_three_threads(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    clock = FakeClock(MONDAY)
    agent = Agent(await start_relay(relay_factory, clock), fake_upstream, clock)
    alice: Messages = [{"role": "system", "content": "You are Alice's assistant."}]
    bob: Messages = [{"role": "system", "content": "You are Bob's assistant."}]
    standup: Messages = [{"role": "system", "content": "You help the standup group."}]

    # -- Monday 07:30 UTC: first words in both DMs, then the operator sets their zones ----
    alice.append({"role": "user", "content": "Morning! I'm a nurse."})
    answer = await agent.turn("alice", "alice-dm", alice)
    # The client sees the model's answer, never the relay's block.
    assert answer.choices[0].message.content == "echo: Morning! I'm a nurse."
    forwarded = agent.forwarded()
    assert forwarded[0] == alice[0], "the agent's system prompt is forwarded byte-for-byte"
    assert forwarded[1]["content"].startswith("Morning! I'm a nurse.\n\n" + OPEN)
    assert "Mon 2 Mar 2026 07:30" in agent.block()
    assert "First message in this thread" in agent.block()

    bob.append({"role": "user", "content": "hi, I work as a pilot"})
    await agent.turn("bob", "bob-dm", bob)
    assert "pilot" in agent.block().lower() and "nurse" not in agent.block().lower()

    await agent.set_timezone("api:alice", "Europe/Berlin")
    await agent.set_timezone("api:bob", "America/New_York")

    # -- Monday 07:32: Alice leaves for the gym; two hours later the relay checks in ------
    clock.advance(timedelta(minutes=2))
    alice.append({"role": "user", "content": "heading to the gym now"})
    await agent.turn("alice", "alice-dm", alice)
    assert "08:32 (Europe/Berlin" in agent.block()
    assert "2 minutes ago" in agent.block()
    before = agent.forwarded()

    clock.advance(timedelta(hours=2, minutes=5))
    alice.append({"role": "user", "content": "hey"})
    await agent.turn("alice", "alice-dm", alice)
    checked_in = agent.block()
    assert "Check-in (action_gap_2h)" in checked_in and "gym" in checked_in
    # Append-only: every earlier message goes as it went, its block included.
    assert agent.forwarded()[: len(before)] == before

    # -- Monday 09:45: the upstream is slow, the agent times out and resends the turn -----
    clock.advance(timedelta(minutes=8))
    alice.append({"role": "user", "content": "how long was I gone?"})
    fake_upstream.delay = 1.0
    fake_upstream.request_cancelled.clear()
    async with openai.AsyncOpenAI(
        base_url=f"{agent.relay.url}/v1", api_key="k", max_retries=0, timeout=0.2
    ) as impatient:
        try:
            await impatient.chat.completions.create(
                model="fake-model",
                messages=alice,  # type: ignore[arg-type]
                extra_headers=agent.headers("alice", "alice-dm"),
            )
        except openai.APITimeoutError:
            pass
        else:
            raise AssertionError("the slow upstream should have timed the client out")
    # The upstream got the turn (it records before its delay), and is still answering.
    first_attempt = agent.forwarded()
    assert user_contents(first_attempt)[-1].startswith("how long was I gone?")
    fake_upstream.delay = 0.0
    # The client gone, the relay drops the abandoned turn's upstream request: the resend
    # is the only turn in flight.
    async with asyncio.timeout(5):
        await fake_upstream.request_cancelled.wait()
    clock.advance(timedelta(minutes=1))
    await agent.turn("alice", "alice-dm", alice)
    # The resend is the same turn: the same body upstream (its prefix cache holds), and
    # the check-in is not repeated.
    assert agent.forwarded() == first_attempt
    assert "Check-in" not in agent.block()

    # -- Monday 18:00: Bob, in the group, streams a tool call and its result --------------
    clock.set(datetime(2026, 3, 2, 18, 0, tzinfo=UTC))
    standup.append({"role": "user", "content": "what's the weather for the offsite?"})
    stream = await agent.sdk.chat.completions.create(
        model="fake-model",
        messages=standup,  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
        extra_headers=agent.headers("bob", "standup", "group"),
    )
    chunks = [chunk async for chunk in stream]
    calls = [call for c in chunks if c.choices for call in (c.choices[0].delta.tool_calls or [])]
    assert calls[0].id == "call_1" and calls[0].function is not None
    arguments = "".join(call.function.arguments or "" for call in calls if call.function)
    assert json.loads(arguments) == {"city": "Tokyo"}
    usage = chunks[-1].usage
    assert chunks[-1].choices == [] and usage is not None and usage.total_tokens == 10
    group_block = agent.block()
    assert "Speaker: Bob" in group_block
    assert "13:00 (America/New_York" in group_block
    assert "pilot" not in group_block.lower(), "Bob's private facts stay out of the group"

    tool_call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": arguments},
            }
        ],
    }
    standup += [tool_call, {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
    await agent.turn("bob", "standup", standup, chat_type="group")
    # The tool round goes as the agent sent it; the user's block is replayed, none added.
    assert agent.forwarded()[-2:] == standup[-3:-1]
    assert user_contents(agent.forwarded())[-1].endswith(OPEN + group_block + CLOSE)

    # -- Tuesday 08:00: Alice joins the group, then her DM after a night ------------------
    clock.set(datetime(2026, 3, 3, 8, 0, tzinfo=UTC))
    standup.append({"role": "user", "content": "I'll bring coffee"})
    await agent.turn("alice", "standup", standup, chat_type="group")
    block = agent.block()
    assert "Speaker: Alice" in block
    assert "Alice: Tue 09:00 (Europe/Berlin)" in block
    assert "Bob: Tue 03:00 (America/New_York)" in block
    assert "nurse" not in block.lower(), "Alice's private facts stay out of the group"

    clock.advance(timedelta(minutes=30))
    alice.append({"role": "user", "content": "morning again"})
    await agent.turn("alice", "alice-dm", alice)
    block = agent.block()
    assert "Tue 3 Mar 2026 09:30 (Europe/Berlin" in block
    # Since her last DM message (Monday 09:46 UTC = 10:46 Berlin), not the group one.
    assert "Last message here: 22 hours 44 minutes ago (Mon 2 Mar 10:46)" in block
    assert "nurse" in block.lower() and "pilot" not in block.lower()
    cards_message = alice[-1]["content"]

    # -- Tuesday 09:40: the agent compacts Alice's history --------------------------------
    clock.advance(timedelta(minutes=10))
    alice = [
        alice[0],
        {"role": "user", "content": "Summary so far: Alice is a nurse, went to the gym."},
        {"role": "user", "content": "where were we?"},
    ]
    await agent.turn("alice", "alice-dm", alice)
    forwarded = agent.forwarded()
    assert cards_message not in user_contents(forwarded)
    # The agent's own summary goes as written; the cards the dropped message carried come
    # back once, with the newest message.
    assert forwarded[1] == alice[1]
    assert sum("living_memory" in text for text in user_contents(forwarded)) == 1
    assert "nurse" in agent.block().lower()
    compacted = agent.forwarded()

    # -- Thursday: the relay restarts on the same store -----------------------------------
    await agent.sdk.close()
    await agent.relay.stop()
    agent = Agent(await start_relay(relay_factory, clock), fake_upstream, clock)
    clock.set(datetime(2026, 3, 5, 19, 0, tzinfo=UTC))
    alice.append({"role": "user", "content": "evening, still here"})
    await agent.turn("alice", "alice-dm", alice)
    # What was injected before the restart is replayed from the store, byte for byte.
    assert agent.forwarded()[: len(compacted)] == compacted
    block = agent.block()
    assert "Thu 5 Mar 2026 20:00 (Europe/Berlin" in block
    assert "Last message here: 2 days 10 hours ago (Tue 3 Mar 09:40)" in block

    # A chat command is answered by the relay itself, streamed like a completion and
    # dated by the relay's clock.
    clock.advance(timedelta(minutes=1))
    alice.append({"role": "user", "content": "/time"})
    sent = len(fake_upstream.requests)
    stream = await agent.sdk.chat.completions.create(
        model="fake-model",
        messages=alice,  # type: ignore[arg-type]
        stream=True,
        extra_headers=agent.headers("alice", "alice-dm"),
    )
    chunks = [chunk async for chunk in stream]
    assert len(fake_upstream.requests) == sent
    assert "20:01 (Europe/Berlin" in "".join(c.choices[0].delta.content or "" for c in chunks)
    assert {chunk.created for chunk in chunks} == {int(clock.now().timestamp())}

    # -- Sunday: Bob comes back to his DM after six days ----------------------------------
    clock.set(datetime(2026, 3, 8, 13, 0, tzinfo=UTC))
    bob.append({"role": "user", "content": "hi again"})
    await agent.turn("bob", "bob-dm", bob)
    block = agent.block()
    assert "Sun 8 Mar 2026 09:00 (America/New_York" in block
    assert "Last message here: 6 days 5 hours ago (Mon 2 Mar 02:30)" in block
    assert "pilot" in block.lower() and "nurse" not in block.lower()
    await agent.sdk.close()
