"""The work context's view (spec 001 §4): how many decisions and questions it keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from middleware.continuity.constellation import build_view
from middleware.continuity.model import ContinuityEntry, EntryType, WorkContext

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
CONTEXT = WorkContext("wc:t1", "t1", "api:ana", False, T0, T0)


def _entry(number: int, entry_type: EntryType, content: dict[str, object]) -> ContinuityEntry:
    return ContinuityEntry(
        entry_id=f"e{number}",
        entry_type=entry_type,
        work_context_id=CONTEXT.work_context_id,
        source_session_id=f"s{number}",
        captured_at=T0 + timedelta(minutes=number),
        capture_mode="llm_enriched",
        content=content,
        decay_at=T0 + timedelta(days=60),
    )


def test_the_view_keeps_the_five_newest_decisions_and_ten_newest_questions() -> None:
    # spec 004 §4 `session.decisions().take(5)`, spec 001 §4.2 "cap at 5"; questions at 10.
    decisions = [_entry(n, "key_decision", {"decision": f"decision {n}"}) for n in range(7)]
    questions = [
        _entry(10 + n, "open_question", {"question": f"question {n}", "resolved": False})
        for n in range(12)
    ]
    view = build_view(
        CONTEXT,
        [*decisions, *questions],
        {},
        sessions_in_last_30_days=1,
        max_window=15,
        built_at=T0 + timedelta(hours=1),
    )
    assert [d["decision"] for d in view["key_decisions"]] == [
        f"decision {n}" for n in (6, 5, 4, 3, 2)
    ]
    assert [q["question"] for q in view["open_questions"]] == [
        f"question {n}" for n in range(11, 1, -1)
    ]
