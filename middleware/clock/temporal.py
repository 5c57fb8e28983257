"""The temporal block: the small, factual statement of *when* it is for this speaker.

Pure functions from already-resolved facts to text (spec 000 §4, spec 004 §5 gap hints,
spec 001 §12.2 temporal instruction and §12.4 recency hint). No I/O, no clock reads:
"now" is the turn's instant.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import NamedTuple
from zoneinfo import ZoneInfo

from babel.dates import format_timedelta

from middleware.actions.detect import is_time_or_scheduling
from middleware.actions.prefilter import Gate
from middleware.clock.small_hours import SMALL_HOURS_END
from middleware.clock.tense import sentence_around
from middleware.clock.zones import format_offset, is_repeated_wall_time
from middleware.identity import channel_name

# spec 001 §12.4 recency_must_search patterns, matched as whole words.
_RECENCY = re.compile(
    r"\b(today|yesterday|tomorrow|latest|current|right now|this week|this month|as of|"
    r"recently|breaking|update|what happened|news)\b",
    re.IGNORECASE,
)
_RECENCY_GATE = Gate(_RECENCY)
# The router picks out requests that need up-to-date knowledge, so a pattern counts only in
# a sentence that asks something: a question, even without its "?", a request to be told,
# or the topic itself ("tell me the latest", "latest on the election"). "I'll call
# the bank tomorrow at 9" states a plan and asks nothing.
_ASKING = re.compile(
    r"\?\s*$|^[\s\"'“(\[]*(?:(?:so|and|but|ok|okay|hey|hi|also|btw|quick\s+question)[\s,:]+)*"
    r"(?:what|who|when|where|why|how|which|any|anything|is|are|did|does|tell|show"
    r"|give|find|search|look\s+up|check|fetch|get\s+me|let\s+me\s+know|summari[sz]e"
    r"|catch\s+me\s+up|brief\s+me|i\s+wonder|latest|breaking|news|current|recent|updates?\s+on)\b",
    re.IGNORECASE,
)
# Spec 000 §5.1 tells "time references or scheduling intent" apart from up-to-date knowledge:
# one of these patterns names a day, and in a sentence that arranges something ("can we meet
# tomorrow?", "are you free this week?") it asks when, not what is new.
_DAY_PATTERNS = frozenset(
    {"today", "yesterday", "tomorrow", "this week", "this month", "right now"}
)
# A clock time or a meal beside a day word makes the sentence a plan ("lunch at 1pm
# tomorrow?", "drinks today?"): it asks when, not what is new.
_PLAN_WORDS = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\b(?:noon|midnight|breakfast|brunch"
    r"|lunch|dinner|drinks|coffee)\b",
    re.IGNORECASE,
)
# Built once rather than on every turn's block.
_ZERO = timedelta(0)
_MINUTE = timedelta(minutes=1)
_HALF_HOUR = timedelta(minutes=30)
_TWO_HOURS = timedelta(hours=2)
_MONTH = timedelta(days=30)
# From four days the absence is more than a night or a long weekend (Thursday evening to
# Monday morning is under 4 days), so "review yesterday" undersells it; from a month (the
# elapsed line's switch to months and the default long-gap check-in) it is a long one.
_DAYS_AWAY = timedelta(days=4)
_SMALL_HOURS = timedelta(hours=SMALL_HOURS_END)


@dataclass(frozen=True, slots=True)
class Elapsed:
    """A past instant and, optionally, where it happened."""

    at: datetime
    channel: str | None = None


@dataclass(frozen=True, slots=True)
class MemberTime:
    """A group participant's zone (``None`` when unknown); ``said`` when it comes from
    where they said they are ("are in Tokyo"), not from a zone they set."""

    label: str
    zone: str | None
    said: str | None = None


class SaidPlace(NamedTuple):
    """Where the user says they are (``said_at`` ``None``: in this very message), when
    that place's zone is not the one their times are read in."""

    place: str
    zone: str
    said_at: datetime | None = None


