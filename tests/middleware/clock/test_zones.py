"""Zone helpers: properties over every accepted zone, and hand-checked DST edges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, available_timezones

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.clock.zones import (
    LEGACY_KEYS,
    agent_timezone,
    format_offset,
    get_zone,
    is_valid_zone,
    label_tzinfo,
    localize,
    offset_minutes,
    session_tzinfo,
    to_iso,
    valid_zones,
)

ZONES = sorted(name for name in available_timezones() if is_valid_zone(name))
PROPERTY = settings(max_examples=200, deadline=None)

zones = st.sampled_from(ZONES)
# Zones with DST, weighted in so that gaps and folds come up often near transitions.
dst_zones = st.sampled_from(
    ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Chatham",
     "America/Sao_Paulo", "America/Santiago", "Africa/Cairo", "Asia/Tehran", "Europe/Dublin"]
)  # fmt: skip
instants = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
wall_times = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2099, 12, 30))


def iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def transition_near(zone: ZoneInfo, start: datetime) -> datetime | None:
    """First instant after ``start`` (within a year) where the zone's offset changes,
    found by stepping a week at a time and bisecting; independent of the code under test."""
    step = timedelta(days=7)
    low = start
    for _ in range(53):
        high = low + step
        if low.astimezone(zone).utcoffset() != high.astimezone(zone).utcoffset():
            while high - low > timedelta(seconds=1):
                mid = low + (high - low) / 2
                if mid.astimezone(zone).utcoffset() == low.astimezone(zone).utcoffset():
                    low = mid
                else:
                    high = mid
            return high.replace(microsecond=0)
        low = high
    return None


def expected_status(naive: datetime, zone: ZoneInfo) -> int:
    """How many instants show ``naive`` on the zone's clocks (0 gap, 1 ok, 2 fold)."""
    offsets = {naive.replace(tzinfo=zone, fold=f).utcoffset() for f in (0, 1)}
    hits = set()
    for offset in offsets:
        assert offset is not None
        candidate = (naive - offset).replace(tzinfo=UTC)
        if candidate.astimezone(zone).replace(tzinfo=None) == naive:
            hits.add(candidate)
    return len(hits)


def check_localize(naive: datetime, tz: str) -> None:
    zone = ZoneInfo(tz)
    result = localize(naive, tz)
    count = expected_status(naive, zone)
    assert result.status == {0: "gap", 1: "ok", 2: "fold"}[count]
    assert len(result.instants) == count
    for instant in result.instants:
        assert instant.tzinfo is UTC
        assert instant.astimezone(zone).replace(tzinfo=None) == naive
    if result.status == "fold":
        assert result.instants[0] < result.instants[1]
        assert result.offsets[0] > result.offsets[1]
    if result.status == "gap":
        assert result.gap_start is not None and result.gap_end is not None
        assert result.transition is not None and result.shifted is not None
        assert result.gap_start <= naive < result.gap_end
        assert result.transition.astimezone(zone).replace(tzinfo=None) == result.gap_end
        before = (result.transition - timedelta(seconds=1)).astimezone(zone)
        assert before.replace(tzinfo=None) == result.gap_start - timedelta(seconds=1)
        shifted = result.shifted.astimezone(zone).replace(tzinfo=None)
        assert shifted == naive + (result.gap_end - result.gap_start)


# --- properties over all zones -------------------------------------------------------


def test_the_zone_list_is_large_and_clean() -> None:
    assert len(ZONES) > 400
    assert "Asia/Tokyo" in ZONES and "UTC" in ZONES
    assert not LEGACY_KEYS & valid_zones()


@PROPERTY
@given(tz=zones, instant=instants)
def test_offset_minutes_matches_utcoffset(tz: str, instant: datetime) -> None:
    offset = instant.astimezone(ZoneInfo(tz)).utcoffset()
    assert offset is not None
    minutes = offset_minutes(tz, instant)
    assert abs(minutes * 60 - offset.total_seconds()) < 60
    if offset.total_seconds() % 60 == 0:
        assert minutes * 60 == offset.total_seconds()


@PROPERTY
@given(tz=zones, instant=instants)
def test_to_iso_round_trips_to_the_same_instant(tz: str, instant: datetime) -> None:
    text = to_iso(instant, tz)
    parsed = datetime.fromisoformat(text)
    assert parsed == instant.replace(microsecond=0)
    assert parsed.utcoffset() == instant.astimezone(ZoneInfo(tz)).utcoffset()
    assert "." not in text


