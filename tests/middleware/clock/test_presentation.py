"""Rendering ``<time …>`` markups for DMs, groups and Discord, whole and streamed.

Expected strings are written out by hand from the zone rules (Berlin CET +01:00 in
November, Tokyo +09:00, Los Angeles PST -08:00, Kathmandu +05:45, New York EDT -04:00 until
2026-11-01T06:00Z and from 2026-03-08T07:00Z). English 12-hour times carry CLDR's narrow
no-break space (U+202F) before AM/PM.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from middleware.clock.presentation import (
    Audience,
    DirectAudience,
    DiscordAudience,
    GroupAudience,
    StreamingTimeRenderer,
    Viewer,
    markup_instruction,
    render_times,
)

REF = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
NNBSP = "\u202f"

ANA = Viewer("Ana", "Europe/Berlin", "de_DE")
KENJI = Viewer("Kenji", "Asia/Tokyo", "ja_JP")
MARIA = Viewer("Maria", "America/Los_Angeles", "en_US")
TRIO = GroupAudience((ANA, KENJI, MARIA))


# --- direct messages -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        ("<time 2026-11-22T08:00:00Z>", f"Sun, Nov 22, 1:45{NNBSP}PM Kathmandu Time"),
        # The same instant written with another offset.
        ("<time 2026-11-22T09:00:00+01:00>", f"Sun, Nov 22, 1:45{NNBSP}PM Kathmandu Time"),
        # 18:30Z on Saturday is already 00:15 on Sunday in Kathmandu.
        ("<time 2026-11-21T18:30:00Z>", f"Sun, Nov 22, 12:15{NNBSP}AM Kathmandu Time"),
        ("<time 2026-11-21T18:14:00Z>", f"Sat, Nov 21, 11:59{NNBSP}PM Kathmandu Time"),
    ],
)
def test_direct_kathmandu_quarter_hour_offset(markup: str, expected: str) -> None:
    assert render_times(markup, DirectAudience("Asia/Kathmandu"), reference=REF) == expected


def test_direct_uses_the_readers_locale() -> None:
    audience = DirectAudience("Asia/Kathmandu", "de_DE")
    rendered = render_times("<time 2026-11-21T18:30:00Z>", audience, reference=REF)
    assert rendered == "So., 22. Nov., 00:15 Kathmandu (Ortszeit)"


def test_direct_accepts_a_hyphenated_locale() -> None:
    audience = DirectAudience("Europe/Berlin", "de-DE")
    rendered = render_times("<time 2026-11-22T08:00:00Z>", audience, reference=REF)
    assert rendered == "So., 22. Nov., 09:00 Berlin (Ortszeit)"


@pytest.mark.parametrize(
    ("instant", "expected"),
    [
        # Fall back on Sunday 1 November: 01:00-01:59 happens twice, the offset tells which.
        ("2026-11-01T05:30:00Z", f"Sun, Nov 1, 1:30{NNBSP}AM New York Time (GMT-04:00)"),
        ("2026-11-01T06:30:00Z", f"Sun, Nov 1, 1:30{NNBSP}AM New York Time (GMT-05:00)"),
        ("2026-11-01T04:59:00Z", f"Sun, Nov 1, 12:59{NNBSP}AM New York Time"),
        ("2026-11-01T07:00:00Z", f"Sun, Nov 1, 2:00{NNBSP}AM New York Time"),
        # Spring forward on Sunday 8 March: 01:59 EST is followed by 03:00 EDT.
        ("2026-03-08T06:59:00Z", f"Sun, Mar 8, 1:59{NNBSP}AM New York Time"),
        ("2026-03-08T07:00:00Z", f"Sun, Mar 8, 3:00{NNBSP}AM New York Time"),
        ("2026-07-04T16:00:00Z", f"Sat, Jul 4, 12:00{NNBSP}PM New York Time"),
    ],
)
def test_direct_new_york_around_dst(instant: str, expected: str) -> None:
    audience = DirectAudience("America/New_York", "en_US")
    assert render_times(f"<time {instant}>", audience, reference=REF) == expected


def test_direct_shows_the_year_without_reference_or_in_another_year() -> None:
    audience = DirectAudience("America/New_York")
    markup = "<time 2027-01-04T15:00:00Z>"
    expected = f"Mon, Jan 4, 2027, 10:00{NNBSP}AM New York Time"
    assert render_times(markup, audience) == expected
    assert render_times(markup, audience, reference=REF) == expected
    # Midnight UTC on 1 January is still 2026 in New York: the year stays.
    new_year_utc = datetime(2027, 1, 1, tzinfo=UTC)
    assert render_times(markup, audience, reference=new_year_utc) == expected
    later = datetime(2027, 1, 1, 12, 0, tzinfo=UTC)
    assert render_times(markup, audience, reference=later) == (
        f"Mon, Jan 4, 10:00{NNBSP}AM New York Time"
    )


def test_direct_year_follows_the_readers_local_date() -> None:
    # 2026-12-31T20:00Z is already 2027 in Tokyo; the reference is 2026 there.
    audience = DirectAudience("Asia/Tokyo", "en_GB")
    rendered = render_times("<time 2026-12-31T20:00:00Z>", audience, reference=REF)
    assert rendered == "Fri, 1 Jan 2027, 05:00 Tokyo Time"


def test_groups_viewers_and_discord_accept_a_hyphenated_locale() -> None:
    # "de-DE" as a browser or a platform writes it reads as babel's "de_DE" everywhere.
    group = GroupAudience((Viewer("Kenji", "Asia/Tokyo", "ja-JP"),), locale="de-DE")
    assert render_times("<time 2026-11-21T23:30:00Z>", group, reference=REF) == (
        "Sa., 21. Nov., 23:30 UTC · 11月22日(日) 8:30 Tokio (Kenji)"
    )
    discord = DiscordAudience("de-DE")
    assert render_times("<time 2026-11-22>", discord, reference=REF) == "So., 22. Nov."


# --- groups ----------------------------------------------------------------------------


def test_group_three_zones_same_date() -> None:
    rendered = render_times("<time 2026-11-22T08:00:00Z>", TRIO, reference=REF)
    assert rendered == (
        "Sun, Nov 22, 08:00 UTC · 09:00 Berlin (Ana) · 17:00 Tokyo (Kenji)"
        f" · 12:00{NNBSP}AM Los Angeles (Maria)"
    )


def test_group_dates_the_parts_past_midnight() -> None:
    # 23:30Z Saturday: Sunday 00:30 in Berlin, Sunday 08:30 in Tokyo, Saturday 15:30 in LA.
    rendered = render_times("<time 2026-11-21T23:30:00Z>", TRIO, reference=REF)
    assert rendered == (
        "Sat, Nov 21, 23:30 UTC · So., 22. Nov., 00:30 Berlin (Ana)"
        " · 11月22日(日) 8:30 Tokyo (Kenji)"
        f" · 3:30{NNBSP}PM Los Angeles (Maria)"
    )


def test_group_dates_a_part_still_on_the_previous_day() -> None:
    # 07:30Z Sunday is still Saturday 23:30 in Los Angeles.
    rendered = render_times("<time 2026-11-22T07:30:00Z>", TRIO, reference=REF)
    assert rendered == (
        "Sun, Nov 22, 07:30 UTC · 08:30 Berlin (Ana) · 16:30 Tokyo (Kenji)"
        f" · Sat, Nov 21, 11:30{NNBSP}PM Los Angeles (Maria)"
    )


def test_group_shares_a_zone_and_joins_utc_viewers_to_the_anchor() -> None:
    ben = Viewer("Ben", "Europe/Berlin", "en_US")
    zoe = Viewer("Zoe", "Etc/UTC")
    audience = GroupAudience((ANA, zoe, MARIA, ben))
    rendered = render_times("<time 2026-11-22T08:00:00Z>", audience, reference=REF)
    assert rendered == (
        "Sun, Nov 22, 08:00 UTC (Zoe) · 09:00 Berlin (Ana, Ben)"
        f" · 12:00{NNBSP}AM Los Angeles (Maria)"
    )


def test_group_in_german_without_reference() -> None:
    audience = GroupAudience((KENJI,), locale="de_DE")
    rendered = render_times("<time 2026-11-22T08:00:00Z>", audience)
    assert rendered == "So., 22. Nov. 2026, 08:00 UTC · 17:00 Tokio (Kenji)"


def test_group_without_viewers_is_utc_only() -> None:
    rendered = render_times("<time 2026-11-22T08:00:00Z>", GroupAudience(), reference=REF)
    assert rendered == "Sun, Nov 22, 08:00 UTC"


# --- Discord ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "markup",
    [
        "<time 2026-11-22T08:00:00Z>",
        "<time 2026-11-22T09:00:00+01:00>",
        "<time 2026-11-22T08:00:00.900000+00:00>",
    ],
)
def test_discord_native_timestamp(markup: str) -> None:
    assert render_times(f"at {markup}.", DiscordAudience()) == "at <t:1795334400:f>."


# --- markup parsing --------------------------------------------------------------------


def test_several_markups_in_one_text() -> None:
    text = "From <time 2026-11-22T08:00:00Z> to <time 2026-11-22T09:30:00Z>, ok?"
    assert render_times(text, DiscordAudience()) == (
        "From <t:1795334400:f> to <t:1795339800:f>, ok?"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # No offset: a naive time is never placed in a zone.
        ("at <time 2026-11-22T09:00:00>!", "at 2026-11-22T09:00:00!"),
        ("at <time 2026-02-30>!", "at 2026-02-30!"),
        ("at <time 20261122>!", "at 20261122!"),
        # "UTC" beside another offset contradicts it: no instant is chosen.
        ("at <time 2026-11-22T08:00:00+01:00 UTC>!", "at 2026-11-22T08:00:00+01:00 UTC!"),
        ("at <time 2026-11-22 UTC>!", "at 2026-11-22 UTC!"),
        ("at <time tomorrow 9am>!", "at tomorrow 9am!"),
        ("at <time 2026-13-40T00:00:00Z>!", "at 2026-13-40T00:00:00Z!"),
        ("at <time >!", "at !"),
    ],
)
def test_malformed_markup_shows_its_inner_text(text: str, expected: str) -> None:
    assert render_times(text, DirectAudience("Europe/Berlin"), reference=REF) == expected


@pytest.mark.parametrize(
    "markup",
    [
        "<time 2026-11-22T08:00:00z>",
        "<time 2026-11-22T08:00:00 UTC>",
        "<time 2026-11-22T08:00:00UTC>",
        "<time 2026-11-22T08:00 utc>",
        "<time 2026-11-22 08:00Z>",
        "<time 2026-11-22t08:00:00Z>",
        "<time  2026-11-22T08:00:00.000 UTC >",
    ],
)
def test_a_loosely_written_utc_instant_is_the_instant_it_names(markup: str) -> None:
    berlin = DirectAudience("Europe/Berlin")
    assert render_times(f"at {markup}.", berlin, reference=REF) == (
        f"at Sun, Nov 22, 9:00{NNBSP}AM Berlin Time."
    )
    assert render_times(f"at {markup}.", DiscordAudience()) == "at <t:1795334400:f>."


@pytest.mark.parametrize(
    ("audience", "expected"),
    [
        (DirectAudience("Asia/Tokyo"), "Sun, Nov 22"),
        (DirectAudience("America/Los_Angeles", "de_DE"), "So., 22. Nov."),
        # Once for the group, in its locale: a calendar date is no one's local time.
        (TRIO, "Sun, Nov 22"),
        (GroupAudience((ANA,), "de_DE"), "So., 22. Nov."),
        # Discord's <t:…> always shows a time: the date is text.
        (DiscordAudience(), "Sun, Nov 22"),
        (DiscordAudience("de_DE"), "So., 22. Nov."),
    ],
)
def test_a_date_only_markup_is_the_readers_localised_date(
    audience: Audience, expected: str
) -> None:
    rendered = render_times("due <time 2026-11-22>.", audience, reference=REF)
    assert rendered == f"due {expected}."


def test_a_date_only_markup_shows_the_year_when_it_is_not_the_references() -> None:
    text = "<time 2027-01-02>"
    assert render_times(text, DirectAudience("UTC"), reference=REF) == "Sat, Jan 2, 2027"
    assert render_times(text, TRIO) == "Sat, Jan 2, 2027"
    # The year of "now" is the reader's: 31 Dec 2026 23:30 UTC is 2027 in Tokyo.
    new_year_eve = datetime(2026, 12, 31, 23, 30, tzinfo=UTC)
    tokyo = DirectAudience("Asia/Tokyo")
    assert render_times(text, tokyo, reference=new_year_eve) == "Sat, Jan 2"


def test_discord_refuses_an_unknown_locale() -> None:
    with pytest.raises(ValueError, match="locale"):
        DiscordAudience("xx_NOPE")


@pytest.mark.parametrize(
    "text",
    [
        "a <timestamp> b",
        "a <time> b",
        "x < y and y > z",
        # Left open before the end of the text (an open one at the end is read as closed).
        "<time 2026-11-22T08:00:00Z\nthen",
        "<time 2026-11-22\nT08:00:00Z>",
        "<time " + "x" * 65 + ">",
    ],
)
def test_text_that_is_not_markup_is_untouched(text: str) -> None:
    assert render_times(text, DiscordAudience()) == text


def test_a_markup_is_read_up_to_sixty_four_characters_inside() -> None:
    padded = " " * 44 + "2026-11-22T08:00:00Z"  # 64 characters
    assert render_times(f"<time {padded}>", DiscordAudience()) == "<t:1795334400:f>"
    assert render_times(f"<time  {padded}>", DiscordAudience()) == f"<time  {padded}>"


def test_text_without_markup_is_returned_as_is() -> None:
    text = "nothing to see here " * 3
    assert render_times(text, DiscordAudience()) is text


def test_naive_reference_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        render_times(
            "<time 2026-11-22T08:00:00Z>", DiscordAudience(), reference=datetime(2026, 1, 1)
        )


@pytest.mark.parametrize("zone", ["Mars/Olympus", "EST", "asia/tokyo"])
def test_unknown_zone_is_refused(zone: str) -> None:
    with pytest.raises(ValueError):
        DirectAudience(zone)
    with pytest.raises(ValueError):
        Viewer("X", zone)


def test_unknown_locale_is_refused() -> None:
    with pytest.raises(ValueError, match="locale"):
        Viewer("X", "Europe/Berlin", "xx_NOPE")


def test_markup_instruction_shows_the_form() -> None:
    instruction = markup_instruction()
    assert "<time 2026-11-22T08:00:00Z>" in instruction
    assert "a date without a time as <time 2026-11-22>" in instruction
    assert "\n" not in instruction


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("en", f"Sun, Nov 22, 8:00{NNBSP}AM UTC"),
        ("de_DE", "So., 22. Nov., 08:00 UTC"),
        ("ja_JP", "11月22日(日) 8:00 UTC"),
    ],
)
def test_a_reader_in_utc_sees_utc_not_a_local_time_of_it(locale: str, expected: str) -> None:
    """A DM reader whose zone is unknown reads UTC: not "UTC Time", nor "UTC (Ortszeit)"
    ("local time"), which would call the fallback their own time."""
    instant = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)
    for zone in ("UTC", "Etc/UTC"):
        assert DirectAudience(zone, locale).render(instant, reference=REF) == expected


# --- streaming -------------------------------------------------------------------------


def test_streaming_holds_only_a_possible_markup() -> None:
    renderer = StreamingTimeRenderer(DiscordAudience())
    assert renderer.feed("Meet at <ti") == "Meet at "
    assert renderer.holding
    assert renderer.feed("me 2026-11-2") == ""
    assert renderer.feed("2T08:00:00Z> sharp, a < b") == "<t:1795334400:f> sharp, a < b"
    assert not renderer.holding
    assert renderer.flush() == ""


def test_streaming_flush_reads_a_markup_left_open_at_the_end() -> None:
    """An answer cut off inside a markup (its token limit) shows no raw markup."""
    renderer = StreamingTimeRenderer(DiscordAudience())
    assert renderer.feed("until <time 2026") == "until "
    assert renderer.flush() == "2026"
    assert not renderer.holding
    assert renderer.feed("until <time 2026-11-22T08:00:00Z") == "until "
    assert renderer.flush() == "<t:1795334400:f>"
    # Only the keyword and its space open a markup: a shorter tail is plain text.
    assert renderer.feed("a <tim") == "a "
    assert renderer.flush() == "<tim"


def test_a_markup_open_at_the_end_of_a_whole_reply_is_read_as_closed() -> None:
    audience = DirectAudience("Europe/Berlin")
    assert render_times("See you <time 2026-11-22T08:00Z", audience, reference=REF) == (
        f"See you Sun, Nov 22, 9:00{NNBSP}AM Berlin Time"
    )
    assert render_times("See you <time 2026-11", audience, reference=REF) == "See you 2026-11"
    # Open in the middle (no ">" before the next "<" or line): left as written.
    assert render_times("a <time x\nb", audience) == "a <time x\nb"
    assert render_times("a <time x <b", audience) == "a <time x <b"


def test_a_fresh_renderer_keeps_the_audience_and_reference_but_nothing_held() -> None:
    renderer = StreamingTimeRenderer(DirectAudience("Europe/Berlin"), reference=REF)
    assert renderer.feed("see <time 2026-11-22T08:00") == "see "
    other = renderer.fresh()
    assert not other.holding
    # Berlin, and no year: the reference (2026) came along.
    assert other.feed("<time 2026-11-22T08:00:00Z>.") == f"Sun, Nov 22, 9:00{NNBSP}AM Berlin Time."
    assert renderer.holding


def test_a_renderer_is_idle_only_where_a_plain_piece_changes_nothing() -> None:
    renderer = StreamingTimeRenderer(DiscordAudience())
    assert not renderer.idle  # a text starts at a line start, where "~~~" opens a fence
    renderer.feed("plain words ")
    assert renderer.idle
    renderer.feed("then <ti")
    assert not renderer.idle  # a tail is held
    renderer.feed("me 2026-11-22T08:00:00Z> ok")
    assert renderer.idle
    renderer.feed("a line\n")
    assert not renderer.idle  # a line start again
    assert renderer.feed("~~~") == "~~~"
    assert renderer.feed(f"\n{MARKUP}") == f"\n{MARKUP}"  # inside the fence it opened
    renderer.flush()
    assert not renderer.idle


def test_streaming_passes_plain_deltas_through() -> None:
    renderer = StreamingTimeRenderer(DiscordAudience())
    delta = "plain text"
    assert renderer.feed(delta) is delta


# --- markup inside code, HTML ---------------------------------------------------------

MARKUP = "<time 2026-11-22T08:00:00Z>"
STAMP = "<t:1795334400:f>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Inline code spans: a run of n backticks up to the next run of exactly n.
        (f"Write `{MARKUP}`, we show {MARKUP}.", f"Write `{MARKUP}`, we show {STAMP}."),
        (f"``a ` {MARKUP} b`` {MARKUP}", f"``a ` {MARKUP} b`` {STAMP}"),
        (f"`` {MARKUP} ` `` then {MARKUP}", f"`` {MARKUP} ` `` then {STAMP}"),
        # Fenced code blocks, to the closing fence or the end of the text.
        (f"```\n{MARKUP}\n```\n{MARKUP}", f"```\n{MARKUP}\n```\n{STAMP}"),
        (f"~~~md\n{MARKUP}\n~~~\n{MARKUP}", f"~~~md\n{MARKUP}\n~~~\n{STAMP}"),
        (f"```html\n{MARKUP}\n", f"```html\n{MARKUP}\n"),
        # Only a fence of the same character, as long or longer and alone on its line,
        # closes it; any indentation (a list item's fence).
        (f"````\n```\n{MARKUP}\n`````  \n{MARKUP}", f"````\n```\n{MARKUP}\n`````  \n{STAMP}"),
        (f"~~~\n``` x\n{MARKUP}\n~~~\n{MARKUP}", f"~~~\n``` x\n{MARKUP}\n~~~\n{STAMP}"),
        (
            f"1. Run:\n   ```sh\n   echo '{MARKUP}'\n   ```\n{MARKUP}",
            f"1. Run:\n   ```sh\n   echo '{MARKUP}'\n   ```\n{STAMP}",
        ),
        # Backticks after a line's opening ones: an inline span, not a fence.
        (f"```js``` at {MARKUP}\n{MARKUP}", f"```js``` at {STAMP}\n{STAMP}"),
        # A fence only at a line's start; tildes elsewhere are text.
        (f"a ~~~ {MARKUP} ~~b~~", f"a ~~~ {STAMP} ~~b~~"),
        # A backtick run nothing closes on its line is code to the line's end (a stream
        # cannot know yet whether it will close), and no further.
        (f"it's ` {MARKUP}\n{MARKUP}", f"it's ` {MARKUP}\n{STAMP}"),
        (f"`{MARKUP}\n`", f"`{MARKUP}\n`"),
        # A markup never spans into code.
        ("<time 2026-11-22T08:00:00Z`>`", "<time 2026-11-22T08:00:00Z`>`"),
        # A backslash-escaped backtick is a literal backtick, no delimiter (an escaped
        # backslash escapes nothing); inside a span a backslash escapes nothing.
        (f"type \\` then {MARKUP}", f"type \\` then {STAMP}"),
        (f"a \\\\`{MARKUP}` b", f"a \\\\`{MARKUP}` b"),
        (f"`a\\` {MARKUP}", f"`a\\` {STAMP}"),
        # A fenced block in a block quote, to its closing fence or the quote's end.
        (f"> ```\n> {MARKUP}\n> ```\n{MARKUP}", f"> ```\n> {MARKUP}\n> ```\n{STAMP}"),
        (
            f"> > ~~~\n> > {MARKUP}\n> > ~~~\n> {MARKUP}",
            f"> > ~~~\n> > {MARKUP}\n> > ~~~\n> {STAMP}",
        ),
        (f"> ```\n> {MARKUP}\n{MARKUP}", f"> ```\n> {MARKUP}\n{STAMP}"),
        (f"> ```\n> {MARKUP}\n\n{MARKUP}", f"> ```\n> {MARKUP}\n\n{STAMP}"),
        # A ">" inside a fence outside any quote is the code's own.
        (f"```\n> ```\n{MARKUP}\n```\n{MARKUP}", f"```\n> ```\n{MARKUP}\n```\n{STAMP}"),
    ],
)
def test_markup_inside_code_stays_as_written(text: str, expected: str) -> None:
    assert render_times(text, DiscordAudience()) == expected
    assert _streamed(text, DiscordAudience(), size=1) == expected


@pytest.mark.parametrize(
    "html",
    [
        '<time datetime="2026-11-22T08:00:00Z">',
        "<time datetime='2026-11-22'>Sunday</time>",
        '<time class="dt" datetime="2026-11-22T08:00:00Z">',
    ],
)
def test_an_html_time_element_is_left_as_written(html: str) -> None:
    text = f"Use {html} in the page, at {MARKUP}"
    expected = f"Use {html} in the page, at {STAMP}"
    assert render_times(text, DiscordAudience()) == expected
    assert _streamed(text, DiscordAudience(), size=3) == expected
    # Left open at the very end too.
    assert render_times('see <time datetime="2026', DiscordAudience()) == (
        'see <time datetime="2026'
    )


_CODE_SAMPLE = (
    f"Write `{MARKUP}` or ``{MARKUP}``; we show {MARKUP}.\n"
    f"```md\n{MARKUP}\n```\n"
    f"  ~~~\nx `{MARKUP}\n~~~\n"
    f"it's ` {MARKUP}\n"
    f"{MARKUP} \\` {MARKUP} \\\\`{MARKUP}`\n"
    f"> ```\n> {MARKUP}\n> ```\n> {MARKUP}"
)


def test_code_split_at_every_position_streams_as_the_whole_text() -> None:
    """Backtick runs, fences and markups cut between two pieces at every position."""
    audience = DiscordAudience()
    whole = render_times(_CODE_SAMPLE, audience)
    assert whole.count(STAMP) == 4
    assert whole.count(MARKUP) == 7
    for cut in range(len(_CODE_SAMPLE) + 1):
        renderer = StreamingTimeRenderer(audience)
        streamed = renderer.feed(_CODE_SAMPLE[:cut]) + renderer.feed(_CODE_SAMPLE[cut:])
        assert streamed + renderer.flush() == whole, cut
    assert _streamed(_CODE_SAMPLE, audience, size=1) == whole


def test_code_holds_nothing_back() -> None:
    renderer = StreamingTimeRenderer(DiscordAudience())
    assert renderer.feed("```\n<time 2026-11-2") == "```\n<time 2026-11-2"
    assert renderer.feed("2T08:00:00Z>\n``") == "2T08:00:00Z>\n``"
    assert renderer.feed("`\nnow <time 2026-11-22T08:00:00Z") == "`\nnow "
    assert renderer.feed("> `<time ") == f"{STAMP} `<time "
    assert renderer.flush() == ""


def _streamed(text: str, audience: Audience, *, size: int) -> str:
    renderer = StreamingTimeRenderer(audience, reference=REF)
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return "".join(renderer.feed(piece) for piece in pieces) + renderer.flush()


_FRAGMENTS = st.sampled_from(
    [
        "`",
        "``",
        "```",
        "~~~",
        "```py",
        "  ",
        "\n```\n",
        '<time datetime="2026-11-22T08:00:00Z">',
        "<time 2026-11-22T08:00:00Z>",
        "<time 2026-11-21T23:30:00+09:00>",
        "<time 2026-11-01T05:30:00-04:00>",
        "<time 2026-11-22T09:00:00>",
        "<time 2026-11-22>",
        "<time 2027-01-02>",
        "<time 2026-02-30>",
        "<time 2026-11-22T08:00:00z>",
        "<time 2026-11-22T08:00:00 UTC>",
        "<time 2026-11-22 08:00Z>",
        " UTC>",
        "z>",
        "<time soon>",
        "<time ",
        "<time",
        "<ti",
        "<",
        ">",
        "\n",
        " ",
        "2026-11-22T08:00:00Z",
        "x" * 70,
        "ok",
    ]
)
_TEXTS = st.lists(_FRAGMENTS | st.text(max_size=8), max_size=12).map("".join)
_AUDIENCES: list[Audience] = [
    DiscordAudience(),
    DiscordAudience("de_DE"),
    DirectAudience("Asia/Kathmandu"),
    TRIO,
]


@given(
    text=_TEXTS,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10),
    audience=st.sampled_from(_AUDIENCES),
)
def test_streaming_equals_rendering_the_whole_text(
    text: str, cuts: list[int], audience: Audience
) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    renderer = StreamingTimeRenderer(audience, reference=REF)
    streamed = "".join(renderer.feed(piece) for piece in pieces) + renderer.flush()
    assert streamed == render_times(text, audience, reference=REF)


@given(text=_TEXTS)
def test_streaming_holds_back_a_bounded_tail(text: str) -> None:
    for end in range(len(text) + 1):
        renderer = StreamingTimeRenderer(DiscordAudience())
        renderer.feed(text[:end])
        # What flush returns is exactly what was held back.
        assert len(renderer.flush()) <= len("<time ") + 64
