"""The injection stage's memory: bounded per thread, backed by a real SQLite store."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from middleware.cards.living_memory import without_fact
from middleware.clock.temporal import estimate_tokens
from middleware.injection import (
    InjectionMemory,
    fingerprint,
    injection_stage,
    trim_sections,
    wrap,
)
from middleware.pipeline import Stage
from middleware.store import InboundRecord, SqliteStore, Store
from middleware.types import JSON, Reply, Turn

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
THREAD = "agent:main:telegram:dm:42"
LIMIT = 16


class CountingStore:
    """The real store, counting the injection reads that reach it."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.probes = 0
        self.lookups: list[list[tuple[str, int]]] = []

    async def has_injections(self, thread_key: str) -> bool:
        self.probes += 1
        return await self._store.has_injections(thread_key)

    async def injections_for(
        self, thread_key: str, keys: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], str]:
        self.lookups.append(list(keys))
        return await self._store.injections_for(thread_key, keys)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.fixture
async def counting(store: SqliteStore) -> CountingStore:
    await store.record_inbound(
        InboundRecord(
            user_key="telegram:42",
            channel="telegram",
            platform_user_id="42",
            display_name="Ada",
            thread_key=THREAD,
            chat_type="dm",
            text="hello",
            received_at=T0,
        )
    )
    return CountingStore(store)


def user(text: str) -> JSON:
    return {"role": "user", "content": text}


class Relay:
    """The injection stage in front of an upstream that records what it is sent."""

    def __init__(self, store: CountingStore, memory: InjectionMemory) -> None:
        self.stage: Stage = injection_stage(
            cast(Store, store), placement="user", max_tokens=200, memory=memory
        )
        self.sent: list[list[JSON]] = []
        self.turns = 0

    async def send(self, messages: list[JSON], *, block: bool = True) -> list[JSON]:
        """Forward one request; ``block`` says whether this turn has a block to inject."""
        self.turns += 1
        turn = Turn(
            channel="api",
            thread_id="42",
            user_id="42",
            text="",
            received_at=T0 + timedelta(minutes=self.turns),
            body={"messages": messages},
            thread_key=THREAD,
        )
        if block:
            turn.context.sections = [f"turn {self.turns}"]

        async def upstream(forwarded: Turn) -> Reply:
            self.sent.append(forwarded.body["messages"])
            return Reply(text="ok")

        await self.stage(turn, upstream)
        return self.sent[-1]


def window(count: int, size: int = 5) -> list[JSON]:
    """What a client bounded by its context sends on its ``count``-th turn."""
    return [user(f"message {n}") for n in range(max(0, count - size), count)]


async def test_memory_stays_bounded_in_a_long_thread(
    counting: CountingStore, store: SqliteStore
) -> None:
    memory = InjectionMemory(cast(Store, counting), blocks_per_thread=LIMIT)
    relay = Relay(counting, memory)
    for count in range(1, 201):
        await relay.send(window(count))
    assert len(memory) == LIMIT
    assert len(await store.injections(THREAD)) == 200
    # The resent history was always in memory, and each turn's new message gets a fresh
    # block whatever it had: the long thread never queried the store.
    assert counting.lookups == []


