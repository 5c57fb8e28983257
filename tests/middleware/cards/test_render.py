"""Rendering the three tier cards within their budgets (spec 001 §6).

Budgets here are derived from ``count_tokens`` of the expected card text, so each test
holds whichever counter is in use (the estimate, or an offline tokenizer).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from middleware.cards.content import CardBudget, CardItem, ResumeContent, SessionLine
from middleware.cards.render import RenderedCards, render_cards
from middleware.cards.resume import _cut
from middleware.cards.tokens import count_tokens
from middleware.continuity.model import MemoryFact, MemoryKind, RollupSegment
from middleware.continuity.summary import SummaryParts

NOW = datetime(2025, 11, 19, 9, 0, tzinfo=UTC)  # a Wednesday
WIDE = CardBudget(total=5000, resume=2000, recent_activity=2000, living_memory=1000)

EXAMPLE = ResumeContent(
    work_context_name="Henderson damages section",
    active_work_phase="drafting",
    session_history=(
        SessionLine(
            "Completed subsections 1-3 (price impact). Event study pending — waiting on "
            "Christensen data.",
            datetime(2025, 11, 17, 16, 0, tzinfo=UTC),
        ),
    ),
    open_questions=(CardItem("Need to address Dura more directly in intro."),),
    key_decisions=(
        CardItem("Focusing on price impact approach over corrective disclosure alone."),
    ),
    cross_conversation_updates=("DOC72 updated in another conversation (entity graph changes).",),
)
EXAMPLE_CARD = """<card type="continuity" tag="resume">
Henderson damages section — drafting phase.
Last session (Mon): Completed subsections 1-3 (price impact). Event study pending — waiting on Christensen data.
Open: Need to address Dura more directly in intro.
Decision: Focusing on price impact approach over corrective disclosure alone.
Since last session: DOC72 updated in another conversation (entity graph changes).
</card>"""  # noqa: E501 - the spec's example, verbatim


def render(
    resume: ResumeContent | None = None,
    activity: tuple[RollupSegment, ...] = (),
    memory: tuple[MemoryFact, ...] = (),
    *,
    budget: CardBudget = WIDE,
    current: str | None = "wc:here",
    zone: ZoneInfo | None = None,
) -> RenderedCards:
    return render_cards(
        resume, activity, memory, current_context_id=current, budget=budget, now=NOW, zone=zone
    )


def card(kind: str, tag: str, *lines: str) -> str:
    body = "\n".join(lines)
    return f'<card type="{kind}" tag="{tag}">\n{body}\n</card>'


def resume_card(*lines: str) -> str:
    return card("continuity", "resume", *lines)


def activity_card(*items: str) -> str:
    return card(
        "recent_activity", "recent_activity", "Recently (other work):", *(f"- {i}" for i in items)
    )


def memory_card(*lines: str) -> str:
    return card("living_memory", "living_memory", *lines)


def segment(
    context: str, text: str, active_days_ago: float, generated_days_ago: float = 0.5
) -> RollupSegment:
    return RollupSegment(
        work_context_id=context,
        text=text,
        last_activity_at=NOW - timedelta(days=active_days_ago),
        generated_at=NOW - timedelta(days=generated_days_ago),
    )


def fact(fact_id: int, kind: MemoryKind, text: str, days_ago: float = 10) -> MemoryFact:
    return MemoryFact(
        fact_id=fact_id,
        user_key="u1",
        kind=kind,
        text=text,
        source="user",
        created_at=NOW - timedelta(days=days_ago),
        confidence=0.95,
        last_mentioned_at=NOW - timedelta(days=days_ago),
    )


# --- Tier 1 ---------------------------------------------------------------------------


def test_the_spec_example_renders_as_in_the_spec_within_120_tokens() -> None:
    out = render(EXAMPLE, budget=CardBudget())
    assert out.cards == (EXAMPLE_CARD,)
    assert out.tokens == count_tokens(EXAMPLE_CARD) <= 120
    assert out.dropped == ()


@pytest.mark.parametrize(
    ("minutes", "label"),
    [
        (45, "Last session (Mon, 45 min): "),
        (1, "Last session (Mon, 1 min): "),
        (130, "Last session (Mon, 2 h 10 min): "),
        (120, "Last session (Mon, 2 h): "),
        (0, "Last session (Mon): "),  # under a minute: a one-message session
        (None, "Last session (Mon): "),  # a summary stored before durations were kept
    ],
)
def test_the_last_session_says_how_long_it_lasted(minutes: int | None, label: str) -> None:
    # Spec 004 §2: the last session's when *and duration*; the card said only when.
    (card,) = render(with_duration(EXAMPLE, minutes)).cards
    assert card.splitlines()[2].startswith(label + "Completed subsections 1-3"), card


def with_duration(content: ResumeContent, minutes: int | None) -> ResumeContent:
    last, *earlier = content.session_history
    return replace(content, session_history=(replace(last, duration_minutes=minutes), *earlier))


def test_a_card_over_its_cap_loses_the_duration_before_any_word_of_the_session() -> None:
    # Where the work stood says more than how long it took: the spec's card, which just
    # fits, keeps its whole session line once the duration goes.
    out = render(with_duration(EXAMPLE, 45), budget=CardBudget(resume=count_tokens(EXAMPLE_CARD)))
    assert out.cards == (EXAMPLE_CARD,)
    assert out.dropped == ("resume:shortened",)
    # Tighter still: its words are cut, the duration not put back.
    out = render(
        with_duration(EXAMPLE, 45), budget=CardBudget(resume=count_tokens(EXAMPLE_CARD) - 1)
    )
    session = out.cards[0].splitlines()[2]
    assert session.startswith("Last session (Mon): Completed") and session.endswith("…")


def test_a_session_is_dated_by_when_it_ended() -> None:
    # Captured after the idle wait, past midnight: the session was Monday's.
    ended = datetime(2025, 11, 17, 23, 50, tzinfo=UTC)
    line = SessionLine("late fix", ended + timedelta(minutes=20), ended_at=ended)
    content = ResumeContent("Brief", "review", session_history=(line,))
    assert "Last session (Mon): late fix" in render(content).cards[0]


def test_earlier_sessions_say_when_not_how_long() -> None:
    # Their lines are the first §6.1 cuts: a duration there would cost them their place.
    content = ResumeContent(
        "Brief",
        "review",
        session_history=(
            SessionLine("newest", NOW - timedelta(days=1), duration_minutes=95),
            SessionLine("one", NOW - timedelta(days=2), duration_minutes=30),
        ),
    )
    assert render(content).cards == (
        resume_card(
            "Brief — review phase.", "Last session (Tue, 1 h 35 min): newest", "Earlier (Mon): one"
        ),
    )


def test_the_session_line_leaves_out_the_items_the_card_shows_on_their_own() -> None:
    # A deterministic summary lists what was decided and left open; on a full card those
    # repeated the Open/Decision lines, and the 120-token cap cut the session line first.
    parts = SummaryParts(
        "plan the billing migration for the March invoices",
        9,
        decided=(
            "use the new invoice template for every customer",
            "run cron at 3 a.m. UTC",
        ),
        open=("figure out who signs off on the export format",),
        ended="next we write the CSV exporter tests",
    )
    content = ResumeContent(
        "Billing migration",
        "drafting",
        session_history=(SessionLine(parts.text(), NOW - timedelta(hours=20), parts),),
        open_questions=(CardItem("figure out who signs off on the export format", tentative=True),),
        key_decisions=(
            CardItem("use the new invoice template for every customer", tentative=True),
        ),
    )
    out = render(content, budget=CardBudget())
    assert out.dropped == ()
    (card,) = out.cards
    assert (
        "Last session (Tue): On “plan the billing migration for the March invoices” "
        "(9 messages). Decided: run cron at 3 a.m. UTC. Ended on “next we "
        "write the CSV exporter tests”.\n"
    ) in card
    assert card.count("export format") == card.count("every customer") == 1


def test_a_topic_that_is_an_item_the_card_shows_is_not_said_twice() -> None:
    # "On “Let's go with Postgres …”" beside "Decision: go with Postgres …" said it twice
    # and cost the session line its place under the 120-token cap.
    parts = SummaryParts(
        "Let's go with Postgres for the billing service.",
        4,
        ended="The migration is written.",
    )
    content = ResumeContent(
        "",
        "drafting",
        session_history=(SessionLine(parts.text(), NOW - timedelta(hours=20), parts),),
        key_decisions=(CardItem("go with Postgres for the billing service", tentative=True),),
    )
    (card,) = render(content, budget=CardBudget()).cards
    assert "Last session (Tue): 4 messages. Ended on “The migration is written.”\n" in card
    assert card.count("Postgres") == 1


def test_a_summary_stored_without_parts_is_shown_as_it_is() -> None:
    # An LLM summary, or a deterministic one stored before parts were kept.
    summary = "On “the March invoices” (2 messages). Decided: use the new template."
    content = ResumeContent(
        "Billing migration",
        "drafting",
        session_history=(SessionLine(summary, NOW - timedelta(hours=20)),),
        key_decisions=(CardItem("use the new template"),),
    )
    (card,) = render(content, budget=CardBudget()).cards
    assert f"Last session (Tue): {summary}\n" in card


def test_name_and_phase_alone_make_no_card() -> None:
    assert render(ResumeContent("Henderson", "drafting")).cards == ()
    assert (
        render(ResumeContent("Henderson", "drafting", open_questions=(CardItem("  "),))).cards == ()
    )


def test_unknown_phase_is_left_out_and_phase_names_read_as_words() -> None:
    content = ResumeContent("Henderson", "unknown", obligations=(CardItem("Send the draft"),))
    assert render(content).cards == (resume_card("Henderson.", "Still open: Send the draft"),)
    waiting = ResumeContent("Henderson", "waiting_for_external", obligations=(CardItem("x"),))
    assert render(waiting).cards[0].splitlines()[1] == "Henderson — waiting for external phase."


def test_an_item_naming_a_day_says_when_it_was_said() -> None:
    monday = datetime(2025, 11, 3, 23, 30, tzinfo=UTC)  # Tue 4 Nov in Tokyo
    content = ResumeContent(
        "Billing",
        "unknown",
        open_questions=(
            CardItem("send the report to Sam by Friday", said_at=monday),
            CardItem("check the cron jobs", said_at=monday),
        ),
        key_decisions=(CardItem("ship it next week", tentative=True, said_at=monday),),
        obligations=(CardItem("call the bank tomorrow", said_at=monday),),
    )
    lines = render(content, zone=ZoneInfo("Asia/Tokyo")).cards[0].splitlines()
    assert "Open: send the report to Sam by Friday (said Tue 4 Nov)" in lines
    assert "Open: check the cron jobs" in lines
    assert "Decision: ship it next week (said Tue 4 Nov; unconfirmed)" in lines
    assert "Still open: call the bank tomorrow (said Tue 4 Nov)" in lines


def test_an_item_put_off_since_shows_its_new_day_not_the_one_first_said() -> None:
    monday = datetime(2025, 11, 3, 9, 0, tzinfo=UTC)
    tuesday = monday + timedelta(days=1)
    content = ResumeContent(
        "Billing",
        "unknown",
        open_questions=(
            CardItem(
                "call the bank tomorrow about the letter",
                said_at=monday,
                put_off_at=tuesday,
                put_off_to=datetime(2025, 11, 10, tzinfo=UTC),
            ),
            CardItem("send the CV by Friday", said_at=monday, put_off_at=tuesday),
        ),
    )
    lines = render(content).cards[0].splitlines()
    assert "Open: call the bank about the letter (said Mon 3 Nov; put off to Mon 10 Nov)" in lines
    assert "Open: send the CV (said Mon 3 Nov; put off Tue 4 Nov)" in lines


def test_sessions_newest_first_at_most_three_dated_in_the_zone() -> None:
    content = ResumeContent(
        "Brief",
        "review",
        session_history=(
            SessionLine("oldest", NOW - timedelta(days=30)),
            SessionLine("newest", datetime(2025, 11, 18, 23, 30, tzinfo=UTC)),
            SessionLine("two", NOW - timedelta(days=20)),
            SessionLine("one", datetime(2025, 11, 3, 12, 0, tzinfo=UTC)),
        ),
    )
    # 23:30 UTC Tuesday is Wednesday morning in Tokyo; 3 Nov is over a week ago.
    assert render(content, zone=ZoneInfo("Asia/Tokyo")).cards == (
        resume_card(
            "Brief — review phase.",
            "Last session (Wed): newest",
            "Earlier (3 Nov): one",
            "Earlier (30 Oct): two",
        ),
    )
    assert "Last session (Tue): newest" in render(content).cards[0]  # UTC by default


def test_items_capped_tentative_marked_and_phase_hint_last() -> None:
    content = ResumeContent(
        "Brief",
        "drafting",
        open_questions=tuple(CardItem(f"q{i}", tentative=i == 0) for i in range(5)),
        key_decisions=(CardItem("d0"), CardItem("d1", tentative=True), CardItem("d2")),
        cross_conversation_updates=("news",),
        obligations=(CardItem("owed"),),
        phase_hint="The user is continuing drafting work.",
    )
    assert render(content).cards == (
        resume_card(
            "Brief — drafting phase.",
            "Open: q0 (unconfirmed)",
            "Open: q1",
            "Open: q2",
            "Decision: d0",
            "Decision: d1 (unconfirmed)",
            "Still open: owed",
            "Since last session: news",
            "The user is continuing drafting work.",
        ),
    )


def test_item_text_is_kept_to_one_line() -> None:
    content = ResumeContent("Brief", "drafting", open_questions=(CardItem("a\nb\n\n  c"),))
    assert "Open: a b c" in render(content).cards[0]


def test_resume_cap_trims_session_history_first() -> None:
    header = "Henderson damages section — drafting phase."
    rest = [line for line in EXAMPLE_CARD.splitlines()[2:-1] if not line.startswith("Last")]
    # A few tokens over: the session line is cut to fit, at a word, not dropped.
    cap = count_tokens(EXAMPLE_CARD) - 1
    out = render(EXAMPLE, budget=CardBudget(resume=cap))
    (card,) = out.cards
    session = card.splitlines()[2]
    assert session.startswith("Last session (Mon): Completed subsections 1-3")
    assert session.endswith("…") and not session.endswith(" …")
    assert card.splitlines()[3:-1] == rest
    assert count_tokens(card) <= cap
    assert out.dropped == ("resume:shortened",)
    # Too little room for a few of its words: the line goes.
    cap = count_tokens(resume_card(header, *rest)) + 3
    out = render(EXAMPLE, budget=CardBudget(resume=cap))
    assert out.cards == (resume_card(header, *rest),)
    assert out.dropped == ("resume:session_history",)


def test_a_cut_session_line_leaves_no_bracket_or_quote_open() -> None:
    parts = SummaryParts("We're moving house at the end of the month and looking for a job", 5)
    content = ResumeContent(
        "",
        "unknown",
        session_history=(SessionLine(parts.text(), NOW - timedelta(days=1), parts),),
        open_questions=(CardItem("book movers for the move"),),
    )
    full = render(content, budget=WIDE).cards[0]
    for over in range(1, 12):
        line = render(content, budget=CardBudget(resume=count_tokens(full) - over)).cards[0]
        session = line.splitlines()[2]
        if session.startswith("Last session"):
            assert session.count("(") == session.count(")"), session
            assert session.count("“") == session.count("”"), session


def test_a_session_line_cut_inside_its_quote_keeps_the_quoted_words() -> None:
    # Back from a fortnight's holiday, the card read "Last session (6 Nov): On…": the cut
    # went back to before the quote it fell in, leaving nothing of what the session was on.
    parts = SummaryParts("I'm off on holiday for two weeks from tomorrow.", 3)
    content = ResumeContent(
        "",
        "drafting",
        session_history=(SessionLine(parts.text(), NOW - timedelta(days=17), parts),),
        open_questions=(CardItem("load test the invoice endpoint"),),
    )
    full = render(content, budget=WIDE).cards[0]
    cuts = set()
    for over in range(1, 16):
        card = render(content, budget=CardBudget(resume=count_tokens(full) - over)).cards[0]
        session = card.splitlines()[2]
        if session.startswith("Last session"):
            said = session.split("): ", 1)[1]
            assert len(said.split()) >= 4 and said.count("“") == said.count("”"), session
            cuts.add(said)
    assert "On “I'm off on holiday for two weeks…”" in cuts, cuts


def test_earlier_sessions_go_before_the_last_one_is_cut() -> None:
    sessions = tuple(
        SessionLine(f"Packed the {room} into boxes and labelled them all.", NOW - timedelta(days=d))
        for d, room in ((1, "kitchen"), (2, "bedroom"), (3, "garage"))
    )
    content = ResumeContent("House move", "unknown", session_history=sessions)
    full = render(content, budget=WIDE).cards[0]
    out = render(content, budget=CardBudget(resume=count_tokens(full) - 2))
    lines = out.cards[0].splitlines()
    assert lines[2] == "Last session (Tue): Packed the kitchen into boxes and labelled them all."
    assert lines[3].startswith("Earlier (Mon): Packed the bedroom") and len(lines) == 5
    assert out.dropped == ("resume:session_history",)


words = st.sampled_from(
    "the movers book Acme CV send letter bank call landlord deposit boxes van Tuesday slot"
    " interview recruiter references notice Müller café — “quoted” 13:45 🙂 x2".split()
)
phrases = st.lists(words, min_size=1, max_size=30).map(" ".join)
session_parts = st.builds(
    SummaryParts,
    phrases,
    st.integers(1, 60),
    st.lists(phrases, max_size=2).map(tuple),
    st.lists(phrases, max_size=2).map(tuple),
    st.none() | phrases,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(session_parts, min_size=1, max_size=3),
    questions=st.lists(phrases, max_size=3),
    decisions=st.lists(phrases, max_size=2),
    days=st.lists(st.integers(0, 30), min_size=3, max_size=3),
    minutes=st.lists(st.none() | st.integers(0, 1500), min_size=3, max_size=3),
)
def test_session_lines_fit_the_120_token_cap_exactly(
    parts: list[SummaryParts],
    questions: list[str],
    decisions: list[str],
    days: list[int],
    minutes: list[int | None],
) -> None:
    """Spec 001 §6.1: the card is never over 120 tokens (counted as the cards count them,
    tags included), and a card only a few tokens over keeps its last session's line, cut."""
    content = ResumeContent(
        "House move",
        "unknown",
        session_history=tuple(
            SessionLine(p.text(), NOW - timedelta(days=d, hours=1), p, m)
            for p, d, m in zip(parts, days, minutes, strict=False)
        ),
        open_questions=tuple(CardItem(q, tentative=True) for q in questions),
        key_decisions=tuple(CardItem(d) for d in decisions),
    )
    (card,) = render(content, budget=CardBudget()).cards
    assert count_tokens(card) <= 120
    if _fits_with_four_words_of_the_last_session(content, cap=120):
        # Its earlier sessions dropped and its line cut to four words, the card fits: the
        # last session is shown, whole or cut. (The estimate prices a card as a whole, so
        # a fixed amount of room is no guide: one accented name makes every word dearer.)
        assert "\nLast session (" in card


