"""The Core Clock stage: resolve the session zone, anchor the message's times, and add the
temporal block to the turn's context (spec 000 §4, spec 004 §5, spec 001 §12.2/§12.4).

It runs after the recording stage, so ``turn.prior`` holds the state from before this
message: the message never counts as its own "last message here".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import NamedTuple

from middleware.clock.answers import answers_hour_choice, pick_hour
from middleware.clock.finding import find_time_expressions
from middleware.clock.parsing import ParseResult
from middleware.clock.places import PlaceMention, find_place_mentions, lookup_place
from middleware.clock.policy import Mode, PolicyOverrides
from middleware.clock.presentation import (
    Audience,
    DirectAudience,
    DiscordAudience,
    GroupAudience,
    Viewer,
    markup_instruction,
)
from middleware.clock.resolution import (
    TimezoneResolution,
    resolve_session_timezone,
    said_place,
)
from middleware.clock.temporal import (
    Elapsed,
    MemberTime,
    SaidPlace,
    TemporalFacts,
    ago,
    asks_about_current_events,
    droppable_lines,
    render_block,
)
from middleware.clock.tense import told_of_the_past
from middleware.clock.whose_time import names_a_time_to_agree_on
from middleware.clock.zones import format_offset, get_zone, is_valid_zone, offset_minutes
from middleware.identity import name_key
from middleware.pipeline import Handler, Stage
from middleware.store import ClockData, ParticipantState, PriorState, StatedLocation, Store
from middleware.types import Reply, Turn

_OFFSET_LABEL = re.compile(r"^UTC([+-])(\d{2}):(\d{2})$")
# Time phrases spelled out in the block, resolved and to ask about (each list): enough for
# any real message, few enough to stay well inside the block's token ceiling.
LISTED_PHRASES = 6
# How long a place the user said they are in stands for their zone while none is set: a
# place they are in ("I'm in Lisbon this week") is a trip's length, a place they live in
# ("I live in Berlin") much longer. Past that, the block asks for their zone again.
STATED_LOCATION_TTL = {"current": timedelta(days=14), "home": timedelta(days=365)}
# How long after a message whose hour was asked about ("see you at 9") a lone "9pm" or "the
# morning one" still answers it; later it is a new message of its own.
ANSWER_WINDOW = timedelta(hours=12)


@dataclass(frozen=True, slots=True)
class ClockSettings:
    """The parts of ``[clock]`` the Core Clock reads."""

    enabled: bool = True
    # spec 000 §0 mode, unless the user chose their own ("clock: off"): "off" keeps the
    # Core Clock facts (time, zone, elapsed) without the gap hint's advice.
    mode: Mode = "light"
    group_window: timedelta = timedelta(days=14)
    group_limit: int = 8
    # spec 000 §0 ambiguity_threshold_hours: in a group whose members' clocks are this far
    # apart, a time phrase not pinned to a zone means different hours to different people.
    ambiguity_threshold: timedelta = timedelta(hours=4)


class ClockView(NamedTuple):
    """What the clock decided for one message (also what ``preview`` shows); a NamedTuple,
    as it is built on every turn (see ``TemporalFacts``)."""

    resolution: TimezoneResolution
    block: str
    expressions: tuple[ParseResult, ...]
    audience: Audience
    # The block's lines of advice its ceiling may drop for a later section.
    droppable: tuple[str, ...] = ()


async def clock_view(store: Store, turn: Turn, settings: ClockSettings) -> ClockView:
    """Resolve and render the temporal block for ``turn`` (reads group members if needed)."""
    prior = turn.prior or PriorState()
    now = turn.received_at
    stated = stated_location(prior, now)
    # Only the speaker's own words: a quoted "meet at 9" or a forwarded "I'm in Tokyo" is
    # someone else's time and place, in a zone the relay cannot know (middleware.quoting).
    said = turn.own_text
    resolution = resolve_session_timezone(
        said,
        thread_tz=prior.thread_tz,
        user_tz=prior.user_tz,
        stated_tz=stated.zone if stated else None,
        now=now,
    )
    tz = resolution.tzinfo()
    anchor = _anchor_zone(resolution, prior, stated)
    own = _own_zone(prior, stated)
    context = {r.abbreviation: r.zone for r in resolution.resolved_abbreviations}
    expressions = tuple(
        find_time_expressions(
            said,
            anchor,
            now,
            locale=prior.reader_locale,
            place_zone=_place_zone,
            abbreviation_context=context,
            speaker_tz=own,
        )
    )
    if answers_hour_choice(said):
        answered = await _answered_hour(store, turn, anchor, prior.reader_locale, context)
        expressions = (answered,) if answered is not None else expressions
    # With no zone known, a phrase told of the past ("I ran 5k this morning", "last night
    # was rough") is not asked about: what is over needs no exact instant, only a plan does.
    asked = expressions if anchor else _not_past(said, expressions)
    times, questions = describe_expressions(asked, anchor)
    questions.extend(f"Ask the user: {q}" for q in resolution.questions)
    said_place = _said_place_elsewhere(resolution, prior, stated)
    moved = _moved_question(resolution)
    if moved is None and said_place is not None and _read_in(asked, anchor, resolution):
        moved = _times_elsewhere_question(said_place, resolution.zone)
    if moved is not None:
        questions.append(f"Ask the user: {moved}")
    # The resolution and the phrase that holds an abbreviation or place ask the same.
    questions = list(dict.fromkeys(questions))
    members: Sequence[MemberTime] = ()
    speaker = None
    speaker_last_here: datetime | None = None
    locale = prior.reader_locale or "en"
    # spec 000 §7.3: the reader sees times in their own zone, whatever zone the message
    # names; only a reader with no known zone gets the one the message gave.
    shown = anchor if anchor is not None and is_valid_zone(anchor) else None
    audience: Audience = _direct_audience(own or shown or "UTC", locale)
    if turn.chat_type == "group":
        found = await store.group_participants(
            turn.thread_key, now - settings.group_window, settings.group_limit
        )
        said_now = said_location(resolution.located, now) if resolution.located else None
        labels = member_labels(found, speaker=(turn.user_key, turn.display_name))
        members = [
            member_time(
                m, now, said_now if m.user_key == turn.user_key else None, labels[m.user_key]
            )
            for m in found
        ]
        stored = next((m.display_name for m in found if m.user_key == turn.user_key), None)
        speaker = labels.get(turn.user_key) or turn.display_name or stored or turn.user_key
        speaker_last_here = prior.user_last_conversation_here_at
        viewers = tuple(
            Viewer(member.label, member.zone, m.locale or "en")
            for m, member in zip(found, members, strict=True)
            if member.zone is not None
        )
        audience = GroupAudience(viewers, locale)
        spread = _clock_spread([member.zone for member in members], now)
        # A phrase whose zone is already asked about ("9am PST": which PST?) gets that one
        # question: its answer pins the time to a zone, which also says whose time it is.
        unpinned = (
            resolution.source != "explicit"
            and not resolution.needs_clarification
            and names_a_time_to_agree_on(said, expressions, now)
        )
        if unpinned and spread >= settings.ambiguity_threshold:
            # spec 000 §7.3's "UTC + conversions" are the tag's to give: the reply shows it
            # with UTC and each member's time (Discord: in each reader's own), so times the
            # model converted by hand would be said twice, against the markup instruction.
            hours = f"{spread.total_seconds() / 3600:g}"
            questions.append(
                f"Members' local clocks are up to {hours} hours apart, so times in this "
                "message mean different hours to different people: confirm whose time is "
                "meant, then write it as one <time> tag, which shows it to each member in "
                "their own zone."
            )
    if turn.channel == "discord":
        audience = DiscordAudience(locale)
    last_here = prior.last_conversation_seen_at(now)
    # The speaker's own return, when the thread's last message was someone else's.
    own_return = speaker_last_here if speaker_last_here != last_here else None
    # A contact that was the user's own last message here is no news from elsewhere: a
    # message of the conversation is "Last message here" already, and a command ("/time")
    # is no message the model saw.
    contact = prior.any_channel_at
    elsewhere = contact is not None and contact != prior.user_last_message_here_at
    mode = PolicyOverrides.from_stored(prior.clock_data.policy_overrides).mode or settings.mode
    facts = TemporalFacts(
        now=now,
        zone=_zone_label(resolution),
        tz=tz,
        zone_note=_zone_note(resolution, stated, now),
        own_zone=own if resolution.source == "explicit" and own != resolution.zone else None,
        said_place=said_place,
        fallback=resolution.fallback,
        last_here=Elapsed(last_here) if last_here else None,
        last_any_channel=Elapsed(contact, prior.any_channel) if contact and elsewhere else None,
        speaker=speaker,
        speaker_last_here=own_return,
        speaker_first=speaker is not None and speaker_last_here is None,
        members=members,
        times=times,
        questions=questions,
        recency=asks_about_current_events(turn.text),
        markup_instruction=(
            markup_instruction() if expressions or turn.chat_type == "group" else None
        ),
        gap_advice=mode != "off",
    )
    return ClockView(resolution, render_block(facts), expressions, audience, droppable_lines(facts))


def clock_stage(store: Store, settings: ClockSettings) -> Stage:
    """Add the temporal block to every forwarded user turn while ``[clock] enabled``."""

    async def clock(turn: Turn, call_next: Handler) -> Reply:
        if settings.enabled and not turn.continuation:
            view = await clock_view(store, turn, settings)
            if view.resolution.located is not None:
                await remember_location(store, turn, view.resolution.located)
            turn.context.sections.insert(0, view.block)
            turn.context.droppable = view.droppable
            turn.audience = view.audience
            turn.time_expressions = view.expressions
        return await call_next(turn)

    return clock


def witnessed_location(store: Store, settings: ClockSettings) -> Callable[[Turn], Awaitable[None]]:
    """What the clock keeps from a message it only witnesses (a group message not
    addressed to the bot, which stops at recording): the place it says its speaker is in,
    remembered as from any other message, so the group's block shows that member's zone
    (spec 000 §7.3: per-user timezones in groups when known). Nothing else is read; a
    message with no self-location phrase costs only the scan's first-letter prefilter."""

    async def witness(turn: Turn) -> None:
        if not settings.enabled:
            return
        place, _ = said_place(find_place_mentions(turn.own_text))
        if place is not None:
            await remember_location(store, turn, place)

    return witness


