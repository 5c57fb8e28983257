"""Capture: turn a session's recent turns into continuity log entries (spec 001 §5).

Deterministic capture always runs (templated summary, work phase, heuristic questions
and decisions when enabled); in ``full`` mode one LLM pass (``synthesis``) replaces the
summary and extraction, and any failure of that pass falls back to deterministic capture
and says so in the entries. Capture runs in the background: nothing here is on the path
of a user's reply.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from middleware.clock.source import Clock
from middleware.commands import match_command
from middleware.continuity.constellation import build_view
from middleware.continuity.extract import (
    Extracted,
    ExtractTurn,
    extract_key_decisions,
    extract_open_questions,
    find_resolved,
)
from middleware.continuity.model import (
    UNLINKED_CONTEXT_PREFIX,
    CaptureMode,
    ContinuityEntry,
    EntryType,
    Session,
    Trigger,
)
from middleware.continuity.phase import infer_work_phase
from middleware.continuity.settings import ContinuityConfig
from middleware.continuity.synthesis import SynthesisFailed, SynthesisResult, synthesize
from middleware.continuity.words import content_words, folded
from middleware.store import Store, StoredMessage
from middleware.types import Upstream

log = logging.getLogger(__name__)

# Messages read for one capture: the last 10 user turns and their answers, with room.
_MESSAGES_READ = 40
HEURISTIC_CONFIDENCE = 0.6
# Share of a decision's content words a later session must use to count as coming back
# to it (for promotion to a standing directive).
_REFERENCE_OVERLAP = 0.6


@dataclass(frozen=True, slots=True)
class CaptureOutcome:
    """What one capture did."""

    session_id: str
    trigger: Trigger
    mode: CaptureMode
    entries: int
    summary: str | None
    fallback_reason: str | None = None


@dataclass(frozen=True, slots=True)
class _Extraction:
    summary: str | None
    phase: str
    questions: list[tuple[str, str, float]]
    decisions: list[tuple[str, str | None, float]]
    mode: CaptureMode
    fallback_reason: str | None = None


class Capturer:
    """Captures sessions, one at a time per session."""

    def __init__(
        self,
        store: Store,
        settings: ContinuityConfig,
        clock: Clock,
        upstream: Upstream | None,
        *,
        model: str,
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self._upstream = upstream
        self._model = settings.synthesis_model or model
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def settings(self) -> ContinuityConfig:
        return self._settings

    async def capture(self, session_id: str, trigger: Trigger) -> CaptureOutcome | None:
        """Capture the session now; ``None`` when there is nothing new to capture (or
        continuity is off). A manual request captures even a session not yet dirty."""
        if not self._settings.enabled:
            return None
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        try:
            async with lock:
                return await self._capture(session_id, trigger)
        finally:
            if not lock.locked():
                self._locks.pop(session_id, None)

    async def _capture(self, session_id: str, trigger: Trigger) -> CaptureOutcome | None:
        session = await self._store.get_session(session_id)
        if session is None or (session.dirty_turns == 0 and trigger != "manual_request"):
            return None
        raw = await self._store.session_messages(session_id, _MESSAGES_READ)
        messages = conversation_only(raw)
        now = self._clock.now()
        if not messages:
            if raw and trigger != "manual_request":
                # Only commands since the last capture: nothing to keep, but no longer dirty.
                await self._store.record_capture(
                    session_id,
                    through_message_id=raw[-1].id,
                    at=now,
                    summary=None,
                    mode="deterministic",
                    entries=(),
                    unlinked_cap=self._settings.unlinked_max_entries,
                )
            return None
        extraction = await self._extract(session, messages)
        existing = await self._store.continuity_entries(session.work_context_id, now=now)
        entries = self._entries(session, messages, extraction, existing, now)
        await self._resolve_and_reference(session, messages, existing)
        for thread_key in await self._store.context_threads(session.work_context_id):
            if thread_key != session.thread_key and extraction.summary:
                entries.append(self._update_for(thread_key, session, extraction, now))
        await self._store.record_capture(
            session_id,
            through_message_id=messages[-1].id,
            at=now,
            summary=extraction.summary,
            mode=extraction.mode,
            entries=entries,
            unlinked_cap=self._settings.unlinked_max_entries,
        )
        await rebuild_view(self._store, self._settings, session.work_context_id, now)
        log.info(
            "captured session %s (%s, %s): %d entries",
            session_id,
            trigger,
            extraction.mode,
            len(entries),
        )
        return CaptureOutcome(
            session_id,
            trigger,
            extraction.mode,
            len(entries),
            extraction.summary,
            extraction.fallback_reason,
        )

    async def _extract(self, session: Session, messages: Sequence[StoredMessage]) -> _Extraction:
        fallback: str | None = None
        if self._settings.mode == "full" and self._upstream is not None:
            try:
                result = await synthesize(
                    self._upstream,
                    [(m.role, m.text) for m in messages],
                    model=self._model,
                    timeout=self._settings.synthesis_timeout_seconds,
                )
            except SynthesisFailed as exc:
                fallback = exc.reason
                log.warning(
                    "LLM capture of session %s failed (%s); deterministic fallback",
                    session.session_id,
                    exc.reason,
                )
            else:
                return _from_synthesis(result)
        return self._deterministic(session, messages, fallback)

    def _deterministic(
        self, session: Session, messages: Sequence[StoredMessage], fallback: str | None
    ) -> _Extraction:
        turns = [ExtractTurn(m.role, m.text) for m in messages]
        fresh = [ExtractTurn(m.role, m.text) for m in since_capture(session, messages)]
        questions: list[tuple[str, str, float]] = []
        decisions: list[tuple[str, str | None, float]] = []
        if self._settings.deterministic_heuristic_capture:
            questions = [_heuristic(q) for q in extract_open_questions(fresh)]
            decisions = [
                (d.text, None, min(d.confidence, HEURISTIC_CONFIDENCE))
                for d in extract_key_decisions(fresh)
            ]
        return _Extraction(
            summary=templated_summary(messages, session),
            phase=infer_work_phase(turns),
            questions=questions,
            decisions=decisions,
            mode="deterministic",
            fallback_reason=fallback,
        )

    def _entries(
        self,
        session: Session,
        messages: Sequence[StoredMessage],
        extraction: _Extraction,
        existing: Sequence[ContinuityEntry],
        now: datetime,
    ) -> list[ContinuityEntry]:
        settings = self._settings
        note = (
            {
                "capture_note": f"LLM capture failed ({extraction.fallback_reason}); "
                "captured deterministically"
            }
            if extraction.fallback_reason
            else {}
        )
        entries: list[ContinuityEntry] = []

        def add(kind: EntryType, content: dict[str, Any], ttl_days: int) -> None:
            entries.append(
                ContinuityEntry(
                    entry_id=new_entry_id(),
                    entry_type=kind,
                    work_context_id=session.work_context_id,
                    source_session_id=session.session_id,
                    captured_at=now,
                    capture_mode=extraction.mode,
                    content={**content, **note},
                    decay_at=now + timedelta(days=ttl_days),
                )
            )

        if extraction.summary:
            add(
                "session_summary_ref",
                {
                    "doc73_session_summary_id": session.session_id,
                    "entities_referenced": [],
                    "procedures_executed": [],
                    "tools_used": ["tool"] if session.tool_used else [],
                    "turn_count": session.user_turns,
                    "duration_minutes": _minutes(session.started_at, messages[-1].at),
                },
                settings.session_summary_ttl_days,
            )
        current_phase = _current_phase(existing)
        if extraction.phase != "unknown" and extraction.phase != current_phase:
            add(
                "work_phase_change",
                {"previous_phase": current_phase, "new_phase": extraction.phase},
                settings.work_phase_ttl_days,
            )
        known = {
            folded(str(e.content.get("question") or e.content.get("decision") or ""))
            for e in existing
        }
        for question, context, confidence in extraction.questions:
            if folded(question) not in known:
                known.add(folded(question))
                add(
                    "open_question",
                    {
                        "question": question,
                        "context": context,
                        "resolved": False,
                        "confidence": confidence,
                    },
                    settings.open_question_ttl_days,
                )
        for decision, rationale, confidence in extraction.decisions:
            if folded(decision) not in known:
                known.add(folded(decision))
                add(
                    "key_decision",
                    {
                        "decision": decision,
                        "rationale": rationale,
                        "referenced_in": [],
                        "confidence": confidence,
                    },
                    settings.key_decision_ttl_days,
                )
        return entries

    async def _resolve_and_reference(
        self,
        session: Session,
        messages: Sequence[StoredMessage],
        existing: Sequence[ContinuityEntry],
    ) -> None:
        """Close open questions the session resolved; note decisions it came back to."""
        fresh = since_capture(session, messages)
        turns = [ExtractTurn(m.role, m.text) for m in fresh]
        open_items = [
            e
            for e in existing
            if e.entry_type == "open_question"
            and not e.content.get("resolved")
            and e.source_session_id != session.session_id
        ]
        now = self._clock.now()
        for index in sorted(find_resolved([str(e.content["question"]) for e in open_items], turns)):
            entry = open_items[index]
            await self._store.update_entry(
                entry.entry_id,
                content={**entry.content, "resolved": True, "resolved_at": now.isoformat()},
            )
        said = content_words(" ".join(m.text for m in fresh if m.role == "user"))
        for entry in existing:
            if entry.entry_type != "key_decision" or entry.source_session_id == session.session_id:
                continue
            referenced = list(entry.content.get("referenced_in") or [])
            words = content_words(str(entry.content.get("decision", "")))
            if session.session_id in referenced or not words:
                continue
            if len(words & said) / len(words) >= _REFERENCE_OVERLAP:
                await self._store.update_entry(
                    entry.entry_id,
                    content={**entry.content, "referenced_in": [*referenced, session.session_id]},
                )

    def _update_for(
        self, thread_key: str, session: Session, extraction: _Extraction, now: datetime
    ) -> ContinuityEntry:
        """A cross-conversation update telling ``thread_key`` the context moved on
        elsewhere (spec 001 §5.5), delivered once."""
        return ContinuityEntry(
            entry_id=new_entry_id(),
            entry_type="cross_conversation_update",
            work_context_id=session.work_context_id,
            source_session_id=session.session_id,
            captured_at=now,
            capture_mode=extraction.mode,
            content={
                "summary": extraction.summary or "",
                "source_session_id": session.session_id,
                "affected_entity_ids": [],
                "for_thread_key": thread_key,
                "source_channel": session.channel,
                "source_place": place_name(session.thread_key, session.channel),
            },
            decay_at=now + timedelta(days=self._settings.cross_update_ttl_days_undelivered),
        )


async def rebuild_view(
    store: Store, settings: ContinuityConfig, work_context_id: str, now: datetime
) -> None:
    """Rebuild and store the context's view from its live log (spec 001 §4.2)."""
    context = await store.get_work_context(work_context_id)
    if context is None:
        return
    entries = await store.continuity_entries(work_context_id, now=now)
    recent = await store.context_sessions(work_context_id, now - timedelta(days=30))
    summaries = {s.session_id: s.summary for s in recent if s.summary}
    wanted = {
        str(e.content.get("doc73_session_summary_id"))
        for e in entries
        if e.entry_type == "session_summary_ref"
    }
    for session_id in wanted - summaries.keys():
        session = await store.get_session(session_id)
        if session is not None and session.summary:
            summaries[session_id] = session.summary
    view = build_view(
        context,
        entries,
        summaries,
        sessions_in_last_30_days=len(recent),
        max_window=settings.max_session_history_window,
        built_at=now,
    )
    await store.save_constellation(work_context_id, view, built_at=now)


