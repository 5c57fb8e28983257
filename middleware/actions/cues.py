"""Bounded inference cues (spec 000 §6.5): "I'm sore" after "heading to the gym".

When the user mentions a feeling or state that an open action could explain, the model
may ask a *confirming* question — never state it as fact (§6.5 hard rule, §8.1). This
module only finds the candidate: which open action, which cue word, and a hedged question
to offer. Matching is whole words/phrases, case-insensitive, and skips negated cues ("not
sore"). Configured extra cues (``[clock.inference] cues``) add to the table per activity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from types import MappingProxyType

from middleware.actions.model import Action

__all__ = ["CUES", "CueMatch", "find_cue", "merge_cues"]

CUES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "gym": (
            "sore", "aching", "achy", "legs hurt", "arms hurt", "muscles hurt", "exhausted",
            "wiped out", "pumped", "can't feel my legs", "can't lift my arms", "doms",
        ),
        "run": (
            "sore", "aching", "legs hurt", "knees hurt", "out of breath", "winded",
            "exhausted", "wiped out", "shin splints", "can't feel my legs",
        ),
        "walk": ("feet hurt", "legs hurt", "blisters", "fresh air"),
        "meal": (
            "stomach hurts", "stomach ache", "stomachache", "tummy hurts", "full", "stuffed",
            "bloated", "nauseous", "nauseated", "food coma", "ate too much",
            "sick to my stomach",
        ),
        "sleep": (
            "rested", "well rested", "groggy", "slept well", "slept badly", "slept great",
            "slept terribly", "refreshed", "still sleepy", "overslept", "barely slept",
        ),
        "nap": ("rested", "groggy", "refreshed", "still sleepy", "overslept"),
        "night_out": (
            "so tired", "hungover", "hangover", "exhausted", "headache", "head hurts",
            "rough night", "wrecked", "still drunk",
        ),
        "commute": (
            "stuck in traffic", "traffic", "made it", "delayed", "train was late",
            "bus was late", "missed the bus", "missed my train", "long drive",
        ),
        "meeting": ("drained", "that dragged", "zoom fatigue", "talked for hours"),
        "study": ("brain is fried", "brain hurts", "mentally exhausted", "fried"),
        "flight": (
            "landed", "just landed", "touched down", "jet lag", "jetlag", "jet lagged",
            "jet-lagged", "jetlagged", "delayed", "boarding", "at the gate", "layover",
            "turbulence", "missed my flight", "through security", "lost my luggage",
        ),
        "appointment": (
            "the dentist said", "the doctor said", "the vet said", "filling", "numb",
            "injection", "jab", "prescription", "stitches", "x-ray", "blood test",
            "waiting room", "root canal", "new haircut",
        ),
        "school_run": (
            "dropped the kids off", "dropped them off", "picked the kids up",
            "picked up the kids", "school gates", "late for school", "traffic",
        ),
        "ride": (
            "saddle sore", "legs hurt", "sore", "flat tyre", "flat tire", "puncture",
            "headwind", "windswept", "exhausted",
        ),
        "swim": (
            "chlorine", "smell of chlorine", "goggles", "wet hair", "arms hurt",
            "shoulders hurt", "sore", "exhausted",
        ),
    }
)  # fmt: skip

# {label} is the action's label, {doing} the label as a verb phrase ("chug the milk").
_QUESTIONS: Mapping[str, str] = MappingProxyType(
    {
        "gym": "Tough workout — did you end up going to the gym?",
        "run": "Sounds like a hard run — did you end up going?",
        "walk": "Long walk? Did you end up going?",
        "meal": "Did you actually {doing}? That would explain it.",
        "sleep": "Did you end up getting some sleep? That might explain it.",
        "nap": "Did you end up getting that nap in?",
        "night_out": "Big night? Did you end up going out?",
        "commute": "Rough trip? Did you make it okay?",
        "meeting": "Long meeting? Did it end up running over?",
        "study": "Long study session? Did you end up getting to it?",
        "flight": "Was that the flight? Did it go okay?",
        "appointment": "Was that from the appointment? How did it go?",
        "school_run": "Was that the school run? Did it go okay?",
        "ride": "Tough ride? Did you end up going?",
        "swim": "Long swim? Did you end up going?",
    }
)
_GENERIC = 'Could that be from earlier ("{label}")? Did it end up happening?'
_NEGATED = re.compile(r"(?:\b(?:not|never|no|without)|n't)\s+(?:[\w']+\s+){0,2}$", re.I)
_NO_EXTRA: Mapping[str, Sequence[str]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class CueMatch:
    """An open action the message may be a consequence of, the cue as listed, and a
    hedged confirming question to offer."""

    action: Action
    cue: str
    question: str


def merge_cues(extra: Mapping[str, Sequence[str]] = _NO_EXTRA) -> Mapping[str, tuple[str, ...]]:
    """:data:`CUES` with ``extra`` words added per activity (never replacing); blank or
    non-string entries are ignored. An activity with no cues of its own starts a list
    (the config accepts only known activities: ``[clock.inference] cues``)."""
    merged = {key: list(words) for key, words in CUES.items()}
    for key, words in extra.items():
        if isinstance(words, str):
            words = [words]  # a lone string in config is one cue, not its letters
        known = merged.setdefault(key, [])
        seen = {word.casefold() for word in known}
        for word in words:
            if isinstance(word, str) and word.strip() and word.strip().casefold() not in seen:
                known.append(word.strip())
                seen.add(word.strip().casefold())
    return MappingProxyType({key: tuple(words) for key, words in merged.items()})


def find_cue(
    text: str,
    actions: Sequence[Action],
    *,
    now: datetime,
    extra: Mapping[str, Sequence[str]] = _NO_EXTRA,
) -> CueMatch | None:
    """The newest open (planned, in progress or likely done) action whose activity's cues
    occur in ``text``, or None. Expired and closed actions never match, nor one whose
    start is still ahead (it cannot explain anything yet); an action with no activity has
    no cues. A meal action uses both its own ("meal:dinner") and the meal family's cues."""
    table = merge_cues(extra) if extra else CUES
    text = text.replace("’", "'")
    for action in sorted(actions, key=lambda a: a.recorded_at, reverse=True):
        if action.activity is None or not action.is_open(now) or not action.has_started(now):
            continue
        family = action.activity.split(":", 1)[0]
        words = (*table.get(action.activity, ()), *table.get(family, ()))
        cue = _first_cue(text, tuple(dict.fromkeys(words)))
        if cue is not None:
            return CueMatch(action, cue, _question(action, family))
    return None


