"""Tier 3, the ``living_memory`` card: the user's stable facts, never dropped while there
is one (spec 001 §6.3).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, tzinfo

from middleware.cards.fitting import (
    DAYS,
    ELLIPSIS,
    LIVING_MEMORY,
    MONTHS,
    count_tokens,
    drop_from_end,
    one_line,
    shorten,
    tagged_card,
)
from middleware.continuity.model import MemoryFact
from middleware.memory.candidate import MemoryCandidate
from middleware.memory.confidence import is_hedged
from middleware.memory.periods import period_end
from middleware.memory.replacement import supersedes

logger = logging.getLogger(__name__)

# Living memory: the name first, then standing instructions, then facts (§6.3), the
# user's corrections before the rest: spec 003 gives them a slot above long-term memory
# (§6) and a 1.5x retrieval boost (§5.3, §8), so trimming reaches them last.
_MEMORY_RANK = {"name": 0, "directive": 1, "preference": 1, "correction": 2, "fact": 3}


def living_memory_card(
    memory: Sequence[MemoryFact], cap: int, dropped: list[str], now: datetime, tz: tzinfo
) -> str | None:
    """The living memory card: never dropped while there is a fact (§6.3). A fact memory
    is no longer sure of (spec 003 §8) says when it was last said and that it may be out
    of date, so the model asks rather than asserts it. One said of a time ("Is in Lisbon
    this week") says the day it was said, and is left off once that time is over: it is
    no longer current, though ``/memory`` still lists it."""
    facts = _standing([fact for fact in memory if one_line(fact.text) and _current(fact, now, tz)])
    if not facts:
        return None
    # Most important first: by kind, the sure before the doubtful, then newest; trimming
    # pops from the end.
    facts.sort(key=lambda fact: fact.created_at, reverse=True)
    facts.sort(
        key=lambda fact: (_MEMORY_RANK.get(fact.kind, len(_MEMORY_RANK)), is_hedged(fact, now))
    )
    lines = [_memory_line(fact, now, tz) for fact in facts]

    def card(body: Sequence[str]) -> str:
        return tagged_card(LIVING_MEMORY, LIVING_MEMORY, body)

    def fits(body: Sequence[str]) -> bool:
        return count_tokens(card(body)) <= cap

    kept = drop_from_end(lines, fits)
    if len(kept) < len(lines):
        dropped.append(f"{LIVING_MEMORY}:facts")
    if fits(kept):
        return card(kept)
    dropped.append(f"{LIVING_MEMORY}:shortened")
    shortened = shorten(kept[0], lambda text: fits([text]))
    if shortened is None:
        logger.warning(
            "living_memory cap %s is below the card's own size; it lands over the cap", cap
        )
        shortened = ELLIPSIS
    return card([shortened])


# The kinds a later fact may retire (as ``middleware.memory.learn`` retires them when said).
_RETIRABLE = ("fact", "correction", "preference")


def _standing(facts: Sequence[MemoryFact]) -> list[MemoryFact]:
    """The facts no fact said later replaces. Said on one account, a new home retires
    the old one when it is stored; two accounts linked later each bring their own ("Lives
    in Paris" on Telegram, "Lives in Tokyo" on Discord), and the model, shown both, could
    not tell which holds: the one said last does, as if both were said on one account.
    ``/memory`` still lists both, for the user to delete one. Facts of one account were
    reconciled when stored: only another account's are compared."""
    if len({fact.user_key for fact in facts}) < 2:
        return list(facts)
    newest_first = sorted(facts, key=lambda fact: fact.last_mentioned_at, reverse=True)
    kept: list[MemoryFact] = []
    for fact in newest_first:
        if not any(_replaces(later, fact) for later in kept):
            kept.append(fact)
    return [fact for fact in facts if fact in kept]


def _replaces(later: MemoryFact, earlier: MemoryFact) -> bool:
    if later.user_key == earlier.user_key:
        return False
    if later.kind == "name" or earlier.kind == "name":
        return later.kind == earlier.kind  # a person has one name
    return (
        later.kind in _RETIRABLE
        and earlier.kind in _RETIRABLE
        and supersedes(MemoryCandidate(later.kind, later.text), earlier.text)
    )


def _current(fact: MemoryFact, now: datetime, tz: tzinfo) -> bool:
    """Whether the time the fact was said of, if any ("… this week"), still runs."""
    ends = period_end(fact.text, fact.last_mentioned_at, tz)
    return ends is None or now < ends


def _memory_line(fact: MemoryFact, now: datetime, tz: tzinfo) -> str:
    text = one_line(fact.text)
    said = fact.last_mentioned_at.astimezone(tz)
    if period_end(fact.text, fact.last_mentioned_at, tz) is not None:
        # "This week" is the week it was said in: the model reads it against today.
        return f"{text} (said {DAYS[said.weekday()]} {said.day} {MONTHS[said.month - 1]})"
    if not is_hedged(fact, now):
        return text
    return f"{text} (said {MONTHS[said.month - 1]} {said.year}, may be out of date)"


# How a living memory card opens (``tagged_card``), in whatever holds it.
LIVING_MEMORY_CARD = f'<card type="{LIVING_MEMORY}" tag="{LIVING_MEMORY}">'
_CARD_OPEN = f"{LIVING_MEMORY_CARD}\n"
_CARD_CLOSE = "\n</card>"


def without_fact(text: str, fact: str) -> str:
    """``text`` (cards as rendered, or a block holding them) with the living memory card's
    line for ``fact`` taken out, and the card with it when that was its only line; the
    rest byte for byte. The line is the fact as ``_memory_line`` writes it, with or
    without its "(said …)", or shortened to fit (a prefix of either, with "…")."""
    start = text.find(_CARD_OPEN)
    end = text.find(_CARD_CLOSE, start) if start >= 0 else -1
    if end < 0:
        return text
    body_start = start + len(_CARD_OPEN)
    lines = text[body_start:end].split("\n")
    kept = [line for line in lines if not _is_line_of(line, one_line(fact))]
    if len(kept) == len(lines):
        return text
    if kept:
        return text[:body_start] + "\n".join(kept) + text[end:]
    # The card goes whole, with the newline that joined it to what came before (or after).
    card_end = end + len(_CARD_CLOSE)
    if start > 0 and text[start - 1] == "\n":
        start -= 1
    elif text[card_end : card_end + 1] == "\n":
        card_end += 1
    return text[:start] + text[card_end:]


def _is_line_of(line: str, fact: str) -> bool:
    said = f"{fact} (said "
    if line == fact or line.startswith(said):
        return True
    # Shortened to fit the card (``shorten``): what is left of either writing.
    prefix = line.removesuffix(ELLIPSIS)
    return prefix != line and (said.startswith(prefix) or prefix.startswith(said))
