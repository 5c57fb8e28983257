"""Heuristic open questions and key decisions (spec 001 §5.3).

The labelled set measures the sentence-level rules; the turn-level rule (an unanswered
question), deduplication, caps, resolution and terse continuations are tested directly.
Hard negatives matter as much as positives: a wrong item puts words in the user's mouth.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from middleware.continuity.extract import (
    CONTEXT_MAX,
    MAX_DECISIONS,
    MAX_QUESTIONS,
    Extracted,
    ExtractTurn,
    classify_sentence,
    extract_key_decisions,
    extract_open_questions,
    find_resolved,
    is_sign_off,
    is_terse_continuation,
    moved_on_to,
    moves_on,
    states_an_item,
)
from middleware.continuity.words import item_form

DATA = Path(__file__).parent / "data"


def _user(text: str) -> ExtractTurn:
    return ExtractTurn("user", text)


def _assistant(text: str) -> ExtractTurn:
    return ExtractTurn("assistant", text)


def _texts(items: list[Extracted]) -> list[str]:
    return [item.text for item in items]


# --- the labelled set -----------------------------------------------------------------


def _scores(name: str) -> dict[str, tuple[float, float]]:
    with (DATA / name).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows
    result = {}
    for label in ("open_question", "key_decision"):
        tp = fp = fn = 0
        for row in rows:
            role = "assistant" if row["role"] == "assistant" else "user"
            predicted = classify_sentence(row["sentence"], role=role) or "none"
            tp += predicted == label and row["label"] == label
            fp += predicted == label and row["label"] != label
            fn += predicted != label and row["label"] == label
        result[label] = (tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn))
    return result


def test_labelled_set_is_large_and_well_formed() -> None:
    with (DATA / "extraction_labelled.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert len(rows) >= 150
    assert {row["label"] for row in rows} == {"open_question", "key_decision", "none"}
    assert {row["role"] for row in rows} <= {"user", "assistant"}
    assert all(row["sentence"].strip() for row in rows)


@pytest.mark.parametrize("name", ["extraction_labelled.tsv", "extraction_heldout.tsv"])
@pytest.mark.parametrize("label", ["open_question", "key_decision"])
def test_precision_and_recall_on_labelled_sets(name: str, label: str) -> None:
    precision, recall = _scores(name)[label]
    assert precision >= 0.8, f"{label} precision {precision:.3f} on {name}"
    assert recall >= 0.6, f"{label} recall {recall:.3f} on {name}"


# --- sentence rules -------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "I'll come back to the Dura argument in the intro.",
        "Let me deal with the exhibit list later.",
        "TODO: add a test for the DST edge case.",
        "Remember to send the invoice to the label.",
        "I still need to figure out the loss causation section.",
        "Open question: is the class period March or April?",
        "We need to rewrite the chorus before Friday.",
        "Need to check with Sarah about the deposition dates.",
        "We have yet to pick a license.",
        "Haven't figured out the caching layer yet.",
        "Parking the refactor for now.",
        "ok so, I'll revisit the bridge tomorrow.",
    ],
)
def test_open_items(sentence: str) -> None:
    assert classify_sentence(sentence) == "open_question"


@pytest.mark.parametrize(
    "sentence",
    [
        "We decided to drop the Dura argument.",
        "I've decided to file in the Southern District.",
        "Let's go with Postgres for the event store.",
        "Going with the blue cover.",
        "I'll commit to the two-week schedule.",
        "We're committing to the March release.",
        "Final answer: we settle.",
        "Settled on drop D tuning.",
        "We'll use SQLite instead of Postgres.",
        "I'm definitely going with the rental car.",
        "We agreed that the client pays the expert.",
    ],
)
def test_decisions(sentence: str) -> None:
    assert classify_sentence(sentence) == "key_decision"


@pytest.mark.parametrize(
    "sentence",
    [
        # hedges and proposals
        "We should consider going with Postgres.",
        "Maybe let's go with the blue cover.",
        "I'm thinking about going with the Fender.",
        "I'm leaning towards going with Go.",
        "Perhaps we'll use Redis someday.",
        # questions and conditionals
        "Should we go with option B?",
        "If we decided to settle, what then?",
        "Have we decided on the venue yet?",
        "Do we need to update the lockfile?",
        "If I need to reschedule, how much notice do I give?",
        # "definitely"/"for sure" without a decision verb
        "This is definitely the best bridge I've written.",
        "For sure, that progression is tricky.",
        # stories, third parties, reported speech
        "Last year we decided to move the office.",
        "The band decided to break up in 2015.",
        "My friend said they're going with a lawyer from Boston.",
        "We needed to rewrite the parser last year.",
        "We decided nothing in the meeting.",
        # recollection and wants, not work
        "Remember when we deployed on a Friday?",
        "Do you remember what the judge said?",
        "I need to vent for a second.",
        "We need to talk.",
        "Going with the flow today.",
        "The TODO list app I use is broken.",
        "How are you today?",
    ],
)
def test_hard_negatives(sentence: str) -> None:
    assert classify_sentence(sentence) is None


def test_assistant_sentences_are_never_a_source() -> None:
    assert classify_sentence("Let's go with Postgres.", role="assistant") is None
    assert classify_sentence("Remember to cite the pin page.", role="assistant") is None
    assert classify_sentence("Let's go with Postgres.", role="user") == "key_decision"


# --- extraction over turns ------------------------------------------------------------


def test_item_text_is_normalised_and_context_kept() -> None:
    [item] = extract_open_questions(
        [_user("Alright, I'll come back to the Dura argument in the intro later.")]
    )
    assert item.text == "come back to the Dura argument in the intro"
    assert item.sentence == "Alright, I'll come back to the Dura argument in the intro later."
    assert item.context == item.sentence
    assert 0.5 <= item.confidence <= 0.7


def test_context_is_truncated() -> None:
    long = "TODO: " + " ".join(["check the exhibit index"] * 30) + "."
    [item] = extract_open_questions([_user(long)])
    assert len(item.context) <= CONTEXT_MAX
    assert item.sentence == long


def test_decision_text() -> None:
    turns = [
        _user("We decided to drop the Dura argument from the intro."),
        _user("ok so let's go with Postgres for the event store!"),
        _user("Final answer: we settle for $40k."),
    ]
    assert _texts(extract_key_decisions(turns)) == [
        "drop the Dura argument from the intro",
        "go with Postgres for the event store",
        "we settle for $40k",
    ]


def test_several_sentences_in_one_turn() -> None:
    turns = [_user("Thanks, that helps. TODO: fix the flaky test. Let's go with pytest-xdist.")]
    assert _texts(extract_open_questions(turns)) == ["fix the flaky test"]
    assert _texts(extract_key_decisions(turns)) == ["go with pytest-xdist"]


def test_abbreviations_do_not_split_sentences() -> None:
    [item] = extract_open_questions([_user("I need to ask Dr. Patel about the refill.")])
    assert item.text == "ask Dr. Patel about the refill"


def test_dedupe_keeps_order_and_first() -> None:
    turns = [
        _user("TODO: fix the flaky test."),
        _user("Remember to renew the passport."),
        _user("todo - fix the flaky test"),
    ]
    assert _texts(extract_open_questions(turns)) == ["fix the flaky test", "renew the passport"]


def test_caps_keep_the_most_recent() -> None:
    turns = [_user(f"TODO: task number {n}.") for n in range(MAX_QUESTIONS + 3)]
    texts = _texts(extract_open_questions(turns))
    assert len(texts) == MAX_QUESTIONS
    assert texts[-1] == f"task number {MAX_QUESTIONS + 2}"
    decisions = [_user(f"Let's go with option {n}.") for n in range(MAX_DECISIONS + 2)]
    assert len(extract_key_decisions(decisions)) == MAX_DECISIONS


def test_assistant_turns_are_skipped() -> None:
    turns = [_assistant("We still need to confirm the hearing date. Let's go with plan B.")]
    assert extract_open_questions(turns) == []
    assert extract_key_decisions(turns) == []


# --- unanswered questions (turn level) ------------------------------------------------


def test_last_question_without_answer_is_open() -> None:
    turns = [
        _user("Let's look at the damages section."),
        _assistant("Sure, here it is."),
        _user("Does the event study cover the whole class period?"),
    ]
    [item] = extract_open_questions(turns)
    assert item.text == "Does the event study cover the whole class period?"


def test_question_with_hedged_answer_is_open() -> None:
    turns = [
        _user("What's the filing deadline for the reply brief?"),
        _assistant("I'm not sure; you'd need to check the local rules."),
        _user("Ok thanks."),
    ]
    assert _texts(extract_open_questions(turns)) == [
        "What's the filing deadline for the reply brief?"
    ]


def test_answered_question_is_not_open() -> None:
    turns = [
        _user("What's the filing deadline for the reply brief?"),
        _assistant("Fourteen days after service of the opposition."),
    ]
    assert extract_open_questions(turns) == []


@pytest.mark.parametrize(
    "question",
    [
        "How are you?",
        "That works, right?",
        "It's a tough call, isn't it?",
        "What's up?",
        "Really?",
        "Any thoughts?",
    ],
)
def test_phatic_questions_are_never_open(question: str) -> None:
    assert extract_open_questions([_user(question)]) == []
    hedged = [_user(question), _assistant("Hard to say.")]
    assert extract_open_questions(hedged) == []


def test_requests_count_only_when_the_answer_hedges() -> None:
    request = "Can you confirm the hearing is on the 12th?"
    assert extract_open_questions([_user(request)]) == []
    answered = [_user(request), _assistant("Yes, the docket says the 12th at 9am.")]
    assert extract_open_questions(answered) == []
    hedged = [_user(request), _assistant("I can't confirm that from the documents I have.")]
    assert _texts(extract_open_questions(hedged)) == [request]


def test_a_hedge_deep_in_a_long_answer_does_not_count() -> None:
    answer = "The deadline is 14 days after service. " * 20 + "I'm not sure about holidays."
    turns = [_user("What's the deadline for the reply?"), _assistant(answer)]
    assert extract_open_questions(turns) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("ok, next the retry policy", "the retry policy"),
        ("Next up: the invoices.", "the invoices"),
        ("Moving on to the export format now.", "the export format"),
        ("next, write the tests", None),  # a task, not a name
        ("Next is the exhibit list for the call.", None),  # a statement
        ("Next the team decided to ship.", None),  # a story
        ("next, the tests passed", None),
        ("next time", None),
        ("OK, next", None),
    ],
)
def test_a_cue_to_move_on_names_what_it_moves_on_to(text: str, name: str | None) -> None:
    assert moved_on_to(text) == name


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("ok, next the retry policy", True),
        ("next, write the tests", True),
        ("now on to the exhibits", True),
        ("Next is the exhibit list for the call.", False),
        ("Next week I'm away.", False),
        ("next, the tests passed", False),
        ("The load test passed.", False),
    ],
)
def test_a_cue_to_move_on_is_told_from_a_statement(text: str, cue: bool) -> None:
    assert moves_on(text) is cue


# --- resolution -----------------------------------------------------------------------


def test_find_resolved() -> None:
    items = [
        "come back to the Dura argument in the intro",
        "fix the flaky scheduler test",
        "renew the passport",
        "check with Sarah about the deposition dates",
    ]
    turns = [
        _user("Done with the Dura argument in the intro, it reads well now."),
        _assistant("Great."),
        _user("The flaky scheduler test is fixed."),
        _user("Never mind the deposition dates with Sarah."),
    ]
    assert find_resolved(items, turns) == {0, 1, 3}


def test_a_short_item_reported_done_in_another_form_of_its_verb_is_resolved() -> None:
    """Two-word items: the report names the thing done, not the verb as the item had it."""
    items = ["write the migration", "figure out the hosting", "set up the nightly backups"]
    turns = [
        _user("The migration is written."),
        _user("I figured out the hosting."),
        _user("The nightly backups aren't set up yet."),
    ]
    assert find_resolved(items, turns) == {0, 1}


@pytest.mark.parametrize(
    ("item", "text"),
    [
        ("pull the Christensen data", "The Christensen data is pulled now."),
        ("pull the Christensen data", "The Christensen data's pulled."),
        ("pull the Christensen data", "I got the Christensen data pulled this morning."),
        ("pull the Christensen data", "Pulled the Christensen data."),
        ("pull the Christensen data", "Christensen data done."),
        ("pull the Christensen data for the fee report", "The Christensen data is pulled now."),
        ("copy the files to the NAS", "Copied the files to the NAS."),
        ("ship the release", "The release shipped!"),
        ("commit the fix", "Committed the fix."),
        ("send the invoice to Sam", "Sent the invoice to Sam."),
        ("build the Docker image", "The Docker image is built."),
        ("rewrite the intro", "Intro rewritten."),
        ("run the benchmarks", "I've run the benchmarks."),
        ("take the backup", "Backup taken."),
        ("make the slides", "Made the slides for Friday."),
        ("book the venue", "Venue's booked and paid."),
    ],
)
def test_an_item_reported_done_in_a_past_form_of_its_own_verb_is_resolved(
    item: str, text: str
) -> None:
    """Any verb by rule (-ed, -ied, a doubled consonant) or the table of irregulars."""
    assert find_resolved([item], [_user(text)]) == {0}


@pytest.mark.parametrize(
    ("item", "text"),
    [
        ("pull the Christensen data", "I need to get the Christensen data pulled."),
        ("pull the Christensen data", "I pulled an all-nighter on the Christensen data."),
        ("pull the Christensen data", "The Christensen data isn't pulled yet."),
        ("pull the Christensen data", "Once the Christensen data is pulled, we run the model."),
        ("pull the Christensen data", "Is the Christensen data pulled?"),
        ("pull the Christensen data", "I'll have the Christensen data pulled by Friday."),
        ("send the invoice to Sam", "Sam sent me the invoice."),
        ("send the invoice to Sam", "Sent the invoice to Bob."),
        ("run the benchmarks", "Run the benchmarks again."),
    ],
)
def test_a_past_form_that_is_a_plan_a_negation_or_about_something_else_resolves_nothing(
    item: str, text: str
) -> None:
    assert find_resolved([item], [_user(text)]) == set()


@pytest.mark.parametrize(
    "text",
    [
        "The load test passed at 500 rps.",
        "ok, the load test has now passed",
        "The invoice endpoint is load tested.",
        "Done with the load test.",
        "Finished the load test, now the retry policy.",
        "We passed the load test.",
    ],
)
def test_the_work_named_as_a_noun_and_reported_ended_is_resolved(text: str) -> None:
    """ "passed" is no past form of "load", and the report names the work, not most of
    the item's words."""
    assert find_resolved(["load test the invoice endpoint"], [_user(text)]) == {0}


