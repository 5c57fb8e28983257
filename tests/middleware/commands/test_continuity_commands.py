"""``/recap``'s text (``recap_text``): the same sessions as the resume card, for a person."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from middleware.commands.continuity_commands import recap_text


def session(day: int, summary: str, **more: Any) -> dict[str, Any]:
    captured = datetime(2026, 11, day, 18, 0, tzinfo=UTC).isoformat()
    return {"captured_at": captured, "summary": summary, **more}


def test_recap_says_how_long_each_session_lasted() -> None:
    # As the card says it of the last session; /recap has no token budget to keep, so
    # every session it lists says it (none for one under a minute, or stored without).
    view = {
        "active_work_phase": "drafting",
        "session_history": [
            session(11, "Sent the CV to Acme.", duration_minutes=11),
            session(10, "Booked the movers.", duration_minutes=130),
            session(9, "Packed the kitchen.", duration_minutes=0),
            session(8, "Listed the rooms."),
        ],
    }
    assert recap_text("House move", view).splitlines()[1:] == [
        "- 2026-11-11 (11 min): Sent the CV to Acme.",
        "- 2026-11-10 (2 h 10 min): Booked the movers.",
        "- 2026-11-09: Packed the kitchen.",
    ]
