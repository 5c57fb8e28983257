from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.clock.abbreviations import find_abbreviations
from middleware.clock.places import find_place_mentions
from middleware.clock.references import find_zone_references
from middleware.clock.resolution import _resolve, resolve_session_timezone

# One sentence per step, each pointing at a different zone.
EXPLICIT = "What is 9am Tokyo time for us?"  # Asia/Tokyo
LOCATION = "I'm in Lisbon this week."  # Europe/Lisbon
THREAD = "America/New_York"
USER = "Europe/Berlin"
STATED = "America/Sao_Paulo"  # a place the user said they are in, earlier


@pytest.mark.parametrize(
    ("explicit", "thread", "user", "location", "stated"),
    list(itertools.product([True, False], repeat=5)),
)
def test_precedence_matrix(
    explicit: bool, thread: bool, user: bool, location: bool, stated: bool
) -> None:
    """Every step beats every lower one and loses to every higher one."""
    text = " ".join(part for part, on in ((LOCATION, location), (EXPLICIT, explicit)) if on)
    result = resolve_session_timezone(
        text,
        thread_tz=THREAD if thread else None,
        user_tz=USER if user else None,
        stated_tz=STATED if stated else None,
    )
    if explicit:
        assert (result.zone, result.source) == ("Asia/Tokyo", "explicit")
    elif thread:
        assert (result.zone, result.source) == ("America/New_York", "thread")
    elif user:
        assert (result.zone, result.source) == ("Europe/Berlin", "user")
    elif location:
        assert (result.zone, result.source) == ("Europe/Lisbon", "location")
    elif stated:
        assert (result.zone, result.source) == (STATED, "stated")
    else:
        assert (result.zone, result.source) == ("UTC", "fallback")
    assert result.fallback is (result.source == "fallback")


def test_explicit_beats_thread_user_and_location() -> None:
    result = resolve_session_timezone(
        "I'm in Lisbon. What time is it in Tokyo?",
        thread_tz="America/New_York",
        user_tz="Europe/Berlin",
    )
    assert (result.zone, result.source, result.fallback) == ("Asia/Tokyo", "explicit", False)


def test_thread_beats_user_and_location() -> None:
    result = resolve_session_timezone(
        "I'm in Lisbon this week", thread_tz="America/New_York", user_tz="Europe/Berlin"
    )
    assert (result.zone, result.source) == ("America/New_York", "thread")
    assert any("Europe/Lisbon" in note for note in result.notes)


def test_the_place_a_message_says_is_reported_whichever_zone_wins() -> None:
    result = resolve_session_timezone(
        "I'm in Lisbon this week", thread_tz=None, user_tz="Europe/Berlin"
    )
    assert result.source == "user"
    assert result.located is not None
    assert (result.located.zone, result.located.kind) == ("Europe/Lisbon", "current")
    assert resolve_session_timezone("I'm fine", thread_tz=None, user_tz=None).located is None
    torn = resolve_session_timezone(
        "I'm in Lisbon. Actually I'm in Tokyo.", thread_tz=None, user_tz=None
    )
    assert torn.located is None


def test_user_beats_location() -> None:
    result = resolve_session_timezone("here in Tokyo", thread_tz=None, user_tz="Europe/Berlin")
    assert (result.zone, result.source) == ("Europe/Berlin", "user")


def test_location_beats_fallback() -> None:
    result = resolve_session_timezone("Just landed in São Paulo!", thread_tz=None, user_tz=None)
    assert (result.zone, result.source, result.fallback) == ("America/Sao_Paulo", "location", False)


def test_fallback_is_flagged() -> None:
    result = resolve_session_timezone("what's the time?", thread_tz=None, user_tz=None)
    assert (result.zone, result.source, result.fallback) == ("UTC", "fallback", True)
    assert result.notes


def test_invalid_stored_zones_are_ignored_with_a_note() -> None:
    result = resolve_session_timezone("hi", thread_tz="Mars/Olympus", user_tz="Asia/Tokyo")
    assert (result.zone, result.source) == ("Asia/Tokyo", "user")
    assert any("Mars/Olympus" in note for note in result.notes)


def test_several_explicit_zones_first_wins_others_listed() -> None:
    result = resolve_session_timezone(
        "9am Berlin time is 5pm Tokyo time, or UTC+9, or Berlin time again",
        thread_tz=None,
        user_tz=None,
    )
    assert (result.zone, result.source) == ("Europe/Berlin", "explicit")
    assert result.other_explicit == ("Asia/Tokyo", "Etc/GMT-9")