@pytest.mark.parametrize(
    ("item", "text"),
    [
        ("load test the invoice endpoint", "The load test is scheduled for Friday."),
        ("load test the invoice endpoint", "Did the load test fail?"),
        ("load test the invoice endpoint", "The load test passed?"),
        ("load test the invoice endpoint", "The load test didn't pass."),
        ("load test the invoice endpoint", "The load test hasn't passed yet."),
        ("load test the invoice endpoint", "Once the load test is done we ship."),
        ("load test the invoice endpoint", "I need the load test done by Friday."),
        ("load test the invoice endpoint", "Done with the load test script."),
        ("test the login flow", "The test passed."),  # any test
        ("review the load test results", "The load test passed."),  # not its results
    ],
)
def test_a_mention_of_the_work_or_of_other_work_resolves_nothing(item: str, text: str) -> None:
    assert find_resolved([item], [_user(text)]) == set()


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        ("The invoice load test passed.", {0}),
        ("The search endpoint is load tested.", {1}),
        # Named only by what both share: the latest raised, not every load test.
        ("The load test passed.", {1}),
        ("Done with the load test.", {1}),
    ],
)
def test_work_named_done_closes_only_the_item_it_names(text: str, closed: set[int]) -> None:
    items = ["load test the invoice endpoint", "load test the search endpoint"]
    assert find_resolved(items, [_user(text)]) == closed


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        ("The migration is written.", {0}),
        ("Wrote the migration.", {0}),
        ("The migration is not written yet.", set()),
        ("Is the migration written?", set()),
        ("The migration will be written tomorrow.", set()),
        ("The migration for the users table is written.", set()),
    ],
)
def test_an_item_reported_done_in_its_own_verb_by_its_head_alone_is_resolved(
    text: str, closed: set[int]
) -> None:
    """Its head, before the first preposition, names the work: the rest ("for the
    invoices table") need not be said again."""
    items = ["write the migration for the invoices table"]
    assert find_resolved(items, [_user(text)]) == closed


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        # Named only by the head both share: the latest raised, not every migration.
        ("The migration is written.", {1}),
        ("The migration for the invoices table is written.", {0}),
        ("Wrote the migration for the users table.", {1}),
    ],
)
def test_an_own_verb_report_by_a_head_two_items_share_closes_the_latest(
    text: str, closed: set[int]
) -> None:
    items = [
        "write the migration for the invoices table",
        "write the migration for the users table",
    ]
    assert find_resolved(items, [_user(text)]) == closed