class TemporalFacts(NamedTuple):
    """Everything the block states, resolved by the clock stage.

    A NamedTuple rather than a frozen dataclass: one is built on every turn, and a frozen
    dataclass sets each of its fields through ``object.__setattr__`` (about 3x the cost).
    """

    now: datetime
    zone: str  # IANA id, or a label such as "UTC+09:00" for a fixed offset
    tz: tzinfo
    zone_note: str | None = None
    # The user's own IANA zone, given when the message names another one (spec 000 §2:
    # the Session TZ may differ from the User TZ).
    own_zone: str | None = None
    # Where the user said they are while a zone they set wins over it (spec 000 §2: a
    # traveller's Session TZ may differ from their User TZ), so "what time is it for me?"
    # is not answered in the set zone alone.
    said_place: SaidPlace | None = None
    fallback: bool = False
    last_here: Elapsed | None = None
    last_any_channel: Elapsed | None = None
    speaker: str | None = None
    # In a group, the speaker's own last message here when others spoke since (their own
    # return, spec 000 §7.3); ``speaker_first`` when they never spoke here before.
    speaker_last_here: datetime | None = None
    speaker_first: bool = False
    members: Sequence[MemberTime] = ()
    times: Sequence[str] = ()
    questions: Sequence[str] = ()
    recency: bool = False
    markup_instruction: str | None = None
    extra: Sequence[str] = ()
    # The gap hint (spec 004 §5), advice rather than fact: left out in mode "off" (spec
    # 000 §0: no time context beyond basic timezone anchoring).
    gap_advice: bool = True


def asks_about_current_events(text: str) -> bool:
    """spec 001 §12.4: does the message ask for up-to-date knowledge? A recency pattern
    ("today", "latest", "news") in a sentence that asks something (``_ASKING``), unless
    the pattern only names a day and the sentence has scheduling intent (spec 000 §5.1:
    "can we meet tomorrow?" asks when, "any news today?" asks what is new)."""
    return _RECENCY_GATE.may_match(text) and asks_with_recency_pattern(text)


def asks_with_recency_pattern(text: str) -> bool:
    """``asks_about_current_events`` without its cheap gate (the gate's tests hold the two
    equal)."""
    for found in _RECENCY.finditer(text):
        sentence = sentence_around(text, found.start(), found.end())
        if _ASKING.search(sentence) is None:
            continue
        if found[1].lower() in _DAY_PATTERNS and (
            _PLAN_WORDS.search(sentence) is not None or is_time_or_scheduling(sentence)
        ):
            continue
        return True
    return False


def render_block(facts: TemporalFacts) -> str:
    """The block's lines, newest facts first; stable wording so tests and caches agree."""
    here = local_minute(facts.now, facts.tz)
    lines = [_now_line(facts, here)]
    last = facts.last_here.at if facts.last_here else None
    hint = gap_hint(facts.now, last, facts.tz) if facts.gap_advice else None
    if hint:
        lines.append(hint)
    if facts.members:
        lines.append(_members_line(facts))
    lines.extend(facts.times)
    lines.extend(facts.questions)
    if facts.markup_instruction:
        lines.append(facts.markup_instruction)
    lines.extend(facts.extra)
    lines.append(_today_line(here))
    if facts.recency:
        lines.append(_RECENCY_LINE)
    return "\n".join(lines)


def droppable_lines(facts: TemporalFacts) -> tuple[str, ...]:
    """The block's lines of advice rather than fact, first to go first: what the block's
    ceiling may drop to keep a later section (a check-in, a notice) that would not fit.
    The date is in the "Now" line too, a search is only advised, and a time the model
    writes without markup is still read by the user."""
    lines = [_today_line(local_minute(facts.now, facts.tz))]
    if facts.recency:
        lines.append(_RECENCY_LINE)
    if facts.markup_instruction:
        lines.append(facts.markup_instruction)
    return tuple(lines)


_RECENCY_LINE = (
    "This message asks about current or recent events: verify with a search tool if you "
    "have one, and say so if you cannot."
)


def _today_line(here: LocalMinute) -> str:
    return (
        f"Today is {here.date}. Your "
        "training data has a cutoff and may not reflect recent events or the latest "
        "information; when unsure whether your knowledge is current, search rather than guess."
    )


def _now_line(facts: TemporalFacts, here: LocalMinute | None = None) -> str:
    zone, tz = facts.zone, facts.tz
    here = here or local_minute(facts.now, tz)
    stamp = here.stamp_with_year
    if facts.fallback:
        head = (
            f"Now: {stamp} (UTC; the user's timezone is unknown — ask for it before "
            "relying on their local time or scheduling anything)."
        )
    else:
        note = f"; {facts.zone_note}" if facts.zone_note else ""
        offset = here.offset
        named = offset if zone == offset else f"{zone}, {offset}"  # "UTC+05:45" once
        head = f"Now: {stamp} ({named}{note})."
    if facts.speaker:
        head = f"{head} Speaker: {facts.speaker}."
    parts = [head]
    if facts.own_zone is not None:
        own = facts.now.astimezone(ZoneInfo(facts.own_zone))
        whose = "The speaker's" if facts.speaker else "The user's"
        parts.append(
            f"{whose} own time: {_local_stamp(own, with_year=own.year != here.year)} "
            f"({facts.own_zone}, {_offset_label(own)})."
        )
    if facts.said_place is not None:
        parts.append(_said_place_line(facts.said_place, facts, here.year))
    if facts.last_here is None:
        parts.append("First message in this thread.")
    elif facts.last_here.at > facts.now:
        when = local_minute(facts.last_here.at, tz).past_stamp(with_year=True)
        parts.append(f"Latest message here is dated later ({when}): replayed out of order.")
    else:
        then = local_minute(facts.last_here.at, tz)
        when = then.past_stamp(with_year=then.year != here.year)
        parts.append(f"Last message here: {ago(facts.now - facts.last_here.at)} ({when}).")
        parts.extend(_speaker_return(facts))
    other = facts.last_any_channel
    if (
        other is not None
        and other.at <= facts.now
        and (facts.last_here is None or other.at > facts.last_here.at)
    ):
        where = f" ({channel_name(other.channel)})" if other.channel else ""
        parts.append(f"Last contact on any channel: {ago(facts.now - other.at)}{where}.")
    return " ".join(parts)