def _first_cue(text: str, words: tuple[str, ...]) -> str | None:
    if not words:
        return None
    pattern, by_key = _pattern(words)
    for match in pattern.finditer(text):
        # "not sore" is no cue; only the few words before count (and keep this linear)
        if not _NEGATED.search(text[max(0, match.start() - 40) : match.start()]):
            return by_key[_key(match.group())]
    return None


@cache
def _pattern(words: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    # Longest first, so "so tired" wins over "tired"; spaces match any whitespace.
    ordered = sorted(words, key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(map(re.escape, word.split())) for word in ordered)
    pattern = re.compile(rf"(?<![\w'])(?:{alternatives})(?![\w'])", re.IGNORECASE)
    return pattern, {_key(word): word for word in ordered}


def _key(phrase: str) -> str:
    return " ".join(phrase.casefold().split())


def _question(action: Action, family: str) -> str:
    template = _QUESTIONS.get(action.activity or "") or _QUESTIONS.get(family) or _GENERIC
    return template.format(label=action.label, doing=_doing(action.label))


def _doing(label: str) -> str:
    """The label as something one does: "Chug 2 gallons of milk" → "chug 2 gallons of
    milk", "Dinner" / "Time for dinner" → "have dinner"."""
    text = label[:1].lower() + label[1:]
    if text.startswith("time for "):
        text = text.removeprefix("time for ")
        return f"have {text}"
    return f"have {text}" if len(text.split()) == 1 else text