def test_a_later_decision_resolves_the_open_question_it_answers() -> None:
    items = ["figure out the old cron jobs", "whether to visit Hokkaido", "renew the passport"]
    turns = [
        _user("We decided to drop the old cron jobs."),
        _user("OK, let's go with it: we visit Hokkaido after Tokyo."),
        _user("Maybe we should renew the passport."),  # a hedge decides nothing
    ]
    assert find_resolved(items, turns) == {0, 1}


@pytest.mark.parametrize(
    "text",
    [
        "Haven't figured out the Dura argument in the intro yet.",
        "I'm not done with the Dura argument in the intro.",
        "Did you finish the Dura argument in the intro?",
        "Done with the conclusion.",  # resolves something else
        "The Dura argument in the intro needs work.",  # no resolution marker
    ],
)
def test_find_resolved_negatives(text: str) -> None:
    items = ["come back to the Dura argument in the intro"]
    assert find_resolved(items, [_user(text)]) == set()


def test_find_resolved_ignores_assistant_turns_and_empty_items() -> None:
    items = ["", "fix the flaky scheduler test"]
    assert find_resolved(items, [_assistant("The flaky scheduler test is fixed.")]) == set()


# --- terse continuations --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "let's continue",
        "Continue",
        "where were we?",
        "Ok, where were we",
        "pick up where we left off",
        "Let's pick up where we left off.",
        "carry on",
        "ok, next",
        "go on",
        "resume",
        "back to it",
        "I'm back, let's continue",
        "morning, let's continue",
        "Good evening, back to it",
    ],
)
def test_terse_continuation(text: str) -> None:
    assert is_terse_continuation(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "let's continue with the damages section",
        "continue the email to Sarah",
        "next, rewrite the intro",
        "where were we on the Henderson timeline?",
        "hello",
        "let's continue the conversation about the lease, I have a new question about it",
    ],
)
def test_not_terse_continuation(text: str) -> None:
    assert not is_terse_continuation(text)


