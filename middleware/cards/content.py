"""What the three tier cards are rendered from (spec 001 §6), independent of the store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from middleware.continuity.summary import SummaryParts


@dataclass(frozen=True, slots=True)
class CardItem:
    """One line of a card. ``tentative`` marks heuristic (deterministic-mode) extraction,
    shown with reduced confidence (spec 001 §5.3)."""

    text: str
    tentative: bool = False
    # When the user said it: a relative date in it ("by Friday") is read from then.
    said_at: datetime | None = None
    # When the user put it off since ("can't call the bank until Monday"), and the day it
    # now starts, if they gave one: the day first said for it ("tomorrow") is stale.
    put_off_at: datetime | None = None
    put_off_to: datetime | None = None


@dataclass(frozen=True, slots=True)
class SessionLine:
    """A past session of the work context: its summary, when it was captured, how long
    it lasted (``duration_minutes``, from its first message to its last) and when it
    ended (``ended_at``, its last message: what it is dated by, since its capture may
    come the next day). Either is ``None`` when not known, as for a summary stored
    before it was kept.

    ``parts`` are a deterministic summary's parts, from which the card composes the line
    without the items it shows on their own; ``None`` for an LLM summary (free text) or
    one stored before parts were kept, shown as it is."""

    summary: str
    captured_at: datetime
    parts: SummaryParts | None = None
    duration_minutes: int | None = None
    ended_at: datetime | None = None

    @property
    def when(self) -> datetime:
        """What the session is dated by: when it ended, else when it was captured."""
        return self.ended_at or self.captured_at


@dataclass(frozen=True, slots=True)
class ResumeContent:
    """Tier 1, ``resume`` (spec 001 §6.1 ``ContinuityCardContent``), newest items first.

    ``obligations`` are open questions unresolved long enough to be promoted (§3.3), and
    ``standing_decisions`` a group's key decisions promoted the same way;
    ``phase_hint`` is the activity-type inheritance line (§6.5), set only when the first
    message of a resumed session is terse.
    """

    work_context_name: str
    active_work_phase: str
    session_history: tuple[SessionLine, ...] = ()
    open_questions: tuple[CardItem, ...] = ()
    key_decisions: tuple[CardItem, ...] = ()
    cross_conversation_updates: tuple[str, ...] = ()
    obligations: tuple[CardItem, ...] = ()
    phase_hint: str | None = None
    standing_decisions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CardBudget:
    """Token ceilings (spec 001 §6.4): per tier and in total."""

    total: int = 420
    resume: int = 120
    recent_activity: int = 200
    living_memory: int = 100
