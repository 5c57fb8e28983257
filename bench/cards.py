"""What card assembly costs on a boot turn, with a large continuity log in the store.

Run from the repository root::

    .venv/bin/python bench/cards.py [--entries 10000] [--samples 2000]

Fills a fresh SQLite store with ``--entries`` continuity log entries spread over 200
work contexts (plus sessions, views, rollups and living memory for the measured user),
then times, in interleaved rounds:

- the baseline: one trivial store read (``get_thread``), the cheapest hop the relay makes;
- card assembly: ``card_sources`` (one store round trip) + rendering the three cards.

Prints p50/p90 of each and their ratio. Target (issue 6): card assembly p50 ≤ 1 ms with
10,000 entries. A benchmark, not a test: it exits 0 whether the target passes or misses.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from middleware.cards import render  # noqa: E402
from middleware.clock.source import FakeClock  # noqa: E402
from middleware.continuity.capture import new_entry_id, rebuild_view  # noqa: E402
from middleware.continuity.model import ContinuityEntry, RollupSegment  # noqa: E402
from middleware.continuity.service import ContinuityService, ContinuitySettings  # noqa: E402
from middleware.continuity.stage import render_boot_cards  # noqa: E402
from middleware.store import InboundRecord, SqliteStore  # noqa: E402
from middleware.types import Turn  # noqa: E402

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
TARGET_MS = 1.0
CONTEXTS = 200
USER = "api:bench"


async def fill(store: SqliteStore, entries: int) -> list[str]:
    """``entries`` log entries over ``CONTEXTS`` threads; returns the thread keys."""
    threads = [f"agent:main:api:t{n}" for n in range(CONTEXTS)]
    kinds = ("session_summary_ref", "open_question", "key_decision", "work_phase_change")
    for n, key in enumerate(threads):
        at = NOW - timedelta(days=20) + timedelta(minutes=n)
        result = await store.record_inbound(
            InboundRecord(USER, "api", "bench", None, key, "dm", "hello", at)
        )
        session_id = f"s_bench_{n}"
        await store.start_session(session_id, key, USER, at, result.message_id)
        context = await store.thread_work_context(key, now=at)
        batch = []
        for i in range(entries // CONTEXTS):
            kind = kinds[i % len(kinds)]
            content = {
                "session_summary_ref": {"doc73_session_summary_id": session_id, "turn_count": 5},
                "open_question": {"question": f"Open item {i} of {key}", "resolved": False},
                "key_decision": {"decision": f"Decision {i} for {key}", "referenced_in": []},
                "work_phase_change": {"new_phase": "drafting"},
            }[kind]
            batch.append(
                ContinuityEntry(
                    entry_id=new_entry_id(),
                    entry_type=kind,  # type: ignore[arg-type]
                    work_context_id=context.work_context_id,
                    source_session_id=session_id,
                    captured_at=at,
                    capture_mode="deterministic",
                    content=content,
                    decay_at=NOW + timedelta(days=30),
                )
            )
        await store.record_capture(
            session_id,
            through_message_id=result.message_id,
            at=at,
            summary=f"Worked on part {n}: drafted two sections, one pending.",
            mode="deterministic",
            entries=batch,
            unlinked_cap=20,
        )
    return threads


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "bench.db")
        await store.open()
        clock = FakeClock(NOW)
        service = ContinuityService(store, ContinuitySettings(), clock, None, model="m")
        threads = await fill(store, args.entries)
        for key in threads:
            context = await store.thread_work_context(key, now=NOW)
            await rebuild_view(store, service.settings.continuity, context.work_context_id, NOW)
        await store.replace_rollup(
            USER,
            [
                RollupSegment(f"wc:{k}", f"Work on {k}: two drafts done.", NOW, NOW)
                for k in threads[:8]
            ],
            generated_at=NOW,
        )
        for text in ("Name: Bench", "Prefers short answers", "Works in legal tech"):
            await store.add_memory_fact(USER, "fact", text, source="user", at=NOW)
        target = threads[0]
        turn = Turn(
            channel="api",
            thread_id="t0",
            user_id="bench",
            text="let's continue",
            received_at=NOW + timedelta(days=1),
            body={"messages": []},
        )
        turn.thread_key, turn.user_key = target, USER

        async def baseline() -> None:
            await store.get_thread(target)

        async def assemble() -> None:
            # Each sample renders as if for the first time: no counts remembered.
            render.count_tokens.cache_clear()
            sources = await store.card_sources(target, USER, now=turn.received_at)
            render_boot_cards(service, turn, sources, session_id="s_new", boot=True)

        cards, _ = render_boot_cards(
            service,
            turn,
            await store.card_sources(target, USER, now=turn.received_at),
            session_id="s_new",
            boot=True,
        )
        timings: dict[str, list[float]] = {"baseline": [], "cards": []}
        for _ in range(args.samples):
            for name, work in (("baseline", baseline), ("cards", assemble)):
                start = time.perf_counter()
                await work()
                timings[name].append((time.perf_counter() - start) * 1000)
        await store.close()
    p50 = {k: statistics.median(v) for k, v in timings.items()}
    p90 = {k: statistics.quantiles(v, n=10)[-1] for k, v in timings.items()}
    print(f"log entries: {args.entries}, samples: {args.samples}, cards rendered: {len(cards)}")
    for name in timings:
        print(f"{name:>9}: p50 {p50[name]:.3f} ms   p90 {p90[name]:.3f} ms")
    print(f"card assembly / baseline read: {p50['cards'] / p50['baseline']:.2f}x")
    verdict = "PASS" if p50["cards"] <= TARGET_MS else "MISS"
    print(f"target card assembly p50 <= {TARGET_MS} ms: {verdict}")


if __name__ == "__main__":
    asyncio.run(main())
