"""The clock stage's own helpers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from middleware.clock.parsing import ParseResult
from middleware.clock.presentation import DirectAudience
from middleware.clock.stage import (
    LISTED_PHRASES,
    ClockSettings,
    _direct_audience,
    clock_view,
    describe_expressions,
    witnessed_location,
)
from middleware.store import InboundRecord, SqliteStore, StatedLocation
from middleware.types import Turn


def test_the_kept_direct_audience_is_the_one_built_for_its_zone_and_locale() -> None:
    for zone, locale in [("Europe/Berlin", "de-DE"), ("UTC", "en"), ("Asia/Kathmandu", "en")]:
        assert _direct_audience(zone, locale) == DirectAudience(zone, locale)
        assert _direct_audience(zone, locale) is _direct_audience(zone, locale)
    assert _direct_audience("UTC", "de-DE") != _direct_audience("UTC", "en")


def test_a_bad_zone_fails_every_time_it_is_asked_for() -> None:
    for _ in range(2):
        with pytest.raises(ValueError):
            _direct_audience("Mars/Olympus", "en")


def test_a_message_full_of_times_lists_a_few_and_counts_the_rest() -> None:
    resolved = [
        ParseResult(
            "absolute",
            start_instant=datetime(2026, 12, day, 12, tzinfo=UTC),
            matched_text=f"Dec {day} at noon",
            zone="UTC",
        )
        for day in range(1, 21)
    ]
    unclear = [
        ParseResult(
            "floating",
            needs_clarification=True,
            clarification_question=f"Which timezone for phrase {n}?",
            matched_text=f"at {n}",
        )
        for n in range(1, 11)
    ]
    lines, questions = describe_expressions([*resolved, *unclear], "UTC")
    [line] = lines
    assert line.count(" = ") == LISTED_PHRASES
    assert '"Dec 1 at noon" = 2026-12-01T12:00:00+00:00 (UTC)' in line
    assert '"Dec 7 at noon"' not in line
    assert line.endswith("; and 14 more, resolved the same way.")
    assert questions[:LISTED_PHRASES] == [
        f"Ask the user: Which timezone for phrase {n}?" for n in range(1, LISTED_PHRASES + 1)
    ]
    assert questions[LISTED_PHRASES:] == [
        "Ask the user: 4 more time phrases in this message are ambiguous too; confirm them as well."
    ]


async def test_a_witnessed_message_keeps_only_a_place_with_one_zone(store: SqliteStore) -> None:
    at = datetime(2026, 3, 1, 11, 30, tzinfo=UTC)
    await store.record_inbound(
        InboundRecord("telegram:44", "telegram", "44", "Ana", "g", "group", "hi", at)
    )

    def said(text: str) -> Turn:
        turn = Turn("telegram", "g", "44", text, at, {"messages": []}, chat_type="group")
        turn.user_key, turn.thread_key = "telegram:44", "g"
        return turn

    async def located() -> StatedLocation | None:
        return (await store.peek_prior("g", "telegram:44")).clock_data.located

    witness = witnessed_location(store, ClockSettings())
    for text in ("what time is it in Tokyo?", "I'm in Springfield", "when I'm in Tokyo"):
        await witness(said(text))
    assert await located() is None
    await witnessed_location(store, ClockSettings(enabled=False))(said("I'm in Tokyo"))
    assert await located() is None
    await witness(said("I'm in Tokyo this week"))
    assert await located() == StatedLocation("Asia/Tokyo", "Tokyo", "current", at)


async def test_in_a_busy_group_the_speaker_s_own_return_is_told(store: SqliteStore) -> None:
    """Bruno was away four days while the others talked: the thread's last message was
    ten minutes ago, but his own return is what a welcome back is about. Fay, new to the
    group, is said to speak here for the first time."""
    monday = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
    friday = monday + timedelta(days=4, hours=5)

    async def says(user: str, name: str, at: datetime) -> Turn:
        record = InboundRecord(f"telegram:{user}", "telegram", user, name, "g", "group", "hi", at)
        result = await store.record_inbound(record)
        turn = Turn("telegram", "g", user, "hi", at, {"messages": []}, chat_type="group")
        turn.user_key, turn.thread_key, turn.display_name = f"telegram:{user}", "g", name
        turn.prior = result.prior
        return turn

    await says("2", "Bruno", monday)
    await says("3", "Cara", friday - timedelta(minutes=10))
    block = (await clock_view(store, await says("2", "Bruno", friday), ClockSettings())).block
    assert "Last message here: 10 minutes ago" in block
    assert "Bruno's own last message here: 4 days 5 hours ago (Mon 2 Mar 14:00)." in block
    block = (await clock_view(store, await says("3", "Cara", friday), ClockSettings())).block
    assert "own last message" not in block, "Cara spoke ten minutes ago: nothing to add"
    block = (await clock_view(store, await says("6", "Fay", friday), ClockSettings())).block
    assert "First message here from Fay." in block