def _fits_with_four_words_of_the_last_session(content: ResumeContent, cap: int) -> bool:
    (wide,) = render(content, budget=WIDE).cards
    lines = [line for line in wide.splitlines() if not line.startswith("Earlier (")]
    for index, line in enumerate(lines):
        if line.startswith("Last session ("):
            label, _, summary = line.partition("): ")
            words = summary.split()
            # The fewest words whose cut keeps four (a bracket the cut leaves open goes).
            kept = next(
                (
                    cut
                    for n in range(4, len(words) + 1)
                    if len((cut := _cut(words[:n])).split()) >= 4
                ),
                summary,
            )
            lines[index] = f"{label}): {kept}"
    return count_tokens("\n".join(lines)) <= cap


def test_resume_cap_trims_decisions_then_questions_then_updates() -> None:
    header = "Henderson damages section — drafting phase."
    update = "Since last session: DOC72 updated in another conversation (entity graph changes)."
    question = "Open: Need to address Dura more directly in intro."
    cap = count_tokens(resume_card(header, question, update))
    out = render(EXAMPLE, budget=CardBudget(resume=cap))
    assert out.cards == (resume_card(header, question, update),)
    assert out.dropped == ("resume:session_history", "resume:key_decisions")

    cap = count_tokens(resume_card(header, update))
    out = render(EXAMPLE, budget=CardBudget(resume=cap))
    assert out.cards == (resume_card(header, update),)
    assert out.dropped == (
        "resume:session_history",
        "resume:key_decisions",
        "resume:open_questions",
    )


