"""When the nightly job and the scheduler's ticks are due, across zones and DST changes."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from middleware.continuity.schedule import next_check_delay, nightly_due

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def runs(zone: ZoneInfo, at: time, start: datetime, days: int = 3) -> list[datetime]:
    """The local instants a scheduler ticking every 5 minutes runs the job at, having
    already run for the local day of ``start``."""
    mark: str | None = start.astimezone(zone).date().isoformat()
    ran: list[datetime] = []
    for step in range(days * 24 * 12):
        now = start + timedelta(minutes=5 * step)
        due = nightly_due(mark, now, zone, at)
        if due is not None:
            local = now.astimezone(zone)
            assert due == local.date().isoformat()
            ran.append(local)
            mark = due
    return ran


def test_due_after_the_local_time_once_a_day() -> None:
    at = time(3, 0)
    # 01:59 UTC is 02:59 in Berlin (winter): not yet; 02:00 UTC is 03:00.
    assert nightly_due(None, utc("2025-01-15T01:59"), BERLIN, at) is None
    assert nightly_due(None, utc("2025-01-15T02:00"), BERLIN, at) == "2025-01-15"
    assert nightly_due("2025-01-14", utc("2025-01-15T22:00"), BERLIN, at) == "2025-01-15"
    assert nightly_due("2025-01-15", utc("2025-01-15T22:00"), BERLIN, at) is None


def test_local_date_not_utc_date() -> None:
    # 03:30 UTC on the 15th is still 22:30 on the 14th in New York (EST).
    assert nightly_due("2025-01-13", utc("2025-01-15T03:30"), NEW_YORK, time(22, 0)) == (
        "2025-01-14"
    )
    # 14:00 UTC on the 15th is already 00:30 on the 16th at Lord Howe (+11:00).
    assert nightly_due("2025-01-15", utc("2025-01-15T14:00"), LORD_HOWE, time(0, 15)) == (
        "2025-01-16"
    )


def test_down_for_days_runs_once_for_today() -> None:
    now = utc("2025-06-20T05:00")  # 07:00 in Berlin (summer)
    assert nightly_due("2025-06-01", now, BERLIN, time(3, 0)) == "2025-06-20"
    assert nightly_due("2025-06-20", now + timedelta(hours=1), BERLIN, time(3, 0)) is None
    # Back before tonight's time: yesterday's missed night is not made up.
    assert nightly_due("2025-06-01", utc("2025-06-20T00:30"), BERLIN, time(3, 0)) is None


def test_mark_ahead_of_today_after_moving_west() -> None:
    # Ran for the 11th in Berlin; now in New York where it is still the 10th.
    assert nightly_due("2025-03-11", utc("2025-03-11T04:00"), NEW_YORK, time(0, 0)) is None


def test_unreadable_mark_counts_as_never_run() -> None:
    assert nightly_due("garbage", utc("2025-01-15T12:00"), BERLIN, time(3, 0)) == "2025-01-15"


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        nightly_due(None, datetime(2025, 1, 15, 12), BERLIN, time(3, 0))


@pytest.mark.parametrize(
    ("zone", "at", "start", "expected"),
    [
        # Berlin springs forward 02:00 -> 03:00 on 30 March: 02:30 does not exist that
        # night, so it runs at the first reading after it.
        (BERLIN, time(2, 30), "2025-03-28T12:00", ["03-29 02:30", "03-30 03:00", "03-31 02:30"]),
        # Berlin falls back 03:00 -> 02:00 on 26 October: 02:30 happens twice, runs once.
        (BERLIN, time(2, 30), "2025-10-24T12:00", ["10-25 02:30", "10-26 02:30", "10-27 02:30"]),
        (NEW_YORK, time(2, 15), "2025-03-07T17:00", ["03-08 02:15", "03-09 03:00", "03-10 02:15"]),
        (NEW_YORK, time(1, 30), "2025-10-31T17:00", ["11-01 01:30", "11-02 01:30", "11-03 01:30"]),
        # Lord Howe moves by half an hour: 02:00 -> 02:30 on 5 October ...
        (LORD_HOWE, time(2, 10), "2025-10-03T00:00", ["10-04 02:10", "10-05 02:30", "10-06 02:10"]),
        # ... and 02:00 -> 01:30 on 6 April.
        (LORD_HOWE, time(1, 45), "2025-04-04T00:00", ["04-05 01:45", "04-06 01:45", "04-07 01:45"]),
    ],
    ids=[
        "berlin-gap",
        "berlin-fold",
        "new-york-gap",
        "new-york-fold",
        "lord-howe-gap",
        "lord-howe-fold",
    ],
)
def test_once_per_local_night_across_dst(
    zone: ZoneInfo, at: time, start: str, expected: list[str]
) -> None:
    ran = runs(zone, at, utc(start))
    assert [local.strftime("%m-%d %H:%M") for local in ran] == expected


def test_fold_second_pass_does_not_rerun() -> None:
    at = time(1, 30)
    first = datetime(2025, 11, 2, 1, 30, tzinfo=NEW_YORK)  # EDT, the first 01:30
    second = datetime(2025, 11, 2, 1, 30, fold=1, tzinfo=NEW_YORK)  # EST, an hour later
    assert second - first == timedelta(0)  # same wall time; the instants differ by 1 h
    assert second.astimezone(UTC) - first.astimezone(UTC) == timedelta(hours=1)
    mark = nightly_due("2025-11-01", first.astimezone(UTC), NEW_YORK, at)
    assert mark == "2025-11-02"
    assert nightly_due(mark, second.astimezone(UTC), NEW_YORK, at) is None


@pytest.mark.parametrize(
    ("now", "interval", "expected"),
    [
        ("2025-01-15T12:00:20", timedelta(minutes=1), 40.0),
        ("2025-01-15T12:00:00", timedelta(minutes=1), 60.0),
        ("2025-01-15T12:07:30", timedelta(minutes=15), 450.0),
        ("2025-01-15T12:00:00.250", timedelta(seconds=1), 0.75),
    ],
)
def test_next_check_delay(now: str, interval: timedelta, expected: float) -> None:
    assert next_check_delay(utc(now), interval) == pytest.approx(expected)


def test_next_check_delay_is_zone_independent() -> None:
    now = utc("2025-01-15T12:00:20").astimezone(LORD_HOWE)
    assert next_check_delay(now, timedelta(minutes=1)) == pytest.approx(40.0)


def test_next_check_delay_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="positive"):
        next_check_delay(utc("2025-01-15T12:00"), timedelta(0))
    with pytest.raises(ValueError, match="aware"):
        next_check_delay(datetime(2025, 1, 15, 12), timedelta(minutes=1))