async def _answered_hour(
    store: Store,
    turn: Turn,
    anchor: str | None,
    locale: str | None,
    abbreviations: dict[str, str],
) -> ParseResult | None:
    """The instant ``turn`` picks when it answers the "09:00 or 21:00?" question asked about
    the thread's previous user message (read again, as of when it was said)."""
    now = turn.received_at
    earlier = [
        message
        for message in await store.transcript(turn.thread_key, limit=4)
        if message.role == "user" and now - ANSWER_WINDOW <= message.at < now
    ]
    if not earlier:
        return None
    previous = earlier[-1]
    asked = find_time_expressions(
        previous.text,
        anchor,
        previous.at,
        locale=locale,
        place_zone=_place_zone,
        abbreviation_context=abbreviations,
    )
    return pick_hour(turn.own_text, asked)


def describe_expressions(
    expressions: Sequence[ParseResult], anchor: str | None
) -> tuple[list[str], list[str]]:
    """Resolved phrases as absolute instants; unresolved ones as questions to ask.

    At most ``LISTED_PHRASES`` of each are spelled out, in message order; the rest are counted, so
    a message full of dates cannot outgrow the block's token ceiling.
    """
    resolved: list[str] = []
    questions: list[str] = []
    unlisted_questions = 0
    for found in expressions:
        if found.needs_clarification or found.start_instant is None:
            if found.clarification_question:
                if len(questions) < LISTED_PHRASES:
                    questions.append(f"Ask the user: {found.clarification_question}")
                else:
                    unlisted_questions += 1
            continue
        zone = found.zone or anchor or "UTC"
        start = _iso_in(found.start_instant, zone)
        span = f" to {_iso_in(found.end_instant, zone)}" if found.end_instant else ""
        resolved.append(f'"{found.matched_text}" = {start}{span} ({zone})')
    lines = []
    if resolved:
        more = len(resolved) - LISTED_PHRASES
        tail = f"; and {more} more, resolved the same way" if more > 0 else ""
        listed = "; ".join(resolved[:LISTED_PHRASES])
        lines.append(f"Times in this message: {listed}{tail}.")
    if unlisted_questions:
        questions.append(
            f"Ask the user: {unlisted_questions} more time phrases in this message are "
            "ambiguous too; confirm them as well."
        )
    return lines, questions