def test_one_overlong_line_is_shortened_with_an_ellipsis() -> None:
    long = " ".join(["the event study still waits on the data"] * 30)
    content = ResumeContent("Brief", "drafting", open_questions=(CardItem(long),))
    out = render(content, budget=CardBudget(resume=60))
    (text,) = out.cards
    assert count_tokens(text) <= 60
    line = text.splitlines()[2]
    assert line.startswith("Open: the event study") and line.endswith("…")
    assert out.dropped == ("resume:shortened",)


# --- Tier 2 ---------------------------------------------------------------------------


def test_activity_excludes_the_current_context_newest_first() -> None:
    activity = (
        segment("wc:a", "Smith v. Acme: deposition prep", active_days_ago=5),
        segment("wc:here", "the current matter", active_days_ago=0.1),
        segment("wc:b", "DOC24 budget waterfall finalized", active_days_ago=1),
    )
    out = render(activity=activity)
    assert out.cards == (
        activity_card("DOC24 budget waterfall finalized", "Smith v. Acme: deposition prep"),
    )
    assert out.dropped == ()


def test_activity_of_only_the_current_context_makes_no_card() -> None:
    assert render(activity=(segment("wc:here", "current", 1),)).cards == ()


def test_stale_rollup_is_skipped() -> None:
    stale = (segment("wc:a", "old news", 10, generated_days_ago=8),)
    assert render(activity=stale).cards == ()
    # Freshness is judged on the segments that would be shown.
    mixed = (*stale, segment("wc:here", "current", 0, generated_days_ago=0))
    assert render(activity=mixed).cards == ()
    fresh = (segment("wc:a", "recent news", 10, generated_days_ago=6.9),)
    assert render(activity=fresh).cards == (activity_card("recent news"),)