@pytest.mark.parametrize(
    ("text", "zone", "offset"),
    [
        ("call me at 10:00 UTC+9", "Etc/GMT-9", 540),
        ("standup at 09:00 GMT+5:45", "UTC+05:45", 345),
        ("standup at 09:00 UTC-03:30", "UTC-03:30", -210),
        ("15:00 UTC works", "UTC", 0),
        ("the webinar is at 10am UTC tomorrow", "UTC", 0),
    ],
)
def test_fixed_offsets(text: str, zone: str, offset: int) -> None:
    result = resolve_session_timezone(text, thread_tz="Europe/Berlin", user_tz=None)
    assert (result.zone, result.source, result.offset_minutes) == (zone, "explicit", offset)
    assert result.tzinfo() == timezone(timedelta(minutes=offset))


@pytest.mark.parametrize(
    "text",
    [
        "deploy finished 2026-11-20 14:02 UTC",
        "the event is at 2026-09-21 14:13:20 UTC",  # a Discord <t:…> as the channel writes it
        "ERROR 2026-11-20T14:02:11Z worker crashed",
        "deadline 2026-11-22T09:00:00+05:45",
        "deadline 2026-11-22T09:00:00-05:00",
        "Date: Fri, 20 Nov 2026 14:02:11 GMT",
        "sent on Nov 20, 2026 at 2:02pm UTC+9",
        "20.11.2026 14:02 GMT+2 was the last backup",
    ],
)
def test_a_written_instant_names_no_zone_for_the_user(text: str) -> None:
    """An instant written out in full (date, time and zone) is dated by its zone; the
    user's zone stays the message's."""
    result = resolve_session_timezone(text, thread_tz=None, user_tz="Europe/Berlin")
    assert (result.zone, result.source, result.offset_minutes) == ("Europe/Berlin", "user", None)
    unknown = resolve_session_timezone(text, thread_tz=None, user_tz=None)
    assert (unknown.zone, unknown.source) == ("UTC", "fallback")


def test_iana_zone_has_no_offset_and_a_zoneinfo() -> None:
    result = resolve_session_timezone("hi", thread_tz="Asia/Kathmandu", user_tz=None)
    assert result.offset_minutes is None
    assert result.tzinfo() == ZoneInfo("Asia/Kathmandu")


def test_abbreviation_is_never_mapped_silently() -> None:
    result = resolve_session_timezone("let's talk at 3pm IST", thread_tz=None, user_tz=None)
    assert (result.zone, result.source, result.fallback) == ("UTC", "fallback", True)
    [question] = result.unresolved_abbreviations
    assert question.abbreviation == "IST"
    assert question.candidates == ("Asia/Kolkata", "Asia/Jerusalem", "Europe/Dublin")
    assert result.needs_clarification
    assert result.questions == (question.question,)


def test_single_meaning_abbreviation_still_asks_without_context() -> None:
    result = resolve_session_timezone("3pm EST?", thread_tz=None, user_tz=None)
    assert [q.abbreviation for q in result.unresolved_abbreviations] == ["EST"]
    assert result.zone == "UTC"


def test_abbreviation_resolved_from_user_context_does_not_set_the_zone() -> None:
    result = resolve_session_timezone(
        "let's talk at 3pm IST", thread_tz="America/New_York", user_tz="Asia/Kolkata"
    )
    assert (result.zone, result.source) == ("America/New_York", "thread")
    assert [(r.abbreviation, r.zone) for r in result.resolved_abbreviations] == [
        ("IST", "Asia/Kolkata")
    ]
    assert result.unresolved_abbreviations == ()
    assert not result.needs_clarification


def test_abbreviation_with_two_matching_known_zones_is_asked() -> None:
    result = resolve_session_timezone("3pm IST", thread_tz="Europe/Dublin", user_tz="Asia/Kolkata")
    assert [q.abbreviation for q in result.unresolved_abbreviations] == ["IST"]
    assert (result.zone, result.source) == ("Europe/Dublin", "thread")


def test_abbreviation_uses_the_rules_of_now() -> None:
    text = "9am CDT"
    summer_2021 = datetime(2021, 6, 1, tzinfo=UTC)
    old = resolve_session_timezone(
        text, thread_tz=None, user_tz="America/Mexico_City", now=summer_2021
    )
    assert [(r.abbreviation, r.zone) for r in old.resolved_abbreviations] == [
        ("CDT", "America/Mexico_City")
    ]
    new = resolve_session_timezone(text, thread_tz=None, user_tz="America/Mexico_City")
    assert [q.abbreviation for q in new.unresolved_abbreviations] == ["CDT"]