def _read_in(
    expressions: Sequence[ParseResult], anchor: str | None, resolution: TimezoneResolution
) -> bool:
    """Does a time in the message take the user's set zone only because it names none
    ("dinner at 7pm")? Not one pinned to its own ("5pm GMT+2", "2026-11-20 14:02 UTC",
    "3pm Tokyo time"), nor a duration ("in 2 hours"): those mean the same wherever the
    user is."""
    if resolution.source == "explicit":
        return False
    return any(found.kind == "absolute" and found.zone == anchor for found in expressions)


def _not_past(text: str, expressions: Sequence[ParseResult]) -> tuple[ParseResult, ...]:
    """``expressions`` but for the unanchored ones told of the past in ``text``: their
    clause or their sentence is (``tense.py``, as the parser reads a past hour)."""
    kept: list[ParseResult] = []
    cursor = 0
    for found in expressions:
        start = text.find(found.matched_text, cursor)
        if start < 0:  # an answer picked from an earlier message ("9pm" → "at 9")
            kept.append(found)
            continue
        cursor = end = start + len(found.matched_text)
        if found.kind != "floating" or not told_of_the_past(text, start, end):
            kept.append(found)
    return tuple(kept)


def _clock_spread(zones: Sequence[str | None], now: datetime) -> timedelta:
    """How far apart the known zones' UTC offsets are at ``now``."""
    offsets = [offset_minutes(zone, now) for zone in zones if zone and is_valid_zone(zone)]
    return timedelta(minutes=max(offsets) - min(offsets)) if offsets else timedelta(0)


