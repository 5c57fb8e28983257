"""Continuity through the HTTP endpoint (spec 001): sessions, captures, the three tier
cards at boot, across days, threads and linked channels, with a fake clock."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from middleware.cards.tokens import count_tokens
from middleware.clock.source import FakeClock
from proxy.keys import SERVICES
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream, is_synthesis

MONDAY = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
ADMIN = "admin-token-0123456789"
SESSION_ONE = {
    "session_summary": (
        "Completed subsections 1-3 (price impact). Event study pending — waiting on "
        "Christensen data."
    ),
    "open_questions": [{"question": "Address Dura more directly in the intro", "context": ""}],
    "key_decisions": [
        {"decision": "Focusing on price impact approach over corrective disclosure alone"}
    ],
    "work_phase": "drafting",
}
SESSION_TWO = {
    "session_summary": "Outlined the event study section; expert data still missing.",
    "open_questions": [],
    "key_decisions": [],
    "work_phase": "drafting",
}


class Person:
    """Someone talking to the relay as an agent would: channel, thread and user headers."""

    def __init__(
        self,
        relay: RunningServer,
        upstream: FakeUpstream,
        clock: FakeClock,
        *,
        channel: str = "api",
        user: str = "ana",
        thread: str | None = "t1",
        chat_type: str = "dm",
    ) -> None:
        self.relay, self.upstream, self.clock = relay, upstream, clock
        self.channel, self.user, self.thread, self.chat_type = channel, user, thread, chat_type

    def headers(self) -> dict[str, str]:
        headers = {
            "X-Chronorelay-Channel": self.channel,
            "X-Chronorelay-User": self.user,
            "X-Chronorelay-Chat-Type": self.chat_type,
        }
        if self.thread is not None:
            headers["X-Chronorelay-Thread"] = self.thread
        return headers

    async def send(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body = {"model": "m", "messages": messages}
        async with aiohttp.ClientSession() as http:
            async with http.post(
                f"{self.relay.url}/v1/chat/completions", json=body, headers=self.headers()
            ) as response:
                assert response.status == 200, await response.text()
                return dict(await response.json())

    async def say(self, text: str, *, after: timedelta = timedelta(0)) -> str:
        """Send ``text``; return the relay's answer text."""
        self.clock.advance(after)
        answer = await self.send([{"role": "user", "content": text}])
        return str(answer["choices"][0]["message"]["content"])

    async def block_for(self, text: str, *, after: timedelta = timedelta(0)) -> str:
        """Send ``text``; return the relay block the upstream received with it."""
        await self.say(text, after=after)
        chats = [r for r in self.upstream.requests if not is_synthesis(r.body)]
        content = str(chats[-1].body["messages"][-1]["content"])
        if "<relay_context>" not in content:
            return ""
        return content.split("<relay_context>\n", 1)[1].split("\n</relay_context>")[0]


async def admin(relay: RunningServer, method: str, path: str, body: Any = None) -> Any:
    async with aiohttp.ClientSession() as http:
        async with http.request(
            method, f"{relay.url}{path}", json=body, headers={"Authorization": f"Bearer {ADMIN}"}
        ) as response:
            payload = await response.json()
            return response.status, payload


async def tick(relay: RunningServer) -> list[dict[str, Any]]:
    status, report = await admin(relay, "POST", "/admin/jobs/scheduler/run")
    assert status == 200, report
    return list(report["captures"])


def cards_in(block: str) -> dict[str, str]:
    """The block's cards by tag."""
    found = {}
    for part in block.split("<card ")[1:]:
        tag = part.split('tag="', 1)[1].split('"', 1)[0]
        found[tag] = "<card " + part.split("</card>", 1)[0] + "</card>"
    return found


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(MONDAY)


async def make_relay(
    relay_factory: RelayFactory, clock: FakeClock, **sections: dict[str, Any]
) -> RunningServer:
    return await relay_factory(
        fake_clock=clock,
        server={"api_commands": True},
        auth={"admin_token": ADMIN},
        **sections,
    )