def test_activity_cap_drops_the_oldest_segments_first() -> None:
    activity = tuple(segment(f"wc:{i}", f"matter {i} work", active_days_ago=i) for i in range(4))
    cap = count_tokens(activity_card("matter 0 work", "matter 1 work"))
    out = render(activity=activity, budget=CardBudget(recent_activity=cap))
    assert out.cards == (activity_card("matter 0 work", "matter 1 work"),)
    assert out.dropped == ("recent_activity:segments",)


# --- Tier 3 ---------------------------------------------------------------------------

MEMORY = (
    fact(1, "fact", "Securities litigator.", days_ago=30),
    fact(2, "preference", "Prefers direct assessment, no hedging.", days_ago=20),
    fact(3, "name", "Will Brody.", days_ago=40),
    fact(4, "correction", "Principal architect of ELNOR.", days_ago=5),
    fact(5, "directive", "Cite section numbers when reviewing.", days_ago=2),
)


def test_memory_name_first_then_instructions_then_facts_newest_first() -> None:
    assert render(memory=MEMORY).cards == (
        memory_card(
            "Will Brody.",
            "Cite section numbers when reviewing.",
            "Prefers direct assessment, no hedging.",
            "Principal architect of ELNOR.",
            "Securities litigator.",
        ),
    )