def _place_zone(name: str) -> str | tuple[str, ...] | None:
    """The zone of a place name, or its candidates when it is ambiguous ("Victoria")."""
    found = lookup_place(name)
    return found.zone or found.candidates or None


def stated_location(prior: PriorState, now: datetime) -> StatedLocation | None:
    """The place the user last said they are in, while it still stands for their zone
    (``STATED_LOCATION_TTL``)."""
    return standing_location(prior.clock_data.located, now)


def standing_location(located: StatedLocation | None, now: datetime) -> StatedLocation | None:
    """``located`` while it still stands for its user's zone (``STATED_LOCATION_TTL``)."""
    if located is None or now - located.said_at > STATED_LOCATION_TTL[located.kind]:
        return None
    return located


def member_labels(
    members: Sequence[ParticipantState], *, speaker: tuple[str, str | None] | None = None
) -> dict[str, str]:
    """How each group member is named to the model and in ``/time``, by user key: their
    display name (``speaker``'s newest one for that user key), followed by their user key
    when another member goes by the same name, so two "Alex"es never read as one person
    with one clock. Another member is any the thread ever had (``namesake``), not only
    those listed: the rule the history's stored labels follow, so a member is named alike
    in both."""
    names = {m.user_key: m.display_name or m.user_key for m in members}
    namesakes = {m.user_key for m in members if m.namesake}
    if speaker is not None and speaker[1]:
        names[speaker[0]] = speaker[1]
    counts = Counter(name_key(name) for name in names.values())
    return {
        key: f"{name} ({key})" if key in namesakes or counts[name_key(name)] > 1 else name
        for key, name in names.items()
    }


def member_time(
    member: ParticipantState,
    now: datetime,
    said_now: StatedLocation | None = None,
    label: str | None = None,
) -> MemberTime:
    """A group member's zone as the block and ``/time`` show it: the one they set, else
    where they said they are (``said_now`` when this very message says it; spec 000
    §4.2's order, as for their own messages), else unknown. ``label`` names them
    (``member_labels``); by default their display name."""
    label = label or member.display_name or member.user_key
    if member.default_tz is not None:
        return MemberTime(label, member.default_tz)
    located = said_now or standing_location(member.located, now)
    if located is None:
        return MemberTime(label, None)
    return MemberTime(label, located.zone, f"{said_verb(located)} in {located.place}")


async def remember_location(store: Store, turn: Turn, mention: PlaceMention) -> None:
    """Keep the place this message says the user is in, for their later messages (the
    linked person's, like their zone). Awaited, so the next turn reads it; most messages
    say no place and never get here."""
    said = said_location(mention, turn.received_at)
    if said is None:
        return

    def keep(data: ClockData) -> ClockData | None:
        known = data.located
        if known is not None and known.said_at > said.said_at:
            return None  # a later message (replayed out of order) said where they are
        return replace(data, located=said)

    await store.update_clock_data(turn.user_key, keep)


def said_location(mention: PlaceMention, at: datetime) -> StatedLocation | None:
    """The place ``mention`` says the user is in, said at ``at``; ``None`` when the place
    has no single zone."""
    if mention.zone is None:
        return None
    return StatedLocation(mention.zone, mention.place.canonical_name, mention.kind, at)


def _moved_question(resolution: TimezoneResolution) -> str | None:
    """The question for a user who says they are somewhere ("just landed in New York")
    whose zone is not the one they set: the set zone still wins (spec 000 §4.2), so the
    block and this message's times are in it, but a traveller's Session TZ may now be
    another (§2), which only the user can say."""
    place = resolution.located
    if place is None or place.zone is None or resolution.source not in ("thread", "user"):
        return None
    if place.zone == resolution.zone:
        return None
    name = place.place.canonical_name
    return (
        f"You said you're in {name}: should I use its time ({place.zone}) instead of "
        f"{resolution.zone}? Until the user switches with /tz {name}, times are read in "
        f"{resolution.zone}."
    )