async def test_returning_user_meets_where_they_left_off_across_channels(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """Spec 001 §1.1: three sessions on two linked channels; a week later the first
    prompt carries the §6.1 card."""
    relay = await make_relay(relay_factory, clock)
    tg = Person(relay, fake_upstream, clock, channel="telegram", user="1", thread="1")
    dc = Person(
        relay, fake_upstream, clock, channel="discord", user="2", thread="legal", chat_type="group"
    )
    await tg.say("hello")
    await dc.say("hello", after=timedelta(minutes=1))
    status, _ = await admin(
        relay, "POST", "/admin/links", {"user_keys": ["telegram:1", "discord:2"]}
    )
    assert status == 200

    # Session 1, Monday, Telegram.
    fake_upstream.synthesis_reply = json.dumps(SESSION_ONE)
    answer = await tg.say("/context Henderson damages", after=timedelta(hours=2))
    assert "Henderson damages" in answer
    await tg.say("Let's draft the damages section: subsections 1-3 on price impact.")
    await tg.say("Remember that I'm a securities litigator.")
    await tg.say("Event study is pending, waiting on expert data from Christensen.")
    captures = await tick(relay)
    assert captures == []  # still talking: not idle yet
    clock.advance(timedelta(minutes=16))
    captures = await tick(relay)
    assert [c["trigger"] for c in captures] == ["idle_timeout"]
    assert captures[0]["mode"] == "llm_enriched"

    # Session 2, Wednesday, Discord: same work context, advanced there.
    fake_upstream.synthesis_reply = json.dumps(SESSION_TWO)
    await dc.say("/context henderson damages", after=timedelta(days=2))
    for text in ("Outlining the event study now.", "Sections A and B done.", "ok"):
        await dc.say(text)
    clock.advance(timedelta(minutes=20))
    assert [c["trigger"] for c in await tick(relay)] == ["idle_timeout"]

    # A week later, back on Telegram.
    block = await tg.block_for("let's continue", after=timedelta(days=5))
    cards = cards_in(block)
    resume = cards["resume"]
    assert resume.startswith('<card type="continuity" tag="resume">')
    assert "Henderson damages" in resume and "drafting" in resume
    assert "Outlined the event study section" in resume
    assert "Dura" in resume
    assert "price impact approach" in resume
    assert "Discord" in resume  # since last session: advanced elsewhere
    assert "continues the drafting work" in resume  # §6.5 terse first message
    assert "securities litigator" in cards["living_memory"]
    assert count_tokens(resume) <= 120
    assert sum(count_tokens(card) for card in cards.values()) <= 420

    # The cards ride with the first message only; the next turn gets none.
    assert "<card" not in await tg.block_for("and the intro?")


async def test_preview_shows_the_cards_a_returning_user_would_get(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "We decided to go with the SQLite store first.",
        "I still need to figure out the backup story.",
        "ok, more later",
    ):
        await ana.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200 and result["captured"], result
    assert result["mode"] == "deterministic"
    clock.advance(timedelta(days=1))
    status, preview = await admin(
        relay,
        "POST",
        "/admin/threads/agent:main:api:t1/preview",
        {"text": "hi again", "user_key": "api:ana"},
    )
    assert status == 200, preview
    assert '<card type="continuity" tag="resume">' in preview["block"]
    assert "backup story" in preview["block"] and "(unconfirmed)" in preview["block"]
    # A preview writes nothing: the real first message still gets the same card.
    block = await ana.block_for("hi again")
    assert cards_in(block)["resume"] in preview["block"]


async def test_a_command_after_a_break_leaves_the_preview_showing_the_new_sessions_cards(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """Back after two days, /tz first: a command is no contact, so the preview of the
    next message shows the cards it will get, as the real message then does."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "We decided to go with the SQLite store first.",
        "I still need to figure out the backup story.",
        "ok, more later",
    ):
        await ana.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200 and result["captured"], result
    assert "Europe/London" in await ana.say("/tz Europe/London", after=timedelta(days=2))
    clock.advance(timedelta(minutes=1))
    status, preview = await admin(
        relay,
        "POST",
        "/admin/threads/agent:main:api:t1/preview",
        {"text": "hi again", "user_key": "api:ana"},
    )
    assert status == 200, preview
    assert '<card type="continuity" tag="resume">' in (preview["block"] or ""), preview
    block = await ana.block_for("hi again")
    assert cards_in(block)["resume"] in preview["block"]


async def test_rapid_switching_captures_twice_not_five_times(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """Spec 001 §5.2's table, minute by minute."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    start = clock.now()
    script: dict[int, list[tuple[str, int]]] = {
        0: [("henderson", 5)],
        3: [("johnson", 1)],
        8: [("henderson", 1)],
        11: [("doc24", 1)],
        16: [("johnson", 3)],
        31: [("johnson", 1)],
    }
    fired: list[tuple[int, str, str]] = []
    for minute in range(0, 50):
        clock.set(start + timedelta(minutes=minute))
        for thread, turns in script.get(minute, []):
            who = Person(relay, fake_upstream, clock, thread=thread)
            for n in range(turns):
                await who.say(f"{thread} point {n}")
        for capture in await tick(relay):
            thread = capture["session_id"]
            fired.append((minute, capture["trigger"], thread))
    assert [(m, t) for m, t, _ in fired] == [(30, "debounced_defocus"), (46, "idle_timeout")]


async def test_capture_falls_back_when_the_llm_fails(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"synthesis_timeout_seconds": 0.3})
    ana = Person(relay, fake_upstream, clock)
    for reply, reason in (
        ("this is not JSON at all", "invalid JSON"),
        ('{"session_summary": 5}', "wrong shape"),
    ):
        fake_upstream.synthesis_reply = reply
        for text in ("We decided to ship on Friday.", "one", "two"):
            await ana.say(text, after=timedelta(minutes=1))
        status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
        assert result["captured"] and result["mode"] == "deterministic", result
        assert reason in result["fallback_reason"]
    fake_upstream.synthesis_reply = json.dumps(SESSION_TWO)
    fake_upstream.synthesis_delay = 5
    for text in ("three", "four", "five"):
        await ana.say(text, after=timedelta(minutes=1))
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert "timed out" in result["fallback_reason"]
    fake_upstream.synthesis_delay = 0
    for text in ("six", "seven", "eight"):
        await ana.say(text, after=timedelta(minutes=1))
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert result["mode"] == "llm_enriched" and result["summary"] == SESSION_TWO["session_summary"]


async def test_the_llm_capture_reads_forwarded_and_quoted_words_as_not_the_users(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The capture prompt read "User: [forwarded from Bo] I'll send the signed contract
    # on Friday": the model took Bo's plan for the user's open item.
    relay = await make_relay(relay_factory, clock)
    ana = Person(relay, fake_upstream, clock)
    fake_upstream.synthesis_reply = json.dumps(SESSION_TWO)
    for text in (
        "Let's get the Lisbon offsite booked.",
        "[forwarded from Bo] I'll send the signed contract on Friday.",
        '[replying to Bo: "we decided on the hotel by the river"] I still need to book the '
        "flights.",
    ):
        await ana.say(text, after=timedelta(minutes=1))
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200 and result["mode"] == "llm_enriched", result
    prompt = str(
        [r for r in fake_upstream.requests if is_synthesis(r.body)][-1].body["messages"][-1][
            "content"
        ]
    )
    user_lines = [line for line in prompt.splitlines() if line.startswith("User:")]
    assert "User: Let's get the Lisbon offsite booked." in user_lines, prompt
    assert not any("contract" in line or "river" in line for line in user_lines), prompt
    assert (
        "User forwarded a message (Bo's words, not the user's): "
        "I'll send the signed contract on Friday."
    ) in prompt, prompt
    assert (
        'User, replying to "we decided on the hotel by the river" (Bo\'s words, not the '
        "user's): I still need to book the flights."
    ) in prompt, prompt


async def test_client_compaction_captures_in_the_background_and_brings_the_cards_back(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"synthesis_timeout_seconds": 2})
    ana = Person(relay, fake_upstream, clock)
    history: list[dict[str, Any]] = []

    async def turn(text: str) -> str:
        history.append({"role": "user", "content": text})
        answer = await ana.send(history)
        history.append({"role": "assistant", "content": answer["choices"][0]["message"]["content"]})
        chats = [r for r in fake_upstream.requests if not is_synthesis(r.body)]
        return str(chats[-1].body["messages"][-1]["content"])

    first = await turn("Remember that I prefer short answers.")
    # Learned from this very message, and at once part of the session's cards.
    assert 'tag="living_memory"' in first and "Prefers short answers" in first
    clock.advance(timedelta(hours=3))
    boot = await turn("Call me Ana.")
    assert 'tag="living_memory"' in boot and "short answers" in boot
    for text in ("a", "b", "c"):
        assert "<card" not in await turn(text)
    # The capture pass will not be answered until the gate opens: if the reply waited
    # for it, this test would hang.
    fake_upstream.synthesis_reply = json.dumps(SESSION_TWO)
    fake_upstream.synthesis_gate = asyncio.Event()
    del history[:4]  # the client compacted: the message with the cards is gone
    compacted = await turn("d")
    assert 'tag="living_memory"' in compacted and "Ana" in compacted
    async with asyncio.timeout(10):
        await fake_upstream.synthesis_seen.wait()
    fake_upstream.synthesis_gate.set()
    await wait_for_capture(ana)


async def wait_for_capture(person: Person) -> None:
    """Until the thread's latest capture is done (/recap shows a summary)."""
    async with asyncio.timeout(10):
        # The relay announces no finished capture: ask until /recap shows it.
        while "Nothing captured" in await person.say("/recap"):  # noqa: ASYNC110
            await asyncio.sleep(0.05)


async def test_naming_the_context_a_thread_is_already_in_says_so_and_counts_read_right(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # "/context Henderson" twice said "Moved this thread into “Henderson”" twice, and a
    # capture of one item was "1 entries".
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("/context Henderson damages")
    again = await ana.say("/context  henderson DAMAGES")
    assert again == "This thread is already in “Henderson damages”.", again
    other = Person(relay, fake_upstream, clock, thread="t2")
    await other.say("/context Henderson damages")
    shared = await ana.say("/context Henderson damages")
    assert shared == (
        "This thread is already in “Henderson damages”. It is also used by 1 other thread."
    )
    fresh = Person(relay, fake_upstream, clock, thread="t3")
    await fresh.say("hello")
    assert "deterministically: 1 entry." in await fresh.say("/capture")


async def test_commands_context_recap_capture_memory(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    assert "no named work context" in await ana.say("/context")
    assert "Started a new work context “Album mix”" in await ana.say("/context Album mix")
    other = Person(relay, fake_upstream, clock, thread="t2")
    assert "Moved this thread into “Album mix”" in await other.say("/context  album   MIX ")
    assert "Nothing captured" in await ana.say("/recap")
    assert "Nothing new to capture" in await ana.say("/capture")
    for text in (
        "Let's go with the analog tape sim on the drums.",
        "I still need to figure out the vocal reverb.",
    ):
        await ana.say(text)
    captured = await ana.say("/capture")
    assert captured.startswith("Captured this session deterministically")
    recap = await ana.say("/recap")
    assert "Album mix" in recap and "vocal reverb" in recap and "tape sim" in recap
    # The other thread of the same context hears about it once.
    block = await other.block_for("back", after=timedelta(hours=2))
    assert "advanced on the API" in block
    # Marked delivered in the background once shown (a person takes longer to answer).
    await relay.runner.app[SERVICES].continuity.background.drain()
    assert "advanced on" not in await other.block_for("again", after=timedelta(hours=2))

    assert "don't remember anything" in await ana.say("/memory")
    assert "Remembered" in await ana.say("/memory add I mix on headphones at night")
    await ana.say("Call me Annie.")
    listing = await ana.say("/memory")
    # Kept about her, not in her voice: the card's reader would take "I" for itself.
    assert "1. Mixes on headphones at night" in listing and "Annie" in listing
    assert "Forgotten: Mixes on headphones" in await ana.say("/memory forget 1")
    assert "headphones" not in await ana.say("/memory")
    # One item left: the example given is one that exists.
    assert (
        await ana.say("/memory forget 9")
        == "There is no item 9. Give the number of the item to forget as /memory lists it "
        "(only 1), e.g. /memory forget 1"
    )
    await ana.say("/memory add I record at home")
    assert "(1 to 2), e.g. /memory forget 2" in await ana.say("/memory forget")


async def test_a_fact_forgotten_with_memory_forget_is_not_replayed_in_earlier_blocks(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock, tmp_path: Path
) -> None:
    """An agent sends its whole history each time: the card an earlier message rode with
    is replayed from the stored blocks. Once the user has forgotten a fact, no block of
    theirs, in any thread, tells it to the model again; the rest of each block stays."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana, other = (
        Person(relay, fake_upstream, clock),
        Person(relay, fake_upstream, clock, thread="t2"),
    )
    await ana.say("I'm vegan. I live in Porto.")
    histories: dict[str, list[dict[str, Any]]] = {}
    clock.advance(timedelta(days=1))
    for person in (ana, other):
        # The next day, each thread's first message carries the living memory card.
        history = [{"role": "user", "content": "Morning!"}]
        reply = await person.send(history)
        histories[person.thread or ""] = [*history, reply["choices"][0]["message"]]
        assert "Is vegan" in json.dumps(fake_upstream.last.body)
    before = json.dumps(fake_upstream.last.body["messages"][0])
    listing = await ana.say("/memory")
    number = next(line for line in listing.splitlines() if "Is vegan" in line).split(".")[0]
    assert await ana.say(f"/memory forget {number}") == "Forgotten: Is vegan"

    for person in (ana, other):
        history = [*histories[person.thread or ""], {"role": "user", "content": "Lunch ideas?"}]
        await person.send(history)
        forwarded = json.dumps(fake_upstream.last.body)
        assert "Is vegan" not in forwarded and "Lives in Porto" in forwarded, forwarded
    # Only the line went: the rest of the earlier block is as it was.
    assert json.dumps(fake_upstream.last.body["messages"][0]) == before.replace("Is vegan\\n", "")
    with closing(sqlite3.connect(tmp_path / "relay.sqlite3")) as db:
        held = db.execute("SELECT COUNT(*) FROM injections WHERE instr(text, 'Is vegan')")
        assert held.fetchone()[0] == 0


async def test_context_of_a_thread_without_a_name_reads_plainly(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """/context in a thread never named says what that means for the person, not
    "this thread's own (no name)"."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    assert await ana.say("/context") == (
        "This thread has no named work context: what you do here is remembered for this "
        "thread alone.\n"
        "Send /context NAME to give it a name: threads on any channel where you use the "
        "same name carry on the same work."
    )
    await ana.say("/context Album mix")
    assert await ana.say("/context") == (
        "This thread's work context: “Album mix”.\n"
        "Send /context NAME to move this thread into a named context."
    )


async def test_a_threads_own_context_is_not_shown_by_its_key(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    assert "Nothing captured in this thread yet" in await ana.say("/recap")
    for text in (
        "Let's draft the liner notes.",
        "Let's go with the analog tape sim.",
        "I still need to figure out the reverb.",
    ):
        await ana.say(text)
    await ana.say("/capture")
    recap = await ana.say("/recap")
    assert recap.startswith("This thread") and "reverb" in recap
    # A terse first message gets the phase hint, about this conversation, not its key.
    terse = await ana.block_for("where were we", after=timedelta(days=1))
    assert "continues the" in terse and "agent:main" not in terse
    block = await ana.block_for("back at it", after=timedelta(days=1))
    resume = cards_in(block)["resume"]
    assert resume.split("\n")[1].startswith("This conversation")
    await Person(relay, fake_upstream, clock, thread="t2").say("hello")
    listing = await Person(relay, fake_upstream, clock, thread="t2").say("/context")
    assert "a thread of its own on the API" in listing
    # The relay's thread keys are for the relay, not for the people or the model.
    assert not any("agent:main" in text for text in (recap, block, listing))


async def test_memory_and_other_contexts_are_not_listed_in_a_group(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("/memory add I see my therapist on Tuesdays")
    await ana.say("/context Job hunt")
    group = Person(relay, fake_upstream, clock, thread="g1", chat_type="group")

    # Everyone in the group reads the answers.
    for command in ("/memory", "/memory forget 1"):
        answer = await group.say(command)
        assert "therapist" not in answer and "direct chat" in answer, command
    assert "Remembered" in await group.say("/memory add I like the blue mug")
    context = await group.say("/context")
    assert "Job hunt" not in context and "direct chat" in context
    # In the direct chat, all of it; nothing was forgotten from the group.
    listing = await ana.say("/memory")
    assert "therapist on Tuesdays" in listing and "blue mug" in listing
    assert "Job hunt" in await Person(relay, fake_upstream, clock, thread="t9").say("/context")


async def test_admin_jobs_and_capture_errors(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    status, body = await admin(relay, "POST", "/admin/jobs/dreaming/run")
    assert status == 404 and "nightly" in body["error"]["message"]
    status, body = await admin(relay, "POST", "/admin/threads/agent:main:api:nope/capture")
    assert status == 404
    ana = Person(relay, fake_upstream, clock)
    await ana.say("hello")
    status, report = await admin(relay, "POST", "/admin/jobs/nightly/run")
    assert status == 200 and report["job"] == "nightly"
    status, again = await admin(relay, "POST", "/admin/jobs/nightly/run")
    assert again["obligations"] == 0 and again["directives"] == 0


async def test_a_group_gets_the_groups_work_not_the_speakers_private_cards(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """What Alice told the relay in her DM, and her other work, stay out of a group's
    block: everyone there reads it, and the replay keeps it for the whole session."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    dm = Person(relay, fake_upstream, clock, user="alice", thread="alice-dm")
    await dm.say("Remember that my therapy session is on Friday.")
    for text in ("We decided to sell the flat.", "I still need to figure out the notary.", "ok"):
        await dm.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:alice-dm/capture")
    assert status == 200 and result["captured"], result
    status, _ = await admin(relay, "POST", "/admin/jobs/nightly/run")
    assert status == 200
    group = Person(relay, fake_upstream, clock, user="alice", thread="grp", chat_type="group")

    block = await group.block_for("hi all", after=timedelta(hours=2))
    assert "therapy" not in block and "flat" not in block and "<card" not in block
    status, preview = await admin(
        relay,
        "POST",
        "/admin/threads/agent:main:api:grp/preview",
        {"text": "hi", "user_key": "api:alice", "received_at": "2026-11-03T12:00:00Z"},
    )
    assert status == 200 and "therapy" not in preview["block"], preview
    # Her own DM still gets all of it.
    home = cards_in(await dm.block_for("back", after=timedelta(hours=2)))
    assert "therapy" in home["living_memory"] and "notary" in home["resume"]


async def test_a_command_first_after_a_break_leaves_the_next_message_the_sessions_boot(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """A user back the next day asks /recap first: its answer never reaches the model, so
    their next message still starts the new session and brings the resume card."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    jo = Person(relay, fake_upstream, clock, user="jo", thread="billing")
    await jo.say("/context Billing migration")
    for text in (
        "We decided to use logical replication.",
        "I still need to figure out the cron jobs.",
        "ok",
    ):
        await jo.say(text, after=timedelta(minutes=1))
    clock.advance(timedelta(minutes=20))
    assert len(await tick(relay)) == 1
    recap = await jo.say("/recap", after=timedelta(hours=20))
    assert "cron jobs" in recap and "(2 min): " in recap, recap
    assert "don't remember" in await jo.say("/memory", after=timedelta(minutes=1))
    block = await jo.block_for("Let's continue.", after=timedelta(minutes=1))
    resume = cards_in(block)["resume"]
    # Its first message to its last: two minutes.
    assert "Last session (Mon, 2 min)" in resume and "Open: figure out the cron jobs" in resume
    # Once: the rest of the session rides on the replay.
    assert "<card" not in await jo.block_for("And the cutover?", after=timedelta(minutes=1))


async def test_a_session_is_dated_by_when_it_ended_not_when_it_was_captured(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """Monday 22:50-23:50, captured after the idle wait at 00:10 Tuesday: the card said
    "Last session (Tue, 1 h)" beside the block's "Last message here: … (Mon 2 Nov
    23:50)", and /recap the 3rd."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    jo = Person(relay, fake_upstream, clock, user="jo", thread="billing")
    clock.set(datetime(2026, 11, 2, 22, 30, tzinfo=UTC))
    await jo.say("/context Billing migration")
    for text in (
        "We decided to use logical replication.",
        "I still need to figure out the cron jobs.",
        "Let's look at the invoice table.",
        "ok night",
    ):
        await jo.say(text, after=timedelta(minutes=20))
    clock.advance(timedelta(minutes=20))
    assert len(await tick(relay)) == 1  # at 00:10 Tuesday
    clock.set(datetime(2026, 11, 4, 10, 0, tzinfo=UTC))
    block = await jo.block_for("Let's continue.")
    assert "(Mon 2 Nov 23:50)" in block
    assert "Last session (Mon, 1 h): " in cards_in(block)["resume"], block
    recap = await jo.say("/recap", after=timedelta(minutes=1))
    assert "- 2026-11-02 (1 h): " in recap and "2026-11-03" not in recap, recap


async def test_a_command_first_after_a_break_still_counts_for_nothing_after_a_restart(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """/recap, then the relay restarts on the same store: the next message still starts
    the new session, since the store, not the relay's memory, knows /recap was a command."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    jo = Person(relay, fake_upstream, clock, user="jo", thread="billing")
    await jo.say("/context Billing migration")
    for text in ("We decided to use logical replication.", "I still need to fix the cron jobs."):
        await jo.say(text, after=timedelta(minutes=1))
    await jo.say("ok", after=timedelta(minutes=1))
    clock.advance(timedelta(minutes=20))
    assert len(await tick(relay)) == 1
    assert "cron jobs" in await jo.say("/recap", after=timedelta(hours=20))
    await relay.stop()

    restarted = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    jo = Person(restarted, fake_upstream, clock, user="jo", thread="billing")
    block = await jo.block_for("Let's continue.", after=timedelta(minutes=1))
    assert "Open: fix the cron jobs" in cards_in(block)["resume"], block


async def test_recap_dates_are_the_users_own(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """Captured at 03:00 UTC Tuesday, which is Monday evening in Los Angeles."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("/tz America/Los_Angeles")
    clock.set(datetime(2026, 11, 3, 2, 50, tzinfo=UTC))
    for text in ("Let's go with the analog tape sim.", "I still need to figure out the reverb."):
        await ana.say(text)
    clock.set(datetime(2026, 11, 3, 3, 0, tzinfo=UTC))
    await ana.say("/capture")
    recap = await ana.say("/recap")
    assert "- 2026-11-02: " in recap and "2026-11-03" not in recap


async def test_a_fact_unmentioned_for_eight_months_is_shown_hedged(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    first = cards_in(await ana.block_for("I live in Berlin. I prefer short answers."))
    assert "Lives in Berlin" in first["living_memory"]
    assert "may be out of date" not in first["living_memory"]
    assert "said 2 Nov 2026, 95% sure" in await ana.say("/memory")

    # Eight months without a word about it: 0.95 - 8 x 0.05 = 0.55 (spec 003 §8).
    back = cards_in(await ana.block_for("hi again", after=timedelta(days=240)))
    memory = back["living_memory"]
    assert "Lives in Berlin (said Nov 2026, may be out of date)" in memory
    assert "Prefers short answers\n" in memory  # what she asked of us does not age
    listing = await ana.say("/memory")
    assert "Lives in Berlin — said 2 Nov 2026, 55% sure; may be out of date" in listing
    assert "Prefers short answers — said 2 Nov 2026, 95% sure\n" in listing

    # Said again: sure, and no longer hedged.
    again = cards_in(await ana.block_for("I live in Berlin.", after=timedelta(hours=5)))
    assert "may be out of date" not in again["living_memory"]
    assert "Lives in Berlin — said 30 Jun 2027, 100% sure" in await ana.say("/memory")


async def test_what_someone_says_in_a_group_does_not_rewrite_their_personal_memory(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """In a group people joke, quote and role-play: only what they plainly ask the
    assistant to keep about them is learned there."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    dm = Person(relay, fake_upstream, clock, user="ann", thread="ann-dm")
    await dm.say("My name is Ann. I live in Lisbon.")
    group = Person(relay, fake_upstream, clock, user="ann", thread="grp", chat_type="group")
    for text in (
        "My name is Bob. I live in Paris.",
        "call me when you land",
        "I prefer answers in verse.",
        "Remember that the deadline is Friday.",
    ):
        await group.say(text, after=timedelta(minutes=1))
    listing = await dm.say("/memory", after=timedelta(minutes=1))
    assert "Name: Ann — " in listing and "Lives in Lisbon" in listing, listing
    assert not any(word in listing for word in ("Bob", "Paris", "land", "verse", "deadline"))
    # Asked of the assistant (each message the API brings is), it is theirs to keep.
    await group.say("Call me Annie. Remember that I'm vegetarian.")
    listing = await dm.say("/memory", after=timedelta(minutes=1))
    assert "Name: Annie" in listing and "Is vegetarian" in listing and "Lisbon" in listing


async def test_a_group_may_teach_the_speaker_what_they_ask_and_correct_of_themselves(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ann = Person(relay, fake_upstream, clock, user="ann", thread="ann-dm")
    bob = Person(relay, fake_upstream, clock, user="bob", thread="bob-dm")
    await ann.say("I'm vegan.")
    await bob.say("I'm vegan.")
    group = Person(relay, fake_upstream, clock, user="ann", thread="grp", chat_type="group")
    await group.say("@bot remember I prefer metric units", after=timedelta(days=2))
    await group.say("@bot actually I'm vegetarian now, not vegan", after=timedelta(minutes=1))
    listing = await ann.say("/memory", after=timedelta(days=1))
    assert "Prefers metric units" in listing and "Is vegetarian — " in listing
    assert "Is vegan" not in listing, listing
    assert "Is vegan" in await bob.say("/memory")


async def test_a_pasted_transcript_teaches_nothing_about_the_user(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Summarize this transcript:\nBob: hey. I'm vegan.\nAlice: ok. I live in Lisbon.")
    await ana.say("what is wrong here?\n```\nI work at Acme.\n```", after=timedelta(minutes=1))
    assert "don't remember anything" in await ana.say("/memory", after=timedelta(days=1))
    # The user's own words around it are still theirs.
    await ana.say("Bob: hi\nAlice: hey\nI'm vegan.")
    assert "Is vegan" in await ana.say("/memory")


async def test_a_job_at_an_employer_follows_them_to_the_next_employer(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I work at Acme.")
    await ana.say("I'm a software engineer at Acme.", after=timedelta(days=1))
    listing = await ana.say("/memory")
    # One fact about the employer, not "Works at Acme" beside it.
    assert "1. Is a software engineer at Acme — " in listing and "\n2." not in listing, listing
    await ana.say("I'm now working at Globex.", after=timedelta(days=30))
    listing = await ana.say("/memory")
    assert "Acme" not in listing, listing
    assert "Is a software engineer — " in listing and "Is now working at Globex" in listing


async def test_everyday_things_said_in_passing_are_remembered_and_kept_current(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I love coffee. I have a dog called Rex. I love that idea.")
    await ana.say("I stopped drinking coffee.", after=timedelta(days=20))
    memory = cards_in(await ana.block_for("morning", after=timedelta(days=1)))["living_memory"]
    assert "Has a dog called Rex" in memory and "Stopped drinking coffee" in memory, memory
    assert "Loves coffee" not in memory and "idea" not in memory


async def test_a_month_of_a_life_told_in_chat_keeps_the_living_memory_card_current(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say(
        "I live in Berlin. I'm vegetarian. My girlfriend is called Sam. "
        "I have a dog called Rex. I go to the gym every morning."
    )
    for text in (
        "We just moved to Lisbon.",
        "I went vegan.",
        "We broke up.",
        "Dinner with my new boyfriend Tom tonight.",
        "I stopped going to the gym.",
        "I drink tea every morning now.",
        "My dog Rex passed away.",
        "I have a meeting every Monday.",
    ):
        await ana.say(text, after=timedelta(days=3))
    memory = cards_in(await ana.block_for("morning", after=timedelta(days=1)))["living_memory"]
    for now in (
        "Lives in Lisbon",
        "Is vegan",
        "Their boyfriend is called Tom",
        "Stopped going to the gym",
        "Drinks tea every morning",
    ):
        assert now in memory, memory
    for stale in ("Berlin", "vegetarian", "Sam", "Rex", "Goes to the gym", "meeting", "died"):
        assert stale not in memory, memory
    # Said again in other words, each is surer (spec 003 §8: +0.05 a repeat mention).
    await ana.say("I live in Lisbon. I'm vegan.", after=timedelta(days=1))
    listing = await ana.say("/memory")
    assert "Lives in Lisbon — said 28 Nov 2026, 100% sure" in listing, listing
    assert "Is vegan — said 28 Nov 2026, 100% sure" in listing, listing
    assert "Drinks tea every morning — said 20 Nov 2026, 95% sure" in listing, listing


async def test_a_fact_said_of_this_week_is_not_told_as_current_three_weeks_later(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("/tz Europe/Lisbon")
    await ana.say("Please remember that I'm in Lisbon this week. I'm vegan.")
    memory = cards_in(await ana.block_for("hi", after=timedelta(days=2)))["living_memory"]
    assert "Is in Lisbon this week (said Mon 2 Nov)" in memory, memory
    memory = cards_in(await ana.block_for("hi", after=timedelta(days=21)))["living_memory"]
    assert "Lisbon" not in memory and "Is vegan" in memory, memory
    # Still theirs to see and delete.
    assert "Is in Lisbon this week" in await ana.say("/memory")


async def test_an_item_with_a_full_stop_in_it_is_shown_once_on_the_card_and_in_recap(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The session line used to be re-split at ". " to drop the items shown on their own
    # lines: "invite Dr. Smith" came back whole in it, said twice.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "Let's plan the expert call for the damages brief.",
        "We decided to invite Dr. Smith to the call.",
        "I still need to figure out the agenda.",
        "Next is the exhibit list for the call.",
    ):
        await ana.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200 and "Dr. Smith" in result["summary"], result
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert resume.count("Dr. Smith") == 1, resume
    assert "Decision: invite Dr. Smith to the call" in resume
    assert "Ended on “Next is the exhibit list for the call.”" in resume
    recap = await ana.say("/recap")
    assert recap.count("Dr. Smith") == 1, recap


async def test_a_summary_ends_on_what_was_said_not_a_sign_off_punctuated_once(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "Let's plan the garden party for Saturday.",
        "Actually, the weather is fine.",
        "ok, more later",
        "brb",
    ):
        await ana.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200, result
    assert result["summary"] == (
        "On “Let's plan the garden party for Saturday.” (4 messages). "
        "Ended on “Actually, the weather is fine.”"
    )


async def test_work_reported_passed_is_not_left_open_on_the_card(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "Let's get the invoice service ready for launch.",
        "I still need to load test the invoice endpoint.",
        "The load test passed at 500 rps.",
    ):
        await ana.say(text, after=timedelta(minutes=2))
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200, result
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert "Ended on “The load test passed at 500 rps.”" in resume
    assert "load test the invoice endpoint" not in resume, resume


async def test_a_load_test_reported_passed_closes_only_that_load_test(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # "The load test passed" closed every open item named "load test": the search
    # endpoint's too, though the user had only load tested one of them.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    other = Person(relay, fake_upstream, clock, thread="t2")
    await other.say("/context reports")
    await other.say("I still need to load test the export endpoint.")
    await other.say("/capture")
    for text in (
        "Let's get the services ready for launch.",
        "I still need to load test the invoice endpoint.",
        "I still need to load test the search endpoint.",
        "I still need to load test the login endpoint.",
    ):
        await ana.say(text, after=timedelta(minutes=2))
    await ana.say("/capture")
    await ana.say("The invoice load test passed.", after=timedelta(minutes=2))
    await ana.say("/capture")
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert "load test the invoice endpoint" not in resume, resume
    assert "Open: load test the search endpoint" in resume, resume
    assert "Open: load test the login endpoint" in resume, resume

    # Named only by what they share, it is the one last raised.
    await ana.say("The load test passed.", after=timedelta(minutes=2))
    await ana.say("/capture")
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert "Open: load test the search endpoint" in resume, resume
    assert "load test the login endpoint" not in resume, resume
    # Another context's load test is not this one.
    elsewhere = cards_in(await other.block_for("hi", after=timedelta(minutes=1)))["resume"]
    assert "Open: load test the export endpoint" in elsewhere, elsewhere


async def test_a_summary_ends_on_where_the_work_stood_not_on_a_cue_to_move_on(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "Let's get the invoice service ready for launch.",
        "The load test passed at 500 rps.",
        "ok, next the retry policy",
    ):
        await ana.say(text, after=timedelta(minutes=2))
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200, result
    assert result["summary"] == (
        "On “Let's get the invoice service ready for launch.” (3 messages). "
        "Open: the retry policy. Ended on “The load test passed at 500 rps.”"
    )
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert "Open: the retry policy" in resume, resume
    assert "next the retry policy" not in resume, resume

    # A short session that only says what is next is worth capturing for it.
    await ana.say("ok, next the rate limits", after=timedelta(minutes=1))
    clock.advance(timedelta(minutes=20))
    assert [c["trigger"] for c in await tick(relay)] == ["idle_timeout"]
    resume = cards_in(await ana.block_for("hi", after=timedelta(days=1)))["resume"]
    assert "Open: the rate limits" in resume, resume


async def test_a_session_captured_twice_by_the_llm_keeps_one_of_each_item(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The second pass words the same items a little differently; only the wording
    # (case, punctuation, stopwords) may differ for them to count as one.
    relay = await make_relay(relay_factory, clock)
    ana = Person(relay, fake_upstream, clock)
    passes = (
        ("Send the report Friday", "Who reviews the draft?", "Do not ship the beta"),
        ("send the report on Friday.", "who reviews the draft", "Ship the beta"),
    )
    for decision, question, other in passes:
        fake_upstream.synthesis_reply = json.dumps(
            {
                "session_summary": "Planned the report.",
                "open_questions": [{"question": question, "context": ""}],
                "key_decisions": [{"decision": decision}, {"decision": other}],
                "work_phase": "drafting",
            }
        )
        for text in ("The report goes out Friday.", "Someone must review it.", "more"):
            await ana.say(text, after=timedelta(minutes=1))
        status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
        assert status == 200 and result["mode"] == "llm_enriched", result
    recap = (await ana.say("/recap")).casefold()
    assert recap.count("send the report") == 1, recap
    assert recap.count("reviews the draft") == 1, recap
    # A negation is not wording: both stand.
    assert "decided: do not ship the beta" in recap and "decided: ship the beta" in recap


async def test_a_correction_of_something_never_captured_is_kept_as_said(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # "The report is due Friday" was never an item; its correction is the item now,
    # dated when it was said so "Monday" is read against that week.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Let's plan the quarterly report.")
    await ana.say("The report is due Friday.")
    await ana.say("Actually the report is due Monday.", after=timedelta(minutes=5))
    await ana.say("Actually, the weather is fine.")  # replaces nothing, names no value
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200 and result["captured"], result
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=3)))["resume"]
    assert "Decision: the report is due Monday (said Mon 2 Nov; unconfirmed)" in resume, resume
    assert "Decided: the weather" not in await ana.say("/recap")


async def test_a_message_with_an_image_or_file_is_recorded_with_a_placeholder(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # Only the text parts used to be kept: an image alone was an empty message, and the
    # transcript and capture read "what is wrong here?" as asked of nothing.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    secret = "aGVsbG8gd29ybGQ="
    await ana.send(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is wrong in this invoice layout?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{secret}"}},
                    {"type": "input_audio", "input_audio": {"data": secret, "format": "wav"}},
                    {
                        "type": "file",
                        "file": {"filename": "march invoices.pdf", "file_data": secret},
                    },
                ],
            }
        ]
    )
    await ana.send(
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]
    )
    store = relay.runner.app[SERVICES].store
    said = [m.text for m in await store.transcript("agent:main:api:t1") if m.role == "user"]
    assert said == [
        "What is wrong in this invoice layout?\n[image]\n[audio]\n[file march invoices.pdf]",
        "[image]",
    ]
    assert not any(secret in text for text in said)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200, result
    assert "layout? [image] [audio] [file march invoices.pdf]” (2 messages)" in result["summary"]


async def test_a_habit_or_a_home_given_up_retires_what_was_remembered(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Remember that I'm a smoker. I have a car. I live in Berlin.")
    await ana.say("I don't smoke anymore.", after=timedelta(days=3))
    await ana.say("Oh, and I sold my car. I moved out of Berlin.", after=timedelta(days=2))
    memory = cards_in(await ana.block_for("morning", after=timedelta(days=1)))["living_memory"]
    assert "Doesn't smoke anymore" in memory and "Sold their car" in memory, memory
    assert "Moved out of Berlin" in memory
    assert not any(old in memory for old in ("Is a smoker", "Has a car", "Lives in Berlin"))


async def test_a_greeting_before_what_they_say_of_themselves_is_no_bar_to_learning_it(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("hello there, my name is Ana")
    await ana.say("Good morning, I'm a nurse.", after=timedelta(days=1, hours=1))
    await ana.say("hi there, I live in Lisbon", after=timedelta(hours=4))
    await ana.say("Morning runs are my thing.", after=timedelta(days=1))
    await ana.say("good evening, I work at Globex", after=timedelta(hours=10))
    memory = cards_in(await ana.block_for("morning", after=timedelta(days=1)))["living_memory"]
    for said in ("Name: Ana", "Is a nurse", "Lives in Lisbon", "Works at Globex"):
        assert said in memory, memory
    assert "runs" not in memory.lower(), memory


async def test_a_birthday_a_partner_an_allergy_and_a_new_job_are_remembered_and_kept_current(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I work at Acme. My birthday is in May. I'm allergic to peanuts.")
    await ana.say("My wife is called Maria. Is your wife called Eve?", after=timedelta(days=1))
    await ana.say("my friend's birthday is on June 9th", after=timedelta(hours=1))
    await ana.say("I'm allergic to cats. My birthday is on June 3rd.", after=timedelta(days=2))
    await ana.say("I got a new job at Globex!", after=timedelta(days=30))
    await ana.say("I'm no longer allergic to cats.", after=timedelta(days=60))
    memory = cards_in(await ana.block_for("hello", after=timedelta(days=1)))["living_memory"]
    for said in (
        "Their birthday is on June 3rd",
        "Their wife is called Maria",
        "Is allergic to peanuts",
        "Is no longer allergic to cats",
        "Got a new job at Globex",
    ):
        assert said in memory, memory
    for gone in ("Acme", "May", "Eve", "June 9th", "Is allergic to cats"):
        assert gone not in memory, memory


async def test_a_habit_taken_up_again_and_drink_given_up_keep_the_card_true(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Remember that I'm a coffee drinker. I quit smoking. I'm a social drinker.")
    await ana.say("I started smoking again.", after=timedelta(days=40))
    await ana.say("I don't drink any more.", after=timedelta(days=10))
    memory = cards_in(await ana.block_for("hello", after=timedelta(days=1)))["living_memory"]
    for said in ("Is a coffee drinker", "Started smoking again", "Doesn't drink any more"):
        assert said in memory, memory
    assert "Quit smoking" not in memory and "social drinker" not in memory, memory


async def test_an_open_item_after_next_then_or_tomorrow_reaches_the_card(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # "Next I still need to …" used to be missed while "I still need to …" was caught.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "Let's get the billing service ready for launch.",
        "Next I still need to set up the nightly backups.",
        "After that I need to write the runbook.",
        "Then Sam still needs to send the load test numbers.",
    ):
        await ana.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200 and result["captured"], result
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert "Open: write the runbook" in resume, resume
    assert "Open: set up the nightly backups" in resume, resume
    assert "Open: send the load test numbers" not in resume, "Sam's work, not Ana's"


async def test_work_put_off_to_tomorrow_friday_or_later_reaches_the_card(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # "I'll fix the build tomorrow" was open; "Tomorrow I'll fix the build" was not.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "Let's get the release candidate out.",
        "Tomorrow I'll fix the build.",
        "On Friday I'll send the deck.",
        "Later I'll write the docs.",
        "Tomorrow I'll be fine.",
    ):
        await ana.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200 and result["captured"], result
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert "fix the build tomorrow" in resume, resume
    assert "send the deck on Friday" in resume, resume
    assert "write the docs" in resume, resume
    assert "Open: be fine" not in resume, resume


async def test_recent_activity_leaves_out_an_item_since_done_as_the_resume_card_does(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # Two threads on one named context: the backups are done in the second while the
    # first, captured again later, still has them open in its own summary. The resume
    # card and /recap left them out; the rollup another thread sees did not.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    laptop = Person(relay, fake_upstream, clock, thread="laptop")
    phone = Person(relay, fake_upstream, clock, thread="phone")
    await laptop.say("/context billing launch")
    await phone.say("/context billing launch")
    await laptop.say("Let's get the billing service ready for launch.")
    await laptop.say("I still need to set up the backups.")
    await laptop.say("/capture")
    await phone.say("The backups are set up now.", after=timedelta(minutes=5))
    await phone.say("/capture")
    await laptop.say("The invoice table is done.", after=timedelta(minutes=5))
    await laptop.say("/capture")
    assert "set up the backups" not in await laptop.say("/recap")
    elsewhere = Person(relay, fake_upstream, clock, thread="garden")
    activity = cards_in(await elsewhere.block_for("Hello!", after=timedelta(hours=3)))
    line = activity["recent_activity"]
    assert "billing launch" in line and "invoice table" in line, line
    assert "set up the backups" not in line, line


async def test_an_agents_work_in_no_thread_of_its_own_is_what_it_did_lately(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # An agent that sends no thread header works in the user's unlinked bucket; the
    # rollup read only named contexts and threads' own, so a second, threaded agent never
    # heard of that work, and neither did the model anywhere else.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    unthreaded = Person(relay, fake_upstream, clock, thread=None)
    for text in (
        "Let's get the billing service ready for launch.",
        "We decided to go with Postgres.",
        "I still need to write the migration.",
    ):
        await unthreaded.say(text)
    clock.advance(timedelta(minutes=20))
    assert await tick(relay)
    website = Person(relay, fake_upstream, clock, thread="website")
    block = await website.block_for("Let's redo the landing page.", after=timedelta(hours=2))
    lately = cards_in(block)["recent_activity"]
    assert "the API, in no thread of its own" in lately, lately
    assert "billing service" in lately and "write the migration" in lately, lately


async def test_a_session_opened_with_hi_again_is_on_what_followed(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # Back the next day: "hi again" was the session's topic (two words, so "substantive").
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Let's get the billing service ready for launch.")
    await ana.say("/capture")
    await ana.say("hi again", after=timedelta(days=1))
    await ana.say("The backups are set up now.")
    assert "Summary: On “The backups are set up now.” (2 messages)." in await ana.say("/capture")


async def test_a_summary_is_on_the_work_and_ends_on_where_it_stood_not_on_a_request(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The topic used to be what the user said of themselves ("Remember that I'm a
    # backend developer.") and the ending their last request to the model.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in (
        "Remember that I'm a backend developer.",
        "Hi! I prefer short answers. Let's get the billing service ready for launch.",
        "We decided to go with Postgres.",
        "The schema has three tables now.",
        "I still need to write the migration.",
        "Can you check the numbers?",
        "ok, more later",
    ):
        await ana.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200, result
    assert result["summary"] == (
        "On “Let's get the billing service ready for launch.” (7 messages). "
        "Decided: go with Postgres. Open: write the migration. "
        "Ended on “The schema has three tables now.”"
    )


async def test_a_summary_of_questions_alone_is_on_the_first_and_ends_on_none(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    for text in ("How do I shard the invoices table?", "Could you show the hash function?"):
        await ana.say(text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200, result
    assert result["summary"] == "On “How do I shard the invoices table?” (2 messages)."


async def test_a_narrative_stating_a_corrected_decision_leaves_the_card(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The items were superseded, but the "Earlier (Mon)" line was the model's narrative
    # of Monday and still said the billing service was on Postgres.
    relay = await make_relay(relay_factory, clock)
    ana = Person(relay, fake_upstream, clock)
    sessions = (
        (
            ("Let's go with Postgres for the billing service.", "I still need the migration."),
            {
                "session_summary": "Chose Postgres for the billing service; the migration "
                "is still to be written.",
                "open_questions": [{"question": "Write the migration", "context": ""}],
                "key_decisions": [{"decision": "Use Postgres for the billing service"}],
                "work_phase": "drafting",
            },
        ),
        (
            ("Actually we're using MySQL for the billing service, not Postgres.",),
            {
                "session_summary": "Moved the billing service from Postgres to MySQL.",
                "open_questions": [],
                "key_decisions": [{"decision": "Use MySQL for the billing service"}],
                "work_phase": "drafting",
            },
        ),
        (
            ("Sketched the invoice table for the billing service.",),
            {
                "session_summary": "Sketched the invoice table.",
                "open_questions": [],
                "key_decisions": [],
                "work_phase": "drafting",
            },
        ),
    )
    for said, reply in sessions:
        fake_upstream.synthesis_reply = json.dumps(reply)
        for text in said:
            await ana.say(text, after=timedelta(days=1))
        status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
        assert status == 200 and result["mode"] == "llm_enriched", result
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert "Last session (Fri): Sketched the invoice table." in resume, resume
    assert "Earlier (Thu): Moved the billing service from Postgres to MySQL." in resume
    assert "Chose Postgres" not in resume
    assert "Decision: Use MySQL for the billing service" in resume


async def test_a_second_agent_the_same_day_knows_of_the_mornings_work(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # Tier 2 was refreshed only by the nightly job: an agent in another thread that
    # afternoon was told nothing of the morning's work until the next day.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    billing = Person(relay, fake_upstream, clock, thread="billing")
    ops = Person(relay, fake_upstream, clock, thread="ops")
    for text in (
        "Let's get the billing service ready for launch.",
        "The invoice table is done.",
        "ok, more later",
    ):
        await billing.say(text, after=timedelta(minutes=5))
    clock.advance(timedelta(minutes=20))
    assert [c["trigger"] for c in await tick(relay)] == ["idle_timeout"]
    cards = cards_in(
        await ops.block_for("Let's look at the deploy pipeline.", after=timedelta(hours=3))
    )
    activity = cards["recent_activity"]
    assert "on the API ('billing')" in activity and "billing service ready" in activity, activity
    assert "resume" not in cards


COMPACTION_REQUESTS = (
    "Your task is to create a detailed summary of the conversation so far, paying close "
    "attention to the user's explicit requests and your previous actions.",
    "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for "
    "another LLM that will resume the task.",
    "Pre-compaction memory flush. Store durable memories now (use memory/2026-11-02.md; "
    "create memory/ if needed). If nothing to store, reply with NO_REPLY.",
)


@pytest.mark.parametrize("request_text", COMPACTION_REQUESTS)
async def test_an_agents_compaction_turns_are_not_the_users_words(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock, request_text: str
) -> None:
    # Back the next day with a full context, the agent first asks the model for a
    # summary (or a memory flush) in a user message of its own, then sends the user's
    # message after that summary in place of the history. Neither is what the user said,
    # yet the session was "On 'Your task is to create a detailed summary …'".
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    history: list[dict[str, Any]] = [{"role": "system", "content": "You help Ana."}]

    async def send(messages: list[dict[str, Any]], text: str) -> None:
        clock.advance(timedelta(minutes=2))
        messages.append({"role": "user", "content": text})
        messages.append((await ana.send(messages))["choices"][0]["message"])

    for text in ("Let's get the billing service ready for launch.", "The invoice table is done."):
        await send(history, text)
    clock.advance(timedelta(days=1))
    await send(history, request_text)
    summary = (
        "This session is being continued from a previous conversation. Summary: we "
        "decided to go with Redis for caching; I still need to write the cache layer."
    )
    compacted = [history[0], {"role": "user", "content": summary}]
    for text in ("The payments table needs a currency column.", "ok, more later"):
        await send(compacted, text)
    status, result = await admin(relay, "POST", "/admin/threads/agent:main:api:t1/capture")
    assert status == 200, result
    assert result["summary"] == "On “The payments table needs a currency column.” (2 messages)."


async def test_an_agents_compaction_request_teaches_living_memory_nothing(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The agent's summary request quotes the user, old words and all: memory learned
    # "Lives in Lisbon" from a move the user had taken back, and counted Berlin as said
    # again (fresh and sure) though the user had not said a word of it for months.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I live in Berlin.")
    request = (
        "Your task is to create a detailed summary of the conversation so far.\n"
        "1. The user said: I live in Berlin.\n"
        "2. I moved to Lisbon.\n"
        "3. I'm vegetarian."
    )
    await ana.say(request, after=timedelta(days=240))
    status, memory = await admin(relay, "GET", "/admin/users/api:ana/memory")
    assert status == 200, memory
    facts = {fact["text"]: fact for fact in memory["facts"]}
    assert list(facts) == ["Lives in Berlin"], facts
    assert facts["Lives in Berlin"]["last_mentioned_at"].startswith("2026-11-02"), facts


async def test_a_corrected_fact_said_again_plainly_is_the_same_fact_said_again(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I'm vegan. I live in Berlin.")
    await ana.say("Actually I'm vegetarian now, not vegan.", after=timedelta(days=2))
    await ana.say("I live in Lisbon these days.", after=timedelta(days=1))
    memory = cards_in(await ana.block_for("hello", after=timedelta(days=1)))["living_memory"]
    assert "Is vegetarian\n" in memory and "Lives in Lisbon\n" in memory, memory
    assert "now" not in memory and "vegan" not in memory and "these days" not in memory
    # Said again plainly, each is the one fact, mentioned again (spec 003 §8); the
    # correction stays a correction, sure.
    await ana.say("I'm vegetarian. I live in Lisbon.", after=timedelta(days=5))
    listing = await ana.say("/memory")
    assert "Is vegetarian — said 11 Nov 2026, 100% sure" in listing, listing
    assert "Lives in Lisbon — said 11 Nov 2026, 100% sure" in listing, listing
    assert listing.count(" — said ") == 2, listing


async def test_of_two_pets_named_together_the_one_that_died_goes_and_the_other_stays(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    bob = Person(relay, fake_upstream, clock, user="bob", thread="bob-dm")
    await ana.say("I have two cats, Mia and Leo.")
    await bob.say("Spent the evening playing with my cats Mia and Leo.")
    for person in (ana, bob):
        memory = cards_in(await person.block_for("hi", after=timedelta(days=1)))["living_memory"]
        assert "Has two cats called Mia and Leo" in memory, memory
    await ana.say("Leo passed away.", after=timedelta(days=3))
    await bob.say("My cat Leo died yesterday.", after=timedelta(minutes=1))
    for person in (ana, bob):
        memory = cards_in(await person.block_for("hi", after=timedelta(days=1)))["living_memory"]
        assert "Has a cat called Mia" in memory, memory
        assert "Leo" not in memory and "two cats" not in memory, memory


async def test_a_partner_named_in_passing_is_remembered_and_a_business_partner_is_not(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("My partner Sam at Acme sent the contract over, can you review it?")
    await ana.say("I'm going to the cinema with my partner Dana tonight.", after=timedelta(days=1))
    memory = cards_in(await ana.block_for("hi", after=timedelta(days=1)))["living_memory"]
    assert "Their partner is called Dana" in memory and "Sam" not in memory, memory


async def test_a_denial_of_a_remembered_fact_retires_it_and_others_words_do_not(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I live in Berlin. I'm vegan. I'm a nurse.")
    for text in (
        "I don't live in Berlin yet, but soon.",
        "She doesn't live in Berlin.",
        "don't I live in Berlin?",
        "My boss isn't vegan.",
        "I'm not vegan yet.",
    ):
        await ana.say(text, after=timedelta(days=1))
    listing = await ana.say("/memory")
    for kept in ("Lives in Berlin", "Is vegan", "Is a nurse"):
        assert kept in listing, listing
    await ana.say(
        "That's wrong, I don't live in Berlin, I live in Potsdam.", after=timedelta(days=3)
    )
    await ana.say("I'm not vegan any more.", after=timedelta(days=2))
    memory = cards_in(await ana.block_for("morning", after=timedelta(days=1)))["living_memory"]
    assert "Lives in Potsdam" in memory and "Is a nurse" in memory, memory
    assert "Berlin" not in memory and "vegan" not in memory, memory


async def test_facts_said_in_passing_are_kept_plainly_with_household_pets_and_languages(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I live in Berlin, by the way, and I love it there.")
    await ana.say("We have two cats, Mia and Leo.", after=timedelta(days=2))
    await ana.say("I speak English, German and a bit of Spanish.", after=timedelta(days=2))
    await ana.say("I speak to my boss every Monday. Do you speak German?")
    await ana.say("Honestly I prefer short answers, and please always answer in English.")
    memory = cards_in(await ana.block_for("morning", after=timedelta(days=1)))["living_memory"]
    for said in (
        "Lives in Berlin\n",
        "Has two cats called Mia and Leo",
        "Speaks English, German and a little Spanish",
        "Prefers short answers\n",
        "Always answer in English",
    ):
        assert said in memory, memory
    assert "by the way" not in memory and "boss" not in memory, memory
    # Weeks later: one cat gone (said between emoticons), the languages said again.
    await ana.say("Leo passed away :( Mia misses him.", after=timedelta(days=20))
    await ana.say("I speak English and German fluently.", after=timedelta(days=1))
    memory = cards_in(await ana.block_for("morning", after=timedelta(days=1)))["living_memory"]
    for said in (
        "Has a cat called Mia",
        "Speaks English and German fluently",
        "Speaks a little Spanish",
    ):
        assert said in memory, memory
    assert "Leo" not in memory, memory


async def test_an_item_reported_done_in_its_own_verb_leaves_the_card_and_recap(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Let's draft the event study section.")
    await ana.say("I still need to pull the Christensen data.")
    await ana.say("I need to get the expert report pulled too.")
    await ana.say("/capture")
    await ana.say("The Christensen data is pulled now.", after=timedelta(hours=3))
    await ana.say("I pulled an all-nighter on the expert report.")
    await ana.say("/capture")
    recap = await ana.say("/recap")
    assert "Open: pull the Christensen data" not in recap, recap
    assert "Open: get the expert report pulled" in recap, recap
    resume = cards_in(await ana.block_for("back", after=timedelta(days=1)))["resume"]
    assert "pull the Christensen data" not in resume, resume
    assert "expert report" in resume, resume


async def test_context_no_longer_lists_the_own_context_a_thread_moved_out_of(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    phone = Person(relay, fake_upstream, clock, thread="phone")
    await ana.say("Let's draft the liner notes.")
    await phone.say("hello")
    await ana.say("/context Album mix", after=timedelta(minutes=5))
    listing = await ana.say("/context")
    assert listing.startswith("This thread's work context: “Album mix”."), listing
    # The phone's thread is still in its own context; this one has left its own.
    assert "a thread of its own on the API ('phone')" in listing, listing
    assert "('t1')" not in listing, listing


async def test_capture_and_the_update_to_another_thread_leave_out_an_item_since_done(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The laptop's session, captured again after the phone set the backups up, still
    # lists them open in its own words: /capture and the phone's update did show that.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    laptop = Person(relay, fake_upstream, clock, thread="laptop")
    phone = Person(relay, fake_upstream, clock, thread="phone")
    await laptop.say("/context billing launch")
    await phone.say("/context billing launch")
    await laptop.say("Let's get the billing service ready for launch.")
    await laptop.say("I still need to set up the backups.")
    await laptop.say("/capture")
    await phone.say("The backups are set up now.", after=timedelta(minutes=5))
    await phone.say("/capture")
    await laptop.say("The invoice table is done.", after=timedelta(minutes=5))
    captured = await laptop.say("/capture")
    assert "invoice table" in captured and "set up the backups" not in captured, captured
    resume = cards_in(await phone.block_for("back", after=timedelta(hours=3)))["resume"]
    assert "advanced on the API" in resume and "invoice table" in resume, resume
    assert "set up the backups" not in resume, resume


async def test_work_with_an_item_still_open_is_not_completed_until_it_is_done(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Let's draft the event study section.")
    await ana.say("/capture")
    await ana.say("We submitted the draft, all done.", after=timedelta(hours=3))
    await ana.say("I still need to email Sam the figures.")
    await ana.say("/capture")
    recap = await ana.say("/recap")
    assert recap.startswith("This thread — drafting phase."), recap
    resume = cards_in(await ana.block_for("back", after=timedelta(days=1)))["resume"]
    assert "completed" not in resume and "email Sam the figures" in resume, resume
    await ana.say("Emailed Sam the figures.")
    await ana.say("/capture")
    assert (await ana.say("/recap")).startswith("This thread — completed phase."), recap


async def test_after_an_agent_compacts_to_one_message_the_cards_come_back_true(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The agent's history after compaction is one message going on from its summary: the
    # cards came back only for a history of two or more, and then still listed as open
    # what the session had done before the compaction (its capture runs in the background).
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    history: list[dict[str, Any]] = [{"role": "system", "content": "You help Ana."}]

    async def send(messages: list[dict[str, Any]], text: str) -> str:
        clock.advance(timedelta(minutes=5))
        messages.append({"role": "user", "content": text})
        messages.append((await ana.send(messages))["choices"][0]["message"])
        return str(fake_upstream.requests[-1].body["messages"][-1]["content"])

    for text in (
        "Let's build the refund endpoint.",
        "I still need to write the webhook handler.",
        "I also need to pull the Christensen data.",
    ):
        await send(history, text)
    await ana.say("/capture")
    clock.advance(timedelta(days=1))
    assert "write the webhook handler" in await send(history, "morning, let's continue")
    await send(history, "The webhook handler is written.")
    await send(history, "Create a detailed summary of the conversation so far.")
    compacted = [history[0]]
    block = await send(
        compacted,
        "This session is being continued from a previous conversation. We were building "
        "the refund endpoint. Can you review it?",
    )
    resume = cards_in(block)["resume"]
    assert "pull the Christensen data" in resume, resume
    assert "webhook handler" not in resume, resume


async def test_a_short_session_that_decides_and_leaves_work_open_is_captured(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # Two messages, a decision and an open item, then nothing: counted by its turns alone
    # (three needed) the session was never dirty, and the next day's cards knew nothing.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Let's go with MkDocs")
    await ana.say("I still need to write the API reference page", after=timedelta(minutes=2))
    clock.advance(timedelta(minutes=16))
    assert [c["trigger"] for c in await tick(relay)] == ["idle_timeout"]
    resume = cards_in(await ana.block_for("hi again", after=timedelta(days=1)))["resume"]
    assert "go with MkDocs" in resume and "write the API reference page" in resume, resume
    recap = await ana.say("/recap")
    assert "MkDocs" in recap and "API reference page" in recap, recap


async def test_a_short_session_moved_away_from_is_captured_once_debounce_passes(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Let's go with MkDocs")
    elsewhere = Person(relay, fake_upstream, clock, thread="t2")
    await elsewhere.say("hi", after=timedelta(minutes=1))
    clock.advance(timedelta(minutes=30))
    captures = await tick(relay)
    assert [c["trigger"] for c in captures] == ["debounced_defocus"], captures


async def test_glancing_at_a_chat_is_still_not_captured(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """Spec 001 §5.2: a hello, a thanks or a question with nothing decided or left to do
    sets no dirty flag: no idle capture, no defocus capture, nothing at night."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("hi")
    await ana.say("thanks")
    asking = Person(relay, fake_upstream, clock, thread="t2")
    await asking.say("Should we use MkDocs or Sphinx?", after=timedelta(minutes=1))
    await asking.say("What time is it in Tokyo?")
    clock.advance(timedelta(minutes=45))
    assert await tick(relay) == []
    clock.advance(timedelta(days=1))
    status, report = await admin(relay, "POST", "/admin/jobs/nightly/run")
    assert status == 200 and report["captured"] == 0, report
    assert "Nothing captured" in await ana.say("/recap")


async def test_moving_a_thread_to_another_named_context_keeps_the_session_where_it_was(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # The whole session, billing's open item included, was captured into garden; /recap
    # in billing said "Nothing captured"; the next message got no card for garden.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("/context garden")
    await ana.say("Let's plant the tomatoes along the south fence.")
    await ana.say("I still need to buy the stakes.")
    await ana.say("/capture")
    await ana.say("/context billing launch", after=timedelta(days=1))
    await ana.say("Let's get the billing service ready for launch.")
    await ana.say("I still need to set up the backups.")
    assert "Moved this thread into “garden”" in await ana.say("/context garden")
    # The session moved away from is captured in the background.
    await relay.runner.app[SERVICES].continuity.background.drain()
    status, preview = await admin(
        relay,
        "POST",
        "/admin/threads/agent:main:api:t1/preview",
        {"text": "The tomatoes need watering.", "user_key": "api:ana"},
    )
    assert status == 200 and "buy the stakes" in (preview["block"] or ""), preview
    resume = cards_in(await ana.block_for("The tomatoes need watering."))["resume"]
    assert "buy the stakes" in resume and "backups" not in resume, resume
    await ana.say("/capture")
    garden = await ana.say("/recap")
    assert "backups" not in garden and "buy the stakes" in garden, garden
    await ana.say("/context billing launch", after=timedelta(minutes=5))
    billing = await ana.say("/recap")
    assert "Open: set up the backups" in billing, billing
    assert "tomatoes" not in billing, billing


async def test_naming_a_threads_context_mid_session_takes_the_session_along(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Let's get the billing service ready for launch.")
    await ana.say("I still need to set up the backups.")
    await ana.say("/context billing launch")
    await ana.say("The invoice table is done.")
    await ana.say("/capture")
    recap = await ana.say("/recap")
    assert "Open: set up the backups" in recap and "invoice table" in recap, recap


async def test_an_item_reported_done_by_its_head_alone_leaves_the_card_and_recap(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # "The migration is written." named only "migration" of the item's three content
    # words, and the item stayed open on the card.
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Let's get the billing service ready for launch.")
    await ana.say("I still need to write the migration for the invoices table.")
    await ana.say("/capture")
    for mention in ("The migration is not written yet.", "Is the migration written?"):
        await ana.say(mention, after=timedelta(minutes=5))
    await ana.say("/capture")
    assert "Open: write the migration for the invoices table" in await ana.say("/recap")
    await ana.say("The migration is written.", after=timedelta(hours=2))
    await ana.say("/capture")
    recap = await ana.say("/recap")
    assert "Open: write the migration" not in recap, recap
    resume = cards_in(await ana.block_for("back", after=timedelta(days=1)))["resume"]
    assert "write the migration" not in resume, resume


async def test_a_request_reaching_eighty_percent_of_the_context_window_is_captured_first(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    # spec 004 §4 (and spec 001 §5.2): capture before the client compacts, once the
    # request reaches 80 % of the model's context window (here 800 of 1,000 tokens).
    relay = await make_relay(
        relay_factory,
        clock,
        continuity={"mode": "deterministic", "model_context_tokens": 1000},
    )
    ana = Person(relay, fake_upstream, clock)
    background = relay.runner.app[SERVICES].continuity.background
    said = ["We decided to go with MkDocs.", "I still need to write the API reference page."]
    history: list[dict[str, Any]] = []
    for text in said:
        history.append({"role": "user", "content": text})
        await ana.send(history)
        history.append({"role": "assistant", "content": "ok"})

    def tokens() -> int:
        return sum((len(m["content"]) + 3) // 4 for m in history)

    # Just under 80 %: nothing captured yet.
    history.append({"role": "user", "content": "x" * 4 * (798 - tokens())})
    assert tokens() == 798
    await ana.send(history)
    await background.drain()
    assert "Nothing captured" in await ana.say("/recap")
    # At 80 %: the session is captured before the client compacts.
    history.append({"role": "assistant", "content": "ok"})
    history.append({"role": "user", "content": "and?"})
    assert tokens() == 800
    await ana.send(history)
    await background.drain()
    assert "Nothing captured" not in await ana.say("/recap")


async def test_a_fact_forgotten_when_asked_in_chat_is_not_replayed_in_earlier_blocks(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """ "Please forget that I'm vegan" said in chat deletes the fact and takes it out of
    the card of every earlier block an agent's history brings back, as /memory forget
    does; a fact retired by a change ("I moved to Lisbon") stays in the earlier blocks,
    where the change said right after it corrects it."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I'm vegan. I live in Porto.")
    clock.advance(timedelta(days=1))
    history: list[dict[str, Any]] = [{"role": "user", "content": "Morning!"}]
    reply = await ana.send(history)
    assert "Is vegan" in json.dumps(fake_upstream.last.body)
    for said in ("I moved to Lisbon.", "Please forget that I'm vegan."):
        history = [*history, reply["choices"][0]["message"], {"role": "user", "content": said}]
        reply = await ana.send(history)
    history = [*history, reply["choices"][0]["message"], {"role": "user", "content": "Lunch?"}]
    await ana.send(history)
    forwarded = json.dumps(fake_upstream.last.body)
    assert "Is vegan" not in forwarded, forwarded
    assert "Lives in Porto" in forwarded, forwarded
    listing = await ana.say("/memory")
    assert "Is vegan" not in listing and "Lives in Lisbon" in listing, listing


async def test_a_header_word_over_the_users_own_words_is_no_bar_to_learning_them(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """ "Note:", "PS:", "Update:" head the user's own words; "Todo:" heads a plan and
    "Re:" what is answered, neither a fact about them."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I live in Berlin.")
    await ana.say("Note: I'm vegan.", after=timedelta(hours=1))
    await ana.say("Thanks for the tips!\nPS: I moved to Porto", after=timedelta(days=1))
    await ana.say("Update: I work at Globex now", after=timedelta(days=1))
    await ana.say("Todo: become a baker\nRe: my vegetarian friend", after=timedelta(hours=2))
    memory = cards_in(await ana.block_for("morning", after=timedelta(days=1)))["living_memory"]
    for said in ("Is vegan", "Lives in Porto", "Works at Globex"):
        assert said in memory, memory
    for never in ("Berlin", "baker", "vegetarian"):
        assert never not in memory, memory


async def test_an_employer_joined_or_left_keeps_the_card_true(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream, clock: FakeClock
) -> None:
    """ "I joined Stripe as an engineer" is a new employer, retiring the old; "I left
    Stripe" retires it too, and nothing else: not a place left, a company never worked
    at, or what was joined with no word of a job."""
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("I work at Google. I live in Berlin.")
    await ana.say("I joined Twitter. I joined a gym. I joined the call.", after=timedelta(days=1))
    await ana.say("I left my keys at home. I left Google Maps open.", after=timedelta(hours=1))
    await ana.say("I left Berlin this morning.", after=timedelta(hours=1))
    memory = cards_in(await ana.block_for("hello", after=timedelta(days=1)))["living_memory"]
    assert "Works at Google" in memory and "Lives in Berlin" in memory, memory
    assert "Twitter" not in memory and "gym" not in memory, memory
    await ana.say("I joined Stripe as a software engineer!", after=timedelta(days=1))
    memory = cards_in(await ana.block_for("hello", after=timedelta(days=1)))["living_memory"]
    assert "Is a software engineer at Stripe" in memory and "Google" not in memory, memory
    await ana.say("I left Acme.", after=timedelta(days=1))
    await ana.say("I left Stripe last month", after=timedelta(days=30))
    memory = cards_in(await ana.block_for("hello", after=timedelta(days=1)))["living_memory"]
    assert "Stripe" not in memory and "Acme" not in memory, memory
    assert "Is a software engineer" in memory and "Lives in Berlin" in memory, memory
    await ana.say("I just joined Globex, new job!", after=timedelta(days=3))
    memory = cards_in(await ana.block_for("hello", after=timedelta(days=1)))["living_memory"]
    assert "Works at Globex" in memory, memory