@PROPERTY
@given(tz=zones, naive=wall_times)
def test_localize_round_trips_or_flags(tz: str, naive: datetime) -> None:
    check_localize(naive, tz)


@PROPERTY
@given(
    tz=st.one_of(zones, dst_zones),
    year=st.integers(1971, 2098),
    month=st.integers(1, 12),
    minutes=st.integers(-120, 120),
)
def test_localize_near_transitions(tz: str, year: int, month: int, minutes: int) -> None:
    zone = ZoneInfo(tz)
    transition = transition_near(zone, datetime(year, month, 1, tzinfo=UTC))
    if transition is None:
        return
    for side in (transition - timedelta(seconds=1), transition):
        wall = side.astimezone(zone).replace(tzinfo=None) + timedelta(minutes=minutes)
        check_localize(wall.replace(second=0), tz)


# --- hand-checked DST edges ------------------------------------------------------------


def test_new_york_spring_forward_gap() -> None:
    result = localize(datetime(2026, 3, 8, 2, 30), "America/New_York")
    assert result.status == "gap" and result.instants == ()
    assert result.gap_start == datetime(2026, 3, 8, 2, 0)
    assert result.gap_end == datetime(2026, 3, 8, 3, 0)
    assert result.transition == iso("2026-03-08T03:00:00-04:00")
    assert result.shifted == iso("2026-03-08T03:30:00-04:00")
    assert result.instant is None


def test_new_york_fall_back_fold() -> None:
    result = localize(datetime(2026, 11, 1, 1, 30), "America/New_York")
    assert result.status == "fold"
    assert result.instants == (iso("2026-11-01T01:30:00-04:00"), iso("2026-11-01T01:30:00-05:00"))
    assert result.offsets == (-240, -300)


@pytest.mark.parametrize(
    ("tz", "wall", "status", "expected"),
    [
        ("America/New_York", datetime(2026, 3, 8, 1, 59), "ok", ["2026-03-08T01:59:00-05:00"]),
        ("America/New_York", datetime(2026, 3, 8, 3, 0), "ok", ["2026-03-08T03:00:00-04:00"]),
        ("America/New_York", datetime(2026, 11, 1, 2, 0), "ok", ["2026-11-01T02:00:00-05:00"]),
        ("Europe/Berlin", datetime(2026, 3, 29, 2, 30), "gap", []),
        ("Europe/Berlin", datetime(2026, 3, 29, 3, 0), "ok", ["2026-03-29T03:00:00+02:00"]),
        (
            "Europe/Berlin",
            datetime(2026, 10, 25, 2, 30),
            "fold",
            ["2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00"],
        ),
        # Lord Howe moves its clocks by 30 minutes: 02:00 -> 02:30 and 02:00 -> 01:30.
        ("Australia/Lord_Howe", datetime(2026, 10, 4, 2, 15), "gap", []),
        ("Australia/Lord_Howe", datetime(2026, 10, 4, 2, 30), "ok", ["2026-10-04T02:30:00+11:00"]),
        (
            "Australia/Lord_Howe",
            datetime(2026, 4, 5, 1, 45),
            "fold",
            ["2026-04-05T01:45:00+11:00", "2026-04-05T01:45:00+10:30"],
        ),
        # Chatham: 02:45 -> 03:45 (last Sunday of September), 03:45 -> 02:45 (April).
        ("Pacific/Chatham", datetime(2026, 9, 27, 3, 0), "gap", []),
        (
            "Pacific/Chatham",
            datetime(2026, 4, 5, 3, 0),
            "fold",
            ["2026-04-05T03:00:00+13:45", "2026-04-05T03:00:00+12:45"],
        ),
        ("Asia/Kathmandu", datetime(2026, 6, 1, 2, 30), "ok", ["2026-06-01T02:30:00+05:45"]),
    ],
)
def test_dst_edges(tz: str, wall: datetime, status: str, expected: list[str]) -> None:
    result = localize(wall, tz)
    assert result.status == status
    assert list(result.instants) == [iso(text) for text in expected]


