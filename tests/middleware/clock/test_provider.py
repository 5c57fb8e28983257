"""The §4.4 provider interface, bound to a fake clock and a real SQLite store."""

from __future__ import annotations

from datetime import UTC, datetime

from middleware.clock.provider import TimezoneProvider
from middleware.clock.source import FakeClock
from middleware.store import InboundRecord, SqliteStore

NOW = datetime(2026, 11, 21, 15, 40, tzinfo=UTC)
THREAD = "agent:main:telegram:dm:7"


async def test_provider_resolves_like_the_pipeline(store: SqliteStore) -> None:
    provider = TimezoneProvider(FakeClock(NOW), store, agent_zone="Europe/Berlin")
    assert provider.now() == NOW
    assert provider.agent_timezone() == "Europe/Berlin"
    unknown = await provider.session_timezone(THREAD, "telegram:7")
    assert (unknown.zone, unknown.fallback) == ("UTC", True)
    await store.record_inbound(
        InboundRecord("telegram:7", "telegram", "7", None, THREAD, "dm", "hi", NOW)
    )
    await store.set_user_timezone("telegram:7", "Asia/Kathmandu")
    known = await provider.session_timezone(THREAD, "telegram:7")
    assert (known.zone, known.source) == ("Asia/Kathmandu", "user")
    await store.set_thread_timezone(THREAD, "Pacific/Chatham")
    assert (await provider.session_timezone(THREAD, "telegram:7")).zone == "Pacific/Chatham"
    explicit = await provider.session_timezone(THREAD, "telegram:7", "at 9am Tokyo time")
    assert (explicit.zone, explicit.source) == ("Asia/Tokyo", "explicit")
    assert provider.offset_minutes("Asia/Kathmandu", NOW) == 345
    assert provider.offset_minutes("Pacific/Chatham", NOW) == 825
    assert provider.to_iso(NOW, "Asia/Kathmandu") == "2026-11-21T21:25:00+05:45"
    parsed = provider.parse_anchored_time("monday at 9am", "Asia/Tokyo", NOW)
    assert parsed.start_instant == datetime(2026, 11, 23, 0, 0, tzinfo=UTC)
