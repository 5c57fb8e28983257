"""Recognising what the user writes about their actions (spec 000 §5.1, §6.2, §6.5, §10.2).

Pure functions of the message text: clock directives (``clock it: …``, ``clock: kind …``),
near-term temporal actions worth storing automatically ("heading to the gym"), status
updates ("I'm back", "didn't go"), duration reports for calibration ("the gym took 3
hours"), and scheduling intent.

Directives are the relay's own syntax, the same in every language (like slash commands).
Natural-language recognition is keyed by language in :data:`PATTERNS` (a
:class:`LanguagePatterns` each; English is complete); every function tries each language
in order.
Precision beats recall throughout: a missed action costs a follow-up question, a wrong one
puts words in the user's mouth. So detectors only fire at the start of a clause, on a
first-person or subject-less statement, never in a question, and never on a negation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from middleware.actions.templates import match_activity

__all__ = [
    "MODES",
    "PATTERNS",
    "SCHEDULING_CONFIDENT",
    "THREAD_KINDS",
    "ClockIt",
    "DetectedAction",
    "Directive",
    "DurationReport",
    "InvalidDirective",
    "IntentRule",
    "LanguagePatterns",
    "Mode",
    "SetAuto",
    "SetKind",
    "SetMode",
    "StatusRule",
    "StatusUpdate",
    "ThreadKind",
    "DurationRule",
    "detect_duration_report",
    "detect_status_update",
    "detect_temporal_action",
    "is_directive_only",
    "is_time_or_scheduling",
    "label_for_clocked",
    "parse_directive",
    "scheduling_confidence",
]

ThreadKind = Literal["project", "conversation", "scheduling", "operations"]
Mode = Literal["off", "light", "normal"]
ActionStatus = Literal["planned", "in_progress"]
THREAD_KINDS: tuple[ThreadKind, ...] = get_args(ThreadKind)
MODES: tuple[Mode, ...] = get_args(Mode)

LABEL_MAX = 60
_SCAN_LIMIT = 4000
_PHRASE_WORDS = 8  # a clocked activity phrase, not a paragraph
# A message this sure of its scheduling intent may set thread_kind "scheduling" (§5.2).
SCHEDULING_CONFIDENT = 0.8


# --- language patterns ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IntentRule:
    """One way of announcing an action, matched at a clause start.

    ``label`` formats the groups ``act`` (the action phrase, cleaned) and ``prep``;
    ``activity`` forces a template key; ``needs`` is what must also hold for the rule to
    fire: nothing more, a known activity, or a known activity or a later time ("tonight").
    """

    pattern: re.Pattern[str]
    label: str
    status: ActionStatus
    needs: Literal["any", "activity", "activity_or_later"] = "any"
    activity: str | None = None


@dataclass(frozen=True, slots=True)
class StatusRule:
    """A done/canceled statement matched at a clause start. A captured ``act`` must name
    a known activity (or be "it"/"that"); ``activity`` forces one ("woke up" → sleep)."""

    pattern: re.Pattern[str]
    status: Literal["done", "canceled"]
    activity: str | None = None


@dataclass(frozen=True, slots=True)
class DurationRule:
    """A duration report searched anywhere in a sentence: groups ``n`` and ``unit``, and
    optionally ``act``, ``half`` ("and a half") and ``extra`` (minutes after hours)."""

    pattern: re.Pattern[str]
    activity: str | None = None


@dataclass(frozen=True, slots=True)
class LanguagePatterns:
    """Everything language-specific the detectors use; a language is one instance."""

    reject: re.Pattern[str]  # hedges, conditionals, reported speech: skip the sentence
    filler: re.Pattern[str]  # "ok so, " before a clause
    status_filler: re.Pattern[str]  # fewer: "well done" is praise, not "done"
    intents: tuple[IntentRule, ...]
    act_break: re.Pattern[str]  # where an action phrase ends ("…, see you")
    after_clause: re.Pattern[str]  # "… after <cond>" inside an action phrase
    blocked_act: re.Pattern[str]  # negating verbs and idioms ("skip …", "lose my mind")
    now_marker: re.Pattern[str]
    later_marker: re.Pattern[str]
    far_marker: re.Pattern[str]  # beyond today: not a near-term action
    trailing_time: re.Pattern[str]  # time words cut from the end of a label
    pronouns: tuple[tuple[re.Pattern[str], str], ...]
    cond_subject: re.Pattern[str]  # "I " opening an "after …" condition
    gerund: Callable[[str], str]
    after_word: str
    subject: re.Pattern[str]  # "I " opening a clocked text
    statement: re.Pattern[str]  # past tense or "is": "paid invoice" is a note, not a plan
    done: tuple[StatusRule, ...]
    canceled: tuple[StatusRule, ...]
    durations: tuple[DurationRule, ...]
    number_words: Mapping[str, float]
    hour_unit: re.Pattern[str]
    scheduling_strong: re.Pattern[str]
    scheduling_medium: re.Pattern[str]


# --- directives -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClockIt:
    """``clock it: <label_text>`` (or a trailing ``clock it``); ``group`` when clocked for
    the whole group thread (§7.3)."""

    label_text: str
    group: bool = False


@dataclass(frozen=True, slots=True)
class SetKind:
    """``clock: kind <kind>`` (§5.2)."""

    kind: ThreadKind


@dataclass(frozen=True, slots=True)
class SetMode:
    """``clock: mode <mode>`` / ``clock: off``; ``mode`` None (``clock: on``) means back to
    the configured default."""

    mode: Mode | None


@dataclass(frozen=True, slots=True)
class SetAuto:
    """``clock: auto on|off``: auto-storage of temporal actions (§0 auto_clock_…)."""

    enabled: bool


@dataclass(frozen=True, slots=True)
class InvalidDirective:
    """A directive we recognised but cannot apply; ``problem`` tells the user what was
    wrong and what to write instead."""

    problem: str


Directive = ClockIt | SetKind | SetMode | SetAuto | InvalidDirective

_LEADING = re.compile(
    r"^\s*clock(?P<it>\s+it)?(?P<group>\s+(?:for\s+(?:the\s+)?)?group)?\s*:(?P<rest>.*)\Z",
    re.IGNORECASE | re.DOTALL,
)
_TRAILING = re.compile(
    r"(?:^|[\s,;:.!—–-])\s*clock\s+it(?P<group>\s+for\s+(?:the\s+)?group)?\s*[.!]*\s*\Z",
    re.IGNORECASE,
)
_TRAILING_NEGATED = re.compile(r"\b(?:don'?t|do\s+not|never|not|no\s+need\s+to)\s*$", re.I)
_SETTING = re.compile(r"^\s*(?P<key>kind|mode|auto)\b\s*(?P<value>[\w-]*)(?P<tail>.*)$", re.I)
_ON_OFF = re.compile(r"^\s*(?P<value>on|off)\s*[.!]*\s*$", re.IGNORECASE)
_SEPARATORS = " \t\r\n.,;:!—–-"
_EMPTY = (
    "Nothing to clock: write what to remember after the colon — e.g. `clock it: heading to the gym`"
)


def parse_directive(text: str) -> Directive | None:
    """The clock directive ``text`` starts with (or ends with, for ``clock it``), or None.

    Case-insensitive. ``clock it: X`` / ``clock: X`` clock X; ``clock group: X`` and
    ``clock it for the group: X`` clock X for the group; ``clock: kind|mode|auto <value>``,
    ``clock: off`` and ``clock: on`` change settings. A bad setting value or an empty label
    is an :class:`InvalidDirective` saying what to write instead.
    """
    parsed = _parse(text)
    return parsed[0] if parsed else None


def is_directive_only(text: str, directive: Directive) -> bool:
    """Whether ``text`` holds nothing but ``directive`` (for :class:`ClockIt`, the label
    counts as part of it), so a settings change can be answered by the relay itself."""
    parsed = _parse(text)
    return parsed is not None and parsed[0] == directive and not parsed[1].strip(_SEPARATORS)


def _parse(text: str) -> tuple[Directive, str] | None:
    """The directive and whatever else the message says."""
    leading = _LEADING.match(text)
    if leading:
        lines = [line for line in leading["rest"].strip().splitlines() if line.strip()]
        first, remainder = (lines[0].strip(), "\n".join(lines[1:])) if lines else ("", "")
        group = leading["group"] is not None
        if not leading["it"] and not group:
            setting = _setting(first)
            if setting is not None:
                return setting[0], f"{setting[1]}\n{remainder}"
        if not first.strip(_SEPARATORS):
            return InvalidDirective(_EMPTY), remainder
        return ClockIt(first, group=group), remainder
    trailing = _TRAILING.search(text)
    if trailing is None:
        return None
    body = text[: trailing.start()].strip().rstrip(_SEPARATORS)
    if _TRAILING_NEGATED.search(body):
        return None  # "please don't clock it"
    if not body:
        return InvalidDirective(_EMPTY), ""
    return ClockIt(body, group=trailing["group"] is not None), ""


def _setting(line: str) -> tuple[Directive, str] | None:
    """A settings directive on ``line`` and the text after it, or None for a label."""
    on_off = _ON_OFF.match(line)
    if on_off:
        return SetMode("off" if on_off["value"].lower() == "off" else None), ""
    match = _SETTING.match(line)
    if match is None:
        return None
    key, value, tail = match["key"].lower(), match["value"].lower(), match["tail"]
    directive = _setting_value(key, value)
    if directive is not None:
        return directive, tail
    if tail.strip(_SEPARATORS):
        return None  # "clock: kind of tired today" is a label, not a setting
    return InvalidDirective(_setting_problem(key, value)), ""


def _setting_value(key: str, value: str) -> Directive | None:
    if key == "kind":
        kinds: dict[str, ThreadKind] = {kind: kind for kind in THREAD_KINDS}
        return SetKind(kinds[value]) if value in kinds else None
    if key == "mode":
        modes: dict[str, Mode] = {mode: mode for mode in MODES}
        if value in ("on", "default"):
            return SetMode(None)
        return SetMode(modes[value]) if value in modes else None
    if value in ("on", "yes", "true"):
        return SetAuto(True)
    if value in ("off", "no", "false"):
        return SetAuto(False)
    return None


def _setting_problem(key: str, value: str) -> str:
    if key == "kind":
        what, options, example = "a thread kind", ", ".join(THREAD_KINDS), "kind project"
    elif key == "mode":
        what, options, example = "a clock mode", ", ".join(MODES), "mode light"
    else:
        what, options, example = "an auto setting", "on, off", "auto off"
    said = f"'{value}' is not {what}" if value else f"`clock: {key}` needs {what}"
    return f"{said}; use one of: {options} — e.g. `clock: {example}`"


# --- temporal actions -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DetectedAction:
    """An action worth storing: a short normalised ``label`` ("Go to the gym"), its
    activity template key when one matched, and whether it has a duration window
    (``temporal``; a clocked "paid invoice" has none)."""

    label: str
    activity: str | None
    status: ActionStatus
    temporal: bool


def detect_temporal_action(text: str) -> DetectedAction | None:
    """A near-term temporal action announced in ``text`` (spec 000 §6.2 B), or None.

    Fires on first-person or subject-less announcements at the start of a clause ("about
    to …", "heading to …", "going to sleep", "brb", "after X I will …", "I'm going to
    <activity> now/later/tonight", "gonna …", "leaving for …", "on my way to …", "time
    for …"). Never on questions, negations, hedges ("maybe I'll …"), reported speech, or
    plans beyond today ("tomorrow", "next week"), whose TTL would be wrong anyway.
    "about to/heading/brb/going to sleep" are ``in_progress``; "later/tonight/after X"
    ``planned``.
    """
    for patterns in PATTERNS.values():
        for sentence in _sentences(text, patterns):
            for clause in _clauses(sentence, patterns.filler):
                for rule in patterns.intents:
                    match = rule.pattern.match(clause)
                    if match:
                        found = _action(rule, match, clause, patterns)
                        if found is not None:
                            return found
    return None


def label_for_clocked(label_text: str) -> DetectedAction:
    """Normalise an explicitly clocked text; always returns an action.

    A temporal announcement is read as :func:`detect_temporal_action` would; a short
    phrase naming an activity ("gym", "eat dinner at 8", "gym with Sam, leg day") is
    temporal with that activity; a statement ("paid invoice", "standup moved to 3pm",
    "the bank details are in the doc") or anything else is a non-temporal note.
    """
    detected = detect_temporal_action(label_text)
    if detected is not None:
        return detected
    # Clocked texts are short; the first language whose "I …" opening fits reads it.
    patterns = next(
        (p for p in PATTERNS.values() if p.subject.match(label_text)), next(iter(PATTERNS.values()))
    )
    text = patterns.subject.sub("", label_text.strip(), count=1).strip().rstrip(_SEPARATORS)
    label = _label(_scrub(text, patterns)) or _label(label_text) or "Clocked item"
    template = match_activity(text)
    core = _strip_times(text, patterns)  # "eat dinner at 8" is a bare activity
    if template and len(core.split()) <= _PHRASE_WORDS and not patterns.statement.search(core):
        status: ActionStatus = "planned" if patterns.later_marker.search(text) else "in_progress"
        return DetectedAction(label, template.key, status, temporal=True)
    return DetectedAction(label, None, "planned", temporal=False)


def _sentences(text: str, patterns: LanguagePatterns, questions: bool = True) -> Iterator[str]:
    """Sentences not hedged, conditional or reported (and not questions unless asked)."""
    # What people say about their plans sits in short chat messages; a pasted log or
    # document is read no further than this, so a huge message costs no more.
    text = text[:_SCAN_LIMIT].replace("’", "'")
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip()
        if sentence and (questions or not sentence.endswith("?")):
            if not patterns.reject.search(sentence):
                yield sentence


def _clauses(sentence: str, filler: re.Pattern[str]) -> Iterator[str]:
    """The sentence from each clause start on, fillers ("ok so, …") skipped; a clause
    that is a question is skipped ("heading out, wanna come?" still heads out)."""
    starts = [0] + [m.end() for m in re.finditer(r"[,;:—–]\s*|\s-\s", sentence)]
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
    # Time words count after the rule's own words and only up to the clause's end: "back
    # in 10" is brb, "heading out now, see you tomorrow" is now.
    tail = clause[match.start("act") if groups.get("act") is not None else match.end() :]
    markers = f"{patterns.act_break.sub('', tail)} {cond or ''}"
    if patterns.far_marker.search(markers):
        return None
    act = _strip_times(raw_act, patterns)
    if "{act}" in rule.label and (not act or patterns.blocked_act.match(act)):
        return None
    activity = rule.activity
    if activity is None and act:
        template = match_activity(act)
        activity = template.key if template else None
    now = patterns.now_marker.search(markers) is not None
    later = bool(cond) or patterns.later_marker.search(markers) is not None
    if rule.needs == "activity" and activity is None:
        return None
    if rule.needs == "activity_or_later" and activity is None and not later:
        return None  # "I'm going to paste the log now" is narration, not an action
    label = rule.label.format(act=_scrub(act, patterns), prep=(groups.get("prep") or "").lower())
    if cond:
        label = f"{label} ({patterns.after_word} {_condition(cond, patterns)})"
    status: ActionStatus = "planned" if later else "in_progress" if now else rule.status
    return DetectedAction(_label(label), activity, status, temporal=True)


def _strip_times(act: str, patterns: LanguagePatterns) -> str:
    previous = None
    while previous != act:
        previous, act = act, patterns.trailing_time.sub("", act).strip()
    return act


def _scrub(text: str, patterns: LanguagePatterns) -> str:
    """Pronouns out of a label: "call my mom" → "call mom", "walk my dog" → "walk the dog"."""
    for pattern, replacement in patterns.pronouns:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


def _condition(cond: str, patterns: LanguagePatterns) -> str:
    # "after I get home" → "after getting home": the label keeps no pronouns.
    cond = _strip_times(patterns.act_break.sub("", cond).strip(), patterns)
    subject = patterns.cond_subject.match(cond)
    if subject:
        verb, _, rest = cond[subject.end() :].partition(" ")
        cond = f"{patterns.gerund(verb)} {rest}".strip()
    return _scrub(cond, patterns)


def _label(text: str) -> str:
    text = " ".join(text.split()).strip(_SEPARATORS + "\"'")
    if len(text) > LABEL_MAX:
        text = text[: LABEL_MAX - 1].rsplit(" ", 1)[0].rstrip(_SEPARATORS) + "…"
    return text[:1].upper() + text[1:]


# --- status updates and duration reports ------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """The user saying an action is over: ``done`` ("I'm back") or ``canceled`` ("didn't
    go"); ``activity`` when they named one ("just got back from the gym")."""

    status: Literal["done", "canceled"]
    activity: str | None


@dataclass(frozen=True, slots=True)
class DurationReport:
    """ "the gym took 3 hours": an activity template key and how long it took."""

    activity: str
    minutes: int


def detect_status_update(text: str) -> StatusUpdate | None:
    """A done/canceled statement in ``text`` (clause start, not a question), or None.

    Cancellations are checked first, so "didn't make it" is not "made it". A statement
    that names something (finished X, skipped X) only counts when X is a known activity
    (or "it"/"that"), so "I finished the report" does not close the gym.
    """
    for patterns in PATTERNS.values():
        for sentence in _sentences(text, patterns):
            for clause in _clauses(sentence, patterns.status_filler):
                for rule in (*patterns.canceled, *patterns.done):
                    match = rule.pattern.match(clause)
                    update = _status(rule, match) if match else None
                    if update is not None:
                        return update
    return None


def _status(rule: StatusRule, match: re.Match[str]) -> StatusUpdate | None:
    act = (match.groupdict().get("act") or "").strip()
    template = match_activity(act) if act else None
    activity = rule.activity or (template.key if template else None)
    if act and activity is None and act.lower() not in ("it", "that", "this"):
        return None  # "finished the report" says nothing about the gym
    return StatusUpdate(rule.status, activity)


def detect_duration_report(text: str) -> DurationReport | None:
    """How long a known activity took ("the gym took me 2.5 hours", "slept 9 hours"), or
    None. The activity must resolve through :func:`match_activity`; at most a day."""
    for patterns in PATTERNS.values():
        for sentence in _sentences(text, patterns, questions=False):
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
        strong = len(patterns.scheduling_strong.findall(text))
        medium = len(patterns.scheduling_medium.findall(text))
        if strong:
            best = max(best, min(1.0, 0.9 + 0.05 * (strong + medium - 1)))
        elif medium:
            best = max(best, min(0.75, 0.6 + 0.05 * (medium - 1)))
    return best


def is_time_or_scheduling(text: str) -> bool:
    """Whether ``text`` is about scheduling at all (§5.1 "scheduling intent")."""
    return scheduling_confidence(text) >= 0.5


# --- English ----------------------------------------------------------------------------


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _intent(
    pattern: str,
    label: str,
    status: ActionStatus = "in_progress",
    needs: Literal["any", "activity", "activity_or_later"] = "any",
    activity: str | None = None,
) -> IntentRule:
    return IntentRule(_re(pattern), label, status, needs, activity)


def _gerund_en(verb: str) -> str:
    word = verb.lower()
    if word.endswith("ie"):
        return word[:-2] + "ying"
    if word.endswith("e") and not word.endswith(("ee", "ye", "oe")) and len(word) > 2:
        return word[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", word):  # get → getting
        return word + word[-1] + "ing"
    return word + "ing"


_I = r"(?:i\s*'?\s*m|i\s+am|we\s*'?\s*re|we\s+are)"
_PLAN = (
    rf"(?:{_I}\s+(?:(?:going|planning)\s+to|gonna|planning\s+on)|gonna|gotta"
    r"|i\s*'?\s*ll|i\s+will|we\s*'?\s*ll|we\s+will|i\s+plan\s+to)"
)
_JUST = r"(?:just\s+|now\s+|finally\s+)?"
_SUBJ = rf"(?:{_I}\s+)?{_JUST}"
_END = r"(?=\s*(?:[,.!;:—–)]|$))"
_ACT = r"(?P<act>[^,.!;?]+?)"
_OMW = r"(?:on\s+my\s+way|omw)"
_BRB = (
    r"(?:brb|be\s+right\s+back|(?:i\s*'?\s*ll\s+be\s+)?back\s+in\s+(?:a\s+(?:sec|second|bit"
    r"|minute|min|few)|\d{1,3}\s*(?:m|mins?|minutes?|secs?)?))\b"
)
_SLEEP = (
    rf"{_SUBJ}(?:(?:going|gonna|off|heading|headed)\s+(?:to\s+)?|about\s+to\s+|time\s+(?:for"
    r"|to)\s+)(?:go\s+to\s+)?(?:sleep|bed)\b(?!\s+on\s+it)"
    rf"|{_SUBJ}(?:hitting|gonna\s+hit)\s+the\s+(?:hay|sack)\b"
)
_PLACES = (
    r"(?:the|a|an|my|some|work|school|class|church|practice|town|lunch|dinner|breakfast"
    r"|brunch|drinks)\b"
)
_FAMILY = (
    r"mom|mum|dad|mother|father|parents|sister|brother|wife|husband|partner|girlfriend"
    r"|boyfriend|gf|bf|grandma|grandpa|family|kids|son|daughter|friends?|boss|aunt|uncle"
    r"|cousin|roommate|doctor|dentist|team"
)
_NUMBERS = "one two three four five six seven eight nine ten eleven twelve"
_N = rf"(?P<n>\d+(?:[.,]\d+)?|an?|{_NUMBERS.replace(' ', '|')}|half\s+an?)"
_DUR = (
    r"(?:about\s+|around\s+|like\s+|almost\s+|nearly\s+|over\s+|roughly\s+|just\s+|only\s+"
    rf"|barely\s+)?{_N}\s*(?P<unit>hours?|hrs?|h|minutes?|mins?|m)(?![a-z])"
    r"(?P<half>\s+and\s+a\s+half)?(?:\s*(?:and\s+)?(?P<extra>\d+)\s*(?:minutes?|mins?|m)\b)?"
)
_TOOK = (
    r"(?<![\w'])(?P<act>(?:[\w:'-]+\s+){0,3}?[\w:'-]+)\s+(?:took|lasted|ran|went\s+on)"
    rf"\s+(?:me\s+|us\s+)?(?:for\s+)?{_DUR}"
)
_DIDNT_GO = (
    r"(?:i\s+|we\s+)?(?:didn'?t|did\s+not|never)\s+(?:end\s+up\s+)?(?:go(?:ing)?|went"
    rf"|make\s+it)(?:\s+(?:to|for)\s+{_ACT})?(?:\s+after\s+all)?{_END}"
)
_SKIPPED = (
    rf"{_SUBJ}(?:skipped|skipping|gonna\s+skip|going\s+to\s+skip|bailed\s+on|ditched)\s+"
    rf"{_ACT}{_END}"
)
_NOT_ANYMORE = rf"{_SUBJ}not\s+going\s+(?:to\s+{_ACT}\s+)?(?:anymore|any\s+more|after\s+all){_END}"

ENGLISH = LanguagePatterns(
    reject=_re(
        r"^\s*(?:if|unless|whether|maybe|perhaps|probably|might|should|would|could|do|does"
        r"|did|are|is|was|were|can|will|shall|wanna|idk|not\s+sure)\b"
        r"|\b(?:said|says|told|asks?|asked|texted|wrote|claims?)\b"
        r"|\bi\s+(?:wish|hope|wonder|might|may|could|should|would|doubt)\b"
    ),
    filler=_re(
        r"^(?:(?:ok(?:ay)?|alright|all\s+right|right|so|well|anyways?|welp|k+|cool|yeah|yep"
        r"|yup|lol|hey|guys|ugh|hmm+|and|also|now|i\s+think|i\s+guess|actually|sorry"
        r"|@[\w.-]+)\b"
        r"[\s,!.]*)+"
    ),
    status_filler=_re(
        r"^(?:(?:ok(?:ay)?|alright|so|and|yeah|yep|yup|phew|anyways?|@[\w.-]+)\b[\s,!.]*)+"
    ),
    intents=(
        _intent(_BRB, "Be right back"),
        _intent(_SLEEP, "Sleep", activity="sleep"),
        _intent(
            rf"{_SUBJ}(?:heading|headed|going|off|{_OMW})\s+(?:back\s+)?home\b",
            "Head home",
            activity="commute",
        ),
        _intent(
            rf"(?:after|once)\s+(?P<cond>[^,]+?),?\s+{_PLAN}\s+(?P<act>.+)", "{act}", "planned"
        ),
        _intent(
            rf"{_SUBJ}(?:leaving|about\s+to\s+leave)\s+(?:now\s+)?for\s+(?P<act>.+)",
            "Leave for {act}",
        ),
        _intent(rf"{_SUBJ}about\s+to\s+(?P<act>.+)", "{act}"),
        _intent(
            rf"{_SUBJ}(?:heading|headed|off)\s+(?:out\s+|over\s+)?(?P<prep>to|for)\s+(?P<act>.+)",
            "Go {prep} {act}",
        ),
        _intent(rf"{_SUBJ}{_OMW}\s+(?:over\s+)?to\s+(?P<act>.+)", "Go to {act}"),
        _intent(rf"{_SUBJ}(?:heading|headed)\s+out\b(?!\s+(?:to|for)\b)", "Head out"),
        _intent(rf"{_SUBJ}{_OMW}\b(?!\s+(?:over\s+)?to\b)", "On the way", activity="commute"),
        _intent(rf"{_SUBJ}going\s+(?P<prep>to|for)\s+(?P<act>{_PLACES}.*)", "Go {prep} {act}"),
        _intent(r"(?:it\s*'?\s*s\s+)?time\s+for\s+(?P<act>.+)", "Time for {act}", needs="activity"),
        _intent(r"(?:it\s*'?\s*s\s+)?time\s+to\s+(?P<act>.+)", "{act}", needs="activity"),
        _intent(rf"{_PLAN}\s+(?P<act>.+)", "{act}", "planned", "activity_or_later"),
    ),
    act_break=_re(
        r"\s*(?:[,;:!?()—–]|\s-\s|\.(?:\s|$)|\b(?:and\s+then|then|but|because|cause|cuz|coz"
        r"|since|so\s+that|when|while|until|till|lol|haha\w*|lmao|see\s+(?:ya|you)|wish\s+me"
        r"\s+luck|if|unless)\b).*$"
    ),
    after_clause=_re(r"\s+(?:after|once)\s+(?P<cond>.+)$"),
    blocked_act=_re(
        r"(?:not|never|skip\w*|miss\w*|cancel\w*|avoid\w*|stop\w*|quit\w*|pass\s+on|bail\w*"
        r"|be|lose|die|cry|scream|explode|snap|freak\w*|faint|throw\s+up|pass\s+out|give\s+up"
        r"|go\s+(?:crazy|insane|nuts)|say|tell|ask|think|need|have\s+to)\b"
        r"|.*\b(?:you|it|that|this|them)\b"
    ),
    now_marker=_re(r"\b(?:right\s+now|now|rn|asap|real\s+quick|right\s+away)\b"),
    later_marker=_re(
        r"\b(?:later|tonight|soon|in\s+a\s+(?:bit|while|few|minute|min|sec|second|couple)"
        r"|in\s+\d+|this\s+(?:morning|afternoon|evening)|after"
        r"|at\s+\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\.?)?)\b"
    ),
    far_marker=_re(
        r"\b(?:tomorrow|next\s+(?:week|month|year|time)|this\s+weekend|on\s+(?:mon|tues|wednes"
        r"|thurs|fri|satur|sun)day|in\s+\d+\s+(?:days?|weeks?|months?|years?)|some\s*day"
        r"|eventually|one\s+day)\b"
    ),
    trailing_time=_re(
        r"\s+(?:right\s+now|now|rn|asap|soon|later(?:\s+(?:today|on|tonight))?|tonight|today"
        r"|real\s+quick|right\s+away|quickly|first|in\s+a\s+(?:bit|while|sec|second|minute"
        r"|min|few(?:\s+\w+)?|couple(?:\s+of)?\s+\w+)|in\s+\d+\s*\w*|for\s+a\s+(?:bit|while"
        r"|few|sec)|this\s+(?:morning|afternoon|evening)"
        r"|(?:at|around)\s+\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\.?)?)\s*$"
    ),
    pronouns=(
        (_re(rf"\b(?:my|our)\s+(?=(?:{_FAMILY})\b)"), ""),
        (_re(r"\b(?:my|our)\b"), "the"),
        (_re(r"\b(?:myself|ourselves|me)\b"), ""),
    ),
    cond_subject=_re(r"(?:i|we)\s+(?:'?ll\s+|will\s+|just\s+)?(?=\w)"),
    gerund=_gerund_en,
    after_word="after",
    subject=_re(r"^\s*(?:i\s*'?\s*ve\s+|i\s+have\s+|i\s+(?:just\s+)?|we\s+(?:just\s+)?|just\s+)"),
    statement=_re(
        r"\b(?:\w{2,}ed|went|ate|paid|did|had|made|got|took|sent|slept|ran|bought|sold|met"
        r"|left|found|wrote|saw|told|gave|spent|won|lost|done|is|are|was|were)\b"
    ),
    done=(
        StatusRule(_re(rf"{_SUBJ}(?:all\s+)?(?:done|finished)(?:\s+with\s+{_ACT})?{_END}"), "done"),
        StatusRule(_re(rf"(?:i\s+)?{_JUST}(?:finished|completed)\s+{_ACT}{_END}"), "done"),
        StatusRule(_re(rf"{_SUBJ}(?:back|home)(?:\s+(?:now|again|home))?{_END}"), "done"),
        StatusRule(_re(rf"{_SUBJ}(?:got\s+)?back\s+from\s+{_ACT}{_END}"), "done"),
        StatusRule(_re(rf"(?:i\s+)?{_JUST}got\s+(?:back|home)(?:\s+now)?{_END}"), "done"),
        StatusRule(
            _re(rf"(?:i\s+|we\s+)?{_JUST}made\s+it(?:\s+(?:home|back|to\s+{_ACT}))?{_END}"), "done"
        ),
        StatusRule(_re(r"(?:i\s+)?(?:just\s+|finally\s+)?(?:woke|woken)\s+up\b"), "done", "sleep"),
        StatusRule(
            _re(rf"(?:i\s+|we\s+)?{_JUST}(?:went|did)\s+(?:to\s+|for\s+)?{_ACT}{_END}"), "done"
        ),
    ),
    canceled=(
        StatusRule(_re(_DIDNT_GO), "canceled"),
        StatusRule(_re(r"(?:cancel|scratch)\s+(?:that|it)\b"), "canceled"),
        StatusRule(_re(_NOT_ANYMORE), "canceled"),
        StatusRule(
            _re(rf"{_SUBJ}not\s+going\s+(?:to\s+)?{_ACT}(?:\s+(?:today|tonight))?{_END}"),
            "canceled",
        ),
        StatusRule(
            _re(r"(?:i\s+)?(?:(?:have\s+)?changed\s+my\s+mind|change\s+of\s+plans?)\b"), "canceled"
        ),
        StatusRule(_re(_SKIPPED), "canceled"),
    ),
    durations=(
        DurationRule(_re(_TOOK)),
        DurationRule(_re(rf"\bslept\s+(?:for\s+)?{_DUR}"), "sleep"),
        DurationRule(_re(rf"\bnapped\s+(?:for\s+)?{_DUR}"), "nap"),
        DurationRule(_re(rf"\bspent\s+{_DUR}\s+(?:at|on|in|doing)\s+(?P<act>[^,.!;?]+)")),
    ),
    number_words={
        **{word: float(n) for n, word in enumerate(_NUMBERS.split(), 1)},
        **{"a": 1.0, "an": 1.0, "half a": 0.5, "half an": 0.5},
    },
    hour_unit=_re(r"h"),
    scheduling_strong=_re(
        r"\b(?:(?:re)?schedul(?:e|ed|es|ing)|appointments?|remind\s+me|set\s+(?:a|up\s+a)\s+"
        r"(?:reminder|meeting|call)|calendar|book\s+(?:a|an|the)\s+(?:table|meeting|call|slot"
        r"|room|appointment|flight|session|time)|(?:move|push|postpone|bump)\s+(?:the|our|my"
        r"|this)\s+(?:meeting|call|appointment|standup)|let'?s\s+meet|can\s+we\s+meet"
        r"|(?:set\s+up|find)\s+a\s+time)\b"
    ),
    scheduling_medium=_re(
        r"\b(?:(?:meeting|call|standup)\s+(?:at|on)|deadlines?|due\s+(?:by|on|date)"
        r"|what\s+time|when\s+(?:should|can|could|shall|do|would|will)\s+we|availab(?:le"
        r"|ility)|are\s+you\s+free|free\s+(?:at|on|this|next|tomorrow)|time\s+slots?"
        r"|reminder)\b"
    ),
)

PATTERNS: dict[str, LanguagePatterns] = {"en": ENGLISH}