def _said_place_line(said: SaidPlace, facts: TemporalFacts, year: int) -> str:
    """'The user said they are in New York (2 hours ago), where it is Mon 19 Oct 16:00
    (America/New_York, UTC-04:00).'"""
    there = facts.now.astimezone(ZoneInfo(said.zone))
    who = "The speaker" if facts.speaker else "The user"
    verb = "says" if said.said_at is None else "said"
    when = "" if said.said_at is None else f" ({ago(facts.now - said.said_at)})"
    stamp = _local_stamp(there, with_year=there.year != year)
    return (
        f"{who} {verb} they are in {said.place}{when}, where it is {stamp} "
        f"({said.zone}, {_offset_label(there)})."
    )


def _speaker_return(facts: TemporalFacts) -> list[str]:
    """In a busy group the thread's last message is someone else's: the speaker's own
    return is what a welcome back or a catch-up is about. Said from half an hour on (as
    the gap hint), and for a member's first message in a thread others spoke in."""
    if facts.speaker_first:
        return [f"First message here from {facts.speaker}."]
    own = facts.speaker_last_here
    if own is None or facts.now - own < _HALF_HOUR:
        return []
    at = own.astimezone(facts.tz)
    when = _past_stamp(at, with_year=at.year != facts.now.astimezone(facts.tz).year)
    return [f"{facts.speaker}'s own last message here: {ago(facts.now - own)} ({when})."]


