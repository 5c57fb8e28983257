"""The constellation: a work context's derived view of its continuity log (spec 001 §4),
and the tier 1 content picked from it (§6.1).

Pure and deterministic: the same live entries (and session summaries) always give the
same view, so deleting a stored view and rebuilding it from the log changes nothing
(normative rule 2). Views are JSON (instants as ISO text) so the store keeps them as is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from middleware.cards.content import CardItem, ResumeContent, SessionLine
from middleware.continuity.corrections import still_states
from middleware.continuity.model import STANDING_DECISION_PREFIX, ContinuityEntry, WorkContext
from middleware.continuity.summary import SummaryParts, item_key

MAX_OPEN_QUESTIONS = 10
MAX_KEY_DECISIONS = 5
# A heuristic extraction is shown as unconfirmed below this confidence.
CONFIDENT = 0.8
View = dict[str, Any]


def effective_window(max_window: int, sessions_in_last_30_days: int) -> int:
    """Spec 001 §3.4 ``computeEffectiveWindow``."""
    return min(max_window, sessions_in_last_30_days + 2)


def build_view(
    context: WorkContext,
    entries: Sequence[ContinuityEntry],
    summaries: Mapping[str, str],
    *,
    sessions_in_last_30_days: int,
    max_window: int,
    built_at: datetime,
) -> View:
    """The context's view from its live ``entries`` (oldest first) and the summary text
    of each session (by session id), per the §4.2 build procedure."""
    history: dict[str, dict[str, Any]] = {}
    questions: list[dict[str, Any]] = []
    decisions: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    phases: list[str] = []
    for entry in entries:
        content = entry.content
        base = {
            "entry_id": entry.entry_id,
            "captured_at": entry.captured_at.isoformat(),
            "source_session_id": entry.source_session_id,
            "capture_mode": entry.capture_mode,
        }
        if entry.entry_type == "session_summary_ref":
            session_id = str(content.get("doc73_session_summary_id") or entry.source_session_id)
            # A session captured twice (before compaction, then at idle): the later wins.
            history.pop(session_id, None)
            history[session_id] = {
                **base,
                "doc73_session_summary_id": session_id,
                "turn_count": content.get("turn_count"),
                "duration_minutes": content.get("duration_minutes"),
                "ended_at": content.get("ended_at"),
                "summary": summaries.get(session_id, ""),
                # A deterministic summary's parts (spec: middleware.continuity.summary).
                "summary_parts": content.get("summary_parts"),
            }
        elif entry.entry_type == "open_question" and not (
            content.get("resolved") or content.get("superseded_by")
        ):
            questions.append(
                {
                    **base,
                    "said_at": content.get("said_at") or base["captured_at"],
                    "question": content.get("question", ""),
                    "context": content.get("context", ""),
                    "tentative": _tentative(content),
                    "obligation": bool(entry.promoted_node_id),
                }
            )
        elif entry.entry_type == "key_decision" and not content.get("superseded_by"):
            decisions.append(
                {
                    **base,
                    "said_at": content.get("said_at") or base["captured_at"],
                    "decision": content.get("decision", ""),
                    "rationale": content.get("rationale"),
                    "tentative": _tentative(content),
                    # A group's, promoted (§3.3): it stays in the card.
                    "standing": (entry.promoted_node_id or "").startswith(STANDING_DECISION_PREFIX),
                }
            )
        elif entry.entry_type == "cross_conversation_update" and not entry.delivered:
            updates.append(
                {
                    **base,
                    "summary": content.get("summary", ""),
                    "summary_parts": content.get("summary_parts"),
                    "for_thread_key": content.get("for_thread_key"),
                    "source_place": content.get("source_place"),
                }
            )
        elif entry.entry_type == "work_phase_change":
            phases.append(str(content.get("new_phase") or "unknown"))
    window = effective_window(max_window, sessions_in_last_30_days)
    newest_first = _without_what_changed(list(reversed(history.values())), entries)
    # An item resolved or replaced since an update was written is no news to its thread.
    closed, _ = _what_changed(entries)
    updates = [_without_closed(update, closed) for update in updates]
    return {
        "work_context_id": context.work_context_id,
        # A thread's own context is named after its key, which is for the relay, not the
        # model: the card calls it "this conversation" instead.
        "work_context_name": context.name if context.named else "",
        "session_history": [line for line in newest_first if line["summary"]][:window],
        "open_questions": list(reversed(questions))[:MAX_OPEN_QUESTIONS],
        "key_decisions": list(reversed(decisions))[:MAX_KEY_DECISIONS],
        "cross_conversation_updates": list(reversed(updates)),
        "active_work_phase": _active_phase(phases, open_items=bool(questions)),
        "built_at": built_at.isoformat(),
    }


def _without_what_changed(
    lines: list[dict[str, Any]], entries: Sequence[ContinuityEntry]
) -> list[dict[str, Any]]:
    """Session lines as true now: a deterministic summary without the items since
    resolved or replaced ("Open: figure out the hosting" once it is figured out), and no
    summary captured before a correction that still states what it corrected ("Chose
    Postgres …" after "actually we're using MySQL"): an LLM's narrative cannot be cut
    into items, and a line naming the old decision would put it back on the card."""
    closed, corrected = _what_changed(entries)
    kept: list[dict[str, Any]] = []
    for line in lines:
        line = _without_closed(line, closed)
        text = str(line["summary"])
        captured_at = datetime.fromisoformat(line["captured_at"])
        if not any(
            captured_at < when and still_states(text, old, new) for old, new, when in corrected
        ):
            kept.append(line)
    return kept


def _active_phase(phases: Sequence[str], *, open_items: bool) -> str:
    """The latest phase (§4.2 step 6), except that work with open items left is not
    completed: then the latest phase before it was called completed ("unknown" if
    none). Once the items are resolved, the rebuilt view says completed again."""
    for phase in reversed(phases):
        if phase != "completed" or not open_items:
            return phase
    return "unknown"


def without_open_items(view: View, keys: set[str]) -> View:
    """``view`` without the open questions whose :func:`item_key` is in ``keys`` (done
    since the view was built), in their own list and in the session lines and updates."""
    if not keys:
        return view
    return {
        **view,
        "open_questions": [
            q for q in view.get("open_questions") or [] if item_key(q["question"]) not in keys
        ],
        "session_history": [
            _without_closed(line, keys) for line in view.get("session_history") or []
        ],
        "cross_conversation_updates": [
            _without_closed(update, keys) for update in view.get("cross_conversation_updates") or []
        ],
    }


def _what_changed(
    entries: Sequence[ContinuityEntry],
) -> tuple[set[str], list[tuple[str, str, datetime]]]:
    """The :func:`item_key` of every item resolved or replaced, and each replaced item's
    old text, new text and when it was replaced."""
    by_id = {entry.entry_id: entry for entry in entries}
    closed: set[str] = set()
    corrected: list[tuple[str, str, datetime]] = []
    for entry in entries:
        text = _item_text(entry)
        if not text or not (entry.content.get("resolved") or entry.content.get("superseded_by")):
            continue
        closed.add(item_key(text))
        replacing = by_id.get(str(entry.content.get("superseded_by") or ""))
        if replacing is not None and _item_text(replacing):
            corrected.append((text, _item_text(replacing), replacing.captured_at))
    return closed, corrected


def _without_closed(line: dict[str, Any], closed: set[str]) -> dict[str, Any]:
    """``line`` (a session line or an update) whose deterministic summary leaves out the
    ``closed`` items; the text too, since the rollup, /recap and /capture read it as is."""
    parts = SummaryParts.from_json(line.get("summary_parts"))
    if parts is None:
        return line
    parts = parts.without(closed)
    return {**line, "summary_parts": parts.to_json(), "summary": parts.text()}


def _item_text(entry: ContinuityEntry) -> str:
    if entry.entry_type not in ("open_question", "key_decision"):
        return ""
    return str(entry.content.get("question") or entry.content.get("decision") or "")


def _tentative(content: Mapping[str, Any]) -> bool:
    confidence = content.get("confidence", 1.0)
    return isinstance(confidence, int | float) and confidence < CONFIDENT


def resume_content(
    view: View,
    *,
    thread_key: str,
    session_id: str,
    now: datetime,
    min_gap: timedelta,
    phase_hint: str | None = None,
    after_compaction: bool = False,
) -> ResumeContent | None:
    """Tier 1 content for a turn in ``thread_key`` during ``session_id``, or ``None``
    when §6.1's injection rules say no: nothing to resume, the latest summary is from this
    very session, or it is under ``min_gap`` old. ``after_compaction``: the history the
    model had is summarised away, so this session's own summary is news to it too."""
    history = view.get("session_history") or []
    updates = [
        u for u in view.get("cross_conversation_updates") or [] if u["for_thread_key"] == thread_key
    ]
    questions = view.get("open_questions") or []
    decisions = view.get("key_decisions") or []
    if not (history or updates or questions or decisions):
        return None
    latest = history[0] if history else _latest_item(questions + decisions + updates)
    if not after_compaction and not updates:
        if latest["source_session_id"] == session_id:
            return None
        if now - datetime.fromisoformat(latest["captured_at"]) < min_gap:
            return None
    return ResumeContent(
        work_context_name=str(view.get("work_context_name") or ""),
        active_work_phase=str(view.get("active_work_phase") or "unknown"),
        session_history=tuple(
            SessionLine(
                line["summary"],
                datetime.fromisoformat(line["captured_at"]),
                SummaryParts.from_json(line.get("summary_parts")),
                session_minutes(line),
                session_ended_at(line),
            )
            for line in history[:3]
        ),
        open_questions=tuple(
            CardItem(q["question"], q["tentative"], item_said_at(q))
            for q in questions
            if not q["obligation"]
        )[:3],
        key_decisions=tuple(
            CardItem(d["decision"], d["tentative"], item_said_at(d))
            for d in decisions
            if not d.get("standing")
        )[:2],
        standing_decisions=tuple(d["decision"] for d in decisions if d.get("standing")),
        cross_conversation_updates=tuple(_update_line(u, now) for u in updates),
        obligations=tuple(
            CardItem(q["question"], said_at=item_said_at(q)) for q in questions if q["obligation"]
        ),
        phase_hint=phase_hint,
    )


def delivered_update_ids(view: View, thread_key: str) -> list[str]:
    """The ids of the updates tier 1 shows in ``thread_key`` (delivered once shown)."""
    return [
        u["entry_id"]
        for u in view.get("cross_conversation_updates") or []
        if u["for_thread_key"] == thread_key
    ]


def session_minutes(line: Mapping[str, Any]) -> int | None:
    """How long a view's session line lasted, in minutes; ``None`` when its view was
    built before durations were kept (or the entry has none)."""
    minutes = line.get("duration_minutes")
    return minutes if isinstance(minutes, int) and not isinstance(minutes, bool) else None


def session_ended_at(line: Mapping[str, Any]) -> datetime | None:
    """When a view's session line ended (its last message); ``None`` when its entry was
    written before that was kept."""
    ended = line.get("ended_at")
    return datetime.fromisoformat(ended) if isinstance(ended, str) else None


def item_said_at(item: Mapping[str, Any]) -> datetime | None:
    """When the user said a view's open question or decision (captured, if not known)."""
    captured = item.get("said_at") or item.get("captured_at")
    return datetime.fromisoformat(captured) if isinstance(captured, str) else None


def _latest_item(items: list[dict[str, Any]]) -> dict[str, Any]:
    return max(items, key=lambda item: str(item["captured_at"]))


def _update_line(update: Mapping[str, Any], now: datetime) -> str:
    ago = _ago(now - datetime.fromisoformat(update["captured_at"]))
    place = update.get("source_place") or "another conversation"
    return f"advanced on {place} {ago}: {update['summary']}"


def _ago(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    if minutes < 60:
        return f"{max(minutes, 1)} min ago"
    hours = minutes // 60
    if hours < 48:
        return f"{hours} h ago"
    return f"{hours // 24} days ago"
