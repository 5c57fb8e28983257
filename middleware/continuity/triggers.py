"""When a session is captured (spec 001 §5.2): the dirty flag and the trigger rules.

Pure: the scheduler feeds it the session as the store sees it and whether the session
has its user's focus (their latest message is in its thread).

- A session is dirty after ``min_dirty_turns`` user messages since its last capture, or
  one message and a tool run; glancing at a chat does not make it dirty.
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


def is_dirty(session: Session, settings: TriggerSettings) -> bool:
    if session.dirty_turns >= settings.min_dirty_turns:
        return True
    return session.tool_used and session.dirty_turns > 0


def due_trigger(
    session: Session, *, focused: bool, now: datetime, settings: TriggerSettings
) -> Trigger | None:
    """The trigger that fires for ``session`` at ``now``, if any."""
    if not is_dirty(session, settings):
        return None
    if focused:
        return "idle_timeout" if now - session.last_turn_at >= settings.idle else None
    since = session.last_capture_at or session.started_at
    return "debounced_defocus" if now - since >= settings.debounce else None