@pytest.mark.parametrize(
    "text",
    ["ok, more later", "talk later", "brb", "ok brb, bye", "Gotta go!", "thanks, talk to you "
     "tomorrow", "see you", "good night", "That's all for now.", "later then"],
)  # fmt: skip
def test_sign_off(text: str) -> None:
    assert is_sign_off(text)


@pytest.mark.parametrize(
    "text",
    ["", "ok", "more later on the budget", "talk later about pricing",
     "I will finish the report later", "later we should add tests"],
)  # fmt: skip
def test_not_sign_off(text: str) -> None:
    assert not is_sign_off(text)


@pytest.mark.parametrize(
    ("text", "item"),
    [
        ("Next step is to draft the reply.", "draft the reply"),
        ("Next step is the dry run.", "Next step is the dry run"),
        (
            "The next steps are the dry run and the cutover.",
            "next steps are the dry run and the cutover",
        ),
    ],
)
def test_a_next_step_without_to_keeps_its_words(text: str, item: str) -> None:
    assert [found.text for found in extract_open_questions([_user(text)])] == [item]


@pytest.mark.parametrize(
    ("sentence", "item"),
    [
        ("I'm not sure whether we should ship Friday.", "whether we should ship Friday"),
        ("I wonder if the venue is free on Saturday.", "whether the venue is free on Saturday"),
        ("not sure if the API supports batching", "whether the API supports batching"),
        ("Honestly, I'm still undecided whether to hire.", "whether to hire"),
    ],
)
def test_being_unsure_whether_is_an_open_question(sentence: str, item: str) -> None:
    assert classify_sentence(sentence) == "open_question"
    assert _texts(extract_open_questions([_user(sentence), _assistant("Noted.")])) == [item]


