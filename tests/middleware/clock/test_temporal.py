"""The temporal block's wording, checked against the plain implementation it replaced
(``timedelta`` arithmetic, each instant converted where it is used)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import pytest
from babel.dates import format_timedelta
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.clock import temporal
from middleware.clock.temporal import (
    Elapsed,
    MemberTime,
    SaidPlace,
    TemporalFacts,
    _now_line,
    ago,
    asks_about_current_events,
    estimate_tokens,
    gap_hint,
    local_minute,
    render_block,
)
from middleware.clock.zones import format_offset


def _reference_unit(delta: timedelta) -> str:
    if delta >= timedelta(days=30):
        return str(format_timedelta(delta, threshold=1, add_direction=False, locale="en"))
    seconds = int(delta.total_seconds())
    for size, name in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            count = seconds // size
            return f"{count} {name}{'' if count == 1 else 's'}"
    return f"{seconds} seconds"


def _reference_ago(delta: timedelta) -> str:
    if delta < timedelta(minutes=1):
        return "just now"
    if delta >= timedelta(days=30):
        return _reference_unit(delta) + " ago"
    days, rest = divmod(int(delta.total_seconds()), 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    units = [timedelta(days=days), timedelta(hours=hours), timedelta(minutes=minutes)]
    return " ".join([_reference_unit(u) for u in units if u][:2]) + " ago"


def _reference_gap_hint(now: datetime, last: datetime, tz: tzinfo) -> str | None:
    gap = now - last
    if gap < timedelta(0):
        return None
    # A day begins at 04:00 for the hint: the small hours belong to the night before.
    small_hours = timedelta(hours=4)
    next_day = (last.astimezone(tz) - small_hours).date() != (
        now.astimezone(tz) - small_hours
    ).date()
    if gap < timedelta(minutes=30):
        return None
    if gap >= timedelta(days=30):
        return (
            f"Gap: {_reference_unit(gap)} away — a long absence: welcome them back, recap "
            "where things stood and ask what has changed before relying on earlier plans."
        )
    if gap >= timedelta(days=4):
        return (
            f"Gap: {_reference_unit(gap)} away — welcome them back and review where things "
            "stood, not just the last session, before picking up."
        )
    if next_day and gap >= timedelta(hours=2):
        return (
            "Gap: a new day since the last interaction — treat it as a fresh start and "
            "briefly review where things stood before."
        )
    if gap < timedelta(hours=2):
        return "Gap: a while since the last message — re-orient before continuing."
    return "Gap: several hours — summarize where you left off before continuing."


def _stamp(instant: datetime, tz: tzinfo, *, with_year: bool) -> str:
    local = instant.astimezone(tz)
    year = f" {local.year}" if with_year else ""
    return f"{local:%a} {local.day} {local:%b}{year} {local:%H:%M}"


def _past_stamp(instant: datetime, tz: tzinfo, *, with_year: bool) -> str:
    local = instant.astimezone(tz)
    other = local.replace(fold=1 - local.fold).astimezone(UTC)
    if other == instant:
        return _stamp(instant, tz, with_year=with_year)
    offset = format_offset(int((local.utcoffset() or timedelta(0)).total_seconds() // 60))
    return f"{_stamp(instant, tz, with_year=with_year)}, {offset}"


def _reference_now_line(facts: TemporalFacts) -> str:
    zone, tz = facts.zone, facts.tz
    stamp = _stamp(facts.now, tz, with_year=True)
    utc_offset = facts.now.astimezone(tz).utcoffset() or timedelta(0)
    offset = format_offset(int(utc_offset.total_seconds() // 60))
    if facts.fallback:
        head = (
            f"Now: {stamp} (UTC; the user's timezone is unknown — ask for it before "
            "relying on their local time or scheduling anything)."
        )
    else:
        note = f"; {facts.zone_note}" if facts.zone_note else ""
        head = f"Now: {stamp} ({zone}, {offset}{note})."
    if facts.speaker:
        head = f"{head} Speaker: {facts.speaker}."
    parts = [head]
    if facts.last_here is None:
        parts.append("First message in this thread.")
    elif facts.last_here.at > facts.now:
        when = _past_stamp(facts.last_here.at, tz, with_year=True)
        parts.append(f"Latest message here is dated later ({when}): replayed out of order.")
    else:
        at = facts.last_here.at
        same_year = at.astimezone(tz).year == facts.now.astimezone(tz).year
        when = _past_stamp(at, tz, with_year=not same_year)
        parts.append(f"Last message here: {_reference_ago(facts.now - at)} ({when}).")
    other = facts.last_any_channel
    if (
        other is not None
        and other.at <= facts.now
        and (facts.last_here is None or other.at > facts.last_here.at)
    ):
        where = f" ({other.channel.capitalize()})" if other.channel else ""
        parts.append(f"Last contact on any channel: {_reference_ago(facts.now - other.at)}{where}.")
    return " ".join(parts)


def test_the_api_channel_is_named_as_people_write_it() -> None:
    facts = TemporalFacts(
        now=_NOW,
        zone="UTC",
        tz=UTC,
        last_any_channel=Elapsed(_NOW - timedelta(hours=1), "api"),
    )
    assert "Last contact on any channel: 1 hour ago (API)." in render_block(facts)


@pytest.mark.parametrize(
    ("last", "now", "hint"),
    [
        # Up late: the same night, however the calendar turned.
        ("2026-10-31T23:00", "2026-11-01T01:30", "several hours"),
        ("2026-10-31T21:00", "2026-11-01T03:59", "several hours"),
        # Slept on it: a new day, even on the same date.
        ("2026-11-01T03:00", "2026-11-01T09:00", "a new day"),
        ("2026-10-31T23:00", "2026-11-01T09:00", "a new day"),
    ],
)
def test_the_small_hours_belong_to_the_night_before(last: str, now: str, hint: str) -> None:
    zone = ZoneInfo("America/New_York")

    def at(wall: str) -> datetime:
        return datetime.fromisoformat(wall).replace(tzinfo=zone)

    assert (gap_hint(at(now), at(last), zone) or "").startswith(f"Gap: {hint}")


@pytest.mark.parametrize(
    ("gap", "hint"),
    [
        (timedelta(days=1, hours=12), "Gap: a new day since the last interaction"),
        # A long weekend (Thursday evening to Monday morning) is still the next working day.
        (timedelta(days=3, hours=23, minutes=59), "Gap: a new day since the last interaction"),
        (timedelta(days=4), "Gap: 4 days away — welcome them back"),
        (timedelta(days=17, hours=2), "Gap: 17 days away — welcome them back"),
        (timedelta(days=29, hours=23), "Gap: 29 days away — welcome them back"),
        (timedelta(days=30), "Gap: 1 month away — a long absence"),
        (timedelta(days=150), "Gap: 5 months away — a long absence"),
        (timedelta(days=800), "Gap: 2 years away — a long absence"),
    ],
)
def test_an_absence_of_days_or_months_is_named_as_one(gap: timedelta, hint: str) -> None:
    assert (gap_hint(_NOW, _NOW - gap, UTC) or "").startswith(hint)


_DELTAS = st.one_of(
    st.timedeltas(min_value=timedelta(days=-2), max_value=timedelta(days=800)),
    st.integers(min_value=-5, max_value=40 * 86400).map(lambda s: timedelta(seconds=s)),
    st.sampled_from([timedelta(days=d, hours=h) for d in (0, 1, 29, 30) for h in (0, 1, 23)]),
)
_ZONES = st.sampled_from(
    [UTC, ZoneInfo("Europe/Berlin"), ZoneInfo("Pacific/Kiritimati"), timezone(-timedelta(hours=11)),
     ZoneInfo("America/New_York")]
)  # fmt: skip
_NOW = datetime(2026, 12, 31, 22, 30, tzinfo=UTC)


@settings(max_examples=400, deadline=None)
@given(delta=_DELTAS)
def test_ago_reads_as_before(delta: timedelta) -> None:
    assert ago(delta) == _reference_ago(delta)


@settings(max_examples=400, deadline=None)
@given(delta=_DELTAS, tz=_ZONES)
def test_gap_hint_reads_as_before(delta: timedelta, tz: tzinfo) -> None:
    assert gap_hint(_NOW, _NOW - delta, tz) == _reference_gap_hint(_NOW, _NOW - delta, tz)


@settings(max_examples=400, deadline=None)
@given(
    last=st.none() | _DELTAS,
    other=st.none() | _DELTAS,
    tz=_ZONES,
    fallback=st.booleans(),
    note=st.sampled_from([None, "this thread's timezone"]),
    speaker=st.sampled_from([None, "Ana"]),
)
def test_the_now_line_reads_as_before(
    last: timedelta | None,
    other: timedelta | None,
    tz: tzinfo,
    fallback: bool,
    note: str | None,
    speaker: str | None,
) -> None:
    facts = TemporalFacts(
        now=_NOW,
        zone="Europe/Berlin",
        tz=tz,
        zone_note=note,
        fallback=fallback,
        last_here=Elapsed(_NOW - last) if last is not None else None,
        last_any_channel=Elapsed(_NOW - other, "telegram") if other is not None else None,
        speaker=speaker,
    )
    assert _now_line(facts) == _reference_now_line(facts)


class _ShiftInsideAMinute(tzinfo):
    """UTC+01:00 until 2026-06-01 12:00:30 UTC, UTC+02:00 from then: whole-minute offsets
    that change inside a UTC minute."""

    _AT = datetime(2026, 6, 1, 12, 0, 30)

    def utcoffset(self, dt: datetime | None) -> timedelta:
        later = dt is not None and dt.replace(tzinfo=None) >= self._AT + timedelta(hours=2)
        return timedelta(hours=2 if later else 1)

    def dst(self, dt: datetime | None) -> timedelta:
        return timedelta(0)

    def fromutc(self, dt: datetime) -> datetime:
        later = dt.replace(tzinfo=None) >= self._AT
        return dt + timedelta(hours=2 if later else 1)


# Zones whose UTC minutes are not always one local minute or whose offsets jump, each at
# such a moment: DST both ways (New York, Lord Howe's half hour), a day skipped
# (Kiritimati), local mean time with seconds (Amsterdam until 1937, +00:19:32, and its
# change to +00:20), an odd offset (Kathmandu), a change inside a minute.
_MINUTE_CASES = st.sampled_from(
    [
        (ZoneInfo("America/New_York"), datetime(2026, 11, 1, 6, tzinfo=UTC)),
        (ZoneInfo("America/New_York"), datetime(2026, 3, 8, 7, tzinfo=UTC)),
        (ZoneInfo("Australia/Lord_Howe"), datetime(2026, 4, 4, 15, tzinfo=UTC)),
        (ZoneInfo("Pacific/Kiritimati"), datetime(1994, 12, 31, 10, tzinfo=UTC)),
        (ZoneInfo("Europe/Amsterdam"), datetime(1909, 12, 31, 23, 40, tzinfo=UTC)),
        (ZoneInfo("Europe/Amsterdam"), datetime(1937, 6, 30, 23, 40, tzinfo=UTC)),
        (ZoneInfo("Asia/Kathmandu"), datetime(2026, 12, 31, 18, 15, tzinfo=UTC)),
        (_ShiftInsideAMinute(), datetime(2026, 6, 1, 12, tzinfo=UTC)),
        (UTC, datetime(2026, 12, 31, 23, 59, tzinfo=UTC)),
        (timezone(timedelta(hours=-9, minutes=-30)), datetime(2027, 1, 1, 9, 30, tzinfo=UTC)),
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    case=_MINUTE_CASES,
    seconds=st.lists(st.floats(min_value=-150, max_value=150, allow_nan=False), max_size=40),
)
def test_a_kept_minute_reads_as_the_instant_itself(
    case: tuple[tzinfo, datetime], seconds: list[float]
) -> None:
    # Many instants of the same few minutes, in any order: what is kept for a minute is
    # what every instant in it reads as, where the UTC minute is one local minute, and
    # nothing is kept where it is not.
    tz, base = case
    temporal._MINUTES.clear()
    for second in seconds:
        instant = base + timedelta(seconds=second)
        local = instant.astimezone(tz)
        minute = local_minute(instant, tz)
        assert minute.stamp_with_year == _stamp(instant, tz, with_year=True)
        assert minute.stamp == _stamp(instant, tz, with_year=False)
        assert minute.year == local.year
        assert minute.date == local.date().isoformat()
        offset = format_offset(int((local.utcoffset() or timedelta(0)).total_seconds() // 60))
        assert minute.offset == offset
        for with_year in (True, False):
            past = minute.past_stamp(with_year=with_year)
            assert past == _past_stamp(instant, tz, with_year=with_year)


class _NothingKept(dict[object, object]):
    """A minutes cache that keeps nothing: every block is rendered from its instants."""

    def __setitem__(self, key: object, value: object) -> None:
        pass


def test_blocks_read_the_same_with_the_kept_minutes_and_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A conversation in New York across midnight and the fall-back hour, a turn every 17
    # seconds, with a second thread in Kathmandu beside it: every block equals the one
    # rendered with nothing kept.
    new_york, kathmandu = ZoneInfo("America/New_York"), ZoneInfo("Asia/Kathmandu")
    start = datetime(2026, 11, 1, 3, 50, 5, tzinfo=UTC)  # 23:50 EDT the night before
    stories = {new_york: start, kathmandu: start}
    temporal._MINUTES.clear()
    story: list[TemporalFacts] = []
    for turn in range(1, 500):
        for tz, last in stories.items():
            now = start + turn * timedelta(seconds=17)
            story.append(
                TemporalFacts(
                    now=now,
                    zone=str(tz),
                    tz=tz,
                    zone_note="this thread's timezone",
                    last_here=Elapsed(last),
                    last_any_channel=Elapsed(now - timedelta(hours=9), "telegram"),
                )
            )
            stories[tz] = now
    blocks = [render_block(facts) for facts in story]
    monkeypatch.setattr(temporal, "_MINUTES", _NothingKept())
    assert blocks == [render_block(facts) for facts in story]


def test_recency_follows_the_text() -> None:
    assert asks_about_current_events("any news today?")
    assert not asks_about_current_events("any thoughts?")
    assert asks_about_current_events("any news today?")


@pytest.mark.parametrize(
    "message",
    [
        "what happened in the markets today",
        "is it going to rain tomorrow",
        "tell me the latest on the election",
        "latest news on the strike",
        "See you then. What's the news this week?",
        "Can we meet tomorrow? And any news today?",
        "what's the latest on the meeting tomorrow?",
    ],
)
def test_a_message_asking_about_recent_events_gets_the_recency_line(message: str) -> None:
    assert asks_about_current_events(message)


@pytest.mark.parametrize(
    "message",
    [
        "I'll call the bank tomorrow at 9",
        "Remind me tomorrow at 9 to call the bank",
        "I read the news today. Terrible.",
        "Will do tomorrow",
        "Can we meet tomorrow?",
        "Shall we meet tomorrow?",
        "Are you free this week?",
        "What time is the meeting today?",
        "just landed in NYC, lunch at 1pm tomorrow?",
        "dinner tomorrow?",
        "drinks today at 6:30?",
    ],
)
def test_a_plan_or_statement_with_a_recency_word_asks_nothing(message: str) -> None:
    assert not asks_about_current_events(message)


def test_a_last_stamp_in_a_repeated_hour_carries_its_offset() -> None:
    new_york = ZoneInfo("America/New_York")
    now = datetime(2026, 11, 1, 6, 30, tzinfo=UTC)  # 01:30 EST, the second 01:30
    facts = TemporalFacts(
        now=now,
        zone="America/New_York",
        tz=new_york,
        last_here=Elapsed(now - timedelta(hours=1)),  # 01:30 EDT, the first
    )
    assert _now_line(facts) == (
        "Now: Sun 1 Nov 2026 01:30 (America/New_York, UTC-05:00). "
        "Last message here: 1 hour ago (Sun 1 Nov 01:30, UTC-04:00)."
    )
    facts = facts._replace(last_here=Elapsed(now - timedelta(hours=2)))  # 00:30 EDT
    assert _now_line(facts).endswith("Last message here: 2 hours ago (Sun 1 Nov 00:30).")


@pytest.mark.parametrize(
    "pattern",
    # spec 001 §12.4 recency_must_search, every one of them.
    [
        "today",
        "yesterday",
        "tomorrow",
        "latest",
        "current",
        "right now",
        "this week",
        "this month",
        "as of",
        "recently",
        "breaking",
        "update",
        "what happened",
        "news",
    ],
)
def test_each_of_the_specs_recency_patterns_brings_the_recency_line(pattern: str) -> None:
    assert asks_about_current_events(f"Any {pattern} on the markets?")
    assert not asks_about_current_events("Any thoughts on the markets?")


_EVENING = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("gap", "hint"),
    [
        # spec 004 §5: under 5 minutes, continue naturally.
        (timedelta(minutes=4, seconds=59), None),
        # 5-30 minutes: the spec's brief "back to it" is left out (README: the gap line).
        (timedelta(minutes=5), None),
        (timedelta(minutes=29, seconds=59), None),
        # 30 minutes to 2 hours: re-orient.
        (timedelta(minutes=30), "Gap: a while since the last message — re-orient"),
        (timedelta(hours=1, minutes=59, seconds=59), "Gap: a while since the last message"),
        # 2 hours and more, the same day: summarize where we left off.
        (timedelta(hours=2), "Gap: several hours — summarize where you left off"),
        (timedelta(hours=13, minutes=59), "Gap: several hours"),
    ],
)
def test_the_gap_hint_turns_at_the_spec_004_thresholds(gap: timedelta, hint: str | None) -> None:
    found = gap_hint(_EVENING, _EVENING - gap, UTC)
    if hint is None:
        assert found is None
    else:
        assert found is not None and found.startswith(hint), found


def test_the_next_day_is_a_fresh_start_from_two_hours_on() -> None:
    # spec 004 §5 "Next day: fresh start, review yesterday"; under 2 hours across the
    # day's turn (04:00) it is still "a while".
    early = datetime(2026, 11, 21, 5, 0, tzinfo=UTC)
    assert (gap_hint(early, early - timedelta(hours=2), UTC) or "").startswith(
        "Gap: a new day since the last interaction — treat it as a fresh start"
    )
    assert (gap_hint(early, early - timedelta(hours=1, minutes=59), UTC) or "").startswith(
        "Gap: a while"
    )


# --- the block's other lines, written out by hand --------------------------------------

_TOKYO = ZoneInfo("Asia/Tokyo")
_SAT = datetime(2026, 11, 21, 15, 40, tzinfo=UTC)  # Sun 22 Nov 00:40 in Tokyo
_MINUTE = timedelta(minutes=1)
_CUTOFF = (
    "Your training data has a cutoff and may not reflect recent events or the latest "
    "information; when unsure whether your knowledge is current, search rather than guess."
)


def test_a_full_block_reads_line_by_line_in_its_order() -> None:
    facts = TemporalFacts(
        now=_SAT,
        zone="Asia/Tokyo",
        tz=_TOKYO,
        last_here=Elapsed(_SAT - timedelta(hours=3)),
        members=(
            MemberTime("Ana", "Europe/Berlin"),
            MemberTime("Bo", None),
            MemberTime("Kenji", "Asia/Tokyo", said="are in Tokyo"),
        ),
        times=("times line",),
        questions=("question line",),
        recency=True,
        markup_instruction="markup line",
        extra=("extra line",),
    )
    assert render_block(facts).split("\n") == [
        "Now: Sun 22 Nov 2026 00:40 (Asia/Tokyo, UTC+09:00). "
        "Last message here: 3 hours ago (Sat 21 Nov 21:40).",
        "Gap: several hours — summarize where you left off before continuing.",
        "Participants' local times: Ana: Sat 16:40 (Europe/Berlin); Bo: timezone unknown; "
        "Kenji: Sun 00:40 (Asia/Tokyo; said they are in Tokyo).",
        "times line",
        "question line",
        "markup line",
        "extra line",
        f"Today is 2026-11-22. {_CUTOFF}",
        "This message asks about current or recent events: verify with a search tool if "
        "you have one, and say so if you cannot.",
    ]


def test_a_first_message_block_has_only_the_now_line_and_the_cutoff() -> None:
    facts = TemporalFacts(now=_SAT, zone="Asia/Tokyo", tz=_TOKYO)
    assert render_block(facts).split("\n") == [
        "Now: Sun 22 Nov 2026 00:40 (Asia/Tokyo, UTC+09:00). First message in this thread.",
        f"Today is 2026-11-22. {_CUTOFF}",
    ]


def test_a_fixed_offset_zone_is_named_once_and_an_unknown_one_says_to_ask() -> None:
    kathmandu = timezone(timedelta(hours=5, minutes=45))
    facts = TemporalFacts(now=_SAT, zone="UTC+05:45", tz=kathmandu)
    assert _now_line(facts).startswith("Now: Sat 21 Nov 2026 21:25 (UTC+05:45). First")
    unknown = TemporalFacts(now=_SAT, zone="UTC", tz=UTC, fallback=True, speaker="Ana")
    assert _now_line(unknown) == (
        "Now: Sat 21 Nov 2026 15:40 (UTC; the user's timezone is unknown — ask for it before "
        "relying on their local time or scheduling anything). Speaker: Ana. "
        "First message in this thread."
    )


def test_the_users_own_time_is_given_beside_the_session_zone() -> None:
    # 20:00Z on New Year's Eve: already 2027 in Tokyo, still 2026 in New York.
    now = datetime(2026, 12, 31, 20, 0, tzinfo=UTC)
    facts = TemporalFacts(now=now, zone="Asia/Tokyo", tz=_TOKYO, own_zone="America/New_York")
    assert _now_line(facts) == (
        "Now: Fri 1 Jan 2027 05:00 (Asia/Tokyo, UTC+09:00). "
        "The user's own time: Thu 31 Dec 2026 15:00 (America/New_York, UTC-05:00). "
        "First message in this thread."
    )
    same_year = facts._replace(now=now - timedelta(hours=12), speaker="Ana")
    assert "Speaker: Ana. The speaker's own time: Thu 31 Dec 03:00 (America/New_York" in (
        _now_line(same_year)
    )


def test_where_the_user_says_they_are_is_given_with_its_time() -> None:
    now = datetime(2026, 10, 19, 20, 0, tzinfo=UTC)
    berlin = ZoneInfo("Europe/Berlin")
    said = SaidPlace("New York", "America/New_York", said_at=now - timedelta(hours=2))
    facts = TemporalFacts(now=now, zone="Europe/Berlin", tz=berlin, said_place=said)
    assert _now_line(facts) == (
        "Now: Mon 19 Oct 2026 22:00 (Europe/Berlin, UTC+02:00). "
        "The user said they are in New York (2 hours ago), where it is Mon 19 Oct 16:00 "
        "(America/New_York, UTC-04:00). First message in this thread."
    )
    in_this_message = facts._replace(said_place=said._replace(said_at=None), speaker="Ana")
    assert "The speaker says they are in New York, where it is Mon 19 Oct 16:00 (" in (
        _now_line(in_this_message)
    )
    # Across New Year the place's own date carries its year.
    new_year = facts._replace(now=datetime(2026, 12, 31, 23, 30, tzinfo=UTC), said_place=said)
    assert "where it is Thu 31 Dec 2026 18:30 (America/New_York, UTC-05:00)." in (
        _now_line(new_year)
    )


def test_a_group_speakers_own_return_is_said_from_half_an_hour() -> None:
    facts = TemporalFacts(
        now=_SAT, zone="UTC", tz=UTC, speaker="Ana", last_here=Elapsed(_SAT - 5 * _MINUTE)
    )
    back = facts._replace(speaker_last_here=_SAT - timedelta(days=2, hours=3))
    assert _now_line(back).endswith(
        "Last message here: 5 minutes ago (Sat 21 Nov 15:35). "
        "Ana's own last message here: 2 days 3 hours ago (Thu 19 Nov 12:40)."
    )
    assert _now_line(facts._replace(speaker_last_here=_SAT - 30 * _MINUTE)).endswith(
        "Ana's own last message here: 30 minutes ago (Sat 21 Nov 15:10)."
    )
    assert "own last message" not in _now_line(
        facts._replace(speaker_last_here=_SAT - 29 * _MINUTE)
    )
    assert _now_line(facts._replace(speaker_first=True)).endswith("First message here from Ana.")


def test_a_speakers_return_across_a_year_or_a_repeated_hour_is_unambiguous() -> None:
    now = datetime(2027, 1, 2, 10, 0, tzinfo=UTC)
    facts = TemporalFacts(
        now=now,
        zone="UTC",
        tz=UTC,
        speaker="Ana",
        last_here=Elapsed(now - _MINUTE),
        speaker_last_here=datetime(2026, 12, 20, 10, 0, tzinfo=UTC),
    )
    assert _now_line(facts).endswith(
        "Ana's own last message here: 13 days ago (Sun 20 Dec 2026 10:00)."
    )
    new_york = ZoneInfo("America/New_York")
    fall_back = datetime(2026, 11, 1, 7, 0, tzinfo=UTC)  # 02:00 EST
    facts = facts._replace(
        now=fall_back,
        zone="America/New_York",
        tz=new_york,
        last_here=Elapsed(fall_back - _MINUTE),
        speaker_last_here=datetime(2026, 11, 1, 5, 30, tzinfo=UTC),  # the first 01:30
    )
    assert _now_line(facts).endswith(
        "Ana's own last message here: 1 hour 30 minutes ago (Sun 1 Nov 01:30, UTC-04:00)."
    )


def test_ago_turns_to_minutes_at_the_first_full_minute() -> None:
    assert ago(timedelta(seconds=59)) == "just now"
    assert ago(timedelta(minutes=1)) == "1 minute ago"
    assert ago(timedelta(days=1, minutes=5)) == "1 day 5 minutes ago"
    assert ago(timedelta(days=29, hours=23, minutes=59)) == "29 days 23 hours ago"


def test_tokens_are_estimated_at_four_characters_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_the_kept_minutes_stay_bounded() -> None:
    temporal._MINUTES.clear()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for minute in range(5000):
        local_minute(start + minute * _MINUTE, UTC)
    assert 0 < len(temporal._MINUTES) <= 4096