def test_gap_details_for_half_hour_and_odd_offset_zones() -> None:
    lord_howe = localize(datetime(2026, 10, 4, 2, 15), "Australia/Lord_Howe")
    assert (lord_howe.gap_start, lord_howe.gap_end) == (
        datetime(2026, 10, 4, 2, 0),
        datetime(2026, 10, 4, 2, 30),
    )
    assert lord_howe.shifted == iso("2026-10-04T02:45:00+11:00")
    chatham = localize(datetime(2026, 9, 27, 3, 0), "Pacific/Chatham")
    assert (chatham.gap_start, chatham.gap_end) == (
        datetime(2026, 9, 27, 2, 45),
        datetime(2026, 9, 27, 3, 45),
    )
    assert chatham.transition == iso("2026-09-27T03:45:00+13:45")
    assert chatham.shifted == iso("2026-09-27T04:00:00+13:45")


@pytest.mark.parametrize(
    ("tz", "instant", "minutes"),
    [
        ("Asia/Kathmandu", "2026-01-15T00:00:00+00:00", 345),
        ("Asia/Kathmandu", "1985-06-01T00:00:00+00:00", 330),
        ("Pacific/Chatham", "2026-01-15T00:00:00+00:00", 825),
        ("Pacific/Chatham", "2026-07-15T00:00:00+00:00", 765),
        ("Australia/Lord_Howe", "2026-01-15T00:00:00+00:00", 660),
        ("Australia/Lord_Howe", "2026-07-15T00:00:00+00:00", 630),
        ("America/New_York", "2026-03-08T06:59:59+00:00", -300),
        ("America/New_York", "2026-03-08T07:00:00+00:00", -240),
        ("America/St_Johns", "2026-01-15T00:00:00+00:00", -210),
        ("Asia/Kolkata", "2026-01-15T00:00:00+00:00", 330),
        ("UTC", "2026-01-15T00:00:00+00:00", 0),
        ("Africa/Monrovia", "1971-01-01T00:00:00+00:00", -44),  # -00:44:30, truncated
    ],
)
def test_offset_minutes_examples(tz: str, instant: str, minutes: int) -> None:
    assert offset_minutes(tz, iso(instant)) == minutes


def test_to_iso_examples() -> None:
    assert to_iso(iso("2026-02-10T03:02:00+00:00"), "Asia/Tokyo") == "2026-02-10T12:02:00+09:00"
    assert to_iso(iso("2026-02-10T03:02:59.9+00:00"), "UTC") == "2026-02-10T03:02:59+00:00"
    assert to_iso(iso("2026-07-01T00:00:00+00:00"), "Pacific/Chatham") == (
        "2026-07-01T12:45:00+12:45"
    )


def test_naive_instants_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        offset_minutes("UTC", datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="aware"):
        to_iso(datetime(2026, 1, 1), "UTC")
    with pytest.raises(ValueError, match="naive"):
        localize(datetime(2026, 1, 1, tzinfo=UTC), "UTC")


@pytest.mark.parametrize(
    ("minutes", "label"),
    [
        (345, "UTC+05:45"),
        (-210, "UTC-03:30"),
        (0, "UTC+00:00"),
        (825, "UTC+13:45"),
        (-60, "UTC-01:00"),
    ],
)
def test_format_offset(minutes: int, label: str) -> None:
    assert format_offset(minutes) == label


# --- zone ids ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["Asia/Tokyo", "UTC", "Etc/UTC", "America/Argentina/Buenos_Aires", "US/Eastern"]
)
def test_valid_zones(name: str) -> None:
    assert is_valid_zone(name)
    assert get_zone(name) == ZoneInfo(name)


@pytest.mark.parametrize(
    "name",
    ["EST", "MST", "HST", "EST5EDT", "CST6CDT", "MST7MDT", "PST8PDT", "CET", "GMT", "Japan",
     "Zulu", "Etc/GMT+5", "asia/tokyo", "Mars/Olympus", "", "localtime"],
)  # fmt: skip
def test_rejected_zones(name: str) -> None:
    assert not is_valid_zone(name)
    with pytest.raises(ValueError):
        get_zone(name)


def test_get_zone_messages_say_what_to_do() -> None:
    with pytest.raises(ValueError, match="did you mean 'Asia/Tokyo'"):
        get_zone("asia/tokyo")
    with pytest.raises(ValueError, match="abbreviation"):
        get_zone("EST")
    with pytest.raises(ValueError, match="IANA"):
        get_zone("Mars/Olympus")


