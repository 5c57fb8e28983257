"""What the user writes: directives, temporal actions, status updates, durations, scheduling.

Every detector has cases that must fire and cases that must not; precision matters more
than recall, so the negative lists are as important as the positive ones.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.actions.detect import (
    PATTERNS,
    SCHEDULING_CONFIDENT,
    DetectedAction,
    DurationReport,
    StatusUpdate,
    _sentences,
    detect_duration_report,
    detect_status_update,
    detect_temporal_action,
    is_time_or_scheduling,
    key_words,
    label_for_clocked,
    scheduling_confidence,
)
from middleware.actions.directives import (
    ClockIt,
    Directive,
    InvalidDirective,
    SetAuto,
    SetKind,
    SetMode,
    is_directive_only,
    parse_directive,
)
from middleware.actions.language import LanguagePatterns

# --- directives -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("clock it: I'm going to eat dinner", ClockIt("I'm going to eat dinner")),
        ("clock: paid invoice", ClockIt("paid invoice")),
        ("Clock It:   paid invoice  ", ClockIt("paid invoice")),
        ("heading to the gym, clock it", ClockIt("heading to the gym")),
        ("heading to the gym — clock it!", ClockIt("heading to the gym")),
        ("heading to the gym clock it.", ClockIt("heading to the gym")),
        ("clock it for the group: standup moved to 3pm", ClockIt("standup moved to 3pm", True)),
        ("clock group: standup moved to 3pm", ClockIt("standup moved to 3pm", group=True)),
        ("standup moved to 3pm, clock it for the group", ClockIt("standup moved to 3pm", True)),
        ("clock: kind project", SetKind("project")),
        ("CLOCK: Kind Scheduling", SetKind("scheduling")),
        ("clock: kind operations.", SetKind("operations")),
        ("clock: mode normal", SetMode("normal")),
        ("clock: mode light", SetMode("light")),
        ("clock: mode off", SetMode("off")),
        ("clock: off", SetMode("off")),
        ("clock: on", SetMode(None)),
        ("clock: auto off", SetAuto(False)),
        ("clock: auto on", SetAuto(True)),
        # "kind" followed by more words is a label, not a setting
        ("clock: kind of tired today", ClockIt("kind of tired today")),
    ],
)
def test_parse_directive(text: str, expected: Directive) -> None:
    assert parse_directive(text) == expected


@pytest.mark.parametrize(
    ("text", "must_mention"),
    [
        (
            "clock: kind banana",
            ["'banana' is not a thread kind", "project, conversation", "`clock: kind project`"],
        ),
        ("clock: kind", ["needs a thread kind", "scheduling"]),
        ("clock: mode loud", ["'loud' is not a clock mode", "off, light, normal", "`clock: mode"]),
        ("clock: auto maybe", ["'maybe' is not an auto setting", "`clock: auto off`"]),
        ("clock it:", ["Nothing to clock", "`clock it: heading to the gym`"]),
        ("clock:", ["Nothing to clock"]),
        ("clock it", ["Nothing to clock"]),
    ],
)
def test_invalid_directive_says_what_to_write(text: str, must_mention: list[str]) -> None:
    directive = parse_directive(text)
    assert isinstance(directive, InvalidDirective)
    for part in must_mention:
        assert part in directive.problem


@pytest.mark.parametrize(
    "text",
    [
        "what does clock it do?",
        "please don't clock it",
        "my clock: broken",
        "the clock it says 5",
        "my clock is wrong",
        "I'll clock in at 9",
        "",
    ],
)
def test_no_directive(text: str) -> None:
    assert parse_directive(text) is None


@pytest.mark.parametrize(
    ("text", "only"),
    [
        ("clock: kind project", True),
        ("clock: off", True),
        ("clock: auto on!", True),
        ("clock: kind banana", True),
        ("clock it: heading to the gym", True),
        ("heading to the gym, clock it", True),
        ("clock: kind project\nLet's plan the launch for next week.", False),
        ("clock it: heading to the gym\nalso, what should I train today?", False),
        ("clock: kind project. Let's plan the launch", False),
    ],
)
def test_is_directive_only(text: str, only: bool) -> None:
    directive = parse_directive(text)
    assert directive is not None
    assert is_directive_only(text, directive) is only


def test_is_directive_only_is_false_for_another_directive() -> None:
    assert not is_directive_only("clock: kind project", SetKind("operations"))
    assert not is_directive_only("hello there", SetMode("off"))


# --- temporal actions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "label", "activity", "status"),
    [
        ("I'm heading to the gym now", "Go to the gym", "gym", "in_progress"),
        ("going to sleep, night!", "Sleep", "sleep", "in_progress"),
        ("about to eat dinner", "Eat dinner", "meal:dinner", "in_progress"),
        ("I'm going to chug 2 gallons of milk", "Chug 2 gallons of milk", "meal", "planned"),
        ("brb", "Be right back", "brb", "in_progress"),
        ("be right back", "Be right back", "brb", "in_progress"),
        ("ok brb", "Be right back", "brb", "in_progress"),
        ("back in 10", "Be right back", "brb", "in_progress"),
        ("after lunch I will call the bank", "Call the bank (after lunch)", "call", "planned"),
        ("After lunch, I'll call the bank.", "Call the bank (after lunch)", "call", "planned"),
        ("I'll call the bank after I get home", "Call the bank (after getting home)", "call",
         "planned"),
        ("off to bed", "Sleep", "sleep", "in_progress"),
        ("I'm going to sleep early tonight", "Sleep", "sleep", "planned"),
        ("Going to bed now. Good night everyone", "Sleep", "sleep", "in_progress"),
        ("headed to the office", "Go to the office", None, "in_progress"),
        ("heading to the gym now, see you tomorrow", "Go to the gym", "gym", "in_progress"),
        ("we're heading out for drinks tonight", "Go for drinks", "night_out", "planned"),
        ("ok so heading out now", "Head out", None, "in_progress"),
        ("omw home", "Head home", "commute", "in_progress"),
        ("on my way to the airport", "Go to the airport", "flight", "in_progress"),
        ("leaving for work", "Leave for work", None, "in_progress"),
        ("gonna hit the gym later", "Hit the gym", "gym", "planned"),
        ("I'm going to the gym later", "Go to the gym", "gym", "planned"),
        ("I'm going for a run", "Go for a run", "run", "in_progress"),
        ("I'm going to eat dinner at 8", "Eat dinner", "meal:dinner", "planned"),
        ("about to call my mom", "Call mom", "call", "in_progress"),
        ("I'm going to walk my dog soon", "Walk the dog", "walk", "planned"),
        ("time for lunch", "Time for lunch", "meal:lunch", "in_progress"),
        ("I'll review the PR later", "Review the PR", None, "planned"),
        ("I’m about to take a shower", "Take a shower", "shower", "in_progress"),
        ("I'm heading to the gym, wanna come?", "Go to the gym", "gym", "in_progress"),
        ("@chronobot heading to the gym", "Go to the gym", "gym", "in_progress"),
    ],
)  # fmt: skip
def test_detect_temporal_action(text: str, label: str, activity: str | None, status: str) -> None:
    assert detect_temporal_action(text) == DetectedAction(label, activity, status, True)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        # not first person / reported speech
        "the bus is about to be late",
        "the meeting is about to start",
        "he's heading to the gym",
        "She said she's heading to the gym",
        "my brother is going to the gym later",
        # questions
        "are you going to sleep?",
        "Are you heading out",
        "going to the gym later?",
        "so, are you going to sleep?",
        "heading out? not sure",
        # negations and hedges
        "I'm not going to the gym",
        "I'm going to skip the gym",
        "maybe I'll go to the gym later",
        "if it rains I'm going to the gym",
        "we should go to the gym",
        "I hope I can sleep tonight",
        # idioms and narration
        "I'm about to lose my mind",
        "I'm going to sleep on it",
        "I'm going to call it a night",
        "I'm going to think about it",
        "I'm going to need more info",
        "I'll do it later",
        "I'll get back to you later",
        "I'm going to run the tests now",
        "gotta go",
        "It's time for a change",
        # past, or on no day at all
        "I went to the gym",
        "I'll call the bank someday",
        "I'm going to the gym next time",
        "eventually I'll clean the garage",
        # nothing temporal
        "what's the capital of France",
        "",
    ],
)
def test_detect_temporal_action_does_not_fire(text: str) -> None:
    assert detect_temporal_action(text) is None


@pytest.mark.parametrize(
    ("text", "label", "activity"),
    [
        ("I'll call the bank tomorrow at 9", "Call the bank tomorrow at 9", "call"),
        ("I'm going to the gym tomorrow", "Go to the gym tomorrow", "gym"),
        ("gonna call the bank at 9 tomorrow", "Call the bank at 9 tomorrow", "call"),
        ("I'll finish the report on Friday", "Finish the report on Friday", None),
        ("after lunch tomorrow I'll call the bank", "Call the bank (after lunch tomorrow)", "call"),
        # An obligation with a day is a plan too.
        ("I need to book the dentist tomorrow", "Book the dentist tomorrow", None),
        ("I have to call mom on Friday", "Call mom on Friday", "call"),
        ("I must renew my passport next week", "Renew the passport next week", None),
        ("I should call the bank tomorrow", "Call the bank tomorrow", "call"),
        ("I really need to finish the report by Friday", "Finish the report by Friday", None),
    ],
)
def test_a_plan_for_a_later_day_is_dated_and_keeps_its_time_words(
    text: str, label: str, activity: str | None
) -> None:
    assert detect_temporal_action(text) == DetectedAction(
        label, activity, "planned", temporal=True, dated=True
    )


@pytest.mark.parametrize(
    "text",
    [
        "I need to sleep",
        "I have to go",
        "I should probably call the bank tomorrow",
        "I should call the bank",
        "Do I need to book the dentist tomorrow?",
        "I must say, tomorrow looks good",
    ],
)
def test_an_obligation_with_no_day_or_a_hedge_is_no_plan(text: str) -> None:
    assert detect_temporal_action(text) is None


def test_labels_are_short() -> None:
    text = "I'm about to " + "walk around the really very extremely big park " * 4
    detected = detect_temporal_action(text)
    assert detected is not None
    assert len(detected.label) <= 60
    assert detected.label.endswith("…")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("paid invoice", DetectedAction("Paid invoice", None, "planned", False)),
        ("I paid my rent", DetectedAction("Paid the rent", None, "planned", False)),
        ("called the bank", DetectedAction("Called the bank", None, "planned", False)),
        ("standup moved to 3pm", DetectedAction("Standup moved to 3pm", None, "planned", False)),
        ("I'm going to eat dinner", DetectedAction("Eat dinner", "meal:dinner", "planned", True)),
        ("heading to the gym", DetectedAction("Go to the gym", "gym", "in_progress", True)),
        ("gym", DetectedAction("Gym", "gym", "in_progress", True, may_be_later=True)),
        # When, not what: "now" and a trailing "due" leave the label.
        ("gym now", DetectedAction("Gym", "gym", "in_progress", True)),
        ("nap now", DetectedAction("Nap", "nap", "in_progress", True)),
        ("nap right now", DetectedAction("Nap", "nap", "in_progress", True)),
        ("report due", DetectedAction("Report", None, "planned", False)),
        (
            "gym with Sam, leg day",
            DetectedAction("Gym with Sam, leg day", "gym", "in_progress", True, may_be_later=True),
        ),
        (
            # The day is the caller's to read: then it is a plan (see new_action).
            "standup notes due tomorrow",
            DetectedAction(
                "Standup notes due tomorrow", "meeting", "in_progress", True, may_be_later=True
            ),
        ),
        (
            "the bank details are in the doc",
            DetectedAction("The bank details are in the doc", None, "planned", False),
        ),
        ("eat dinner at 8", DetectedAction("Eat dinner at 8", "meal:dinner", "planned", True)),
        ("   ", DetectedAction("Clocked item", None, "planned", False)),
    ],
)
def test_label_for_clocked(text: str, expected: DetectedAction) -> None:
    assert label_for_clocked(text) == expected


# --- status updates -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "status", "activity"),
    [
        ("done", "done", None),
        ("Done!", "done", None),
        ("all done", "done", None),
        ("I'm back", "done", None),
        ("back!", "done", None),
        ("ok I'm back, so about that bug", "done", None),
        ("I'm back, what did I miss?", "done", None),
        ("made it", "done", None),
        ("made it home", "done", None),
        ("I made it to the gym", "done", "gym"),
        ("finished", "done", None),
        ("just finished my run", "done", "run"),
        ("just got back from the gym", "done", "gym"),
        ("I'm back from the gym", "done", "gym"),
        ("ok I'm done with dinner", "done", "meal:dinner"),
        ("woke up", "done", "sleep"),
        ("just woke up", "done", "sleep"),
        ("I did my workout", "done", "gym"),
        ("didn't go", "canceled", None),
        ("I didn't go to the gym today", "canceled", "gym"),
        ("never went", "canceled", None),
        ("didn't make it", "canceled", None),
        ("cancel that", "canceled", None),
        ("not going anymore", "canceled", None),
        ("I'm not going to the gym anymore", "canceled", "gym"),
        ("changed my mind", "canceled", None),
        ("skipped the gym", "canceled", "gym"),
        ("I'm skipping it", "canceled", None),
        # A change of plan often opens with a word of its own.
        ("actually skipping the gym", "canceled", "gym"),
        ("nah not going to the gym today", "canceled", "gym"),
        ("sorry, changed my mind", "canceled", None),
        ("actually I'm back", "done", None),
    ],
)
def test_detect_status_update(text: str, status: str, activity: str | None) -> None:
    assert detect_status_update(text) == StatusUpdate(status, activity)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "is it done yet?",
        "are you back?",
        "back?",
        "ok, is it done?",
        "back to the question",
        "right back at you",
        "well done!",
        "he's back",
        "good morning",
        "I'm not going to lie, it was good",
        # a completion that names something, in a sentence saying it is not over
        "is the bank call done?",
        "not done with the report yet",
        "I'm not done with the report",
        "the report is almost done",
        "the report isn't done",
        "called the bank but no answer",
        "tried calling the bank",
        "I called the bank, will call back later",
        "it's done",
        "the meeting didn't go well",
        "I'm going to the gym",
        "",
    ],
)
def test_detect_status_update_does_not_fire(text: str) -> None:
    assert detect_status_update(text) is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("ok the bank call is done", {"bank", "call"}),
        ("called the bank, all sorted", {"bank", "call"}),
        ("done with the report", {"report"}),
        ("I finished the report", {"report"}),
        ("the taxes are finally done", {"tax"}),
        ("dinner's done, so full", {"dinner"}),
        ("I've sent the invoice", {"send", "invoic"}),
        ("just called my mom", {"call", "mom"}),
        ("back from vacation", {"vacation"}),
        ("done with this conversation", {"conversation"}),
    ],
)
def test_a_completion_naming_something_carries_its_key_words(text: str, named: set[str]) -> None:
    # Which action it closes, if any, is decided against the labels (close_latest).
    assert detect_status_update(text) == StatusUpdate("done", None, frozenset(named))


def test_key_words_of_a_label_and_of_a_completion_meet() -> None:
    assert key_words("Call the bank") == key_words("called the bank") == {"call", "bank"}
    assert key_words("Send the invoices") == key_words("sent the invoice")
    assert key_words("the, a my") == frozenset()


# --- duration reports -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "activity", "minutes"),
    [
        ("gym took 3 hours", "gym", 180),
        ("the gym took me 2.5 hours", "gym", 150),
        ("Ugh, the gym took me an hour and a half", "gym", 90),
        ("dinner took 90 minutes", "meal:dinner", 90),
        ("lunch took half an hour", "meal:lunch", 30),
        ("slept 9 hours", "sleep", 540),
        ("I slept for about 7.5 hours", "sleep", 450),
        ("napped for 20 minutes", "nap", 20),
        ("the meeting ran for 2h", "meeting", 120),
        ("the meeting ran 1h30m", "meeting", 90),
        ("my run took 45 min", "run", 45),
        ("spent 2 hours at the gym", "gym", 120),
    ],
)
def test_detect_duration_report(text: str, activity: str, minutes: int) -> None:
    assert detect_duration_report(text) == DurationReport(activity, minutes)


@pytest.mark.parametrize(
    "text",
    [
        "it took 3 hours to fix the bug",
        "the build took 20 minutes",
        "did the gym take 3 hours?",
        "the gym took 3 hours?",
        "gym took 30 hours",
        "I ran 5 miles",
        "the gym is 3 hours away",
        "",
    ],
)
def test_detect_duration_report_does_not_fire(text: str) -> None:
    assert detect_duration_report(text) is None


# --- scheduling -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "can we schedule a call for tomorrow?",
        "let's reschedule",
        "remind me to call mom at 5",
        "add it to my calendar",
        "book a table for 4 at 8pm",
        "I have a dentist appointment at 3",
        "move the meeting to Friday",
    ],
)
def test_explicit_scheduling_is_confident(text: str) -> None:
    assert scheduling_confidence(text) >= SCHEDULING_CONFIDENT
    assert is_time_or_scheduling(text)


@pytest.mark.parametrize(
    "text",
    [
        "what time works for you?",
        "when can we talk?",
        "the deadline is friday",
        "meeting at 3pm",
        "are you free on Tuesday?",
        "what's your availability next week",
    ],
)
def test_soft_scheduling_is_relevant_but_not_confident(text: str) -> None:
    assert 0.5 <= scheduling_confidence(text) < SCHEDULING_CONFIDENT
    assert is_time_or_scheduling(text)


@pytest.mark.parametrize(
    "text", ["I'm reading a book", "I love this song", "time flies", "the kind of day it was"]
)
def test_not_scheduling(text: str) -> None:
    assert scheduling_confidence(text) < 0.5
    assert not is_time_or_scheduling(text)


def test_patterns_are_keyed_by_language() -> None:
    assert "en" in PATTERNS
    assert all(isinstance(p, LanguagePatterns) for p in PATTERNS.values())


# --- every detector reads one shared analysis of the text --------------------------------

_DETECTOR_PIECES = (
    "ok so heading to the gym now , back in 10 . I'm back ! didn't go . the gym took me "
    "2 hours . slept 9 hours ? maybe I'll go running later . can we schedule a call "
    "tomorrow at 3pm ? remind me she said she's heading out , wanna come ? gonna cook "
    "dinner tonight — brb \n about to sleep finished it . I’m off to work"
).split(" ")


def _reference_sentences(text: str, questions: bool) -> list[str]:
    """The sentence split as it was before it was shared between the detectors."""
    text = text[:4000].replace("’", "'")
    found = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip()
        if sentence and (questions or not sentence.endswith("?")):
            if not PATTERNS["en"].reject.search(sentence):
                found.append(sentence)
    return found


_DETECTOR_TEXTS = st.one_of(
    st.lists(st.sampled_from(_DETECTOR_PIECES), min_size=1, max_size=12).map(" ".join),
    st.text(max_size=60),
)


@settings(max_examples=300, deadline=None)
@given(text=_DETECTOR_TEXTS, questions=st.booleans())
def test_the_shared_sentences_are_the_split_of_the_text(text: str, questions: bool) -> None:
    for _ in range(2):  # computed, then from the cache
        assert list(_sentences(text, "en", questions)) == _reference_sentences(text, questions)


def test_a_detection_follows_its_text() -> None:
    assert detect_status_update("I'm back") == StatusUpdate("done", None)
    assert detect_status_update("I'm back?") is None
    assert detect_status_update("I'm back") == StatusUpdate("done", None)


# --- the present progressive as the near future -------------------------------------------


@pytest.mark.parametrize(
    ("text", "label", "activity", "status"),
    [
        ("heading into a meeting for an hour", "Go into a meeting", "meeting", "in_progress"),
        ("I'm flying to Tokyo on Friday", "Fly to Tokyo on Friday", "flight", "planned"),
        ("grabbing lunch", "Grab lunch", "meal:lunch", "in_progress"),
        ("taking the dog out", "Take the dog out", "walk", "in_progress"),
        ("I'm taking the dog out", "Take the dog out", "walk", "in_progress"),
        ("hopping in the shower", "Hop in the shower", "shower", "in_progress"),
        ("I'm making dinner", "Make dinner", "cooking", "in_progress"),
        ("I'm driving to work", "Drive to work", "commute", "in_progress"),
        ("popping out to the shops", "Pop out to the shops", None, "in_progress"),
        ("running to the store", "Run to the store", "errand", "in_progress"),
        ("I'm meeting Sam at 5", "Meet Sam", None, "planned"),
        ("we're seeing the dentist tomorrow", "See the dentist tomorrow", "appointment", "planned"),
        ("off to grab lunch", "Grab lunch", "meal:lunch", "in_progress"),
        ("heading out to see my mom", "See mom", None, "in_progress"),
        # A moment away and what it is for: what it is for is the action.
        ("brb, grabbing lunch", "Grab lunch", "meal:lunch", "in_progress"),
        ("brb", "Be right back", "brb", "in_progress"),
    ],
)
def test_the_present_progressive_announces_an_action(
    text: str, label: str, activity: str | None, status: str
) -> None:
    found = detect_temporal_action(text)
    assert found is not None, text
    assert (found.label, found.activity, found.status) == (label, activity, status)


@pytest.mark.parametrize(
    "text",
    [
        "I'm thinking about it",
        # Running late is how things stand, not something to ask about afterwards.
        "I'm running late",
        "I'm running out of time",
        "I'm loving this",
        "I'm working on the API",  # under way all along, not about to happen
        "I'm going through the logs",
        "my wife is heading to the gym",
        "are you flying tomorrow?",
        "I was taking the dog out when it started raining",
        "taking the dog out is boring",
        "getting better at this",
        "having fun",
    ],
)
def test_the_present_progressive_about_now_or_others_is_no_action(text: str) -> None:
    assert detect_temporal_action(text) is None


@pytest.mark.parametrize(
    ("text", "minutes", "label"),
    [
        ("heading into a meeting for an hour", 60, "Go into a meeting"),
        ("hopping in the shower for 10 minutes", 10, "Hop in the shower"),
        ("off to the gym for 2 hours", 120, "Go to the gym"),
        ("heading to the gym", None, "Go to the gym"),
    ],
)
def test_how_long_an_action_lasts_leaves_its_label(
    text: str, minutes: int | None, label: str
) -> None:
    found = detect_temporal_action(text)
    assert found is not None
    assert (found.minutes, found.label) == (minutes, label)


@pytest.mark.parametrize(
    ("gerund", "base"),
    [
        ("flying", "fly"), ("studying", "study"), ("running", "run"), ("grabbing", "grab"),
        ("shopping", "shop"), ("getting", "get"), ("making", "make"), ("taking", "take"),
        ("driving", "drive"), ("writing", "write"), ("coming", "come"), ("leaving", "leave"),
        ("dancing", "dance"), ("heading", "head"), ("meeting", "meet"), ("eating", "eat"),
        ("seeing", "see"), ("walking", "walk"), ("visiting", "visit"), ("opening", "open"),
        ("calling", "call"), ("fixing", "fix"), ("playing", "play"), ("catching", "catch"),
        ("lying", "lie"), ("dying", "die"), ("panicking", "panic"), ("adding", "add"),
        ("using", "use"), ("cooking", "cook"), ("hopping", "hop"), ("skiing", "ski"),
    ],
)  # fmt: skip
def test_a_progressive_verb_back_to_its_base_form(gerund: str, base: str) -> None:
    english = PATTERNS["en"]
    assert english.base_form(gerund) == base
    if gerund != "panicking":  # the -ing rule the labels use adds no k
        assert english.gerund(base) == gerund  # its inverse


@pytest.mark.parametrize(
    ("text", "activity"),
    [
        ("can't sleep, ugh", "sleep"),
        ("still can't fall asleep", "sleep"),
        ("I couldn't make it to the gym", "gym"),
    ],
)
def test_saying_an_action_is_not_happening_cancels_it(text: str, activity: str) -> None:
    assert detect_status_update(text) == StatusUpdate("canceled", activity)


REPORT = frozenset({"quarterly", "report"})


@pytest.mark.parametrize(
    ("text", "update"),
    [
        (
            "I can't call the bank until Monday, they're closed.",
            StatusUpdate("postponed", "call", until="Monday", about=frozenset({"bank"})),
        ),
        (
            "can't ring the bank until Monday",
            StatusUpdate("postponed", "call", until="Monday", about=frozenset({"bank"})),
        ),
        (
            "won't be able to send it before Friday",
            StatusUpdate("postponed", None, frozenset({"send"}), "Friday", frozenset({"send"})),
        ),
        (
            "can't do the migration till the freeze ends",
            StatusUpdate(
                "postponed",
                None,
                frozenset({"do", "migration"}),
                "the freeze ends",
                frozenset({"migration"}),
            ),
        ),
        (
            "I have to postpone the gym until tomorrow",
            StatusUpdate("postponed", "gym", until="tomorrow"),
        ),
        (
            "we postponed the quarterly report until next wednesday",
            StatusUpdate("postponed", None, REPORT, "next wednesday", REPORT),
        ),
        (
            "the quarterly report is put off until next wednesday",
            StatusUpdate("postponed", None, REPORT, "next wednesday", REPORT),
        ),
        (
            "let's push the report to next week",
            StatusUpdate(
                "postponed", None, frozenset({"report"}), "next week", frozenset({"report"})
            ),
        ),
        ("moving the dentist to friday", StatusUpdate("postponed", "appointment", until="friday")),
        ("rescheduled the call to 3pm", StatusUpdate("postponed", "call", until="3pm")),
        (
            "pushed the bank call to 4pm",
            StatusUpdate("postponed", "call", until="4pm", about=frozenset({"bank"})),
        ),
        ("the standup is delayed by an hour", StatusUpdate("postponed", "meeting", later_by=60)),
    ],
)
def test_a_cant_until_a_later_time_postpones_rather_than_cancels(
    text: str, update: StatusUpdate
) -> None:
    # "can't call the bank until Monday" closed the call as canceled: it is only later.
    assert detect_status_update(text) == update


@pytest.mark.parametrize(
    "text",
    [
        "never mind the bank call",
        "no need to call the bank anymore",
        "there's no need to call the bank",
        "we don't need to call the bank anymore",
    ],
)
def test_calling_an_action_off_by_its_words_cancels_it(text: str) -> None:
    assert detect_status_update(text) == StatusUpdate("canceled", None, key_words("call the bank"))


@pytest.mark.parametrize(
    "text",
    [
        "I can't wait until Monday",
        "can't stop thinking until Friday",
        "never mind",
        "we might postpone the report",
        "we might postpone the report until friday",
        "moving the couch to the bedroom",
        "I'm moving to Berlin next month",
        "the standup is delayed",
    ],
)
def test_what_is_neither_put_off_nor_called_off_changes_nothing(text: str) -> None:
    assert detect_status_update(text) is None


@pytest.mark.parametrize(
    "text",
    ["can't wait to go to the gym", "can't stop thinking about the meeting", "can't find my keys"],
)
def test_a_cant_that_reports_no_failed_action_changes_nothing(text: str) -> None:
    assert detect_status_update(text) is None


def test_a_clocked_bare_gerund_keeps_its_word() -> None:
    assert label_for_clocked("cooking").label == "Cooking"