def test_memory_cap_keeps_the_newest_within_each_rank() -> None:
    expected = memory_card(
        "Will Brody.",
        "Cite section numbers when reviewing.",
        "Prefers direct assessment, no hedging.",
        "Principal architect of ELNOR.",
    )
    out = render(memory=MEMORY, budget=CardBudget(living_memory=count_tokens(expected)))
    assert out.cards == (expected,)
    assert out.dropped == ("living_memory:facts",)


def test_a_fact_memory_is_no_longer_sure_of_says_when_it_was_said() -> None:
    # Unmentioned for eight months: 0.95 - 8 x 0.05 = 0.55, less sure than an inference.
    stale = fact(7, "fact", "Lives in Berlin", days_ago=262)
    fresh = fact(8, "fact", "Works at Acme", days_ago=300)
    fresh = replace(fresh, last_mentioned_at=NOW - timedelta(days=3))
    name = fact(9, "name", "Name: Ana", days_ago=400)  # a name does not age
    assert render(memory=(stale, fresh, name)).cards == (
        memory_card(
            "Name: Ana",
            # The sure before the doubtful: trimming drops the doubtful first.
            "Works at Acme",
            "Lives in Berlin (said Mar 2025, may be out of date)",
        ),
    )
    # Said in the user's own month: 1 Mar 2025 in Auckland is still Feb in UTC.
    feb = replace(stale, last_mentioned_at=datetime(2025, 2, 28, 12, 0, tzinfo=UTC))
    auckland = render(memory=(feb,), zone=ZoneInfo("Pacific/Auckland")).cards
    assert auckland == (memory_card("Lives in Berlin (said Mar 2025, may be out of date)"),)


