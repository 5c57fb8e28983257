from __future__ import annotations

import re
from zoneinfo import available_timezones

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.clock.places import (
    _CURATED,
    _SELF_LOCATION,
    _SELF_LOCATION_BODY,
    find_place_mentions,
    lookup_place,
    normalize_place,
    place_at,
    place_ending_at,
)
from middleware.clock.references import (
    find_zone_references,
    fixed_offset_zone,
    format_offset,
)
from middleware.clock.zones import is_valid_zone
from tests.strategies import chat_texts


@pytest.mark.parametrize(
    ("name", "zone", "canonical"),
    [
        ("Lisbon", "Europe/Lisbon", "Lisbon"),
        ("Kolkata", "Asia/Kolkata", "Kolkata"),
        ("Calcutta", "Asia/Kolkata", "Kolkata"),
        ("Bombay", "Asia/Kolkata", "Bombay"),
        ("Saigon", "Asia/Ho_Chi_Minh", "Ho Chi Minh City"),
        ("Ho Chi Minh City", "Asia/Ho_Chi_Minh", "Ho Chi Minh City"),
        ("Kiev", "Europe/Kyiv", "Kyiv"),
        ("Montreal", "America/Toronto", "Montreal"),
        ("São Paulo", "America/Sao_Paulo", "Sao Paulo"),
        ("sao paulo", "America/Sao_Paulo", "Sao Paulo"),
        ("SAO_PAULO", "America/Sao_Paulo", "Sao Paulo"),
        ("Zürich", "Europe/Zurich", "Zurich"),
        ("San Francisco", "America/Los_Angeles", "San Francisco"),
        ("Munich", "Europe/Berlin", "Munich"),
        ("Osaka", "Asia/Tokyo", "Osaka"),
        ("Saint John's", "America/St_Johns", "St. John’s"),
        ("Washington, D.C.", "America/New_York", "Washington DC"),
        ("Buenos Aires", "America/Argentina/Buenos_Aires", "Buenos Aires"),
        ("Japan", "Asia/Tokyo", "Japan"),
        ("the Netherlands", "Europe/Amsterdam", "Netherlands"),
        ("UK", "Europe/London", "UK"),
        ("Samoa", "Pacific/Apia", "Samoa"),
        ("Europe/Berlin", "Europe/Berlin", "Europe/Berlin"),
    ],
)
def test_lookup_unambiguous(name: str, zone: str, canonical: str) -> None:
    match = lookup_place(name)
    assert match.zone == zone
    assert match.candidates == (zone,)
    assert match.canonical_name == canonical
    assert not match.ambiguous


@pytest.mark.parametrize(
    ("name", "candidates"),
    [
        ("Portland", ("America/Los_Angeles", "America/New_York")),
        ("Springfield", ("America/Chicago", "America/New_York")),
        ("San Jose", ("America/Los_Angeles", "America/Costa_Rica")),
        ("Georgia", ("Asia/Tbilisi", "America/New_York")),
        ("Portugal", ("Atlantic/Madeira", "Europe/Lisbon", "Atlantic/Azores")),
        ("Germany", ("Europe/Berlin", "Europe/Busingen")),
    ],
)
def test_lookup_ambiguous(name: str, candidates: tuple[str, ...]) -> None:
    match = lookup_place(name)
    assert match.zone is None
    assert match.ambiguous
    assert set(match.candidates) == set(candidates)


def test_multi_zone_country_lists_every_zone() -> None:
    usa = lookup_place("USA")
    assert usa.zone is None
    assert {"America/New_York", "America/Los_Angeles", "Pacific/Honolulu"} <= set(usa.candidates)
    assert lookup_place("United States").candidates == usa.candidates


@pytest.mark.parametrize("name", ["Atlantis", "", "Center", "New Jersey", "Pacific"])
def test_lookup_unknown(name: str) -> None:
    match = lookup_place(name)
    assert match.zone is None
    assert not match.found


def test_known_places_override_the_index() -> None:
    match = lookup_place("springfield", known_places={"Springfield": "America/Chicago"})
    assert match.zone == "America/Chicago"
    assert lookup_place("Springfield", known_places={"Springfield": "Not/AZone"}).ambiguous


@pytest.mark.parametrize("zone", sorted(z for z in available_timezones() if z.startswith("Etc/")))
def test_only_zones_the_relay_accepts_resolve_as_ids(zone: str) -> None:
    # /tz stores what this returns, and every later turn reads it back.
    assert lookup_place(zone).zone == (zone if is_valid_zone(zone) else None)
    assert lookup_place("x", known_places={"x": zone}).zone == (
        zone if is_valid_zone(zone) else None
    )


def test_curated_zones_are_valid() -> None:
    zones = available_timezones()
    entries = [entry.strip() for entry in _CURATED.replace("\n", ";").split(";")]
    for entry in filter(None, entries):
        targets = entry.partition(" = ")[2]
        assert targets == "@US" or all(zone in zones for zone in targets.split()), entry


@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize_place(text)
    assert normalize_place(once) == once