@pytest.mark.parametrize(
    "sentence",
    [
        "I wonder if we should go with Postgres.",
        "I'm not sure whether we decided to use Redis.",
        "Not sure we should use SQLite instead of Postgres.",
        "I'm not sure the plan is realistic.",
    ],
)
def test_wondering_is_never_a_decision(sentence: str) -> None:
    assert classify_sentence(sentence) != "key_decision"


def test_item_form_ignores_wording_but_not_negation() -> None:
    assert item_form("Send the report Friday") == item_form("send the report on Friday.")
    assert item_form("Who reviews the draft?") == item_form("who reviews the draft")
    assert item_form("Do not ship the beta") != item_form("Ship the beta")
    assert item_form("Is it?") == "is it"  # stopwords only: folded as it is


@pytest.mark.parametrize(
    ("sentence", "kind", "item"),
    [
        (
            "Next I still need to set up the nightly backups.",
            "open_question",
            "set up the nightly backups",
        ),
        ("Then I need to write the migration.", "open_question", "write the migration"),
        ("After that, we still have to pick a venue.", "open_question", "pick a venue"),
        ("And then I have yet to call the bank.", "open_question", "call the bank"),
        ("Later on I need to fix the flaky tests.", "open_question", "fix the flaky tests"),
        # A day the sentence opened on stays with the item.
        ("Tomorrow I need to email Sam the deck.", "open_question", "email Sam the deck tomorrow"),
        ("Next week we have to ship the beta.", "open_question", "ship the beta next week"),
        ("Then we decided to go with Postgres.", "key_decision", "go with Postgres"),
        ("On Friday we decided to ship.", "key_decision", "ship on Friday"),
        # The whole clause is still tried: "next step" is not an opener here.
        ("Next step is to draft the intro.", "open_question", "draft the intro"),
    ],
)
def test_a_sequence_or_day_opener_does_not_hide_the_item(
    sentence: str, kind: str, item: str
) -> None:
    assert classify_sentence(sentence) == kind
    turns = [_user(sentence), _assistant("Noted.")]
    found = (
        extract_open_questions(turns) if kind == "open_question" else extract_key_decisions(turns)
    )
    assert _texts(found) == [item]