@pytest.mark.parametrize(
    ("text", "days_ago", "shown"),
    [
        # Said Monday 17 Nov; NOW is Wednesday 19 Nov.
        ("Is in Lisbon this week", 2, "Is in Lisbon this week (said Mon 17 Nov)"),
        ("Is travelling next week", 2, "Is travelling next week (said Mon 17 Nov)"),
        ("Has exams this month", 18, "Has exams this month (said Sat 1 Nov)"),
        (
            "Has a dentist appointment tomorrow",
            1,
            "Has a dentist appointment tomorrow (said Tue 18 Nov)",
        ),
        # Over: the week, the day and the month it was said of.
        ("Is in Lisbon this week", 21, None),
        ("Is travelling this weekend", 3, None),
        ("Has a dentist appointment tomorrow", 2, None),
        ("Is off today", 1, None),
        ("Has exams this month", 19, None),
    ],
)
def test_a_fact_said_of_a_time_says_when_and_leaves_once_that_time_is_over(
    text: str, days_ago: float, shown: str | None
) -> None:
    dated = fact(7, "fact", text, days_ago=days_ago)
    name = fact(9, "name", "Name: Ana", days_ago=400)
    expected = ("Name: Ana",) if shown is None else ("Name: Ana", shown)
    assert render(memory=(dated, name)).cards == (memory_card(*expected),)