@pytest.mark.parametrize(
    ("text", "place", "zone", "kind"),
    [
        ("I'm in Lisbon this week", "Lisbon", "Europe/Lisbon", "current"),
        ("here in Tokyo it's raining", "Tokyo", "Asia/Tokyo", "current"),
        ("I live in Berlin", "Berlin", "Europe/Berlin", "home"),
        ("currently in New York, what's up", "New York", "America/New_York", "current"),
        ("Just landed in São Paulo!", "São Paulo", "America/Sao_Paulo", "current"),
        ("I'm at Osaka", "Osaka", "Asia/Tokyo", "current"),
        ("im in portland, oregon", "portland, oregon", "America/Los_Angeles", "current"),
        ("We're based in the UK", "the UK", "Europe/London", "home"),
        ("I've moved to Porto", "Porto", "Europe/Lisbon", "home"),
        ("I am currently staying in Ho Chi Minh City.", "Ho Chi Minh City", "Asia/Ho_Chi_Minh",
         "current"),
        ("I'm visiting Kyoto", "Kyoto", "Asia/Tokyo", "current"),
        ("I'm in Nice", "Nice", "Europe/Paris", "current"),
        # Home from a trip: where they are now, said the way travellers say it.
        ("back home in Berlin", "Berlin", "Europe/Berlin", "current"),
        ("Back in Berlin!", "Berlin", "Europe/Berlin", "current"),
        ("ok. Home in Berlin at last", "Berlin", "Europe/Berlin", "current"),
        ("I'm back home in Berlin", "Berlin", "Europe/Berlin", "current"),
        ("I'm home in Berlin", "Berlin", "Europe/Berlin", "current"),
        # A subject-less phrase opening a clause or a line is the speaker's.
        ("Hi all, currently in Tokyo", "Tokyo", "Asia/Tokyo", "current"),
        ("so tired, just landed in Tokyo", "Tokyo", "Asia/Tokyo", "current"),
        ("morning!\nright now in Lisbon", "Lisbon", "Europe/Lisbon", "current"),
        ("@Bo: currently in Tokyo, so mornings work", "Tokyo", "Asia/Tokyo", "current"),
    ],
)  # fmt: skip
def test_self_location_found(text: str, place: str, zone: str, kind: str) -> None:
    [mention] = find_place_mentions(text)
    assert text[mention.start : mention.end] == place
    assert mention.zone == zone
    assert mention.kind == kind


@pytest.mark.parametrize(
    "text",
    [
        "what time is it in Tokyo",
        "Tokyo time please",
        "I have a friend in Tokyo",
        "when I'm in Tokyo next week",
        "I'm not currently in Tokyo",
        "my friend landed in Tokyo",
        "my brother is back in Berlin",
        # After a name or a handle, the phrase is about them.
        "@Bo currently in Tokyo this week",
        "my friend currently in Tokyo",
        "Bo right now in Tokyo",
        "@dev just landed in Tokyo",
        "she flew home in Tokyo style",
        "back in March",
        "I'm in a meeting",
        "I'm in nice weather",
        "i'm in christmas mood",
        "I'm in New Jersey",
        "I was in Paris",
        "They were in Tokyo",
    ],
)
def test_not_self_location(text: str) -> None:
    assert find_place_mentions(text) == []


def test_ambiguous_self_location_keeps_candidates() -> None:
    [mention] = find_place_mentions("I'm in Springfield")
    assert mention.zone is None
    assert mention.place.candidates == ("America/Chicago", "America/New_York")


def test_home_and_current_both_found() -> None:
    mentions = find_place_mentions("I live in Berlin but I'm in Lisbon this week")
    assert [(m.zone, m.kind) for m in mentions] == [
        ("Europe/Berlin", "home"),
        ("Europe/Lisbon", "current"),
    ]


def test_place_spans() -> None:
    text = "what is New York time"
    found = place_ending_at(text, text.index(" time"))
    assert found is not None and found.place.zone == "America/New_York"
    assert place_ending_at("Christmas time", len("Christmas")) is None
    at = place_at("in New York right now", 3)
    assert at is not None and (at.start, at.end) == (3, 11)