def _offset_label(local: datetime) -> str:
    """'UTC+09:00' for an aware local time."""
    return format_offset(int((local.utcoffset() or _ZERO).total_seconds() // 60))


def _members_line(facts: TemporalFacts) -> str:
    shown = []
    for member in facts.members:
        if member.zone is None:
            shown.append(f"{member.label}: timezone unknown")
            continue
        here = facts.now.astimezone(ZoneInfo(member.zone))
        local = f"{_DAYS[here.weekday()]} {here.hour:02d}:{here.minute:02d}"
        source = f"; said they {member.said}" if member.said else ""
        shown.append(f"{member.label}: {local} ({member.zone}{source})")
    return "Participants' local times: " + "; ".join(shown) + "."


def gap_hint(now: datetime, last: datetime | None, tz: tzinfo) -> str | None:
    """spec 004 §5 behavioural hint for the gap since the last interaction here: none
    below 30 minutes, then "a while" (below 2 hours), "several hours", "a new day" (a day
    begins at ``SMALL_HOURS_END``), "N days away" from 4 days and "N months away" from
    30 days, counted as the block's elapsed line counts them."""
    if last is None:
        return None
    gap = now - last
    if gap < _ZERO:
        return None  # replayed out of order: no meaningful gap
    if gap < _HALF_HOUR:
        # Spec 004 §5 suggests a brief "back to it" from 5 minutes on; said on every turn
        # of a conversation with 5-minute pauses it is exactly the elapsed-time remark
        # spec 000 §9 forbids, so below 30 minutes the model just continues.
        return None
    if gap >= _MONTH:
        return (
            f"Gap: {_months_or_years(gap)} away — a long absence: welcome them back, recap "
            "where things stood and ask what has changed before relying on earlier plans."
        )
    if gap >= _DAYS_AWAY:
        return (
            f"Gap: {gap.days} days away — welcome them back and review where things stood, "
            "not just the last session, before picking up."
        )
    if _day_of(now, tz) != _day_of(last, tz) and gap >= _TWO_HOURS:
        return (
            "Gap: a new day since the last interaction — treat it as a fresh start and "
            "briefly review where things stood before."
        )
    if gap < _TWO_HOURS:
        return "Gap: a while since the last message — re-orient before continuing."
    return "Gap: several hours — summarize where you left off before continuing."


def _day_of(instant: datetime, tz: tzinfo) -> date:
    """The day ``instant`` belongs to for the gap hint: a day begins when the small hours
    end, so "still up" at 01:30 after "can't sleep" at 23:00 is the same night, not a
    fresh start, while 09:00 after 03:00 is a new day (``SMALL_HOURS_END``, as "tomorrow"
    said at 02:00 may mean the day just begun)."""
    return (instant.astimezone(tz) - _SMALL_HOURS).date()


def ago(delta: timedelta) -> str:
    """'just now', '7 hours 40 minutes ago', '3 days 2 hours ago', '5 months ago'.

    Below 30 days the two largest units are shown, truncated (never rounded up, so
    "7 hours 40 minutes" is not "8 hours"); beyond that one rounded unit is enough.
    """
    if delta < _MINUTE:
        return "just now"
    if delta >= _MONTH:
        return f"{_months_or_years(delta)} ago"
    days, rest = divmod(int(delta.total_seconds()), 86400)
    hours, rest = divmod(rest, 3600)
    counts = ((days, "day"), (hours, "hour"), (rest // 60, "minute"))
    shown = [f"{count} {name}{'' if count == 1 else 's'}" for count, name in counts if count]
    return " ".join(shown[:2]) + " ago"


def _months_or_years(delta: timedelta) -> str:
    """'1 month', '5 months', '2 years': one rounded unit, for a month or more."""
    return str(format_timedelta(delta, threshold=1, add_direction=False, locale="en"))


# The block is read by the model, always in English and one fixed shape, on every turn:
# plain tables are ~20x cheaper than babel here (babel localises what users read).
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _past_stamp(local: datetime, *, with_year: bool) -> str:
    """``_local_stamp`` with the offset when the wall time occurs twice (DST fall-back):
    'Sun 1 Nov 01:30, UTC-04:00' is not the 01:30 an hour later."""
    stamp = _local_stamp(local, with_year=with_year)
    return f"{stamp}, {_offset_label(local)}" if is_repeated_wall_time(local) else stamp


def _local_stamp(local: datetime, *, with_year: bool) -> str:
    """'Sat 21 Nov 2026 16:40' (or without the year) for an aware local time."""
    year = f" {local.year}" if with_year else ""
    day = f"{_DAYS[local.weekday()]} {local.day} {_MONTHS[local.month - 1]}"
    return f"{day}{year} {local.hour:02d}:{local.minute:02d}"


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (about 4 characters a token for English)."""
    return (len(text) + 3) // 4


class LocalMinute(NamedTuple):
    """An instant's minute on the wall clock of one zone, as the block writes it."""

    stamp_with_year: str  # "Sat 21 Nov 2026 16:40"
    stamp: str  # "Sat 21 Nov 16:40"
    year: int
    offset: str  # "UTC+09:00"
    repeated: bool  # the wall time occurs twice (DST fall-back)
    date: str  # "2026-11-21"

    def past_stamp(self, *, with_year: bool) -> str:
        """``_past_stamp`` of this minute."""
        stamp = self.stamp_with_year if with_year else self.stamp
        return f"{stamp}, {self.offset}" if self.repeated else stamp


# Every block writes its turn's minute and the thread's last message's, which an earlier
# turn wrote as its own: each (zone, UTC minute) is formatted once, then read from here
# (a few microseconds a turn). Forgotten whole when full.
_MINUTES: dict[tuple[tzinfo, float], LocalMinute] = {}
_MINUTES_KEPT = 4096
_LAST_SECOND = timedelta(seconds=59)


def local_minute(instant: datetime, tz: tzinfo) -> LocalMinute:
    """``instant``'s minute in ``tz`` (an aware instant): kept per zone and UTC minute,
    unless the zone's offset is not a whole number of minutes or changes inside that
    minute (a local-mean-time offset such as +00:19:32, or a transition at an odd
    second), where the UTC minute is not one local minute."""
    key = (tz, instant.timestamp() // 60)
    found = _MINUTES.get(key)
    if found is not None:
        return found
    local = instant.astimezone(tz)
    found = LocalMinute(
        _local_stamp(local, with_year=True),
        _local_stamp(local, with_year=False),
        local.year,
        _offset_label(local),
        is_repeated_wall_time(local),
        local.date().isoformat(),
    )
    start = instant.astimezone(UTC).replace(second=0, microsecond=0)
    offset = start.astimezone(tz).utcoffset()
    last = (start + _LAST_SECOND).astimezone(tz).utcoffset()
    if offset == last and offset is not None and offset.seconds % 60 == 0:
        if len(_MINUTES) >= _MINUTES_KEPT:
            _MINUTES.clear()
        _MINUTES[key] = found
    return found