# --- Total budget (§6.4) --------------------------------------------------------------

ACTIVITY = (segment("wc:a", "Smith v. Acme appeal: motion practice", 1),)


def test_total_drops_tier_2_first() -> None:
    memory_text = render(memory=MEMORY).cards[0]
    total = count_tokens(EXAMPLE_CARD) + count_tokens(memory_text)
    out = render(EXAMPLE, ACTIVITY, MEMORY, budget=CardBudget(total=total, living_memory=200))
    assert out.cards == (EXAMPLE_CARD, memory_text)
    assert "recent_activity" in out.dropped
    assert not any(d.startswith("resume") for d in out.dropped)
    assert out.tokens <= total


def test_total_then_trims_tier_1() -> None:
    memory_text = render(memory=MEMORY).cards[0]
    trimmed = render(EXAMPLE, budget=CardBudget(resume=count_tokens(EXAMPLE_CARD) - 1))
    total = trimmed.tokens + count_tokens(memory_text)
    out = render(EXAMPLE, ACTIVITY, MEMORY, budget=CardBudget(total=total, living_memory=200))
    assert out.cards == (*trimmed.cards, memory_text)
    assert "resume:shortened" in out.dropped and "recent_activity" in out.dropped


def test_tier_3_only_with_a_warning_when_tier_1_cannot_fit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    memory_text = render(memory=MEMORY).cards[0]
    total = count_tokens(memory_text) + 5
    with caplog.at_level(logging.WARNING, logger="middleware.cards.render"):
        out = render(EXAMPLE, ACTIVITY, MEMORY, budget=CardBudget(total=total, living_memory=200))
    assert out.cards == (memory_text,)
    assert "resume" in out.dropped
    assert "cannot hold the resume card" in caplog.text


def test_tier_3_is_never_dropped_even_when_it_fills_the_total() -> None:
    budget = CardBudget(total=40, resume=40, recent_activity=40, living_memory=40)
    out = render(EXAMPLE, ACTIVITY, MEMORY, budget=budget)
    assert len(out.cards) >= 1 and out.cards[-1].startswith('<card type="living_memory"')
    assert out.tokens <= 40


def test_nothing_to_show_renders_nothing() -> None:
    assert render() == RenderedCards(cards=(), tokens=0, dropped=())


# --- Property: budgets hold for any content -------------------------------------------

