"""Heuristic open questions and key decisions from a session's turns (spec 001 §5.3).

Deterministic capture runs without an LLM call, so these are regular expressions over
the user's own words: "I'll come back to …", "TODO …", "still need to figure out …",
"we decided …", "let's go with …". They are cheap and knowingly weaker than LLM-enriched
capture (§5.4); what they produce carries a reduced ``confidence`` (0.5-0.7) that the
card rendering shows (§6).

Precision beats recall, as in :mod:`middleware.actions.detect`: a missed item is simply
not on the card, a wrong one puts words in the user's mouth. So a rule fires only at the
start of a clause, on a first-person or subject-less statement, and never in a
conditional ("if we decided …"), reported speech ("my friend said they're going with …"),
a past-tense story ("last year we decided …") or, for decisions, a hedge ("maybe let's go
with …", "thinking about going with …") or a question ("should we go with X?").
Assistant turns are not a source: what the assistant proposes is not what the user
decided, and its "remember to …" is advice, not the user's open work.

docs/continuity-heuristics.md lists what the rules catch and miss, with measured
precision and recall (``bench/extraction_quality.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from middleware.continuity.done import reports_done, reports_named_done
from middleware.quoting import own_words

__all__ = [
    "CONTEXT_MAX",
    "MAX_DECISIONS",
    "MAX_QUESTIONS",
    "ExtractTurn",
    "Extracted",
    "ItemKind",
    "classify_sentence",
    "extract_key_decisions",
    "extract_open_questions",
    "find_resolved",
    "clean_item",
    "is_sign_off",
    "is_terse_continuation",
    "moved_on_to",
    "moves_on",
    "settled_later",
    "split_sentences",
]

ItemKind = Literal["open_question", "key_decision"]

MAX_QUESTIONS = 5
MAX_DECISIONS = 5
CONTEXT_MAX = 200
ITEM_MAX = 160
RESOLVED_OVERLAP = 0.6
# A report in the item's own verb next to its whole object needs less of the rest.
_OWN_VERB_OVERLAP = 0.5
_PREPOSITIONS = frozenset(
    "for to in on at by from with about into onto before after until so because via per".split()
)
_ARTICLES = frozenset("the a an my our their his her its this that these those".split())
_SCAN_LIMIT = 4000  # per turn: a pasted document is not where the user's plans are
_HEDGE_WINDOW = 400  # an assistant reply hedges in its opening, not in paragraph nine
_TERSE_WORDS = 8


@dataclass(frozen=True, slots=True)
class ExtractTurn:
    """One turn of the session, as the extractors see it."""

    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True, slots=True)
class Extracted:
    """A candidate open question or key decision.

    ``text`` is the item as a card shows it ("come back to the Dura argument in the
    intro"): leading subject, filler and marker words and trailing punctuation removed (a
    question keeps its "?"). ``context`` is the sentence it came from, cut to
    :data:`CONTEXT_MAX` characters; ``sentence`` the whole sentence. ``confidence`` is
    0.5-0.7: explicit markers ("TODO:", "we decided") score higher than inferred ones
    ("I need to …", an unanswered question).
    """

    text: str
    context: str
    confidence: float
    sentence: str
    # The index of the turn it was said in, among the turns given to the extractor.
    turn: int = 0


@dataclass(frozen=True, slots=True)
class _Rule:
    """A pattern matched at a clause start; its ``item`` group is the card text.

    ``question_ok`` lets an explicit marker fire on a sentence ending in "?"
    ("Open question: does the class period start in March?").
    """

    pattern: re.Pattern[str]
    confidence: float
    question_ok: bool = False
    dated: bool = False

    def finds(self, clause: str, day: str | None) -> re.Match[str] | None:
        """The match on ``clause``, if the rule fires there: a ``dated`` rule only on a
        clause its sentence opened with a time ("tomorrow", "later") for; an ``object``
        group must name something ("I'll fix it tomorrow" says nothing of what)."""
        if self.dated and day is None:
            return None
        match = self.pattern.match(clause)
        if match is None or (
            "object" in match.re.groupindex and not _content_words(match["object"])
        ):
            return None
        return match


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _rule(
    pattern: str, confidence: float, question_ok: bool = False, *, dated: bool = False
) -> _Rule:
    return _Rule(_re(pattern), confidence, question_ok, dated)


# --- shared vocabulary ----------------------------------------------------------------

_I_WE = r"(?:i|we)"
_BE = r"(?:i\s*'?\s*m|i\s+am|we\s*'?\s*re|we\s+are)"
# A first-person future or proposal: "I'll", "we will", "let me", "let's", "I'm going to".
_FUT = (
    rf"(?:{_I_WE}\s*'?\s*ll|{_I_WE}\s+will|let\s+me|let\s*'?\s*s|let\s+us"
    rf"|{_BE}\s+(?:going\s+to|gonna)|gonna|will)"
)
_ADV = r"(?:(?:just|definitely|finally|officially|now|already|also|really|probably)\s+)?"
# When a deferred item is meant to happen: "later", "tomorrow", "after lunch", "once …".
_WHEN = (
    r"(?:later|tomorrow|tonight|next\s+\w+|another\s+time|some\s+other\s+time|after\s+\w+"
    r"|once\s+\w+|when\s+\w+|this\s+(?:week|weekend|afternoon|evening)|on\s+\w+day)"
)
_ITEM = r"(?P<item>.+)"
# The user's own future, not one shared with others ("we'll …", "let's …").
_FUT_ME = (
    r"(?:i\s*'?\s*ll|i\s+will|let\s+me|(?:i\s*'?\s*m|i\s+am)\s+(?:going\s+to|gonna)|gonna"
    r"|will)"
)
# Work put off to a time ("I'll deal with the exhibits later", "we'll fix it tomorrow").
_DEFER = (
    r"(?:deal\s+with|sort\s+out|handle|look\s+(?:at|into)|tackle|fix|finish|do|figure\s+out"
    r"|work\s+(?:on|out)|check|think\s+about|get\s+to|tidy|clean\s+up)\b"
)
# Errands the user takes on ("I'll send the deck tomorrow"); a short list, so "I'll be
# fine", "I'll see you later" and "I'll grab lunch later" are no items.
_TASK = (
    r"(?:send|write"
    r"|rewrite|email|e-mail|call|reply\s+to|answer|follow\s+up\s+(?:on|with)|review|update"
    r"|draft|finali[sz]e|polish|edit|proofread|test|deploy|ship|merge|push|publish|release"
    r"|submit|file|pay|book|order|schedule|set\s+up|prepare|plan|research|read\s+(?:up\s+on"
    r"|through)|go\s+(?:over|through)|add|remove|document|debug|investigate|implement"
    r"|refactor|migrate|upgrade|install|configure|upload|sign|renew|cancel|print|back\s+up"
    r"|pick\s+up|drop\s+off|buy|contact|ping|message|text|write\s+up)\b"
)

_FILLER = _re(
    r"^(?:(?:ok(?:ay)?|alright|all\s+right|right|so|well|anyways?|k+|cool|yeah|yep|yup"
    r"|hey|hmm+|um+|uh+|and|also|now|oh|honestly|great|perfect|fine|got\s+it)\b[\s,!.:;—–-]*)+"
)
# When a plan is for, said before its subject: "Tomorrow I need to …" is the item "… tomorrow".
_DAY_OPENER = (
    r"today|tomorrow|tonight|this\s+(?:morning|afternoon|evening|week|weekend)"
    r"|next\s+(?:week|month)|on\s+\w+day|later(?:\s+on)?"
)
# Where a plan sits in a sequence or in time, before its subject: "Next I still need to
# …", "Then, we decided …", "After that I have to …", "Tomorrow I need to …". Read past
# like filler; the clause is also tried whole, so "next step is to …" keeps its words.
_SEQUENCE = _re(
    rf"^(?:(?:and\s+)?(?:(?P<day>{_DAY_OPENER})|next\s+time|then|next|after\s+(?:that|this)"
    r"|afterwards|first(?:\s+of\s+all)?|firstly|second(?:ly)?|third(?:ly)?|finally|lastly"
    r"|meanwhile|in\s+the\s+meantime|before\s+that)\b[\s,:;—–-]*)+"
)
# Conditionals, reported speech and stories: neither questions nor decisions of the user.
_REJECT = _re(
    r"^\s*(?:if|unless|when|whenever|suppose|supposing|imagine|what\s+if|in\s+case|once\s+upon)"
    r"\b|\b(?:said|says|told|tells|asked|asks|according\s+to|apparently|claims|claimed)\b"
    r"|\b(?:used\s+to|last\s+(?:year|month|week|time)|back\s+then|when\s+i\s+was|years\s+ago"
    r"|in\s+the\s+story)\b"
)
# A hedge turns a decision back into a proposal.
_HEDGE = _re(
    r"\b(?:maybe|perhaps|probably|possibly|might|not\s+sure|unsure|someday|at\s+some\s+point"
    r"|if\s+i\s+were|tentatively|thinking\s+(?:about|of)|considering|consider|leaning|wonder"
    r"|should\s+we|could\s+we|would\s+you)\b"
)
# "I need to vent", "we need to talk", "I need to know …": wants, not deferred work.
_NOT_WORK = (
    r"(?:vent|talk|know|understand|say|admit|confess|rant|be|go|leave|run|sleep|eat|pee"
    r"|rest|relax|breathe|calm|think|hear|see|tell\s+you|ask\s+you|stop|focus)\b"
)

# After "next": a time or a subject, not the name of something to move on to.
_NOT_A_NAME = (
    r"(?:is|are|was|were|will|i|we|you|they|he|she|it|step|steps|week|month|year|time"
    r"|day|\w+day|one|thing|up)\b"
)
# A word that makes a clause of a name: "the tests passed", "the team will decide".
_VERB_LIKE = (
    r"(?:\w+ed|is|are|was|were|be|been|has|have|had|will|would|can|could|should|must"
    r"|need|needs|do|does|did|goes|go|went|got|gets|get|let|lets|i|we|you|they)\b"
)

# Telling the agent what to turn to: a name ("next the retry policy") or a task ("next,
# write the tests"), not a statement ("next is the exhibit list", "next week I'm away").
# Said after the name, not part of it: "on to the export format now".
_LAST_WORD = r"(?:now|then|please)\b"
_MOVE_ON = _re(
    rf"(?:next(?:\s+up)?|(?:moving\s+)?on\s+to)\b\s*[:,—–-]?\s*(?!{_NOT_A_NAME})"
    rf"(?:{_TASK}|{_DEFER}|(?P<name>(?!{_VERB_LIKE})[\w'-]+"
    rf"(?:\s+(?!{_VERB_LIKE}|{_LAST_WORD})[\w'-]+)*)(?:\s+{_LAST_WORD})?[\s.!…]*$)"
)
_NAME_WORDS = 5  # "the retry policy": a name; longer, and it is more than a name

# --- open questions -------------------------------------------------------------------

_QUESTION_RULES: tuple[_Rule, ...] = (
    # Explicit markers.
    _rule(r"to\s*-?\s*do\b(?!\s*(?:lists?|apps?|items?|comments?)\b)\s*[:\-–—]?\s*" + _ITEM, 0.7),
    _rule(
        r"(?:the\s+)?(?:open|outstanding|unresolved|pending)\s+(?:question|issue|item|point"
        r"|problem)s?(?:\s+for\s+later)?\s*(?::|-|is|are|remains?)\s*" + _ITEM,
        0.7,
        question_ok=True,
    ),
    _rule(r"(?:question|note|something|one)\s+for\s+later\s*[:\-–—]\s*" + _ITEM, 0.7, True),
    _rule(r"(?:tbd|unresolved|undecided|open)\s*:\s*" + _ITEM, 0.7, question_ok=True),
    _rule(
        r"still\s+(?:unresolved|open|undecided|tbd|unclear|not\s+clear)\s*[:\-–—]?\s*" + _ITEM, 0.6
    ),
    _rule(r"note\s+to\s+self\s*[:\-–—,]?\s*" + _ITEM, 0.7),
    # Reminders to self.
    _rule(
        rf"(?:{_I_WE}\s+)?(?:(?:must|need\s+to|have\s+to|should|gotta|got\s+to)\s+)?"
        rf"remember\s+to\s+{_ITEM}",
        0.65,
    ),
    _rule(
        rf"(?:please\s+)?(?:don\s*'?\s*t|do\s+not)\s+(?:let\s+me\s+)?forget\s+to\s+{_ITEM}", 0.65
    ),
    _rule(rf"(?:please\s+)?remind\s+me\s+(?:to|about)\s+{_ITEM}", 0.65),
    # Deferred: "I'll come back to …", "let's circle back to …", "I'll revisit …".
    _rule(
        rf"{_FUT}\s+{_ADV}(?P<item>(?:[\w'-]+\s+){{0,6}}?(?:come|get|circle|loop|go)\s+back"
        r"\s+(?:to|on)\b.+)",
        0.65,
    ),
    _rule(rf"{_FUT}\s+{_ADV}(?P<item>(?:revisit|return\s+to)\b.+)", 0.65),
    _rule(rf"{_FUT}\s+{_ADV}(?P<item>{_DEFER}\s+(?P<object>.+?)\s+{_WHEN}\b.*)", 0.6),
    # The user's own errand: "I'll send the deck on Friday"; and with the time first,
    # "Tomorrow I'll fix the build", "Later I'll write the docs". ("We'll file the motion
    # on Monday" is a plan made together: a decision.)
    _rule(rf"{_FUT_ME}\s+{_ADV}(?P<item>{_TASK}\s+(?P<object>.+?)\s+{_WHEN}\b.*)", 0.6),
    _rule(rf"{_FUT}\s+{_ADV}(?P<item>{_DEFER}\s+(?P<object>.+))", 0.6, dated=True),
    _rule(rf"{_FUT_ME}\s+{_ADV}(?P<item>{_TASK}\s+(?P<object>.+))", 0.6, dated=True),
    _rule(
        r"(?:i\s*'?\s*m\s+|we\s*'?\s*re\s+)?(?:leaving|saving|parking|putting|pushing|keeping)"
        r"\s+(?P<item>.+?)\s+(?:for\s+later|for\s+now|for\s+another\s+day|on\s+hold|aside)\b.*",
        0.6,
    ),
    # Still to do: "still need to …", "have yet to …", "haven't figured out …".
    _rule(rf"(?:{_I_WE}\s+)?still\s+(?:need|have|got)\s+to\s+{_ITEM}", 0.65),
    _rule(rf"(?:{_I_WE}\s+)?still\s+need\s+(?P<item>(?:an?|some|the|more)\b.+)", 0.6),
    _rule(rf"{_I_WE}\s+(?:still\s+)?(?:have|has)\s+yet\s+to\s+{_ITEM}", 0.65),
    _rule(rf"(?:{_BE}\s+)?still\s+(?P<item>(?:figuring|working|sorting)\s+out\b.+)", 0.6),
    _rule(
        rf"(?:{_I_WE}\s+)?(?P<item>(?:haven\s*'?\s*t|have\s+not)\s+(?:yet\s+)?(?:figured|worked"
        r"|sorted|decided|settled|found\s+out)\b.+)",
        0.6,
    ),
    _rule(r"still\s+not\s+(?:clear|sure|decided)\s+" + _ITEM, 0.55),
    # Undecided between options: "I'm not sure whether we should ship Friday", "I wonder
    # if the venue is free", "not sure if …". The item keeps its "whether"/"if".
    _rule(
        rf"(?:{_BE}\s+|i\s+(?:really\s+)?)?(?:still\s+)?(?:not\s+(?:sure|certain)|unsure|undecided"
        r"|wonder(?:ing)?)\s+(?:yet\s+)?(?P<item>(?:whether|if)\s+\S.*)",
        0.55,
    ),
    # "Next step is to draft X" is the task "draft X"; "next step is the dry run" keeps its
    # words ("Open: the dry run" would read as a question about the dry run).
    _rule(r"(?:the\s+)?next\s+steps?\s+(?:is|are|will\s+be)\s*:?\s*to\s+" + _ITEM, 0.6),
    _rule(r"(?:the\s+)?(?P<item>next\s+steps?\s+(?:is|are|will\s+be)\b.+)", 0.6),
    # Deferred work: "I need to <verb> …", "we have to …", "need to check with X about Y".
    _rule(
        rf"(?:{_I_WE}\s+)?(?:really\s+|also\s+)?(?:need|have|got)\s+to\s+(?!{_NOT_WORK})"
        r"(?P<item>[a-z][\w'-]*\s+\S.*)",
        0.5,
    ),
    _rule(rf"{_I_WE}\s+must\s+(?!{_NOT_WORK})(?P<item>[a-z][\w'-]*\s+\S.*)", 0.5),
)

# --- key decisions --------------------------------------------------------------------

_DECISION_RULES: tuple[_Rule, ...] = (
    _rule(
        rf"(?:{_I_WE}\s*(?:'\s*ve|have|had)?\s+)?{_ADV}decided(?!\s*(?:nothing|anything|yet)\b)"
        r"\s*[:\-–—]?\s*(?:to\s+|that\s+|on\s+)?" + _ITEM,
        0.7,
    ),
    _rule(r"it\s*(?:'\s*s|\s+is|\s+has\s+been)\s+decided\s*[:,\-–—]?\s*(?:that\s+)?" + _ITEM, 0.7),
    _rule(
        r"(?:(?:the|my|our)\s+)?(?:final\s+)?(?:decision|choice|verdict)\s*(?::|is\b)\s*"
        r"(?:to\s+|that\s+)?" + _ITEM,
        0.7,
    ),
    _rule(r"(?:(?:the|my|our)\s+)?(?:final\s+)?(?:answer|call)\s*(?:is\s*)?:\s*" + _ITEM, 0.7),
    _rule(r"(?:settled|agreed|confirmed|done\s+deal)\s*:\s*" + _ITEM, 0.7),
    _rule(r"confirmed\s*,\s*(?P<item>(?:\S+\s+){2,}\S+.*)", 0.6),
    _rule(rf"(?:{_I_WE}\s*(?:'\s*ve|have)?\s+)?{_ADV}settled\s+on\s+{_ITEM}", 0.7),
    _rule(
        rf"{_I_WE}\s*(?:'\s*ve|have)?\s+(?:all\s+|both\s+)?agreed\s+(?:that|to|on)\s+{_ITEM}", 0.7
    ),
    _rule(
        rf"{_I_WE}\s*(?:'\s*ve|have)\s+made\s+up\s+(?:my|our)\s+minds?\s*[:,\-–—]?\s*{_ITEM}",
        0.7,
    ),
    _rule(
        rf"(?:{_I_WE}\s*(?:'\s*ll|will)|{_BE}|{_I_WE}\s*(?:'\s*ve|have))?\s*{_ADV}"
        rf"(?:commit(?:ting|ted)?)\s+to\s+{_ITEM}",
        0.65,
    ),
    _rule(
        rf"(?:{_BE}\s+)?{_ADV}(?P<item>(?:going|sticking|staying|rolling)\s+with\b"
        r"(?!\s+(?:the\s+flow|(?:my|your|our)\s+gut|it\b)).+)",
        0.6,
    ),
    _rule(rf"{_FUT}\s+{_ADV}(?P<item>(?:go|stick|roll)\s+with\b.+)", 0.6),
    _rule(
        rf"(?:we\s*'?\s*ll|we\s+will|we\s*'?\s*re\s+going\s+to|we\s+are\s+going\s+to|let\s*'?\s*s"
        rf"|let\s+us)\s+{_ADV}(?P<item>(?:use|keep|switch\s+to|go\s+for|pick|choose|adopt"
        r"|stick\s+to|lock\s+in|drop|standardi[sz]e\s+on)\b.+)",
        0.6,
    ),
    _rule(
        rf"(?:{_FUT}|{_BE})\s+{_ADV}(?P<item>(?:use|using)\s+.+\s+(?:instead\s+of|rather"
        r"\s+than|over)\s+.+)",
        0.6,
    ),
    _rule(
        rf"{_BE}\s+{_ADV}(?P<item>(?:switching|migrating|changing)\s+(?:over\s+)?to\b.+"
        r"|(?:dropping|ditching|scrapping)\s+(?!off\b|by\b|out\b).+)",
        0.6,
    ),
    _rule(
        rf"{_I_WE}\s+(?:finally\s+|ultimately\s+|eventually\s+)?(?P<item>(?:chose|picked|opted"
        r"\s+for|went\s+with|selected)\s+(?!up\b|out\b).+)",
        0.6,
    ),
    _rule(r"(?:the|our|my)\s+plan\s+is\s+(?:now\s+)?(?:to\s+|that\s+)?" + _ITEM, 0.55),
    _rule(r"(?P<item>.+?)\s+is\s+(?:the|our)\s+plan\s*[.!]*\s*$", 0.55),
    _rule(
        rf"(?:from\s+now\s+on|going\s+forward|from\s+here\s+on(?:\s+out)?)\s*,?\s*"
        rf"(?P<item>{_I_WE}\b.+)",
        0.6,
    ),
)

# --- turn-level questions -------------------------------------------------------------

# "how are you?", "right?", "isn't it?": no open work behind them.
_PHATIC = _re(
    r"^(?:how\s+are\s+you|how\s*'?\s*s\s+it\s+going|how\s+have\s+you\s+been|what\s*'?\s*s\s+up"
    r"|sup|you\s+know|right|really|seriously|huh|eh|ok(?:ay)?|yes|no|yeah|got\s+it|ready"
    r"|make\s+sense|does\s+that\s+make\s+sense|you\s+there|are\s+you\s+there|any\s+thoughts"
    r"|what\s+do\s+you\s+think)\b"
    r"|,\s*(?:right|isn\s*'?\s*t\s+it|aren\s*'?\s*t\s+they|don\s*'?\s*t\s+you\s+think|no|eh"
    r"|huh|you\s+know|yeah|ok(?:ay)?)\s*\?$"
)
# A request to the assistant rather than a question about the work.
_REQUEST = _re(r"^(?:please\s+)?(?:can|could|would|will)\s+you\b|^please\b")
_ANSWER_HEDGE = _re(
    r"\b(?:i\s*'?\s*m\s+not\s+(?:sure|certain)|i\s+(?:don\s*'?\s*t|do\s+not)\s+know"
    r"|you\s*'?\s*d\s+(?:need|have|want)\s+to\s+(?:check|confirm|verify|ask)"
    r"|(?:can\s*'?\s*t|cannot|couldn\s*'?\s*t)\s+(?:confirm|verify|say\s+for\s+sure|tell\s+for"
    r"\s+sure|be\s+sure|find)|hard\s+to\s+say|no\s+way\s+(?:for\s+me\s+)?to\s+know"
    r"|i\s+don\s*'?\s*t\s+have\s+(?:access|enough\s+information)|not\s+enough\s+information)"
)

# --- resolution and continuation ------------------------------------------------------

_RESOLVED = _re(
    r"\b(?:done\s+with|finished(?:\s+with)?|figured\s+out|worked\s+out|sorted\s+out|resolved"
    r"|fixed|took\s+care\s+of|dealt\s+with|handled|never\s*mind|scratch\s+that|forget\s+about"
    r"|no\s+longer\s+need|(?:is|are|s)\s+(?:now\s+|all\s+)?(?:sorted|resolved|done|fixed"
    r"|handled|settled|answered|taken\s+care\s+of|written|finished|complete|completed|ready"
    r"|merged|deployed|in\s+place|set\s+up))\b"
)
_NOT_RESOLVED = _re(
    r"(?:\bnot|n\s*'\s*t|\bnever|\byet\s+to|\bcannot)\s+(?:\w+\s+)?(?:done|finished|figured|worked"
    r"|sorted|resolved|fixed|dealt|handled)\b"
)
_STOPWORDS = frozenset(
    "a an the and or but if of to in on at for with by from about into over after before"
    " up down out off it its this that these those is are was were be been being do does"
    " did have has had i me my we our us you your he she they them his her their there"
    " here what which who whom whose when where why how all any some no not just so than"
    " then too very can will would should could need needs get got come back later still"
    " now also done with figured sorted resolved never mind deal dealt finally".split()
)
_WORD = re.compile(
    r"[a-z0-9][a-z0-9'-]*"
)  # Leave-taking, after an optional "ok,", "thanks" and the like; each may repeat ("ok
# brb, bye").
_SIGN_OFF_WORD = (
    r"(?:ok(?:ay)?|alright|all\s+right|right|cool|great|good|fine|thanks|thank\s+you|thx|ty"
    r"|cheers|anyway|so|yeah|yep|k)"
)
_LEAVE = (
    r"(?:(?:(?:ok(?:ay)?|so|and)\s+)?(?:more|rest|continue|finish|back)\s+(?:later|tomorrow|soon)"
    r"|(?:talk|speak|chat|catch\s+up)(?:\s+(?:to|with)\s+you)?\s+(?:later|soon|tomorrow)"
    r"|(?:see|catch)\s+(?:you|ya|u)(?:\s+(?:later|soon|tomorrow))?|later|laters|ttyl|brb"
    r"|be\s+right\s+back|bbl|afk|bye(?:\s+for\s+now)?|bye-bye|cya|gtg|g2g"
    r"|(?:gotta|got\s+to|have\s+to|need\s+to|must)\s+(?:go|run|dash)"
    r"|(?:good\s*)?night|gn|that'?s\s+(?:it|all)(?:\s+for\s+(?:now|today))?"
    r"|(?:done|enough)\s+for\s+(?:now|today|tonight)|signing\s+off|logging\s+off)"
)
_SIGN_OFF = _re(
    rf"(?:{_SIGN_OFF_WORD}\b[\s,!.:;—–-]*)*{_LEAVE}"
    rf"(?:[\s,!.:;—–-]+(?:{_LEAVE}|{_SIGN_OFF_WORD}|then|for\s+now))*[\s.!?…]*"
)

_TERSE = _re(
    r"(?:(?:ok(?:ay)?|alright|all\s+right|right|so|yes|yeah|yep|hi|hey|hello|cool|great"
    r"|(?:good\s+)?(?:morning|afternoon|evening)|good|fine|now|please|back"
    r"|i\s*'?\s*m\s+back)\b[\s,!.:;—–-]*)*"
    r"(?:(?:let\s*'?\s*s|let\s+us|shall\s+we|can\s+we|please)\s+)?"
    r"(?:continue|carry\s+on|keep\s+going|go\s+on|go\s+ahead|resume|proceed|next"
    r"|move\s+on|on\s+we\s+go|onwards?|(?:let\s*'?\s*s\s+)?get\s+(?:back\s+)?to\s+(?:it|work)"
    r"|back\s+to\s+(?:it|work)|pick\s+(?:it\s+)?up\s+where\s+we\s+left\s+off"
    r"|(?:so\s+)?where\s+were\s+we|where\s+did\s+we\s+(?:leave|stop)(?:\s+off)?"
    r"|where\s+was\s+i|what\s*'?\s*s\s+next|what\s+next|same\s+as\s+before)"
    r"(?:[\s,]+(?:please|pls|then|now|from\s+(?:here|there)|where\s+we\s+left\s+off"
    r"|with\s+(?:it|that|this)))*[\s.!?…]*"
)

_OPEN_IF = _re(r"^if\b")
_ABBREVIATIONS = frozenset(
    "dr mr mrs ms prof st v vs e.g i.e etc no inc ltd jr sr co corp fig art sec approx".split()
)
_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*\s+|\n+")
_CLAUSE_START = re.compile(r"[,;—–]\s*|\s-\s")
_TRAILING = _re(r"[\s.!,;:…—–-]+$|\s+(?:for\s+now|later(?:\s+on)?|yet|too)\s*[.!,;:…]*$")


# --- public API -----------------------------------------------------------------------


def classify_sentence(
    sentence: str, *, role: Literal["user", "assistant"] = "user"
) -> ItemKind | None:
    """What one sentence records: an open item, a decision, or nothing (None).

    This is the sentence-level core that ``bench/extraction_quality.py`` measures; the
    turn-level rules of :func:`extract_open_questions` (an unanswered question) are not
    part of it. Assistant sentences are never a source.
    """
    found = _classify(sentence, role)
    return found[0] if found else None


def extract_open_questions(turns: Sequence[ExtractTurn]) -> list[Extracted]:
    """Open items of the session's user turns, oldest first, at most :data:`MAX_QUESTIONS`
    (the most recent win).

    Two sources: a user sentence matching an open-item rule ("I'll come back to …",
    "TODO …", "remember to …", "still need to figure out …", "open question: …", "I need
    to <verb> …", "need to check with X about Y"), and a user question left unanswered:
    the last thing in the session, or followed by an assistant turn that hedges ("I'm not
    sure", "you'd need to check"). Phatic and tag questions never count, nor requests
    ("can you …?") the assistant went on to answer.
    """
    items: list[Extracted] = []
    for index, turn in enumerate(turns):
        if turn.role != "user":
            continue
        reply = next((t for t in turns[index + 1 :] if t.role == "assistant"), None)
        unanswered = reply is None or _ANSWER_HEDGE.search(reply.text[:_HEDGE_WINDOW])
        for sentence in _sentences(own_words(turn.text)):
            found = _classify(sentence, "user")
            if found and found[0] == "open_question":
                items.append(_extracted(found[1], sentence, found[2], index))
            elif not found and unanswered and _is_open_user_question(sentence, reply is None):
                confidence = 0.55 if reply is None else 0.6
                text = _clean(sentence, question=True)
                items.append(_extracted(text, sentence, confidence, index))
    return _finish(items, MAX_QUESTIONS)


def extract_key_decisions(turns: Sequence[ExtractTurn]) -> list[Extracted]:
    """Key decisions stated in the session's user turns, oldest first, at most
    :data:`MAX_DECISIONS` (the most recent win).

    Decision language with a decision verb: "we decided …", "I've decided …", "let's go
    with …", "going with …", "I'll commit to …", "we're committing to …", "final answer:
    …", "settled on …", "we'll use X instead of Y", "we agreed that …", "the plan is to …".
    "Definitely" or "for sure" alone decide nothing; hedges and questions never count.
    """
    items: list[Extracted] = []
    for index, turn in enumerate(turns):
        if turn.role != "user":
            continue
        for sentence in _sentences(own_words(turn.text)):
            found = _classify(sentence, "user")
            if found and found[0] == "key_decision":
                items.append(_extracted(found[1], sentence, found[2], index))
    return _finish(items, MAX_DECISIONS)


def states_an_item(text: str) -> bool:
    """Whether a user message states an open item or a decision in one of its sentences
    (by the sentence rules alone: an unanswered question is not one here)."""
    return any(classify_sentence(sentence) for sentence in _sentences(text))


def moves_on(sentence: str) -> bool:
    """Whether ``sentence`` only tells the agent what to turn to next ("ok, next the
    retry policy", "next, write the tests", "on to the exhibits"): a cue, not a statement
    of where the work stood."""
    text = " ".join(sentence.replace("’", "'").split())
    return _MOVE_ON.match(_FILLER.sub("", text, count=1)) is not None


def moved_on_to(sentence: str) -> str | None:
    """What a cue to move on names, as a card item ("the retry policy" of "ok, next the
    retry policy"), when it names something in a few words; ``None`` otherwise."""
    text = " ".join(sentence.replace("’", "'").split())
    found = _MOVE_ON.match(_FILLER.sub("", text, count=1))
    if found is None or not found["name"] or len(found["name"].split()) > _NAME_WORDS:
        return None
    return _clean(found["name"]) or None


def find_resolved(open_items: Sequence[str], turns: Sequence[ExtractTurn]) -> set[int]:
    """Indexes into ``open_items`` that a user turn in ``turns`` resolves.

    A user sentence resolves an item when it says so ("done with X", "figured out X", "X
    is sorted/resolved/done", "never mind X"), reports it done in a past form of the
    item's own verb (:func:`~middleware.continuity.done.reports_done`: "the Christensen
    data is pulled now" or "pulled the Christensen data" for "pull the Christensen
    data"), or decides it ("we decided to drop X": the
    open question is answered, and a card showing both would contradict itself), is not
    negated or a question ("haven't figured out X", "did you fix X?"), and contains at
    least :data:`RESOLVED_OVERLAP` of the item's content words (stopwords ignored, a plural
    "s" dropped, and a leading verb: "the migration is written" resolves "write the
    migration"). A report in the item's own verb needs only half of them, or only its
    head (verb and object, before its first preposition): "the migration is written"
    also resolves "write the migration for the invoices table".

    ``open_items`` are oldest first. A sentence that names the work only by a name
    several items share ("the load test passed" with "load test the invoice endpoint"
    and "load test the search endpoint" open; "the migration is written" with two
    migrations to write, for two tables) closes the latest of them: "the load test" is
    the one last raised, the one in view, and closing every load test would report
    done work the user never mentioned. Naming more ("the invoice load test passed")
    picks out its own item.
    """
    said = [
        (sentence, _content_words(sentence), _resolves(sentence))
        for turn in turns
        if turn.role == "user"
        for sentence in _sentences(own_words(turn.text))
    ]
    resolved: set[int] = set()
    # Per sentence, the items it reports done by a name alone.
    named_in: dict[int, list[int]] = {}
    for index, item in enumerate(open_items):
        wanted = _done_words(item)
        if not wanted:
            continue
        verb, thing = _item_verb(item), _object_words(item)
        phrase = _verb_phrase(item)
        names_it = _names_the_work(item, phrase)

        def is_item_word(word: str, thing: set[str] = thing) -> bool:
            return bool(_content_words(word) & thing)

        for at, (sentence, words, says_resolved) in enumerate(said):
            # "The migration for the users table is written" is not this item's work.
            if _names_another(sentence, item, wanted):
                continue
            overlap = len(wanted & words) / len(wanted)
            if says_resolved and overlap >= RESOLVED_OVERLAP:
                resolved.add(index)
                break
            # Its own verb next to the whole thing it acts on is evidence enough for
            # less of the rest: "the Christensen data is pulled now" closes "pull the
            # Christensen data for the fee report". With only that, the item's head
            # (before its first preposition: "the migration is written" of "write the
            # migration for the invoices table"), it is named as "the load test" is.
            own_verb = (
                verb is not None
                and thing <= words
                and (overlap >= _OWN_VERB_OVERLAP or bool(thing))
                and reports_done(sentence, verb, is_item_word)
            )
            if own_verb and overlap >= _OWN_VERB_OVERLAP:
                resolved.add(index)
                break
            if own_verb:
                named_in.setdefault(at, []).append(index)
                break
            # The work named as a noun and reported ended: "the load test passed",
            # "done with the load test" for "load test the invoice endpoint".
            if reports_named_done(sentence, phrase, names_it):
                named_in.setdefault(at, []).append(index)
                break
    resolved.update(max(indexes) for indexes in named_in.values())
    return resolved


def _verb_phrase(item: str) -> tuple[str, ...]:
    """The words an item's action is named by: its leading words up to a determiner or
    preposition, at most two ("load", "test" of "load test the invoice endpoint"; "pull"
    of "pull the Christensen data"), or its first word when none follows."""
    words: list[str] = _WORD.findall(item.lower().replace("’", "'"))
    for end, word in enumerate(words[:3]):
        if end and (word in _ARTICLES or word in _PREPOSITIONS):
            return tuple(words[:end])
    return tuple(words[:1])


def _names_the_work(item: str, phrase: Sequence[str]) -> Callable[[Sequence[str]], bool]:
    """Whether words name ``item``'s work: only the item's own words, naming its action
    ("the load test") or all it acts on ("the invoice endpoint"), and two of them or
    most of the item ("the test" is any test; "the load test" is not "review the load
    test results", whose action and object it names neither)."""
    every = _content_words(item)
    action = _content_words(" ".join(phrase))
    words: list[str] = _WORD.findall(item.lower().replace("’", "'"))[len(phrase) :]
    ends = next((at for at, word in enumerate(words) if at and word in _PREPOSITIONS), None)
    thing = _content_words(" ".join(words[:ends]))

    def names_it(words: Sequence[str]) -> bool:
        named = _content_words(" ".join(words))
        return (
            bool(named)
            and named <= every
            and (len(named) >= 2 or len(named) >= RESOLVED_OVERLAP * len(every))
            and ((bool(action) and action <= named) or (bool(thing) and thing <= named))
        )

    return names_it


def _names_another(sentence: str, item: str, wanted: set[str]) -> bool:
    """Whether ``sentence`` puts a word the item does not have after a preposition the
    item uses: "sent the invoice to Bob" is not "send the invoice to Sam"."""
    item_words: list[str] = _WORD.findall(item.lower().replace("’", "'"))
    used = {word for word in item_words if word in _PREPOSITIONS}
    said: list[str] = _WORD.findall(sentence.lower().replace("’", "'"))
    for at, word in enumerate(said[:-1]):
        if word in used:
            after = next((w for w in said[at + 1 :] if w not in _STOPWORDS), None)
            if after is not None and not _content_words(after) & wanted:
                return True
    return False


def _object_words(item: str) -> set[str]:
    """The content words of what the item's verb acts on: after the verb, up to the
    first preposition ("christensen", "data" of "pull the Christensen data for the fee
    report")."""
    words: list[str] = _WORD.findall(item.lower().replace("’", "'"))
    if _item_verb(item) is not None:
        words = words[1:]
    head: list[str] = []
    for word in words:
        if word in _PREPOSITIONS and head:
            break
        head.append(word)
    return _content_words(" ".join(head))


def _item_verb(item: str) -> str | None:
    """The verb an item starts with ("pull" of "pull the Christensen data"), or None
    when it starts with a stopword or is a single word."""
    words: list[str] = _WORD.findall(item.lower().replace("’", "'"))
    if len(_content_words(item)) > 1 and words and words[0] not in _STOPWORDS:
        return words[0]
    return None


def _done_words(item: str) -> set[str]:
    """The content words a report of ``item`` being done must mention: all but a leading
    verb, since "the migration is written" and "figured out the hosting" report "write
    the migration" and "figure out the hosting" done in other forms of that verb."""
    words = _WORD.findall(item.lower().replace("’", "'"))
    if _item_verb(item) is not None:
        words = words[1:]
    return _content_words(" ".join(words))


def settled_later(questions: Sequence[Extracted], turns: Sequence[ExtractTurn]) -> set[int]:
    """Indexes into ``questions`` (extracted from ``turns``) that a user turn from the
    question's own on resolves or decides, as :func:`find_resolved` judges it: raised and
    decided in one session, the question is not open."""
    return {
        index
        for index, question in enumerate(questions)
        if find_resolved([question.text], turns[question.turn :])
    }


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as the extractors see them."""
    return list(_sentences(text))


def clean_item(text: str) -> str:
    """``text`` as a card item: filler, a leading "to"/"that" and trailing punctuation off."""
    return _clean(text)


def _resolves(sentence: str) -> bool:
    if sentence.rstrip().endswith("?"):
        return False
    if _RESOLVED.search(sentence) and not _NOT_RESOLVED.search(sentence):
        return True
    found = _classify(sentence, "user")
    return found is not None and found[0] == "key_decision"


def is_terse_continuation(text: str) -> bool:
    """Whether ``text`` only asks to carry on ("let's continue", "where were we", "pick up
    where we left off", "ok, next", "resume"): a short message with no new content, the
    cue to lean on the continuity card."""
    text = " ".join(text.replace("’", "'").split())
    if not text or len(text.split()) > _TERSE_WORDS:
        return False
    return _TERSE.fullmatch(text) is not None


def is_sign_off(text: str) -> bool:
    """Whether ``text`` only takes leave ("ok, more later", "talk later", "brb", "gotta
    go, bye"): a short message that says nothing about the work, so never where a
    session is said to have ended up."""
    text = " ".join(text.replace("’", "'").split())
    if not text or len(text.split()) > _TERSE_WORDS:
        return False
    return _SIGN_OFF.fullmatch(text) is not None


# --- internals ------------------------------------------------------------------------


def _classify(
    sentence: str, role: Literal["user", "assistant"]
) -> tuple[ItemKind, str, float] | None:
    """``(kind, card text, confidence)`` for one sentence, decisions tried first."""
    if role != "user":
        return None
    sentence = " ".join(sentence.replace("’", "'").replace("‘", "'").split())
    if not sentence or _REJECT.search(_lead_off(sentence)):
        return None
    question = sentence.endswith("?")
    if not question and not _HEDGE.search(sentence):
        for clause, day in _clauses(sentence):
            for rule in _DECISION_RULES:
                match = rule.finds(clause, day)
                if match and (text := _clean(_dated(match["item"], day))):
                    return "key_decision", text, rule.confidence
    for clause, day in _clauses(sentence):
        for rule in _QUESTION_RULES:
            if question and not rule.question_ok:
                continue
            match = rule.finds(clause, day)
            if match and (text := _clean(_dated(match["item"], day), question=question)):
                # "Open: if the venue is free" reads as half a sentence; "whether" does not.
                return "open_question", _OPEN_IF.sub("whether", text, count=1), rule.confidence
    return None


def _is_open_user_question(sentence: str, last: bool) -> bool:
    """A real question about the work: not phatic, not a short aside, and not a request
    to the assistant unless the assistant hedged on it (``last`` is false)."""
    sentence = _lead_off(sentence.strip())
    if not sentence.endswith("?") or len(sentence.split()) < 3:
        return False
    if _PHATIC.search(sentence) or _REJECT.search(sentence):
        return False
    return not (_REQUEST.match(sentence) and last)


def _sentences(text: str) -> Iterator[str]:
    """Sentences of ``text``; a full stop after "Dr", "v", "e.g" does not end one."""
    text = text[:_SCAN_LIMIT]
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].rsplit(None, 1)
        word = before[-1].lower().rstrip(".") if before else ""
        if text[match.start()] == "." and (word in _ABBREVIATIONS or len(word) == 1):
            continue
        sentence = text[start : match.end()].strip()
        if sentence:
            yield sentence
        start = match.end()
    if text[start:].strip():
        yield text[start:].strip()


def _clauses(sentence: str) -> Iterator[tuple[str, str | None]]:
    """The sentence from each clause start on, leading filler ("ok so, …") skipped, and
    again without a sequence opener ("next", "after that", "tomorrow") when it has one;
    each with the day that opener named ("tomorrow"), if any."""
    starts = [0] + [m.end() for m in _CLAUSE_START.finditer(sentence)]
    for start in starts:
        rest = _FILLER.sub("", sentence[start:], count=1)
        if rest:
            yield rest, None
        opener = _SEQUENCE.match(rest)
        if opener is not None and (opened := _FILLER.sub("", rest[opener.end() :], count=1)):
            yield opened, opener["day"]


def _lead_off(text: str) -> str:
    """``text`` without its leading filler and sequence opener ("ok, then …", "oh and
    next, …"): where the clause's subject starts."""
    text = _FILLER.sub("", text, count=1)
    return _FILLER.sub("", _SEQUENCE.sub("", text, count=1), count=1)


def _dated(item: str, day: str | None) -> str:
    """``item`` with the day its sentence opened on put back at its end ("email Sam." →
    "email Sam tomorrow"), so the card still says when."""
    if day is None:
        return item
    day = " ".join(day.split())
    return f"{item.rstrip(' .!,;:…')} {day[0].lower()}{day[1:]}"


def _clean(item: str, question: bool = False) -> str:
    """Card text: filler and a leading "to"/"that" off, trailing punctuation and
    "for now"/"later" off, cut to :data:`ITEM_MAX`; a question keeps its "?"."""
    text = _FILLER.sub("", " ".join(item.split()), count=1)
    text = re.sub(r"^(?:to|that|-|:)\s+", "", text, flags=re.IGNORECASE)
    previous = None
    while previous != text:
        previous, text = text, _TRAILING.sub("", text)
    text = text.strip(" \"'")
    if len(text) > ITEM_MAX:
        text = text[: ITEM_MAX - 1].rsplit(" ", 1)[0] + "…"
    if question and text and not text.endswith("?"):
        text += "?"
    return text


def _extracted(text: str, sentence: str, confidence: float, turn: int) -> Extracted:
    context = sentence if len(sentence) <= CONTEXT_MAX else sentence[: CONTEXT_MAX - 1] + "…"
    return Extracted(text, context, confidence, sentence, turn)


def _finish(items: list[Extracted], cap: int) -> list[Extracted]:
    """Drop repeats (same normalised text, the first kept) and keep the last ``cap``."""
    seen: set[str] = set()
    unique: list[Extracted] = []
    for item in items:
        key = " ".join(_WORD.findall(item.text.lower()))
        if key and key not in seen:
            seen.add(key)
            unique.append(item)
    return unique[-cap:]


def _content_words(text: str) -> set[str]:
    # "the data's pulled": the data, not a word "data's".
    words = [w.removesuffix("'s") for w in _WORD.findall(text.lower().replace("’", "'"))]
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in _STOPWORDS}
