"""Which action rules could match a text at all, read off the rules' own patterns.

Most messages match no action rule, yet trying every case-insensitive rule at every
clause start costs tens of microseconds a message. Every match of a rule contains one of
a few strings its pattern requires, its *needles*: "sleep" or "bed" for the sleep rule,
"took", "lasted", "ran" or "went" for "the gym took 2 hours". They are derived from the
parsed pattern, so they follow the rule table with no word list to keep in step. A rule
none of whose needles is in the :func:`fold` of a text cannot match anywhere in that
text; a detector whose rules all have none there returns at once (:func:`needle_search`
looks for all of a detector's needles in one pass).

The guarantee, for every pattern ``p`` and text ``t``: if ``p`` matches anywhere in ``t``
(ignoring case or not), some needle of ``p`` is in ``fold(t)``. Needles are built from
the literal characters, whitespace (``\\s``) and optional parts of a pattern; anything
else (``.``, ``[^,]``, a named group's free text) only separates them.

The same test guards the per-message checks of the other stages (is it about current
events, an impactful action, scheduling, something to remember): a :class:`Gate` built
from their patterns answers "cannot match" from one search of the shared
:func:`gate_text`, so an ordinary message skips their case-insensitive scans.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from re import _constants as sre  # type: ignore[attr-defined]  # no public API parses
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from middleware.text_cache import MAX_CHARS, per_text

__all__ = ["GATES", "Gate", "fold", "gate_needle", "gate_text", "needle_search", "needles"]

_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_SPACE = [(sre.CATEGORY, sre.CATEGORY_SPACE)]
# Exact strings kept per part before they are cut into needles ("i'm", "i m", "im" …).
_MAX_STRINGS = 64
_NOTHING = frozenset({""})


def fold(text: str) -> str:
    """``text`` case-folded, each run of whitespace one space, no space at either end."""
    return " ".join(_fold_chars(text).split())


def _fold_chars(text: str) -> str:
    # Character by character: casefold() maps each character IGNORECASE matches to a
    # letter onto that letter, except the dotted İ (to "i" and a combining dot above)
    # and the dotless ı (unchanged); those two are mapped here.
    return text.casefold().replace("\u0307", "").replace("ı", "i")


def _straight(text: str) -> str:
    # Curly apostrophes as straight ones: several stages read "I’m" as "I'm", so one text
    # serves them all.
    return text.replace("’", "'").replace("‘", "'")


def gate_needle(needle: str) -> str:
    """A needle as it is searched for in :func:`gate_text` (apostrophes straight, as
    there), so a pattern written with ’ still finds its text."""
    return _straight(needle)


@per_text
def gate_text(text: str) -> str:
    """What every :class:`Gate` searches: :func:`fold` of ``text`` with straight
    apostrophes, made once per text for all of them."""
    return fold(_straight(text))


class Gate:
    """A cheap, conservative "none of these patterns can match" test.

    ``may_match(text)`` is False only when no pattern matches anywhere in ``text``, nor in
    any span of it with curly apostrophes made straight or whitespace runs joined (with
    any flags, at any position): none of their needles is in :func:`gate_text`. A pattern without
    needles, or a text longer than the per-text cache keeps, always may match.
    """

    __slots__ = ("_search",)

    def __init__(self, *patterns: re.Pattern[str]) -> None:
        found: set[str] = set()
        for pattern in patterns:
            required = needles(pattern)
            if required is None:
                self._search = None
                break
            found |= {gate_needle(needle) for needle in required}
        else:
            self._search = needle_search(found).search
        GATES.append((self, patterns))

    def may_match(self, text: str) -> bool:
        """False when no pattern of this gate can match ``text``."""
        if self._search is None or len(text) > MAX_CHARS:
            return True
        return self._search(gate_text(text)) is not None


#: Every gate made, with its patterns, so the tests can hold each to its patterns.
GATES: list[tuple[Gate, tuple[re.Pattern[str], ...]]] = []


def needles(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Folded strings, one of which is in the :func:`fold` of every text ``pattern``
    matches anywhere in; None when the pattern requires no such string (a rule without
    needles is always tried)."""
    return _sequence(sre_parse.parse(pattern.pattern, pattern.flags)).needles


def needle_search(strings: Iterable[str]) -> re.Pattern[str]:
    """A pattern found in a text wherever one of ``strings`` is (case and all). Shaped as a
    tree of shared prefixes, so the search tries a few letters at each position rather
    than every string."""
    tree: dict[str, Any] = {}
    for string in strings:
        node = tree
        for char in string:
            node = node.setdefault(char, {})
        node[""] = {}  # a string ends here
    return re.compile(_alternation(tree) if tree else "(?!)")


def _alternation(node: dict[str, Any]) -> str:
    if "" in node:
        return ""  # found: longer strings from here on need not be told apart
    branches = [re.escape(char) + _alternation(rest) for char, rest in sorted(node.items())]
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


