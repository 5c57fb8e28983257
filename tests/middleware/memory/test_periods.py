"""The period a remembered fact said with a relative time holds for."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from middleware.memory.periods import period_end

LISBON = ZoneInfo("Europe/Lisbon")
SAID = datetime(2026, 12, 30, 23, 30, tzinfo=UTC)  # a Wednesday, 23:30 in Lisbon too


@pytest.mark.parametrize(
    ("text", "ends"),
    [
        ("Is off today", datetime(2026, 12, 31, tzinfo=LISBON)),
        ("Has guests tonight", datetime(2026, 12, 31, tzinfo=LISBON)),
        ("Has a dentist appointment tomorrow", datetime(2027, 1, 1, tzinfo=LISBON)),
        ("Is in Lisbon this week", datetime(2027, 1, 4, tzinfo=LISBON)),
        ("Is away this weekend", datetime(2027, 1, 4, tzinfo=LISBON)),
        ("Is travelling next week", datetime(2027, 1, 11, tzinfo=LISBON)),
        ("Has exams this month", datetime(2027, 1, 1, tzinfo=LISBON)),
        ("Starts at Stripe next month", datetime(2027, 2, 1, tzinfo=LISBON)),
        ("Is training for a marathon this year", datetime(2027, 1, 1, tzinfo=LISBON)),
        ("Is off today and travelling next week", datetime(2027, 1, 11, tzinfo=LISBON)),
        ("Is vegan", None),
        ("Works weekends", None),
    ],
)
def test_a_relative_time_ends_at_the_local_midnight_after_it(
    text: str, ends: datetime | None
) -> None:
    assert period_end(text, SAID, LISBON) == ends


def test_the_day_it_was_said_is_the_reader_s_day() -> None:
    # 23:30 UTC on Wednesday 30 Dec is already Thursday 31 Dec in Tokyo.
    assert period_end("Is off today", SAID, ZoneInfo("Asia/Tokyo")) == datetime(
        2027, 1, 1, tzinfo=ZoneInfo("Asia/Tokyo")
    )
