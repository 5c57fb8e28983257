"""The constellation view built from a context's log (spec 001 §3.4, §4.1, §4.2): the
numbers the spec fixes, pinned as literals so a change to any of them shows here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from middleware.cards.content import ResumeContent
from middleware.continuity.constellation import build_view, effective_window, resume_content
from middleware.continuity.model import ContinuityEntry, EntryType, WorkContext
from middleware.continuity.settings import CardsConfig

NOW = datetime(2026, 3, 30, 12, 0, tzinfo=UTC)
CONTEXT = WorkContext("wc:agent:main:api:t1", "agent:main:api:t1", "api:ana", False, NOW, NOW)


def entry(index: int, entry_type: EntryType, **content: Any) -> ContinuityEntry:
    captured = NOW - timedelta(hours=100 - index)
    return ContinuityEntry(
        entry_id=f"e{index}",
        entry_type=entry_type,
        work_context_id=CONTEXT.work_context_id,
        source_session_id=f"s{index}",
        captured_at=captured,
        capture_mode="deterministic",
        content=content,
        decay_at=captured + timedelta(days=30),
    )


def view_of(entries: list[ContinuityEntry], sessions_in_last_30_days: int = 30) -> dict[str, Any]:
    summaries = {f"s{i}": f"summary {i}" for i in range(100)}
    return build_view(
        CONTEXT,
        entries,
        summaries,
        sessions_in_last_30_days=sessions_in_last_30_days,
        max_window=15,
        built_at=NOW,
    )


@pytest.mark.parametrize(
    ("sessions", "window"),
    # §3.4's examples: touched 12 times in 30 days gets 14 entries, twice gets 4; the
    # default max_session_history_window of 15 caps a busy context.
    [(12, 14), (2, 4), (0, 2), (13, 15), (40, 15)],
)
def test_the_session_history_window_follows_activity(sessions: int, window: int) -> None:
    assert effective_window(15, sessions) == window
    summaries = [
        entry(i, "session_summary_ref", doc73_session_summary_id=f"s{i}") for i in range(30)
    ]
    history = view_of(summaries, sessions)["session_history"]
    # Newest first, as many as the window allows.
    assert [line["doc73_session_summary_id"] for line in history] == [
        f"s{i}" for i in range(29, 29 - window, -1)
    ]


def test_the_view_keeps_ten_open_questions_and_five_decisions_newest_first() -> None:
    questions = [entry(i, "open_question", question=f"question {i}") for i in range(14)]
    resolved = [entry(20, "open_question", question="resolved one", resolved=True)]
    decisions = [entry(30 + i, "key_decision", decision=f"decision {i}") for i in range(8)]
    superseded = [entry(50, "key_decision", decision="old one", superseded_by="e31")]

    view = view_of(questions + resolved + decisions + superseded)

    assert [q["question"] for q in view["open_questions"]] == [
        f"question {i}" for i in range(13, 3, -1)
    ]
    assert [d["decision"] for d in view["key_decisions"]] == [
        f"decision {i}" for i in range(7, 2, -1)
    ]


def test_only_undelivered_updates_and_the_latest_phase_are_in_the_view() -> None:
    delivered = entry(1, "cross_conversation_update", summary="seen", for_thread_key="t")
    delivered = ContinuityEntry(**{**_fields(delivered), "delivered": True})
    fresh = entry(2, "cross_conversation_update", summary="news", for_thread_key="t")
    phases = [
        entry(3, "work_phase_change", new_phase="research"),
        entry(4, "work_phase_change", previous_phase="research", new_phase="drafting"),
    ]

    view = view_of([delivered, fresh, *phases])

    assert [u["summary"] for u in view["cross_conversation_updates"]] == ["news"]
    assert view["active_work_phase"] == "drafting"
    assert view_of([])["active_work_phase"] == "unknown"


def _fields(item: ContinuityEntry) -> dict[str, Any]:
    return {name: getattr(item, name) for name in ContinuityEntry.__slots__}


def test_the_resume_card_waits_thirty_minutes_and_skips_its_own_session() -> None:
    # §6.1 injection rules 2 and 3, with the default [cards] resume_min_gap_minutes.
    latest = entry(1, "session_summary_ref", doc73_session_summary_id="s1")
    view = view_of([latest])
    captured = latest.captured_at
    gap = timedelta(minutes=CardsConfig().resume_min_gap_minutes)

    def resume(session_id: str, now: datetime) -> ResumeContent | None:
        return resume_content(view, thread_key="t", session_id=session_id, now=now, min_gap=gap)

    assert resume("s2", captured + timedelta(minutes=29, seconds=59)) is None
    shown = resume("s2", captured + timedelta(minutes=30))
    assert shown is not None and [line.summary for line in shown.session_history] == ["summary 1"]
    assert resume("s1", captured + timedelta(days=1)) is None


def test_a_session_line_carries_how_long_the_session_lasted() -> None:
    # Capture keeps each session's duration_minutes (spec 001 §3.2); the card says it of
    # the last session (spec 004 §2), so the view and the card's content carry it.
    lines = [
        entry(1, "session_summary_ref", doc73_session_summary_id="s1", duration_minutes=130),
        entry(2, "session_summary_ref", doc73_session_summary_id="s2", duration_minutes=45),
    ]
    view = view_of(lines)
    shown = resume_content(view, thread_key="t", session_id="s9", now=NOW, min_gap=timedelta(0))
    assert shown is not None
    assert [line.duration_minutes for line in shown.session_history] == [45, 130]
    # A view stored before durations were kept has none to tell.
    for line in view["session_history"]:
        del line["duration_minutes"]
    shown = resume_content(view, thread_key="t", session_id="s9", now=NOW, min_gap=timedelta(0))
    assert shown is not None
    assert [line.duration_minutes for line in shown.session_history] == [None, None]