def since_capture(session: Session, messages: Sequence[StoredMessage]) -> list[StoredMessage]:
    """The messages the session's last capture did not cover (all when never captured)."""
    last = session.captured_message_id
    return [m for m in messages if last is None or m.id > last]


def conversation_only(messages: Sequence[StoredMessage]) -> list[StoredMessage]:
    """The messages without chat commands and the relay's answers to them: "/recap" is
    not work on the context."""
    kept: list[StoredMessage] = []
    after_command = False
    for message in messages:
        if message.role == "user":
            after_command = match_command(message.text) is not None
            if after_command:
                continue
        elif after_command:
            continue
        kept.append(message)
    return kept


def templated_summary(messages: Sequence[StoredMessage], session: Session) -> str | None:
    """Deterministic mode's session summary: how much was said, how it began and ended."""
    said = [m.text.strip() for m in messages if m.role == "user" and m.text.strip()]
    if not said:
        return None
    first, last = _snippet(said[0]), _snippet(said[-1])
    turns = f"{session.user_turns} message{'s' if session.user_turns != 1 else ''}"
    if len(said) == 1 or first == last:
        return f"{turns}; about: “{first}”"
    return f"{turns}; began with “{first}”, last: “{last}”"


def _snippet(text: str, limit: int = 90) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _heuristic(item: Extracted) -> tuple[str, str, float]:
    return item.text, item.context, min(item.confidence, HEURISTIC_CONFIDENCE)