texts = st.text(min_size=0, max_size=300) | st.text(
    alphabet=st.characters(codec="utf-8"), min_size=0, max_size=40
).map(lambda s: s * 20)
instants = st.datetimes(
    min_value=datetime(2025, 1, 1), max_value=datetime(2025, 12, 1), timezones=st.just(UTC)
)
items = st.builds(CardItem, texts, st.booleans(), st.none() | instants)
resumes = st.none() | st.builds(
    ResumeContent,
    texts,
    st.sampled_from(["drafting", "unknown", "waiting_for_external", ""]) | texts,
    st.lists(
        st.builds(SessionLine, texts, instants, duration_minutes=st.none() | st.integers(0, 3000)),
        max_size=5,
    ).map(tuple),
    st.lists(items, max_size=5).map(tuple),
    st.lists(items, max_size=4).map(tuple),
    st.lists(texts, max_size=3).map(tuple),
    st.lists(items, max_size=3).map(tuple),
    st.none() | texts,
)
segments = st.builds(
    RollupSegment, st.sampled_from(["wc:here", "wc:a", "wc:b", "wc:c"]), texts, instants, instants
)
facts = st.builds(
    MemoryFact,
    st.integers(1, 1000),
    st.just("u1"),
    st.sampled_from(["name", "fact", "preference", "directive", "correction"]),
    texts,
    st.sampled_from(["user", "promoted", "admin"]),
    instants,
    confidence=st.sampled_from([0.2, 0.55, 0.6, 0.95, 1.0]),
    last_mentioned_at=instants,
)


@st.composite
def budgets(draw: st.DrawFn) -> CardBudget:
    # The living memory card's tags and an ellipsis cost at most ~25 tokens estimated.
    living = draw(st.integers(30, 300))
    return CardBudget(
        total=draw(st.integers(living, 1200)),
        resume=draw(st.integers(20, 400)),
        recent_activity=draw(st.integers(20, 400)),
        living_memory=living,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    resume=resumes,
    activity=st.lists(segments, max_size=6),
    memory=st.lists(facts, max_size=8),
    budget=budgets(),
    current=st.sampled_from([None, "wc:here", "wc:a"]),
)
def test_budgets_hold_for_any_content(
    resume: ResumeContent | None,
    activity: list[RollupSegment],
    memory: list[MemoryFact],
    budget: CardBudget,
    current: str | None,
) -> None:
    out = render_cards(resume, activity, memory, current_context_id=current, budget=budget, now=NOW)
    assert out.tokens == sum(count_tokens(c) for c in out.cards) <= budget.total
    caps = {
        "continuity": budget.resume,
        "recent_activity": budget.recent_activity,
        "living_memory": budget.living_memory,
    }
    for text in out.cards:
        kind = text.split('"', 2)[1]
        assert count_tokens(text) <= caps[kind]
    has_memory = any(f.text.split() for f in memory)
    assert any(c.startswith('<card type="living_memory"') for c in out.cards) == has_memory


def test_linked_accounts_facts_that_conflict_show_the_one_said_last() -> None:
    # Two accounts, linked later, each told the relay a home and a name of their own.
    paris = replace(fact(1, "fact", "Lives in Paris", days_ago=3), user_key="telegram:7")
    tokyo = replace(fact(2, "fact", "Lives in Tokyo", days_ago=1), user_key="discord:701")
    mia = replace(fact(3, "name", "Name: Mia", days_ago=5), user_key="telegram:7")
    mimi = replace(fact(4, "name", "Name: Mimi", days_ago=2), user_key="discord:701")
    violin = replace(fact(5, "fact", "Plays the violin", days_ago=4), user_key="telegram:7")
    assert render(memory=(paris, tokyo, mia, mimi, violin)).cards == (
        memory_card("Name: Mimi", "Lives in Tokyo", "Plays the violin"),
    )


def test_memory_cap_keeps_an_older_correction_before_newer_facts() -> None:
    """Spec 003 §5.3/§6/§8: a correction has its slot above long-term memory and a 1.5x
    retrieval boost, so the card's trimming reaches it after plain facts, however old."""
    correction = fact(1, "correction", "Lives in Lisbon", days_ago=90)
    newer = (
        fact(2, "fact", "Works at Acme", days_ago=3),
        fact(3, "fact", "Has a dog called Rex", days_ago=1),
    )
    expected = memory_card("Lives in Lisbon", "Has a dog called Rex")
    out = render(
        memory=(correction, *newer), budget=CardBudget(living_memory=count_tokens(expected))
    )
    assert out.cards == (expected,)
    assert out.dropped == ("living_memory:facts",)
