"""Recognising what the user writes about their actions (spec 000 §5.1, §6.2, §6.5, §10.2).

Pure functions of the message text: near-term temporal actions worth storing
automatically ("heading to the gym"), status updates ("I'm back", "didn't go"), duration
reports for calibration ("the gym took 3 hours"), and scheduling intent. Clock
directives (``clock it: …``) are the relay's own syntax: see
:mod:`middleware.actions.directives`.

Natural-language recognition is keyed by language in :data:`PATTERNS` (a
:class:`~middleware.actions.language.LanguagePatterns` each; English, in
:mod:`middleware.actions.patterns_en`, is complete); every function tries each language
in order.
Precision beats recall throughout: a missed action costs a follow-up question, a wrong one
puts words in the user's mouth. So detectors only fire at the start of a clause, on a
first-person or subject-less statement, never in a question, and never on a negation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from middleware.actions.directives import SEPARATORS
from middleware.actions.language import ActionStatus, IntentRule, LanguagePatterns, StatusRule
from middleware.actions.patterns_en import ENGLISH
from middleware.actions.prefilter import fold, gate_text
from middleware.actions.templates import TEMPLATES, ActivityTemplate, match_activity
from middleware.text_cache import MAX_CHARS, per_text

__all__ = [
    "PATTERNS",
    "SCHEDULING_CONFIDENT",
    "DetectedAction",
    "DurationReport",
    "StatusUpdate",
    "detect_duration_report",
    "detect_status_update",
    "detect_temporal_action",
    "is_time_or_scheduling",
    "key_words",
    "label_for_clocked",
    "object_words",
    "scheduling_confidence",
]

LABEL_MAX = 60
_SCAN_LIMIT = 4000
_MOMENT_AWAY = "brb"  # the activity of "brb", "back in 10"
_PHRASE_WORDS = 8  # a clocked activity phrase, not a paragraph
# A message this sure of its scheduling intent may set thread_kind "scheduling" (§5.2).
SCHEDULING_CONFIDENT = 0.8

PATTERNS: dict[str, LanguagePatterns] = {"en": ENGLISH}
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE_BREAK = re.compile(r"[,;:—–]\s*|\s-\s")


# --- the rules worth trying ---------------------------------------------------------------


def _folded(text: str) -> str:
    # The text the sentences are cut from (see _statements): every clause is part of it
    # (the gates' needles have straight apostrophes, as the sentences do). A short text's
    # is the one all stages' gates share.
    if len(text) <= MAX_CHARS:
        return gate_text(text)
    return fold(text[:_SCAN_LIMIT].replace("’", "'").replace("‘", "'"))


def _may_match(gate: re.Pattern[str] | None, text: str) -> bool:
    """False when no rule behind ``gate`` can match anywhere in ``text`` (see
    :mod:`middleware.actions.prefilter`): most messages skip the sentence and clause loops."""
    return gate is None or gate.search(_folded(text)) is not None


# --- temporal actions -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DetectedAction:
    """An action worth storing: a short normalised ``label`` ("Go to the gym"), its
    activity template key when one matched, and whether it has a duration window
    (``temporal``; a clocked "paid invoice" has none).

    ``dated``: the user placed it on a later day ("call the bank tomorrow at 9"). Its
    label keeps the time phrase, which the caller replaces by the instant it gives; an
    automatic one is worth storing only with that instant. ``minutes``: how long the user
    said it would last ("in a meeting for an hour"), which leaves the label.

    ``may_be_later``: a clocked activity with no word this module reads for when ("gym",
    "standup notes due tomorrow", "call mom friday"): ``in_progress`` only for want of
    one, so a later day or time the caller reads in its words makes it a plan for then
    (see :func:`~middleware.actions.lifecycle.new_action`)."""

    label: str
    activity: str | None
    status: ActionStatus
    temporal: bool
    dated: bool = False
    minutes: int | None = None  # how long the user said it lasts ("for an hour")
    may_be_later: bool = False


def detect_temporal_action(text: str) -> DetectedAction | None:
    """A near-term temporal action announced in ``text`` (spec 000 §6.2 B), or None.

    Fires on first-person or subject-less announcements at the start of a clause ("about
    to …", "heading to …", "going to sleep", "brb", "after X I will …", "I'm going to
    <activity> now/later/tonight", "gonna …", "leaving for …", "on my way to …", "time
    for …", an obligation with a day: "I need to/have to/must/should … tomorrow"). Never
    on questions, negations, hedges ("maybe I'll …"), reported speech, or plans with no
    day ("someday", "next time"). A plan for a later day ("tomorrow at 9",
    "on Friday") is ``dated`` (see :class:`DetectedAction`).
    "about to/heading/brb/going to sleep" are ``in_progress``; "later/tonight/after X"
    and dated ones ``planned``.
    """
    for language, patterns in PATTERNS.items():
        found = _first_action(text, language) if _may_match(patterns.intent_gate, text) else None
        if found is not None:
            return found
    return None


def _first_action(text: str, language: str) -> DetectedAction | None:
    patterns = PATTERNS[language]
    away: DetectedAction | None = None
    for sentence in _sentences(text, language):
        for clause in _clauses(sentence, patterns.filler):
            found = _clause_action(clause, patterns)
            if found is not None and found.activity != _MOMENT_AWAY:
                return found
            # What a moment away is for, said beside it ("brb, grabbing lunch"), is the
            # action: the later "back" closes it and its own question fits.
            away = away or found
    return away


def _clause_action(clause: str, patterns: LanguagePatterns) -> DetectedAction | None:
    for rule in patterns.intents:
        match = rule.pattern.match(clause)
        found = _action(rule, match, clause, patterns) if match else None
        if found is not None:
            return found
    return None


def label_for_clocked(label_text: str) -> DetectedAction:
    """Normalise an explicitly clocked text; always returns an action.

    A temporal announcement is read as :func:`detect_temporal_action` would; a short
    phrase naming an activity ("gym", "eat dinner at 8", "gym with Sam, leg day") is
    temporal with that activity, under way unless it says later ("at 8") or names a later
    day or time the caller reads ("gym tomorrow": ``may_be_later``); a statement ("paid
    invoice", "standup moved to 3pm", "the bank details are in the doc") or anything else
    is a non-temporal note.
    """
    detected = detect_temporal_action(label_text)
    if detected is not None:
        return detected
    # Clocked texts are short; the first language whose "I …" opening fits reads it.
    patterns = next(
        (p for p in PATTERNS.values() if p.subject.match(label_text)), next(iter(PATTERNS.values()))
    )
    text = patterns.subject.sub("", label_text.strip(), count=1).strip().rstrip(SEPARATORS)
    # "nap now", "report due": when it is, not what; "now" is kept in ``text`` (said_now).
    named = _strip_tail(text, patterns.clocked_tail)
    label = _label(_scrub(named, patterns)) or _label(label_text) or "Clocked item"
    template = match_activity(text)
    core = _strip_times(text, patterns)  # "eat dinner at 8" is a bare activity
    if template and len(core.split()) <= _PHRASE_WORDS and not patterns.statement.search(core):
        if patterns.later_marker.search(text):
            return DetectedAction(label, template.key, "planned", temporal=True)
        said_now = patterns.now_marker.search(text) is not None
        return DetectedAction(label, template.key, "in_progress", True, may_be_later=not said_now)
    return DetectedAction(label, None, "planned", temporal=False)


def _sentences(text: str, language: str, questions: bool = True) -> Iterator[str]:
    """Sentences not hedged, conditional or reported (and not questions unless asked)."""
    for sentence in _statements(text[:_SCAN_LIMIT], language):
        if questions or not sentence.endswith("?"):
            yield sentence


@per_text
def _statements(text: str, language: str) -> tuple[str, ...]:
    """Sentences of ``text`` not hedged, conditional or reported, questions included;
    every detector reads them, so they are split once per text."""
    # What people say about their plans sits in short chat messages; a pasted log or
    # document is read no further than this, so a huge message costs no more.
    reject = PATTERNS[language].reject
    sentences = (s.strip() for s in _SENTENCE_BREAK.split(text.replace("’", "'")))
    return tuple(s for s in sentences if s and not reject.search(s))


def _clauses(sentence: str, filler: re.Pattern[str]) -> Iterator[str]:
    """The sentence from each clause start on, fillers ("ok so, …") skipped; a clause
    that is a question is skipped ("heading out, wanna come?" still heads out)."""
    starts = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(sentence)]
    for start, end in zip(starts, [*starts[1:], len(sentence)], strict=True):
        rest = filler.sub("", sentence[start:], count=1)
        if rest and "?" not in sentence[start:end]:
            yield rest


def _action(
    rule: IntentRule, match: re.Match[str], clause: str, patterns: LanguagePatterns
) -> DetectedAction | None:
    groups = match.groupdict()
    raw_act = patterns.act_break.sub("", groups.get("act") or "").strip()
    cond = groups.get("cond")
    after = patterns.after_clause.search(raw_act)
    if after:
        raw_act, cond = raw_act[: after.start()], after["cond"]
    lasts = patterns.stated_duration.search(raw_act)
    minutes = _minutes(lasts, patterns) if lasts else None
    if lasts:
        raw_act = f"{raw_act[: lasts.start()]}{raw_act[lasts.end() :]}".strip()
    if rule.base:
        verb, _, rest = raw_act.partition(" ")
        raw_act = f"{patterns.base_form(verb)} {rest}".strip()
    # Time words count after the rule's own words and only up to the clause's end: "back
    # in 10" is brb, "heading out now, see you tomorrow" is now.
    tail = clause[match.start("act") if groups.get("act") is not None else match.end() :]
    markers = f"{patterns.act_break.sub('', tail)} {cond or ''}"
    if patterns.far_marker.search(markers):
        return None
    dated = patterns.later_day.search(markers) is not None
    act = _strip_times(raw_act, patterns)
    if "{act}" in rule.label and (not act or patterns.blocked_act.match(act)):
        return None
    activity = rule.activity
    if activity is None and act:
        template = match_activity(act)
        activity = template.key if template else None
    now = patterns.now_marker.search(markers) is not None
    later = dated or bool(cond) or patterns.later_marker.search(markers) is not None
    if rule.needs == "activity" and activity is None:
        return None
    if rule.needs == "activity_or_later" and activity is None and not later:
        return None  # "I'm going to paste the log now" is narration, not an action
    if rule.needs == "activity_and_later" and (activity is None or not later):
        return None  # "I have a doctor appointment at 3" is a plan; "I have a question" not
    if rule.needs == "later" and not later:
        return None  # "I'm meeting Sam at 5" is a plan; "I'm working on the API" is not
    if rule.needs == "day" and not dated:
        return None  # "I need to sleep" is no plan; "I need to … tomorrow" is one
    # A dated label keeps its day and time words: the caller takes out the phrase it
    # read the start from (a label saying "tomorrow" would be wrong the next day).
    shown = " ".join(raw_act.split()) if dated else act
    label = rule.label.format(act=_scrub(shown, patterns), prep=(groups.get("prep") or "").lower())
    if cond:
        label = f"{label} ({patterns.after_word} {_condition(cond, patterns, keep=dated)})"
    status: ActionStatus = "planned" if later else "in_progress" if now else rule.status
    return DetectedAction(_label(label), activity, status, True, dated, minutes)


def _strip_times(act: str, patterns: LanguagePatterns) -> str:
    return _strip_tail(act, patterns.trailing_time)


def _strip_tail(text: str, tail: re.Pattern[str]) -> str:
    previous = None
    while previous != text:
        previous, text = text, tail.sub("", text).strip()
    return text


def _scrub(text: str, patterns: LanguagePatterns) -> str:
    """Pronouns out of a label: "call my mom" → "call mom", "walk my dog" → "walk the dog"."""
    for pattern, replacement in patterns.pronouns:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


def _condition(cond: str, patterns: LanguagePatterns, *, keep: bool = False) -> str:
    # "after I get home" → "after getting home": the label keeps no pronouns (and no
    # times, unless ``keep``: a dated label's are taken out by the caller).
    cond = patterns.act_break.sub("", cond).strip()
    cond = cond if keep else _strip_times(cond, patterns)
    subject = patterns.cond_subject.match(cond)
    if subject:
        verb, _, rest = cond[subject.end() :].partition(" ")
        cond = f"{patterns.gerund(verb)} {rest}".strip()
    return _scrub(cond, patterns)


def _label(text: str) -> str:
    text = " ".join(text.split()).strip(SEPARATORS + "\"'")
    if len(text) > LABEL_MAX:
        text = text[: LABEL_MAX - 1].rsplit(" ", 1)[0].rstrip(SEPARATORS) + "…"
    return text[:1].upper() + text[1:]


# --- status updates and duration reports ------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """The user saying an action is over: ``done`` ("I'm back") or ``canceled`` ("didn't
    go", "never mind the bank call"), or that it is not over but later: ``postponed``
    ("can't call the bank until Monday"), with ``until`` the words for when it can happen
    at the earliest ("Monday"). ``activity`` when they named one ("just got back from
    the gym"), else ``named``, the :func:`key_words` of what they named ("the bank call
    is done": bank, call). ``about``, for a postponement, is what it names without what
    is done to it (:func:`object_words`, less the words naming its activity): "can't
    ring the bank until Monday" is about the bank, whichever call it was first said as,
    and puts off no call to mom. A postponement by a duration ("the standup is delayed by
    an hour") has ``later_by``, its minutes, instead of ``until``."""

    status: Literal["done", "canceled", "postponed"]
    activity: str | None
    named: frozenset[str] = frozenset()
    until: str | None = None
    about: frozenset[str] = frozenset()
    later_by: int | None = None  # minutes, for a postponement by a duration ("by an hour")


@dataclass(frozen=True, slots=True)
class DurationReport:
    """ "the gym took 3 hours": an activity template key and how long it took."""

    activity: str
    minutes: int


def detect_status_update(text: str) -> StatusUpdate | None:
    """A done/canceled statement in ``text`` (clause start, not a question), or None.

    Cancellations are checked first, so "didn't make it" is not "made it". A statement
    that names something (finished X, skipped X, X is done, called X) carries the known
    activity X is, else (for a completion) X's key words, so "I finished the report"
    does not close the gym;
    "it"/"that" mean the latest action, except in "it's done", which names nothing. A
    completion naming words is not believed in a sentence saying it is not over ("called
    the bank but no answer").
    """
    for language, patterns in PATTERNS.items():
        update = _first_status(text, language) if _may_match(patterns.status_gate, text) else None
        if update is not None:
            return update
    return None


def _first_status(text: str, language: str) -> StatusUpdate | None:
    patterns = PATTERNS[language]
    for sentence in _sentences(text, language):
        for clause in _clauses(sentence, patterns.status_filler):
            for rule in patterns.status:
                match = rule.pattern.match(clause)
                update = _status(rule, match, sentence, patterns) if match else None
                if update is not None:
                    return update
    return None


def _status(
    rule: StatusRule, match: re.Match[str], sentence: str, patterns: LanguagePatterns
) -> StatusUpdate | None:
    groups = match.groupdict()
    act = (groups.get("act") or "").strip()
    until = (groups.get("until") or groups.get("to") or "").strip() or None
    later_by = _minutes(match, patterns) if groups.get("n") else None
    if groups.get("n") and later_by is None:
        return None  # "delayed by 90 hours" is no time of day this reads
    # A rule about what it names reads it by its words: "called mom" is no call to the bank.
    template = match_activity(act) if act and not rule.named else None
    activity = rule.activity or (template.key if template else None)
    if not act or act.lower() in ("it", "that", "this"):
        return StatusUpdate(rule.status, activity, until=until, later_by=later_by)
    postponed = rule.status == "postponed"
    about = _object(act, template, patterns, rule.object) if postponed else frozenset()
    if activity is not None:
        return StatusUpdate(rule.status, activity, until=until, about=about, later_by=later_by)
    if rule.status == "canceled" and not rule.named:
        return None  # "not going to lie" cancels nothing: only explicit words go by words
    named = _key_words(act, patterns)
    # "no need to call the bank" is a cancellation in words that would read as unfinished.
    if not named or (rule.status == "done" and patterns.unfinished.search(sentence)):
        return None
    return StatusUpdate(rule.status, None, named, until, about, later_by)


def _object(
    act: str, template: ActivityTemplate | None, patterns: LanguagePatterns, bare: bool = False
) -> frozenset[str]:
    """What ``act`` is about (:func:`object_words`), less the words that name its activity
    ("ring the bank": bank; "go to the gym" and "work out": nothing beyond the gym).
    ``bare``: ``act`` has no verb to leave out ("the quarterly report": quarterly, report)."""
    words = _ordered_key_words(act, patterns)
    spoken = frozenset(words if bare else words[1:] or words)
    if template is None:
        return spoken
    return spoken - _key_words(" ".join(template.keywords.findall(act)), patterns)


def key_words(text: str) -> frozenset[str]:
    """The words of ``text`` that say what it is about, each reduced to a crude stem
    ("Call the bank" and "called the bank" both give call, bank), read with the first
    language that leaves any."""
    for patterns in PATTERNS.values():
        words = _key_words(text, patterns)
        if words:
            return words
    return frozenset()


def object_words(text: str, activity: str | None = None) -> frozenset[str]:
    """What an action's wording is about, without what is done to it: the
    :func:`key_words` after the first, its verb ("Call the bank" and "ring the bank"
    both give bank; "Send my CV to Acme" gives cv, acme), or the one there is ("Gym").
    Given the ``activity`` it was detected as, the words naming that activity go too
    ("Call the bank" as a call: bank; "Going to bed" as sleep: nothing)."""
    template = TEMPLATES.get(activity) if activity else None
    for patterns in PATTERNS.values():
        if _ordered_key_words(text, patterns):
            return _object(text, template, patterns)
    return frozenset()


def _key_words(text: str, patterns: LanguagePatterns) -> frozenset[str]:
    return frozenset(_ordered_key_words(text, patterns))


def _ordered_key_words(text: str, patterns: LanguagePatterns) -> list[str]:
    words = re.findall(r"[^\W_]+(?:'[^\W_]+)?", text.casefold().replace("’", "'"))
    return [
        _stem(patterns.base_forms.get(word, word))
        for word in words
        if word not in patterns.stopwords
    ]


def _stem(word: str) -> str:
    # The same cut on both sides is all a match needs: "reports"/"report", "baked"/"bake".
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def detect_duration_report(text: str) -> DurationReport | None:
    """How long a known activity took ("the gym took me 2.5 hours", "slept 9 hours"), or
    None. The activity must resolve through :func:`match_activity`; at most a day."""
    for language, patterns in PATTERNS.items():
        gate = patterns.duration_gate
        report = _first_report(text, language) if _may_match(gate, text) else None
        if report is not None:
            return report
    return None


def _first_report(text: str, language: str) -> DurationReport | None:
    patterns = PATTERNS[language]
    for sentence in _sentences(text, language, questions=False):
        for rule in patterns.durations:
            match = rule.pattern.search(sentence)
            if match is None:
                continue
            template = match_activity(match.groupdict().get("act") or "")
            activity = rule.activity or (template.key if template else None)
            minutes = _minutes(match, patterns)
            if activity is not None and minutes is not None:
                return DurationReport(activity, minutes)
    return None


def _minutes(match: re.Match[str], patterns: LanguagePatterns) -> int | None:
    count = match["n"].lower().replace(",", ".")
    words = " ".join(count.split())
    number = patterns.number_words.get(words)
    value = number if number is not None else float(count)
    per_unit = 60 if patterns.hour_unit.match(match["unit"]) else 1
    value = (value + (0.5 if match.groupdict().get("half") else 0)) * per_unit
    value += float(match.groupdict().get("extra") or 0)
    minutes = round(value)
    return minutes if 1 <= minutes <= 24 * 60 else None


# --- scheduling -----------------------------------------------------------------------


def scheduling_confidence(text: str) -> float:
    """0..1: how clearly ``text`` is about scheduling (spec 000 §5.1, §5.2).

    Explicit intent (schedule, reschedule, appointment, remind me, calendar, book a
    table…) scores ≥ :data:`SCHEDULING_CONFIDENT`; softer signals ("what time", "when
    can we", availability, deadline, "meeting at") score 0.6–0.75 — enough to turn
    temporal awareness on, not enough to persist the thread kind.
    """
    best = 0.0
    for patterns in PATTERNS.values():
        if patterns.scheduling_gate.may_match(text):  # else neither pattern can match
            best = max(best, _scheduling_score(text, patterns))
    return best


def _scheduling_score(text: str, patterns: LanguagePatterns) -> float:
    """One language's :func:`scheduling_confidence`, read with its patterns."""
    strong = len(patterns.scheduling_strong.findall(text))
    medium = len(patterns.scheduling_medium.findall(text))
    if strong:
        return min(1.0, 0.9 + 0.05 * (strong + medium - 1))
    if medium:
        return min(0.75, 0.6 + 0.05 * (medium - 1))
    return 0.0


def is_time_or_scheduling(text: str) -> bool:
    """Whether ``text`` is about scheduling at all (§5.1 "scheduling intent")."""
    return scheduling_confidence(text) >= 0.5
