"""How sure living memory is of what it remembers (spec 003 §8, compactor rule §5.5).

A fact starts at the confidence of its source: 0.95 for what the user states, 1.0 for a
correction (theirs, or an operator's: an admin-added fact is one), 0.6 for what the
nightly job inferred from their decisions. Each time the user says it again it gains
0.05 (up to 1.0) and its ``last_mentioned_at`` moves to that moment; a correction said
again goes back to 1.0.

The stored confidence is the one as of ``last_mentioned_at``. What it is now is computed
from that, never stored: 0.05 less for each whole 30 days since the last mention, down to
0.2. So the answer is the same however often it is asked (the nightly job is idempotent),
and right on the first turn of someone back after months, whose nights did not run while
they were away.

What ages is what the world changes without telling us: facts, and whatever was
inferred. A correction never ages (the correction always wins, §5.4), nor does what the
user asked of us, their name, preferences and standing instructions: they hold until
the user changes them (they need not repeat "call me Ana" for it to stay true).

What the user asked us to keep ("remember that I live in Berlin", ``/memory add``) is
committed (spec 002 tier 3, whose GC never prunes a committed entry): its confidence
still ages, so the card still says it may be out of date, but the compactor never
forgets it; only the user does (or a correction replaces it). Kept for as long as they
said it holds: "remember that I'm in Lisbon this week" is an ordinary fact once that
week is over (:func:`is_kept`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from middleware.continuity.model import MemoryFact, MemoryKind, MemorySource
from middleware.memory.periods import period_end

__all__ = [
    "COMPACT_BELOW",
    "CORRECTION",
    "EXPLICIT",
    "FLOOR",
    "HEDGE_BELOW",
    "INFERRED",
    "ages",
    "base_confidence",
    "confidence_now",
    "is_forgettable",
    "is_hedged",
    "is_kept",
    "mentioned_again",
]

EXPLICIT = 0.95
CORRECTION = 1.0
INFERRED = 0.6
REPEAT_GAIN = 0.05
DECAY_STEP = 0.05
DECAY_PERIOD = timedelta(days=30)
FLOOR = 0.2
# Less sure than a fresh inference: the card says when it was said and that it may be
# out of date (a stated fact, after eight months unmentioned; an inferred one, after one).
HEDGE_BELOW = INFERRED
# The compactor forgets an ageing fact below this, unmentioned for ``COMPACT_AFTER``.
COMPACT_BELOW = 0.3
COMPACT_AFTER = timedelta(days=60)

_STANDING: frozenset[MemoryKind] = frozenset({"name", "preference", "directive"})


def base_confidence(kind: MemoryKind, source: MemorySource) -> float:
    """The confidence a fact starts with: by its source, a correction's being 1.0."""
    if kind == "correction" or source == "admin":
        return CORRECTION
    if source == "promoted":
        return INFERRED
    return EXPLICIT


def mentioned_again(stored: float, kind: MemoryKind, source: MemorySource) -> float:
    """The stored confidence of a fact the user states again (as ``kind`` from
    ``source``): 0.05 more, at least what the new statement alone is worth (a correction
    resets it to 1.0, the user's own word lifts an inferred one to 0.95), at most 1.0."""
    return min(CORRECTION, max(round(stored + REPEAT_GAIN, 2), base_confidence(kind, source)))


def ages(fact: MemoryFact) -> bool:
    """Whether the fact's confidence falls while it goes unmentioned (module docstring)."""
    if fact.kind == "correction" or fact.source == "admin":
        return False
    return fact.source == "promoted" or fact.kind not in _STANDING


def confidence_now(fact: MemoryFact, now: datetime) -> float:
    """The fact's confidence at ``now``: 0.05 less per whole 30 days since it was last
    mentioned, not below 0.2 (nor below what it was stored with, if that is lower)."""
    if not ages(fact):
        return fact.confidence
    periods = max(0, (now - fact.last_mentioned_at) // DECAY_PERIOD)
    decayed = round(fact.confidence - DECAY_STEP * periods, 2)
    return max(decayed, min(FLOOR, fact.confidence))


def is_hedged(fact: MemoryFact, now: datetime) -> bool:
    """Whether the model should be told the fact may be out of date."""
    return confidence_now(fact, now) < HEDGE_BELOW


def is_kept(fact: MemoryFact, now: datetime) -> bool:
    """Whether the fact is kept at the user's request at ``now``: ``committed``, and the
    period its text names ("tomorrow", "this week"), if any, not over. The period is read
    in UTC: a day's difference, against the compactor's months, changes nothing."""
    if not fact.committed:
        return False
    ends = period_end(fact.text, fact.last_mentioned_at, UTC)
    return ends is None or now < ends


def is_forgettable(fact: MemoryFact, now: datetime) -> bool:
    """The compactor's rule (§5.5): an ageing fact below 0.3, unmentioned for 60 days.
    Never a correction, nor a fact the user asked to keep (:func:`is_kept`)."""
    return (
        not is_kept(fact, now)
        and ages(fact)
        and confidence_now(fact, now) < COMPACT_BELOW
        and now - fact.last_mentioned_at >= COMPACT_AFTER
    )