@pytest.mark.parametrize(
    ("sentence", "item"),
    [
        # The time first, the work after: the deferred-work rule wanted it after the verb.
        ("Tomorrow I'll fix the build.", "fix the build tomorrow"),
        ("On Friday I'll send the deck.", "send the deck on Friday"),
        ("Later I'll write the docs.", "write the docs"),
        ("Tomorrow I'm going to email Sam the contract.", "email Sam the contract tomorrow"),
        ("Tomorrow we'll fix the build.", "fix the build tomorrow"),
        # An errand of the user's own with the time after it.
        ("I'll send the deck on Friday.", "send the deck on Friday"),
    ],
)
def test_work_put_off_to_a_time_is_open_whichever_comes_first(sentence: str, item: str) -> None:
    assert _texts(extract_open_questions([_user(sentence), _assistant("Ok.")])) == [item]


@pytest.mark.parametrize(
    "sentence",
    [
        "Tomorrow I'll be fine.",
        "Later I'll think about it.",  # about nothing named
        "Tomorrow I'll fix it.",
        "Later I'll message you.",
        "Later I'll grab lunch.",
        "Tomorrow will I fix the build?",  # a question
        "Tomorrow Sam will fix the build.",  # someone else's work
        "Yesterday I fixed the build.",  # done
        "If it breaks tomorrow I'll fix the build.",  # a conditional
        "We'll file the motion on Monday.",  # a plan made together: a decision, if anything
    ],
)
def test_a_time_and_a_future_alone_make_no_open_item(sentence: str) -> None:
    assert extract_open_questions([_user(sentence), _assistant("Ok.")]) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "Next, do I still need to set up the backups?",  # a question
        "Then Sam still needs to send the deck.",  # someone else's work
        "After that my boss has to sign off.",
        "Then I needed to write the migration.",  # done, in the past
        "After that I had to redo the schema.",
        "Then if we have time, I need to fix the docs.",  # a conditional
        "Then she said I need to redo it.",  # reported speech
        "Next, maybe we should go with Redis.",  # a hedge
    ],
)
def test_a_sequence_opener_lets_no_non_item_through(sentence: str) -> None:
    assert classify_sentence(sentence) is None
    assert extract_open_questions([_user(sentence), _assistant("Sure.")]) == []


@pytest.mark.parametrize(
    "text",
    [
        # Spec 003 §7's memory triggers about the work ("decision:", "we agreed", "the
        # plan is", "note to self"): each makes its session worth capturing.
        "Decision: we go with Postgres.",
        "We agreed to ship on Monday.",
        "The plan is to migrate next week.",
        "Note to self: call the bank.",
    ],
)
def test_spec_003_work_triggers_state_an_item(text: str) -> None:
    assert states_an_item(text)