def _from_synthesis(result: SynthesisResult) -> _Extraction:
    return _Extraction(
        summary=result.session_summary,
        phase=result.work_phase,
        questions=[(q.question, q.context, 1.0) for q in result.open_questions],
        decisions=[(d.decision, d.rationale, 1.0) for d in result.key_decisions],
        mode="llm_enriched",
    )


def _current_phase(existing: Sequence[ContinuityEntry]) -> str:
    phases = [e for e in existing if e.entry_type == "work_phase_change"]
    return str(phases[-1].content.get("new_phase")) if phases else "unknown"


def _minutes(start: datetime, end: datetime) -> int:
    return max(0, int((end - start).total_seconds() // 60))


def new_entry_id() -> str:
    return f"ce_{uuid.uuid4().hex[:16]}"


def place_name(thread_key: str, channel: str) -> str:
    """A readable name for where a thread is, e.g. "Discord" or "Telegram (group)"."""
    label = {
        "telegram": "Telegram",
        "discord": "Discord",
        "api": "the API",
        "terminal": "the terminal",
    }.get(channel, channel)
    return f"{label} (group)" if ":group:" in thread_key else label


def is_unlinked(work_context_id: str) -> bool:
    return work_context_id.startswith(UNLINKED_CONTEXT_PREFIX)
