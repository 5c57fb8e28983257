"""Render the three tier cards within their token budgets (spec 001 §6).

Tier 1 ``resume`` is this work context's state, Tier 2 ``recent_activity`` the user's other
recent work, Tier 3 ``living_memory`` their stable facts. Each card stays within its own
cap and all of them within the total: Tier 2 goes first, then Tier 1 is trimmed, and Tier
3 always lands when there is a fact (§6.4). Every count is :func:`count_tokens` of the
exact card string, tags included. Pure: no I/O, no clock; ``now`` is passed in.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from middleware.cards.activity import activity_segments, fit_activity
from middleware.cards.content import CardBudget, ResumeContent
from middleware.cards.fitting import (
    RESUME,
    count_tokens,
)
from middleware.cards.living_memory import living_memory_card
from middleware.cards.resume import fit_resume, has_items, resume_header, resume_sections
from middleware.continuity.model import MemoryFact, RollupSegment

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RenderedCards:
    """The cards that landed and what the budgets cost.

    ``cards`` are in tier order (resume, recent_activity, living_memory), only those that
    landed; ``tokens`` is the sum of their :func:`count_tokens`. ``dropped`` names each
    tier dropped for budget (``"recent_activity"``) or trimmed (``"resume:session_history"``,
    ``"recent_activity:segments"``, ``"living_memory:facts"``, ``"<tier>:shortened"`` for a
    line cut with "…"). A tier with nothing to show (no content, a stale rollup) is absent
    from both.
    """

    cards: tuple[str, ...]
    tokens: int
    dropped: tuple[str, ...]


def render_cards(
    resume: ResumeContent | None,
    activity: Sequence[RollupSegment],
    memory: Sequence[MemoryFact],
    *,
    current_context_id: str | None,
    budget: CardBudget,
    now: datetime,
    zone: ZoneInfo | None = None,
    activity_max_age: timedelta = timedelta(days=7),
) -> RenderedCards:
    """Render the tier cards for one turn (spec 001 §6).

    ``activity`` segments of ``current_context_id`` are left out (§6.2 anti-duplication),
    and the whole tier is skipped when its newest remaining segment was generated more than
    ``activity_max_age`` before ``now``. Dates show in ``zone`` (UTC when ``None``).

    Guarantees: each card is within its own cap and the cards together within
    ``budget.total``; the living memory card is present whenever ``memory`` has a fact and
    ``budget.living_memory`` holds its tags and one shortened line (it is never dropped; a
    cap too small for that is logged and the card lands over it).
    """
    tz: tzinfo = zone if zone is not None else UTC
    dropped: list[str] = []

    memory_card = living_memory_card(memory, budget.living_memory, dropped, now, tz)
    room = budget.total - _cost(memory_card)

    sections = resume_sections(resume, tz, now) if resume is not None else []
    header = resume_header(resume) if resume is not None else ""
    resume_card = fit_resume(header, sections, min(budget.resume, room), dropped)
    if resume_card is None and has_items(sections):
        # Not even the header and one shortened line fit beside Tier 3: mis-sized budgets.
        dropped.append(RESUME)
        logger.warning(
            "card budgets (total %s, resume %s) cannot hold the resume card beside "
            "living_memory (%s tokens); injecting without it",
            budget.total,
            budget.resume,
            _cost(memory_card),
        )
    room -= _cost(resume_card)

    segments = activity_segments(activity, current_context_id, now, activity_max_age)
    activity_card = fit_activity(segments, min(budget.recent_activity, room), dropped)

    cards = tuple(card for card in (resume_card, activity_card, memory_card) if card)
    return RenderedCards(
        cards=cards,
        tokens=sum(count_tokens(card) for card in cards),
        dropped=tuple(dict.fromkeys(dropped)),
    )


def _cost(card: str | None) -> int:
    return count_tokens(card) if card else 0