async def test_an_evicted_block_comes_back_identical_from_the_store(
    counting: CountingStore,
) -> None:
    memory = InjectionMemory(cast(Store, counting), blocks_per_thread=LIMIT)
    relay = Relay(counting, memory)
    first = await relay.send(window(1))
    for count in range(2, 101):
        await relay.send(window(count))
    counting.lookups.clear()

    # The client sends its whole history again (it was compacted, say).
    history = [user(f"message {n}") for n in range(100)]
    forwarded = await relay.send(history, block=False)
    assert forwarded[0] == first[0]
    assert forwarded[99] == relay.sent[99][-1]
    assert len(counting.lookups) == 1
    assert len(counting.lookups[0]) == 100 - LIMIT
    assert len(memory) == LIMIT

    # Blocks just read back are in memory again: a repeat is answered without the store.
    tail = history[-LIMIT // 2 :]
    await relay.send(tail, block=False)
    assert len(counting.lookups) == 1


async def test_a_message_never_injected_does_not_query_a_complete_thread(
    counting: CountingStore,
) -> None:
    memory = InjectionMemory(cast(Store, counting))
    relay = Relay(counting, memory)
    for count in range(1, 11):
        # No block on these turns (nothing to say): their messages never get one.
        await relay.send(window(count), block=count % 2 == 0)
    assert counting.probes == 1
    assert counting.lookups == []


async def test_an_incomplete_thread_asks_the_store_once_per_message(
    counting: CountingStore,
) -> None:
    memory = InjectionMemory(cast(Store, counting), blocks_per_thread=4)
    relay = Relay(counting, memory)
    for count in range(1, 11):
        await relay.send(window(count))
    counting.lookups.clear()
    never = [user("sent before the relay"), user("also before")]
    await relay.send([*never, *window(10, 2)], block=False)
    await relay.send([*never, *window(10, 2)], block=False)
    assert counting.lookups == [[(fingerprint(message), 0) for message in never]]


async def test_first_sight_reads_only_the_blocks_the_request_needs(
    counting: CountingStore, store: SqliteStore
) -> None:
    """A thread with stored blocks (the relay restarted) is read by key, never whole."""
    keys = [(f"message {n}", 0) for n in range(50)]
    for n, (key, ordinal) in enumerate(keys):
        await store.save_injection(THREAD, key, ordinal, f"block {n}", T0 + timedelta(minutes=n))
    memory = InjectionMemory(cast(Store, counting), blocks_per_thread=10)

    assert await memory.recall(THREAD, keys[-10:]) == {
        key: f"block {40 + n}" for n, key in enumerate(keys[-10:])
    }
    assert counting.probes == 1
    assert counting.lookups == [keys[-10:]]
    assert len(memory) == 10

    # Held now: asked again, memory answers.
    await memory.recall(THREAD, keys[-10:])
    assert len(counting.lookups) == 1

    assert await memory.recall(THREAD, keys[:1]) == {keys[0]: "block 0"}
    assert counting.lookups[1:] == [keys[:1]]
    assert counting.probes == 1
    assert len(memory) == 10


async def test_a_thread_with_no_stored_block_is_never_read(counting: CountingStore) -> None:
    memory = InjectionMemory(cast(Store, counting))
    assert await memory.recall(THREAD, [("sent before the relay", 0)]) == {}
    assert await memory.recall(THREAD, [("another", 0), ("sent before the relay", 0)]) == {}
    assert counting.probes == 1
    assert counting.lookups == []


async def test_held_blocks_cost_their_utf8_bytes_and_repeats_are_held_once(
    counting: CountingStore,
) -> None:
    """A block with a non-ASCII character is two bytes per character as a ``str``, plus
    the UTF-8 copy SQLite's binding attaches; memory holds only the encoded bytes, and a
    block equal to the one before it is held once."""
    memory = InjectionMemory(cast(Store, counting), blocks_per_thread=600)
    await memory.recall(THREAD, [])
    block = "Now: Sat 1 Mar 2025 09:00 (UTC — the user's timezone is unknown). " * 8
    distinct = [f"{n:04d} {block}" for n in range(200)]
    tracemalloc.start()
    try:
        # Each turn makes its block anew, as the stage does.
        before = tracemalloc.get_traced_memory()[0]
        for n in range(200):
            memory.remember(THREAD, (f"distinct {n}", 0), f"{n:04d} {block}")
        after_distinct = tracemalloc.get_traced_memory()[0]
        for n in range(200):
            memory.remember(THREAD, (f"repeated {n}", 0), block.encode().decode())  # equal, new
        after_repeats = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()

    encoded = len(distinct[0].encode())
    per_distinct = (after_distinct - before) / len(distinct)
    per_repeat = (after_repeats - after_distinct) / 200
    # The bytes object plus its key and slot; well under the 2-byte-per-char str.
    assert per_distinct < encoded + 400 < 2 * len(distinct[0])
    assert per_repeat < 400
    assert await memory.recall(THREAD, [("distinct 7", 0), ("repeated 9", 0)]) == {
        ("distinct 7", 0): distinct[7],
        ("repeated 9", 0): block,
    }


async def test_a_thread_without_blocks_is_forwarded_as_it_came(counting: CountingStore) -> None:
    memory = InjectionMemory(cast(Store, counting))
    relay = Relay(counting, memory)
    history = window(3)
    # Nothing to inject (the Core Clock off, say) and nothing to replay: untouched.
    assert await relay.send(history, block=False) is history
    assert await relay.send(window(4), block=False) == window(4)
    assert counting.probes == 1
    assert len(memory) == 0

    # Once a message had a block, a later turn with nothing new still replays it.
    injected = await relay.send(window(5))
    assert injected[-1] != user("message 4")
    replayed = await relay.send(window(6), block=False)
    assert replayed[-2] == injected[-1]
    assert replayed[-1] == user("message 5")
    assert counting.lookups == []


async def test_a_message_sent_again_is_replayed_with_the_block_it_was_last_sent_with(
    counting: CountingStore,
) -> None:
    """A retry or a regenerated answer sends the newest message again and it gets a new
    block; the next turn must start with exactly that request, not the first one."""
    relay = Relay(counting, InjectionMemory(cast(Store, counting)))
    await relay.send([user("hello")])
    retried = await relay.send([user("hello")])
    following = await relay.send([user("hello"), {"role": "assistant", "content": "hi"}, user("x")])
    assert following[0] == retried[0]
    # The store agrees (a read sees every write queued before it): a restarted relay
    # replays it too.
    restarted = Relay(counting, InjectionMemory(cast(Store, counting)))
    again = await restarted.send(
        [user("hello"), {"role": "assistant", "content": "hi"}, user("x")], block=False
    )
    assert again[0] == retried[0]


async def test_concurrent_first_requests_of_a_thread_keep_both_blocks(
    counting: CountingStore,
) -> None:
    """Two conversations start at once in a thread the relay has not seen: each goes on
    with the block its first request was sent with."""
    relay = Relay(counting, InjectionMemory(cast(Store, counting)))
    first_a, first_b = await asyncio.gather(
        relay.send([user("task A")]), relay.send([user("task B")])
    )
    reply = {"role": "assistant", "content": "done"}
    later_a = await relay.send([user("task A"), reply, user("more A")])
    later_b = await relay.send([user("task B"), reply, user("more B")])
    assert later_a[0] == first_a[0]
    assert later_b[0] == first_b[0]


# -- the block's ceiling ------------------------------------------------------------------

CLOCK_SECTION = "\n".join(
    [
        "Now: Sat 21 Nov 2026 11:00 (Europe/Berlin, UTC+01:00).",  # 14 tokens
        "Times in this message: " + "x" * 400,  # 106 tokens
        "Today is 2026-11-21.",  # 5 tokens
    ]
)


def test_the_ceiling_is_hard_even_for_the_clock_section() -> None:
    kept = trim_sections([CLOCK_SECTION, "Check-in: " + "y" * 100], 40)
    # The line that does not fit goes whole; the lines around it stay, in order.
    assert kept == ["Now: Sat 21 Nov 2026 11:00 (Europe/Berlin, UTC+01:00).\nToday is 2026-11-21."]
    assert estimate_tokens("\n".join(kept)) <= 40


def test_sections_within_the_ceiling_are_kept_whole() -> None:
    small = "Now: Sat 21 Nov 2026 11:00.\nToday is 2026-11-21."
    assert trim_sections([small, "Check-in: hi", "z" * 400], 60) == [small, "Check-in: hi"]
    assert trim_sections(["w" * 400], 10) == []  # not even one whole line fits


def test_fingerprints_of_text_are_unchanged_and_a_lone_surrogate_has_one() -> None:
    # Fingerprints are stored: the same text must keep giving the same one.
    assert fingerprint({"role": "user", "content": "café"}) == "9883c13e4279980fe3f262ea93047f84"
    odd = fingerprint({"role": "user", "content": "caf\udce9"})
    assert odd != fingerprint({"role": "user", "content": "caf\ufffd"})


async def test_a_repeated_message_keeps_its_block_when_compaction_drops_the_first_copy(
    counting: CountingStore,
) -> None:
    """Two "ok"s: a client's compaction that drops the first makes the second the first
    "ok" of the request, and it must still come with the block it was sent with."""
    relay = Relay(counting, InjectionMemory(cast(Store, counting)))
    history = [user("start"), {"role": "assistant", "content": "noted"}, user("ok")]
    await relay.send(history)
    history += [{"role": "assistant", "content": "first reply"}, user("ok")]
    second = (await relay.send(history))[4]
    assert "turn 2" in second["content"]
    history += [{"role": "assistant", "content": "second reply"}, user("next")]
    compacted = [user("summary of the start"), *history[3:]]
    assert (await relay.send(compacted))[2] == second
    # A new "ok" after the compaction gets a block of its own, not the second one's.
    compacted += [{"role": "assistant", "content": "third reply"}, user("ok")]
    third = (await relay.send(compacted))[6]
    assert "turn 4" in third["content"]
    # A restarted relay reads the contexts from the store, and so does the same.
    restarted = Relay(counting, InjectionMemory(cast(Store, counting)))
    again = await restarted.send(compacted, block=False)
    assert again[2] == second and again[6] == third
    assert (await restarted.send(history, block=False))[4] == second


async def test_messages_said_once_keep_no_context(counting: CountingStore) -> None:
    relay = Relay(counting, InjectionMemory(cast(Store, counting)))
    for count in range(1, 8):
        await relay.send(window(count))
    assert await counting.repeated_injections(THREAD) == []


async def test_copies_after_the_same_message_keep_their_blocks_by_ordinal(
    counting: CountingStore,
) -> None:
    """Each "ok" after the same "noted": their context tells them apart no better, so
    the ordinal does, as before contexts were kept."""
    relay = Relay(counting, InjectionMemory(cast(Store, counting)))
    noted = {"role": "assistant", "content": "noted"}
    history = [user("start"), noted, user("ok")]
    first = (await relay.send(history))[2]
    history += [noted, user("ok")]
    second = (await relay.send(history))[4]
    history += [noted, user("next")]
    replayed = await Relay(counting, InjectionMemory(cast(Store, counting))).send(history)
    assert replayed[2] == first and replayed[4] == second and first != second


def test_the_clocks_advice_goes_before_a_later_section_does() -> None:
    facts = "Now: Sat 21 Nov 2026 11:00 (Europe/Berlin, UTC+01:00)."  # 14 tokens
    today = "Today is 2026-11-21. " + "t" * 60  # 21 tokens
    markup = "Write times as <time …>. " + "m" * 60  # 22 tokens
    check_in = "Check-in: " + "c" * 60  # 18 tokens
    clock = "\n".join([facts, markup, today])
    # Everything fits: nothing goes.
    assert trim_sections([clock, check_in], 100, (today, markup)) == [clock, check_in]
    # Over by the check-in: the first advice line goes, the check-in stays.
    assert trim_sections([clock, check_in], 60, (today, markup)) == [
        f"{facts}\n{markup}",
        check_in,
    ]
    # Over by more: the advice goes in its order, as far as needed.
    assert trim_sections([clock, check_in], 40, (today, markup)) == [facts, check_in]
    # Without droppable lines the later section goes, as before.
    assert trim_sections([clock, check_in], 60) == [clock]
    # Dropping the advice would not make room: the clock's section stays whole.
    assert trim_sections([clock, "c" * 400], 60, (today, markup)) == [clock]


def _memory_block(*facts: str, clock: bool = True) -> str:
    card = '<card type="living_memory" tag="living_memory">\n' + "\n".join(facts) + "\n</card>"
    return wrap("\n".join(["Now: Sat 1 Mar 09:00", card] if clock else [card]))


async def test_a_forgotten_fact_leaves_every_block_of_the_person_and_memory(
    store: SqliteStore,
) -> None:
    """``/memory forget``: the fact's card line goes from the blocks of every thread of
    the person (a linked account's too), from memory as well as the store; the rest of
    each block stays byte for byte, and a block that was only the card goes."""
    other_thread = "agent:main:api:ana"
    for user_key, channel, thread in (
        ("telegram:42", "telegram", THREAD),
        ("api:ana", "api", other_thread),
        ("api:bob", "api", "agent:main:api:bob"),
    ):
        await store.record_inbound(
            InboundRecord(
                user_key=user_key,
                channel=channel,
                platform_user_id=user_key.split(":")[1],
                display_name=None,
                thread_key=thread,
                chat_type="dm",
                text="hello",
                received_at=T0,
            )
        )
    await store.link_users(["telegram:42", "api:ana"], now=T0)
    kept = _memory_block("Is vegan (said Mar 2025, may be out of date)", "Lives in Porto")
    alone = _memory_block("Is vegan", clock=False)
    bobs = _memory_block("Is vegan")
    memory = InjectionMemory(store)
    for thread, key, block in (
        (THREAD, ("a", 0), kept),
        (other_thread, ("b", 0), alone),
        ("agent:main:api:bob", ("c", 0), bobs),
    ):
        await memory.recall(thread, [key])
        memory.remember(thread, key, block)
        await store.save_injection(thread, *key, block, T0)

    await memory.forget_fact("api:ana", "Is vegan")

    assert await memory.recall(THREAD, [("a", 0)]) == {
        ("a", 0): kept.replace("Is vegan (said Mar 2025, may be out of date)\n", "")
    }
    assert await memory.recall(other_thread, [("b", 0)]) == {}
    assert await store.injections(other_thread) == {}
    # Bob's own facts are his.
    assert await memory.recall("agent:main:api:bob", [("c", 0)]) == {("c", 0): bobs}


@pytest.mark.parametrize(
    "line",
    ["Is vegan", "Is vegan (said Mar 2025, may be out of date)", "Is ve…", "Is vegan (sa…"],
)
def test_a_forgotten_facts_card_line_goes_however_it_was_written(line: str) -> None:
    block = _memory_block("Has a dog called Rex", line, "Is vegetarian")
    assert without_fact(block, "Is vegan") == _memory_block("Has a dog called Rex", "Is vegetarian")
    assert without_fact(block, "Is a vet") == block
