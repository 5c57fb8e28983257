"""What a user asked the relay to keep, through the HTTP endpoint over fifteen months.

Spec 002 tier 3 commits explicit "remember this" requests, and its GC never prunes a
committed entry; spec 003 §5.5's compactor forgets a fact below 0.3 confidence and
unmentioned for 60 days, which a fact said once reaches after 14 months. A fake clock
moves Ana fifteen months on: the nightly job and the daily housekeeping forget what she
said once in passing, never what she asked to be kept, which the card still shows as
possibly out of date. She can still forget it herself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from middleware.clock.source import FakeClock
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream
from tests.proxy.test_continuity_http import MONDAY, Person, admin, cards_in, make_relay

FIFTEEN_MONTHS = timedelta(days=457)


async def test_what_the_user_asked_to_keep_outlives_fifteen_months_of_silence(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    clock = FakeClock(MONDAY)
    relay = await make_relay(relay_factory, clock, continuity={"mode": "deterministic"})
    ana = Person(relay, fake_upstream, clock)
    await ana.say("Remember that I live in Berlin. I'm a nurse.")
    await ana.say("Don't forget that I'm allergic to peanuts.", after=timedelta(minutes=1))
    assert await ana.say("/memory add I play the cello") == "Remembered: Plays the cello"
    await ana.say("Remember that I'm in Lisbon this week.")
    assert await ana.say("/memory add i play the cello") == (
        "I already remember that; it is kept on request."
    )
    listing = await ana.say("/memory")
    assert "Lives in Berlin — said 2 Nov 2026, 95% sure; kept on request\n" in listing
    assert "Is a nurse — said 2 Nov 2026, 95% sure\n" in listing
    assert "Is in Lisbon this week — said 2 Nov 2026, 95% sure; kept on request\n" in listing
    assert "Plays the cello — said 2 Nov 2026, 100% sure; kept on request\n" in listing
    assert "ones you asked me to remember" in listing

    # Fifteen months without a word of any of it: all aged to the floor, 0.2 (spec 003 §8).
    clock.set(datetime(2028, 2, 3, 3, 30, tzinfo=UTC))
    status, night = await admin(relay, "POST", "/admin/jobs/nightly/run")
    # The nurse said once in passing, and Lisbon "this week": that week is long over.
    assert status == 200 and night["forgotten_facts"] == 2, night
    status, tick = await admin(relay, "POST", "/admin/jobs/scheduler/run")
    assert status == 200, tick

    memory = cards_in(await ana.block_for("hi, it's been a while", after=timedelta(hours=6)))
    card = memory["living_memory"]
    assert "nurse" not in card and "Lisbon" not in card
    # Kept, and still said to be possibly out of date.
    for kept in ("Lives in Berlin", "Is allergic to peanuts", "Plays the cello"):
        assert f"{kept} (said Nov 2026, may be out of date)" in card, card
    listing = await ana.say("/memory")
    assert "nurse" not in listing and "Lisbon" not in listing
    line = "Lives in Berlin — said 2 Nov 2026, 20% sure; may be out of date; kept on request\n"
    assert line in listing and listing.count("; kept on request") == 3, listing

    # Only she forgets it: by number, or by saying so.
    number = next(line for line in listing.splitlines() if "cello" in line).split(".")[0]
    assert await ana.say(f"/memory forget {number}") == "Forgotten: Plays the cello"
    await ana.say("Please forget that I'm allergic to peanuts.")
    listing = await ana.say("/memory")
    assert "cello" not in listing and "peanuts" not in listing and "Berlin" in listing
    # A correction replaces it as any fact.
    await ana.say("Actually, I moved to Lisbon.")
    listing = await ana.say("/memory")
    assert "Lives in Lisbon" in listing and "Berlin" not in listing, listing
