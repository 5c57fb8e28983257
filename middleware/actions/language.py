"""The shape of one language's patterns for the action detectors.

A language is one :class:`LanguagePatterns`; the detectors in
:mod:`middleware.actions.detect` try each registered language in order. English lives in
:mod:`middleware.actions.patterns_en`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from middleware.actions.prefilter import Gate, gate_needle, needle_search, needles

__all__ = [
    "ActionStatus",
    "DurationRule",
    "IntentRule",
    "LanguagePatterns",
    "Needs",
    "StatusRule",
]

ActionStatus = Literal["planned", "in_progress"]
# What an intent rule needs besides its match (see IntentRule).
Needs = Literal["any", "activity", "activity_or_later", "activity_and_later", "later", "day"]


@dataclass(frozen=True, slots=True)
class IntentRule:
    """One way of announcing an action, matched at a clause start.

    ``label`` formats the groups ``act`` (the action phrase, cleaned) and ``prep``;
    ``activity`` forces a template key; ``needs`` is what must also hold for the rule to
    fire: nothing more, a known activity, a known activity or a later time ("tonight"),
    both ("I have a doctor appointment at 3"), a later time or day, or a later day
    ("tomorrow", "on Friday"). ``base``: ``act`` opens
    with a progressive verb, which the label gives in its base form ("flying to Tokyo" →
    "Fly to Tokyo").
    """

    pattern: re.Pattern[str]
    label: str
    status: ActionStatus
    needs: Needs = "any"
    activity: str | None = None
    base: bool = False
    # Derived: strings one of which every match contains (see middleware.actions.prefilter).
    needles: frozenset[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "needles", needles(self.pattern))


@dataclass(frozen=True, slots=True)
class StatusRule:
    """A done/canceled/postponed statement matched at a clause start. A captured ``act``
    names a known activity, an action by its words, or (unless ``named``) "it"/"that":
    the latest action; ``activity`` forces one ("woke up" → sleep). A postponement
    captures ``until`` (or ``to``), the earliest time it can happen now ("Monday"), or
    how much later it is (a duration's groups, as a :class:`DurationRule`'s: "by an hour")."""

    pattern: re.Pattern[str]
    status: Literal["done", "canceled", "postponed"]
    activity: str | None = None
    # About what ``act`` names: an activity, else that action by its words (never the
    # latest action, whatever it is).
    named: bool = False
    # ``act`` is what the statement is about, with no verb before it ("we postponed the
    # quarterly report"): all its words say what it is about.
    object: bool = False
    # Derived: strings one of which every match contains (see middleware.actions.prefilter).
    needles: frozenset[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "needles", needles(self.pattern))


@dataclass(frozen=True, slots=True)
class DurationRule:
    """A duration report searched anywhere in a sentence: groups ``n`` and ``unit``, and
    optionally ``act``, ``half`` ("and a half") and ``extra`` (minutes after hours)."""

    pattern: re.Pattern[str]
    activity: str | None = None
    # Derived: strings one of which every match contains (see middleware.actions.prefilter).
    needles: frozenset[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "needles", needles(self.pattern))


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
    far_marker: re.Pattern[str]  # no day at all ("someday"): never an action
    later_day: re.Pattern[str]  # a later day ("tomorrow"): an action only with its start
    trailing_time: re.Pattern[str]  # time words cut from the end of a label
    clocked_tail: re.Pattern[str]  # cut from the end of a clocked label: "nap now", "report due"
    pronouns: tuple[tuple[re.Pattern[str], str], ...]
    cond_subject: re.Pattern[str]  # "I " opening an "after …" condition
    gerund: Callable[[str], str]
    base_form: Callable[[str], str]  # a verb's -ing form back to its base: "flying" → "fly"
    after_word: str
    subject: re.Pattern[str]  # "I " opening a clocked text
    statement: re.Pattern[str]  # past tense or "is": "paid invoice" is a note, not a plan
    done: tuple[StatusRule, ...]
    unfinished: re.Pattern[str]  # in its sentence, a completion naming words is not believed
    stopwords: frozenset[str]  # not key words of a label or of what a completion names
    base_forms: Mapping[str, str]  # irregular past forms: "sent" → "send"
    canceled: tuple[StatusRule, ...]
    # "can't call the bank until Monday": not over, only later; tried before cancellations.
    postponed: tuple[StatusRule, ...]
    durations: tuple[DurationRule, ...]
    # How long the user says an action will last, in its phrase ("… for an hour"): groups
    # as a DurationRule's.
    stated_duration: re.Pattern[str]
    number_words: Mapping[str, float]
    hour_unit: re.Pattern[str]
    scheduling_strong: re.Pattern[str]
    scheduling_medium: re.Pattern[str]
    # Derived: postponements, cancellations, then done statements, in the order tried.
    status: tuple[StatusRule, ...] = field(init=False, repr=False, compare=False)
    # Derived: found in a folded text wherever one of the rules could match (None: any
    # text, a rule has no needles); see middleware.actions.prefilter.
    intent_gate: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    status_gate: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    duration_gate: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    scheduling_gate: Gate = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", (*self.postponed, *self.canceled, *self.done))
        object.__setattr__(self, "intent_gate", _gate(self.intents))
        object.__setattr__(self, "status_gate", _gate(self.status))
        object.__setattr__(self, "duration_gate", _gate(self.durations))
        gate = Gate(self.scheduling_strong, self.scheduling_medium)
        object.__setattr__(self, "scheduling_gate", gate)


def _gate(
    rules: tuple[IntentRule, ...] | tuple[StatusRule, ...] | tuple[DurationRule, ...],
) -> re.Pattern[str] | None:
    found: set[str] = set()
    for rule in rules:
        if rule.needles is None:
            return None
        found |= {gate_needle(needle) for needle in rule.needles}
    return needle_search(found)
