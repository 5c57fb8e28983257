"""When a session is captured (spec 001 §5.2): the dirty flag and the trigger rules.

Pure: the scheduler feeds it the session as the store sees it and whether the session
has its user's focus (their latest message is in its thread).

- A session is dirty after ``min_dirty_turns`` user messages since its last capture, or
  one message and a tool run, or one message that states a decision or an open item
  (the spec's "entity resolution that produced a candidate": a candidate item the
  deterministic extractor finds, ``said_an_item``). Glancing at a chat ("hi", "thanks",
  a question with nothing decided) does not make it dirty. Only a session whose counts
  leave it to its words (``turns_undecided``) needs them read.
- ``idle_timeout``: the focused dirty session's user has said nothing for
  ``idle_trigger_minutes``.
- ``debounced_defocus``: a dirty session the user moved away from, once
  ``debounce_minutes`` have passed since its last capture (or, never captured, since
  it started). Leaving and coming back within that time captures nothing, which is what
  makes the rapid-switching table come out at two captures, not five.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from middleware.continuity.model import Session, Trigger


@dataclass(frozen=True, slots=True)
class TriggerSettings:
    min_dirty_turns: int = 3
    idle: timedelta = timedelta(minutes=15)
    debounce: timedelta = timedelta(minutes=30)


def is_dirty(session: Session, settings: TriggerSettings, *, said_an_item: bool = False) -> bool:
    """Spec 001 §5.2's dirty flag; ``said_an_item``: a user message since the last
    capture states a decision or an open item (read only when ``turns_undecided``)."""
    if session.dirty_turns == 0:
        return False
    return session.dirty_turns >= settings.min_dirty_turns or session.tool_used or said_an_item


def turns_undecided(session: Session, settings: TriggerSettings) -> bool:
    """Whether the session's counts leave its dirty flag to what its user said: some
    messages since its last capture, fewer than ``min_dirty_turns``, and no tool run."""
    return 0 < session.dirty_turns < settings.min_dirty_turns and not session.tool_used


def timed_trigger(
    session: Session, *, focused: bool, now: datetime, settings: TriggerSettings
) -> Trigger | None:
    """The trigger whose time has come for ``session`` at ``now``, if any: it fires
    when the session is dirty (``is_dirty``)."""
    if focused:
        return "idle_timeout" if now - session.last_turn_at >= settings.idle else None
    since = session.last_capture_at or session.started_at
    return "debounced_defocus" if now - since >= settings.debounce else None