def test_ambiguous_location_does_not_set_the_zone() -> None:
    result = resolve_session_timezone("I'm in Portland", thread_tz=None, user_tz=None)
    assert (result.zone, result.source) == ("UTC", "fallback")
    [place] = result.ambiguous_places
    assert (place.name, place.explicit) == ("Portland", False)
    assert place.candidates == ("America/Los_Angeles", "America/New_York")
    assert "America/Los_Angeles" in place.question


def test_ambiguous_explicit_place_falls_through_to_thread() -> None:
    result = resolve_session_timezone(
        "what's 9am Springfield time?", thread_tz="Europe/Berlin", user_tz=None
    )
    assert (result.zone, result.source) == ("Europe/Berlin", "thread")
    [place] = result.ambiguous_places
    assert place.explicit
    assert place.candidates == ("America/Chicago", "America/New_York")


def test_known_places_disambiguate() -> None:
    result = resolve_session_timezone(
        "I'm in Springfield",
        thread_tz=None,
        user_tz=None,
        known_places={"Springfield": "America/Chicago"},
    )
    assert (result.zone, result.source) == ("America/Chicago", "location")
    assert result.ambiguous_places == ()


def test_country_locations() -> None:
    japan = resolve_session_timezone("I live in Japan", thread_tz=None, user_tz=None)
    assert (japan.zone, japan.source) == ("Asia/Tokyo", "location")
    portugal = resolve_session_timezone("I live in Portugal", thread_tz=None, user_tz=None)
    assert (portugal.zone, portugal.source) == ("UTC", "fallback")
    assert portugal.ambiguous_places[0].name == "Portugal"
    usa = resolve_session_timezone("I'm in the USA", thread_tz=None, user_tz=None)
    assert usa.zone == "UTC"
    assert "timezones" in usa.ambiguous_places[0].question


def test_current_location_beats_home() -> None:
    result = resolve_session_timezone(
        "I live in Berlin but I'm in Lisbon this week", thread_tz=None, user_tz=None
    )
    assert (result.zone, result.source) == ("Europe/Lisbon", "location")


def test_conflicting_current_locations_set_nothing() -> None:
    result = resolve_session_timezone(
        "I'm in Lisbon. Actually I'm in Tokyo.", thread_tz=None, user_tz=None
    )
    assert (result.zone, result.source) == ("UTC", "fallback")
    assert any("Conflicting" in note for note in result.notes)


def test_question_about_a_place_is_explicit_not_location() -> None:
    result = resolve_session_timezone(
        "what time is it in Tokyo?", thread_tz=None, user_tz="Europe/Berlin"
    )
    assert (result.zone, result.source) == ("Asia/Tokyo", "explicit")
    assert result.mentioned_places == ()


# --- a message that names nothing: the stored zones alone decide, and that is kept -----

_PIECES = (
    "I'm in Lisbon this week. What is 9am Tokyo time? Call at 3pm EST. UTC+9 in Portland "
    "I live in Springfield, Europe/Berlin IST. Quick question: can you summarise the plan?"
).split()
_STORED = st.sampled_from([None, "Europe/Berlin", "America/New_York", "Mars/Olympus"])


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(_PIECES), max_size=6).map(" ".join),
    thread_tz=_STORED,
    user_tz=_STORED,
    stated_tz=st.sampled_from([None, "Europe/Lisbon"]),
)
def test_the_kept_answer_is_the_full_resolution(
    text: str, thread_tz: str | None, user_tz: str | None, stated_tz: str | None
) -> None:
    now = datetime(2026, 1, 15, tzinfo=UTC)
    found = resolve_session_timezone(
        text, thread_tz=thread_tz, user_tz=user_tz, stated_tz=stated_tz, now=now
    )
    full = _resolve(
        find_zone_references(text),
        find_place_mentions(text),
        find_abbreviations(text),
        thread_tz,
        user_tz,
        stated_tz,
        now,
    )
    assert found == full


def test_a_message_naming_nothing_shares_the_answer_for_its_zones() -> None:
    plain = resolve_session_timezone("thanks!", thread_tz=None, user_tz="Europe/Berlin")
    again = resolve_session_timezone("what next?", thread_tz=None, user_tz="Europe/Berlin")
    assert again is plain and (plain.zone, plain.source) == ("Europe/Berlin", "user")
    located = resolve_session_timezone("I'm in Lisbon", thread_tz=None, user_tz=None)
    assert (located.zone, located.source) == ("Europe/Lisbon", "location")