def _said_place_elsewhere(
    resolution: TimezoneResolution, prior: PriorState, stated: StatedLocation | None
) -> SaidPlace | None:
    """Where the user says (in this message) or said (while it stands) they are now, when
    a zone they set wins over that place's zone and the message names no zone of its own
    there: the block's times stay in the set zone, but the model hears the local time
    where the user is. A place said before the zone was set is forgotten by ``/tz``."""
    set_zone = next(
        (zone for zone in (prior.thread_tz, prior.user_tz) if zone and is_valid_zone(zone)),
        None,
    )
    if set_zone is None:
        return None
    said_now = resolution.located
    place: SaidPlace | None = None
    if said_now is not None and said_now.zone is not None:
        if said_now.kind == "current":
            place = SaidPlace(said_now.place.canonical_name, said_now.zone)
    elif stated is not None and stated.kind == "current":
        place = SaidPlace(stated.place, stated.zone, stated.said_at)
    if place is None or place.zone in (set_zone, resolution.zone):
        return None
    return place


def _times_elsewhere_question(said: SaidPlace, zone: str) -> str:
    """The question for a message with times from a user who said earlier they are in a
    place whose zone is not their set one: "3pm" may be that place's hour."""
    return (
        f"You said you're in {said.place}: are these times in its time ({said.zone})? "
        f"They are read in {zone} until the user switches with /tz {said.place}."
    )


def _anchor_zone(
    resolution: TimezoneResolution, prior: PriorState, stated: StatedLocation | None
) -> str | None:
    """The Session TZ floating times are anchored to: an IANA zone, or the label of an
    offset the message named ("UTC+02:00"); ``None`` when none is known."""
    if resolution.fallback:
        return None
    if resolution.offset_minutes is not None:
        # spec 000 §4.2 step 1: an offset the message names ("the server is on GMT+2,
        # restart it at 3am") is its Session TZ, as a named place is, so its floating
        # times are read in it, as the Now line says.
        return _zone_label(resolution)
    if is_valid_zone(resolution.zone):
        return resolution.zone
    return _own_zone(prior, stated)


def _own_zone(prior: PriorState, stated: StatedLocation | None) -> str | None:
    """The user's own zone (the thread's override, else their default, else where they
    said they are), if a valid one is known."""
    for zone in (prior.thread_tz, prior.user_tz):
        if zone is not None and is_valid_zone(zone):
            return zone
    return stated.zone if stated is not None else None


@lru_cache(maxsize=256)
def _direct_audience(zone: str, locale: str) -> DirectAudience:
    """The audience of a direct message, kept per zone and locale: building one checks
    both (over a microsecond a turn), and it is immutable, so it can be shared."""
    return DirectAudience(zone, locale)


_ZONE_NOTES = {
    "explicit": "named in this message",
    "thread": "this thread's timezone",
    "user": None,
}


def _zone_label(resolution: TimezoneResolution) -> str:
    """The zone as the block names it: a fixed offset as "UTC+09:00", never as the
    sign-inverted "Etc/GMT-9" id it is stored under."""
    if resolution.offset_minutes:
        return format_offset(resolution.offset_minutes)
    return resolution.zone


def _zone_note(
    resolution: TimezoneResolution, stated: StatedLocation | None, now: datetime
) -> str | None:
    if resolution.source == "stated" and stated is not None:
        return (
            f"from where the user said they {said_verb(stated)} ({stated.place}), "
            f"{ago(now - stated.said_at)}"
        )
    said = resolution.located
    if resolution.source == "location" and said is not None:
        # "I live in Lisbon" is their home, "I'm in Lisbon" where they are now: the block
        # says which, as it does for a place said in an earlier message.
        return f"from where the user says they {said_verb(said)} ({said.place.canonical_name})"
    return _ZONE_NOTES.get(resolution.source)


def said_verb(said: StatedLocation | PlaceMention) -> str:
    """ "live" for where they live, "are" for where they are now."""
    return "live" if said.kind == "home" else "are"


def _iso_in(instant: datetime, zone: str) -> str:
    tz: tzinfo
    label = _OFFSET_LABEL.match(zone)
    if label:
        minutes = int(label.group(2)) * 60 + int(label.group(3))
        tz = timezone(timedelta(minutes=-minutes if label.group(1) == "-" else minutes))
    elif is_valid_zone(zone):
        tz = get_zone(zone)
    else:
        tz = UTC
    return instant.astimezone(tz).isoformat(timespec="seconds")