@pytest.mark.parametrize("name", ["PDT", "IST", "Japan", "Cuba", "GB-Eire"])
def test_an_abbreviation_or_a_country_alias_is_named_as_such(name: str) -> None:
    # Upper-case words read as abbreviations whether or not the tz database has them;
    # the database's country aliases are named legacy, not "unknown".
    with pytest.raises(ValueError, match="abbreviation or legacy alias.*name a place instead"):
        get_zone(name)


def test_get_zone_says_an_etc_id_is_a_fixed_offset_and_what_to_use() -> None:
    with pytest.raises(ValueError, match=r"'Etc/GMT\+2' is a fixed offset \(UTC-02:00") as caught:
        get_zone("Etc/GMT+2")
    assert "name a place instead" in str(caught.value)
    with pytest.raises(ValueError, match="'Etc/GMT' is UTC under another name; use 'UTC'"):
        get_zone("Etc/GMT")


@pytest.mark.parametrize(
    ("label", "offset"),
    [
        ("UTC+05:30", timedelta(hours=5, minutes=30)),
        ("UTC-03:30", -timedelta(hours=3, minutes=30)),
        ("UTC+00:00", timedelta(0)),
        ("UTC-09:45", -timedelta(hours=9, minutes=45)),
    ],
)
def test_an_offset_label_reads_as_that_fixed_offset(label: str, offset: timedelta) -> None:
    # What format_offset writes for a Session TZ the message named reads back as that offset.
    for read in (label_tzinfo, session_tzinfo):
        tz = read(label)
        assert tz is not None
        assert tz.utcoffset(None) == offset


def test_a_zone_id_reads_as_its_zone_and_anything_else_as_no_zone() -> None:
    assert label_tzinfo("Asia/Tokyo") == ZoneInfo("Asia/Tokyo")
    assert session_tzinfo("Asia/Tokyo") == ZoneInfo("Asia/Tokyo")
    for other in ("Mars/Olympus", "EST", "UTC+5", "UTC+05:30 ", "utc+05:30", ""):
        assert label_tzinfo(other) is None, other


@pytest.mark.parametrize("name", ["UTC+2", "UTC-5", "GMT+02:00", "gmt-0530", "UTC+2:00"])
def test_a_loose_offset_session_zone_is_refused_saying_how_to_write_one(name: str) -> None:
    with pytest.raises(ValueError, match=r"write an offset as 'UTC\+02:00'"):
        session_tzinfo(name)


def test_an_unknown_session_zone_is_refused_as_a_zone() -> None:
    with pytest.raises(ValueError, match="did you mean 'Asia/Tokyo'"):
        session_tzinfo("asia/tokyo")
    with pytest.raises(ValueError, match="IANA"):
        session_tzinfo("Mars/Olympus")


# --- agent zone --------------------------------------------------------------------------


def test_agent_timezone_prefers_tz_variable(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    assert agent_timezone({"TZ": "Asia/Tokyo"}, missing, missing) == "Asia/Tokyo"
    assert agent_timezone({"TZ": ":Europe/Berlin"}, missing, missing) == "Europe/Berlin"
    path_tz = {"TZ": "/usr/share/zoneinfo/America/New_York"}
    assert agent_timezone(path_tz, missing, missing) == "America/New_York"
    assert agent_timezone({"TZ": "Etc/UTC"}, missing, missing) == "UTC"


def test_agent_timezone_reads_localtime_link_then_file(tmp_path: Path) -> None:
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/Asia/Kathmandu")
    missing = tmp_path / "missing"
    assert agent_timezone({}, link, missing) == "Asia/Kathmandu"
    assert agent_timezone({"TZ": "EST5EDT"}, link, missing) == "Asia/Kathmandu"
    zone_file = tmp_path / "timezone"
    zone_file.write_text("Pacific/Chatham\n", encoding="utf-8")
    assert agent_timezone({}, missing, zone_file) == "Pacific/Chatham"


def test_agent_timezone_falls_back_to_utc(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    assert agent_timezone({}, missing, missing) == "UTC"
    unreadable = tmp_path / "latin1"
    unreadable.write_bytes(b"Europe/Z\xfcrich\n")
    assert agent_timezone({}, missing, unreadable) == "UTC"
    bad = tmp_path / "timezone"
    bad.write_text("PST8PDT\n", encoding="utf-8")
    assert agent_timezone({"TZ": "nonsense"}, missing, bad) == "UTC"
