"""The speaker's own words of a message that carries someone else's: a forward, a reply's
quote (``middleware.quoting``)."""

from __future__ import annotations

import pytest

from middleware.quoting import QUOTE_LIMIT, Quoted, forwarded, own_words, quoted, replying_to


@pytest.mark.parametrize(
    ("text", "own"),
    [
        ("I'm vegan too", "I'm vegan too"),
        (replying_to("I'm vegan too", "Bo", "is anyone vegan?"), "I'm vegan too"),
        (replying_to("nice?", "Cy", "[photo, not passed on]"), "nice?"),
        # Quotes inside the quote, a colon in the name: the quote's end is what counts.
        (replying_to("why?", "Dr: Bo", 'she said "yes" then "no"'), "why?"),
        (replying_to("and you?", "Bo", 'he wrote "[soon]"] ok'), "and you?"),
        (replying_to("ok", "Bo", "line one\nline two"), "ok"),
        (replying_to("ok", "Bo", "x" * (QUOTE_LIMIT + 50)), "ok"),
        (forwarded("I'm vegan and I work at Google", "Bo"), ""),
        (forwarded("I'm vegan"), ""),
        (forwarded(replying_to("same", "Cy", "meet at 9"), "Bo"), ""),
        # Written by the user, a bracket is theirs: only the relay's prefixes are left out.
        ("[update] I moved to Lisbon", "[update] I moved to Lisbon"),
    ],
)
def test_own_words_leave_out_someone_elses(text: str, own: str) -> None:
    assert own_words(text) == own


def test_the_model_reads_whose_words_are_whose() -> None:
    assert replying_to("too late?", "Bo", "meet\nat 9") == '[replying to Bo: "meet at 9"] too late?'
    assert forwarded("hi", "Bo") == "[forwarded from Bo] hi"
    assert forwarded("hi") == "[forwarded] hi"


def test_quoted_says_whose_words_a_message_carries_besides_the_speakers() -> None:
    assert quoted("meet at 9?") is None
    assert quoted(forwarded("I'm vegan", "Bo")) == Quoted(True, "Bo", "I'm vegan", "")
    assert quoted(forwarded("I'm vegan")) == Quoted(True, None, "I'm vegan", "")
    assert quoted(replying_to("too late for me", "Bo", "meet at 9")) == Quoted(
        False, "Bo", '"meet at 9"', "too late for me"
    )


@pytest.mark.parametrize(
    ("text", "own"),
    [
        # A pasted transcript's speaker lines are the speakers', not the user's.
        (
            "Summarize this transcript:\nBob: I'm heading to the gym\nAlice: ok see you",
            "Summarize this transcript:",
        ),
        ("[10:02] Bob: I'm vegan\n[10:03] Alice: same\nthoughts?", "thoughts?"),
        ("Bob (10:02): I'm vegan\n@alice: nice\nwhat now?", "what now?"),
        ("what did he mean?\nBob: I'm vegan", "what did he mean?"),
        # In a transcript "Me:" is the user then, not now.
        ("Bob: you coming?\nMe: I'm heading out", ""),
        # Block quotes and code blocks are pasted.
        ("> I'm heading to the gym\nlol he said that", "lol he said that"),
        ("fix this:\n```\nprint('heading to the gym')\n```\nthanks", "fix this:\nthanks"),
        # The user's own lines stay: a header word, a list of their own, a lone line.
        ("Note: I'm off to the gym", "Note: I'm off to the gym"),
        ("Re: dinner\nI'm heading out now", "Re: dinner\nI'm heading out now"),
        ("Note: gym at 7\nPS: I'm vegan", "Note: gym at 7\nPS: I'm vegan"),
        ("Gym: 7am\nDentist: 3pm", "Gym: 7am\nDentist: 3pm"),
        ("Me: I'm heading out", "Me: I'm heading out"),
        (replying_to("Bob: hi\nAlice: yo", "Cy", "what?"), ""),
    ],
)
def test_own_words_leave_out_what_the_user_pasted(text: str, own: str) -> None:
    assert own_words(text) == own