@dataclass(frozen=True, slots=True)
class _Part:
    """What a part of a pattern requires. ``exact``: every string it can match, folded,
    whitespace runs as one space, when there are few; ``needles``: as :func:`needles`."""

    exact: frozenset[str] | None
    needles: frozenset[str] | None


_UNKNOWN = _Part(None, None)


def _sequence(items: Any) -> _Part:
    """Parts in a row: consecutive exact parts join into longer exact strings; each
    stretch of them and each other part's needles are a valid choice; the most
    selective is kept."""
    choices: list[frozenset[str] | None] = []
    run = _NOTHING  # the exact strings of the parts since the last inexact one
    exact = True
    for part in _parts(items):
        if part.exact is None:
            exact = False
            choices += [_trimmed(run), part.needles]
            run = _NOTHING
            continue
        choices.append(_trimmed(part.exact))  # a part on its own needs fewer strings
        joined = _join(run, part.exact)
        if joined is None:  # too many strings: go on from the end they all share
            exact = False
            choices.append(_trimmed(run))
            joined = _join(frozenset({_shared_end(run)}), part.exact) or part.exact
        run = joined
    choices.append(_trimmed(run))
    found = [choice for choice in choices if choice]
    return _Part(run if exact else None, max(found, key=_selectivity, default=None))


def _parts(items: Any) -> Iterator[_Part]:
    """The parsed items in a row, consecutive literal characters as one part."""
    literal = ""
    for op, av in items:
        if op is sre.LITERAL:
            literal += _char(av)
            continue
        if literal:
            yield _Part(frozenset({literal}), None)
            literal = ""
        yield _item(op, av)
    if literal:
        yield _Part(frozenset({literal}), None)


def _char(code: int) -> str:
    char = chr(code)
    return " " if char.isspace() else _fold_chars(char)


def _item(op: Any, av: Any) -> _Part:
    if op is sre.IN:
        if av == _SPACE:
            return _Part(frozenset({" "}), None)
        if all(kind is sre.LITERAL for kind, _ in av):  # [ap], not [^,] or [a-z]
            return _Part(frozenset(_char(code) for _, code in av), None)
        return _UNKNOWN
    if op in _ZERO_WIDTH:
        return _Part(_NOTHING, None)  # \b, lookarounds: they consume nothing
    if op is sre.SUBPATTERN:
        return _sequence(av[-1])
    if op is sre.ATOMIC_GROUP:
        return _sequence(av)
    if op is sre.BRANCH:
        alternatives = [_sequence(alternative) for alternative in av[1]]
        exact: frozenset[str] | None = None
        if all(a.exact is not None for a in alternatives):
            exact = frozenset().union(*(a.exact or () for a in alternatives))
        # Needles only when every alternative has some.
        needed = [a.needles for a in alternatives]
        union = _fewest(frozenset().union(*(n or () for n in needed))) if all(needed) else None
        return _Part(exact if exact is None or len(exact) <= _MAX_STRINGS else None, union)
    if op in _REPEATS:
        low, high, sub = av
        inner = _sequence(sub)
        if inner.exact == frozenset({" "}):  # \s+, \s*: however many, one run of whitespace
            return _Part(frozenset({" "}) if low else frozenset({"", " "}), None)
        exact = None
        if inner.exact is not None and high == 1:  # x? (or x{1})
            exact = inner.exact | _NOTHING if low == 0 else inner.exact
        return _Part(exact, inner.needles if low else None)
    return _UNKNOWN  # ., [^…], [a-z], \w, backreferences


def _join(left: frozenset[str], right: frozenset[str]) -> frozenset[str] | None:
    if len(left) * len(right) > _MAX_STRINGS:
        return None
    # Two runs of whitespace meeting are one run.
    return frozenset((a + b).replace("  ", " ") for a in left for b in right)


def _shared_end(strings: frozenset[str]) -> str:
    return os.path.commonprefix([s[::-1] for s in strings])[::-1]


def _trimmed(strings: frozenset[str]) -> frozenset[str] | None:
    """Exact strings as needles: without the spaces at their ends (at the end of a text
    the space is gone), and none if any is then empty."""
    return _fewest(frozenset(s.strip(" ") for s in strings))


def _fewest(choice: frozenset[str]) -> frozenset[str] | None:
    """``choice`` without the needles that contain another (where that one is, so is
    the other); None if it holds the empty string."""
    if "" in choice:
        return None
    return frozenset(n for n in choice if not any(m != n and m in n for m in choice))


def _selectivity(choice: frozenset[str]) -> tuple[int, int]:
    # Needles under four letters are in many texts ("to", "the"); from four on, fewer
    # needles are no less rare and keep the gate small ("woke" over "woke up", "woken up").
    return min(4, *(len(needle) for needle in choice)), -len(choice)