@pytest.mark.parametrize(
    ("text", "written", "zone", "offset"),
    [
        ("Let's meet at 9am Tokyo time", "Tokyo time", "Asia/Tokyo", None),
        ("what time is it in Tokyo?", "in Tokyo", "Asia/Tokyo", None),
        ("3pm in London tomorrow", "in London", "Europe/London", None),
        ("what's the time in new york right now", "in new york", "America/New_York", None),
        ("9am tomorrow in London", "in London", "Europe/London", None),
        ("the meeting in London at 3pm", "in London", "Europe/London", None),
        ("In Tokyo it's 3am now", "In Tokyo", "Asia/Tokyo", None),
        # A question about the time in a place, whatever words of place come before "in".
        ("what time is it back in Berlin?", "in Berlin", "Europe/Berlin", None),
        ("what's the time over in Tokyo now", "in Tokyo", "Asia/Tokyo", None),
        ("it's 3pm back home in Lisbon", "in Lisbon", "Europe/Lisbon", None),
        ("Berlin time or bust", "Berlin time", "Europe/Berlin", None),
        ("UTC+9", "UTC+9", "Etc/GMT-9", 540),
        ("at 10:00 UTC-03:30", "UTC-03:30", None, -210),
        ("GMT+5:45 please", "GMT+5:45", None, 345),
        ("utc+0530", "utc+0530", None, 330),
        ("UTC-12", "UTC-12", "Etc/GMT+12", -720),
        ("15:00 UTC", "UTC", "UTC", 0),
        ("starts 2026-11-22T09:00:00+09:00.", "2026-11-22T09:00:00+09:00", "Etc/GMT-9", 540),
        ("2026-11-22T09:00+05:45", "2026-11-22T09:00+05:45", None, 345),
        ("2026-11-22T09:00Z", "2026-11-22T09:00Z", "UTC", 0),
        ("see Europe/Berlin", "Europe/Berlin", "Europe/Berlin", None),
    ],
)
def test_zone_references(text: str, written: str, zone: str | None, offset: int | None) -> None:
    [ref] = find_zone_references(text)
    assert text[ref.start : ref.end] == written
    assert ref.zone == zone
    assert ref.offset_minutes == offset


@pytest.mark.parametrize(
    "text",
    [
        "I'm in Lisbon, what time is it?",
        "I have a friend in Tokyo",
        # Where someone or something is, in a sentence with a time that is not its own.
        "my colleague in New York said the standup is at 9am",
        "my sister in Sydney calls me at 8pm every day",
        "Kenji's in Tokyo, so 3pm for me is 11pm for him",
        "in London it's raining, want to call at 6pm?",
        "I was in Tokyo last week, had meetings at 9am every day",
        # Where the user is or will be, said with a time that is not the place's.
        "back in Berlin at last, what time is the party?",
        "I'm back in Berlin at 3pm",
        "Christmas time",
        "New Jersey time",
        "UTC+15",
        "2026-13-45T09:00Z",
        "what time is it",
        "Tokyotime",
        "Not/AZone",
    ],
)
def test_no_zone_reference(text: str) -> None:
    assert find_zone_references(text) == []


def test_ambiguous_zone_reference() -> None:
    [ref] = find_zone_references("Portland time")
    assert ref.kind == "place"
    assert ref.zone is None
    assert ref.candidates == ("America/Los_Angeles", "America/New_York")


def test_several_references_in_order() -> None:
    refs = find_zone_references("9am Tokyo time is UTC+9, and in Tokyo time too")
    assert [ref.zone for ref in refs] == ["Asia/Tokyo", "Etc/GMT-9", "Asia/Tokyo"]


@pytest.mark.parametrize(
    ("minutes", "zone", "label"),
    [
        (0, "UTC", "UTC+00:00"),
        (540, "Etc/GMT-9", "UTC+09:00"),
        (-300, "Etc/GMT+5", "UTC-05:00"),
        (840, "Etc/GMT-14", "UTC+14:00"),
        (345, None, "UTC+05:45"),
        (-210, None, "UTC-03:30"),
        (900, None, "UTC+15:00"),
    ],
)
def test_fixed_offsets(minutes: int, zone: str | None, label: str) -> None:
    assert fixed_offset_zone(minutes) == zone
    assert format_offset(minutes) == label


@given(st.integers(min_value=-12, max_value=14))
def test_etc_gmt_sign_is_inverted(hours: int) -> None:
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    zone = fixed_offset_zone(hours * 60)
    assert zone is not None
    offset = datetime(2026, 1, 1, tzinfo=UTC).astimezone(ZoneInfo(zone)).utcoffset()
    assert offset is not None and offset.total_seconds() == hours * 3600


# --- the self-location scan skips positions no phrase can start at ----------------------

# Each phrase alternative's opening, filler words, and places.
_PHRASE_WORDS = (
    "I'm in",
    "I’m at",
    "im in",
    "I am currently in",
    "we're based in",
    "We are visiting",
    "I live in",
    "we've moved to",
    "I have relocated to",
    "we landed in",
    "here in",
    "currently staying at",
    "right now in",
    "just landed in",
    "arrived at",
    "back home in",
    "Home at",
    "not",
    "when",
    "still",
    "Lisbon",
    "Tokyo",
    "ok",
)


@settings(max_examples=1000, deadline=None)
@given(
    text=st.one_of(
        chat_texts(_PHRASE_WORDS, (" ", "  ", "\t", "\n", ", ", ". ", ""), max_words=6),
        st.text(max_size=40),
    )
)
def test_the_self_location_scan_finds_what_the_full_pattern_finds(text: str) -> None:
    full = re.compile(_SELF_LOCATION_BODY, re.IGNORECASE)
    spans = [m.span() for m in full.finditer(text)]
    assert [m.span() for m in _SELF_LOCATION.finditer(text)] == spans
