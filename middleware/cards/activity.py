"""Tier 2, the ``recent_activity`` card: the user's other recent work, oldest segments
dropped first (spec 001 §6.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from middleware.cards.fitting import (
    ELLIPSIS,
    RECENT_ACTIVITY,
    count_tokens,
    drop_from_end,
    one_line,
    shorten,
    tagged_card,
)
from middleware.continuity.model import RollupSegment

_ACTIVITY_HEADER = "Recently (other work):"


def activity_segments(
    activity: Sequence[RollupSegment],
    current_context_id: str | None,
    now: datetime,
    max_age: timedelta,
) -> list[str]:
    """Texts of the other contexts' segments, newest activity first; none when stale."""
    others = [
        segment
        for segment in activity
        if segment.work_context_id != current_context_id and one_line(segment.text)
    ]
    if not others or now - max(s.generated_at for s in others) > max_age:
        return []
    others.sort(key=lambda segment: segment.last_activity_at, reverse=True)
    return [one_line(segment.text) for segment in others]


def fit_activity(texts: list[str], cap: int, dropped: list[str]) -> str | None:
    """The recent activity card within ``cap``, dropping the oldest segments first."""
    if not texts:
        return None

    def card(body: Sequence[str]) -> str:
        return tagged_card(
            RECENT_ACTIVITY, RECENT_ACTIVITY, [_ACTIVITY_HEADER, *(f"- {t}" for t in body)]
        )

    def fits(body: Sequence[str]) -> bool:
        return count_tokens(card(body)) <= cap

    kept = drop_from_end(texts, fits)
    if len(kept) < len(texts):
        dropped.append(f"{RECENT_ACTIVITY}:segments")
    if fits(kept):
        return card(kept)
    shortened = shorten(kept[0], lambda text: fits([text]))
    if shortened is None or shortened == ELLIPSIS:
        dropped.append(RECENT_ACTIVITY)
        return None
    dropped.append(f"{RECENT_ACTIVITY}:shortened")
    return card([shortened])
