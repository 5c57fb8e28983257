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
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import unquote

from middleware.clock.source import Clock
from middleware.continuity.agent_turns import is_compaction_turn
from middleware.continuity.constellation import build_view
from middleware.continuity.corrections import (
    corrected_index,
    extract_corrections,
    names_a_value,
    restates,
)
from middleware.continuity.extract import (
    Extracted,
    ExtractTurn,
    extract_key_decisions,
    extract_open_questions,
    find_resolved,
    is_sign_off,
    is_terse_continuation,
    moved_on_to,
    moves_on,
    settled_later,
    split_sentences,
    states_an_item,
)
from middleware.continuity.model import (
    UNLINKED_CONTEXT_PREFIX,
    CaptureMode,
    ContinuityEntry,
    EntryType,
    Session,
    Trigger,
    WorkContext,
)
from middleware.continuity.phase import infer_work_phase
from middleware.continuity.settings import ContinuityConfig
from middleware.continuity.summary import SummaryParts, snippet
from middleware.continuity.synthesis import SynthesisFailed, SynthesisResult, synthesize
from middleware.continuity.triggers import TriggerSettings, is_dirty, turns_undecided
from middleware.continuity.words import content_words, item_form
from middleware.identity import channel_name, thread_channel
from middleware.memory.triggers import detect_memory
from middleware.quoting import own_words
from middleware.store import Store, StoredMessage
from middleware.types import Upstream

log = logging.getLogger(__name__)

# Messages read for one capture: the last 10 user turns and their answers, with room.
_MESSAGES_READ = 40
HEURISTIC_CONFIDENCE = 0.6
# Inferred from a cue to move on, not said to be open: as low as the heuristic items go.
MOVED_ON_CONFIDENCE = 0.55
# A deterministic summary's length: a line of the 120-token resume card (spec 001 §6.1).
SUMMARY_MAX = 200
# A cross-conversation update's summary (spec 001 §4.1): an LLM's narrative is cut to it.
UPDATE_SUMMARY_MAX = 300
# Triggers that capture only a dirty session; a manual request or the history about to be
# compacted captures whatever conversation there is.
_NEEDS_DIRTY: frozenset[Trigger] = frozenset(
    {"idle_timeout", "debounced_defocus", "nightly_sweep", "session_end"}
)
# Share of a decision's content words a later session must use to count as coming back
# to it (for promotion to a standing directive).
_REFERENCE_OVERLAP = 0.6
# A message that asks the model to do something ("can you check …", "please run …").
_REQUEST = re.compile(r"^\W*(?:please\b|(?:can|could|would|will)\s+you\b)", re.IGNORECASE)


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
class _Item:
    """An open question or key decision to write: ``detail`` is a question's context or a
    decision's rationale; ``said_at`` when the user said it, if known."""

    text: str
    detail: str | None
    confidence: float
    said_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class _Extraction:
    summary: str | None
    phase: str
    questions: list[_Item]
    decisions: list[_Item]
    mode: CaptureMode
    fallback_reason: str | None = None
    # Corrections that replace nothing said in this capture: they may replace an item
    # already in the log.
    corrections: tuple[_Item, ...] = ()
    # A deterministic summary's parts, which the resume card composes its line from.
    summary_parts: SummaryParts | None = None


# What runs once a session's capture is stored: the user's recent-activity rollup is
# refreshed, so their other threads know of this work the same day, not the next night.
AfterCapture = Callable[[Session, datetime], Awaitable[object]]


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
        after_capture: AfterCapture | None = None,
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self._upstream = upstream
        self._model = settings.synthesis_model or model
        self._after_capture = after_capture
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
        messages = conversation_only(await self._store.session_messages(session_id, _MESSAGES_READ))
        if trigger in _NEEDS_DIRTY and not self._dirty(session, messages):
            return None
        now = self._clock.now()
        if not any(m.role == "user" for m in since_capture(session, messages)):
            return None  # a manual request with nothing said since the last capture
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
        await self._supersede(existing, entries)
        await rebuild_view(self._store, self._settings, session.work_context_id, now)
        if self._after_capture is not None:
            await self._after_capture(session, now)
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
            await self._shown_summary(session, extraction.summary),
            extraction.fallback_reason,
        )

    async def is_dirty(self, session: Session) -> bool:
        """Spec 001 §5.2's dirty flag of ``session`` as stored: from its counts, and
        only when they cannot tell (``turns_undecided``) from what its user said since
        its last capture, which is read for that."""
        if not turns_undecided(session, self._rules):
            return is_dirty(session, self._rules)
        messages = conversation_only(
            await self._store.session_messages(session.session_id, _MESSAGES_READ)
        )
        return self._dirty(session, messages)

    @property
    def _rules(self) -> TriggerSettings:
        # The store's counts leave out the commands the relay answered ("/recap").
        return TriggerSettings(min_dirty_turns=self._settings.min_dirty_turns)

    def _dirty(self, session: Session, messages: Sequence[StoredMessage]) -> bool:
        said = turns_undecided(session, self._rules) and said_an_item(session, messages)
        return is_dirty(session, self._rules, said_an_item=said)

    async def _shown_summary(self, session: Session, written: str | None) -> str | None:
        """The session's summary as the card and /recap show it, from the view just
        built (an item the session left open but done since is not in it); ``written``
        when the view has no line for the session."""
        view = await self._store.constellation(session.work_context_id) or {}
        for line in view.get("session_history") or []:
            if line.get("doc73_session_summary_id") == session.session_id:
                return str(line["summary"])
        return written

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
                # The pass reads this session alone: what the user corrected of an item
                # the log already holds still comes from their own words.
                fresh = since_capture(session, messages)
                corrections = tuple(
                    _Item(c.text, None, HEURISTIC_CONFIDENCE, fresh[c.turn].at)
                    for c in extract_corrections([ExtractTurn(m.role, m.text) for m in fresh])
                )
                return replace(_from_synthesis(result), corrections=corrections)
        return self._deterministic(session, messages, fallback)

    def _deterministic(
        self, session: Session, messages: Sequence[StoredMessage], fallback: str | None
    ) -> _Extraction:
        # The whole session, not just what came since its last capture: the summary a
        # later capture writes replaces the earlier one, so it must keep what that one
        # listed. Items the log already holds are not written again (``_entries``).
        turns = [ExtractTurn(m.role, m.text) for m in messages]
        questions: list[_Item] = []
        decisions: list[_Item] = []
        corrections: list[_Item] = []
        if self._settings.deterministic_heuristic_capture:
            raised = extract_open_questions(turns)
            settled = settled_later(raised, turns)
            said: list[tuple[int, str, _Item]] = [
                (q.turn, "question", _heuristic(q, messages))
                for index, q in enumerate(raised)
                if index not in settled
            ] + [
                (d.turn, "decision", _heuristic(d, messages, rationale=True))
                for d in extract_key_decisions(turns)
            ]
            for correction in extract_corrections(turns):
                fixed = _Item(
                    correction.text, None, HEURISTIC_CONFIDENCE, messages[correction.turn].at
                )
                earlier = [entry for entry in said if entry[0] <= correction.turn]
                index = corrected_index(correction.text, [item.text for _, _, item in earlier])
                if index is None:
                    corrections.append(fixed)
                    continue
                turn, kind, item = earlier[index]
                said[said.index((turn, kind, item))] = (correction.turn, kind, fixed)
                if captured(session, messages[turn]) and not captured(
                    session, messages[correction.turn]
                ):
                    # The log holds the corrected item since an earlier capture.
                    corrections.append(fixed)
            questions = [item for _, kind, item in said if kind == "question"]
            decisions = [item for _, kind, item in said if kind == "decision"]
            next_up = _left_for_next(messages)
            if next_up is not None and next_up.text.casefold() not in {
                item.text.casefold() for item in questions
            }:
                questions.append(next_up)
        parts = templated_summary(messages, questions, decisions)
        return _Extraction(
            summary=parts.text() if parts is not None else None,
            phase=infer_work_phase(turns),
            questions=questions,
            decisions=decisions,
            mode="deterministic",
            fallback_reason=fallback,
            corrections=tuple(corrections),
            summary_parts=parts,
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
            parts = extraction.summary_parts
            add(
                "session_summary_ref",
                {
                    **({"summary_parts": parts.to_json()} if parts is not None else {}),
                    "doc73_session_summary_id": session.session_id,
                    "entities_referenced": [],
                    "procedures_executed": [],
                    "tools_used": ["tool"] if session.tool_used else [],
                    "turn_count": sum(m.role == "user" for m in messages),
                    "duration_minutes": _minutes(session.started_at, messages[-1].at),
                    # When it ended: what the card dates it by (its capture may be the
                    # next day, after the idle wait, a night's sweep or a restart).
                    "ended_at": messages[-1].at.isoformat(),
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
        # An item the log holds, or this capture wrote, is not written again, however
        # an LLM pass words it this time (case, punctuation, stopwords: ``item_form``).
        known = {item_form(_item_text(e)) for e in existing if _item_text(e)}

        def add_item(kind: EntryType, item: _Item, corrects: str | None = None) -> None:
            if item_form(item.text) in known:
                return
            known.add(item_form(item.text))
            said = {"said_at": item.said_at.isoformat()} if item.said_at else {}
            corrected = {"corrects": corrects} if corrects else {}
            if kind == "open_question":
                content: dict[str, Any] = {
                    "question": item.text,
                    "context": item.detail or "",
                    "resolved": False,
                }
                ttl = settings.open_question_ttl_days
            else:
                content = {"decision": item.text, "rationale": item.detail, "referenced_in": []}
                ttl = settings.key_decision_ttl_days
            add(kind, {**content, "confidence": item.confidence, **said, **corrected}, ttl)

        # A correction of something a past capture kept: the old item is superseded.
        # First, so that the corrected item is written as correcting it.
        live = [
            e
            for e in existing
            if e.entry_type in ("open_question", "key_decision")
            and not (e.content.get("resolved") or e.content.get("superseded_by"))
        ]
        for correction in extraction.corrections:
            index = corrected_index(correction.text, [_item_text(e) for e in live])
            if index is not None:
                old = live.pop(index)
                # An LLM pass states the corrected item in its own words: that one
                # replaces the old item, not a second wording of it.
                same_kind = (
                    extraction.questions
                    if old.entry_type == "open_question"
                    else extraction.decisions
                )
                restated = [
                    item
                    for item in same_kind
                    if extraction.mode == "llm_enriched"
                    and restates(item.text, correction.text, _item_text(old))
                ]
                add_item(old.entry_type, (restated or [correction])[0], corrects=old.entry_id)
            elif extraction.mode == "deterministic" and names_a_value(correction.text):
                # What it corrects was never an item (a plain statement, or said before
                # capture kept anything): the corrected version is the item now.
                add_item("key_decision", correction)
        for question in extraction.questions:
            add_item("open_question", question)
        for decision in extraction.decisions:
            add_item("key_decision", decision)
        return entries

    async def _supersede(
        self, existing: Sequence[ContinuityEntry], written: Sequence[ContinuityEntry]
    ) -> None:
        """Point each item a correction replaced at the entry that replaced it."""
        replaced = {
            str(e.content["corrects"]): e.entry_id for e in written if "corrects" in e.content
        }
        for entry in existing:
            if entry.entry_id in replaced:
                await self._store.update_entry(
                    entry.entry_id,
                    content={**entry.content, "superseded_by": replaced[entry.entry_id]},
                )

    async def _resolve_and_reference(
        self,
        session: Session,
        messages: Sequence[StoredMessage],
        existing: Sequence[ContinuityEntry],
    ) -> None:
        """Close open questions the session resolved; note decisions it came back to."""
        fresh = since_capture(session, messages)
        turns = [ExtractTurn(m.role, m.text) for m in fresh]
        open_items = sorted(
            (
                e
                for e in existing
                if e.entry_type == "open_question" and not e.content.get("resolved")
            ),
            key=_said_at,
        )
        now = self._clock.now()
        for index in sorted(find_resolved([str(e.content["question"]) for e in open_items], turns)):
            entry = open_items[index]
            await self._store.update_entry(
                entry.entry_id,
                content={**entry.content, "resolved": True, "resolved_at": now.isoformat()},
            )
        said = content_words(" ".join(own_words(m.text) for m in fresh if m.role == "user"))
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
                "summary": snippet(extraction.summary or "", UPDATE_SUMMARY_MAX),
                **(
                    {"summary_parts": extraction.summary_parts.to_json()}
                    if extraction.summary_parts is not None
                    else {}
                ),
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
    return [m for m in messages if not captured(session, m)]


def said_an_item(session: Session, messages: Sequence[StoredMessage]) -> bool:
    """Whether a user message the session's last capture did not cover states a decision
    or an open item ("Let's go with MkDocs", "I still need to write the API page"):
    what makes a short session worth capturing, where "hi", "thanks" or a question with
    nothing decided do not (spec 001 §5.2)."""
    fresh = since_capture(session, messages)
    return any(
        m.role == "user" and (states_an_item(own := own_words(m.text)) or _names_next(own))
        for m in fresh
    )


def _names_next(text: str) -> bool:
    """Whether a message ends on a cue to move on to something it names ("ok, next the
    retry policy"), which capture keeps open when the session ends on it."""
    sentences = split_sentences(text)
    return bool(sentences) and moved_on_to(sentences[-1]) is not None


def captured(session: Session, message: StoredMessage) -> bool:
    """Whether the session's last capture covered ``message``."""
    last = session.captured_message_id
    return last is not None and message.id <= last


def conversation_only(messages: Sequence[StoredMessage]) -> list[StoredMessage]:
    """The messages without the commands the relay answered itself, the turns an agent
    sent to compact its history (:func:`is_compaction_turn`), and the answers to either:
    "/recap" and "create a summary of the conversation so far" are not work on the
    context, and a summary the agent goes on from is its words, not the user's."""
    kept: list[StoredMessage] = []
    left_out = False
    for message in messages:
        if message.role == "user":
            left_out = message.command or is_compaction_turn(message.text)
            if left_out:
                continue
        elif left_out:
            continue
        kept.append(message)
    return kept


def templated_summary(
    messages: Sequence[StoredMessage], questions: Sequence[_Item], decisions: Sequence[_Item]
) -> SummaryParts | None:
    """Deterministic mode's session summary, whose text is within :data:`SUMMARY_MAX`
    characters: what the session was on, what it decided, what it left open and where it
    ended; the later parts give way first when space runs out.

    The topic is the first user message about the work (:func:`_about_the_work`): not
    what the user told about themselves ("remember that I'm a backend developer" is the
    living memory card's), nor "ok" or "talk later"; the first plain statement among
    them when there is one, not an item (listed as decided or open anyway) or a
    question. The ending is the last plain statement ("the migration is written"): not
    a question or a request to the model ("can you check the numbers?" says nothing of
    where the work stood), and none when it is the topic.
    """
    said = [m.text.strip() for m in messages if m.role == "user" and m.text.strip()]
    if not said:
        return None
    # What the user said themselves: a forward or a reply's quote is someone else's topic.
    own = [text for text in (own_words(text).strip() for text in said) if text]
    work = [part for part in map(_about_the_work, own) if part]
    # Plain statements, not an item the summary lists anyway nor a question: what the
    # session was about ("Let's get the billing service ready") and where it stood.
    plain = [part for part in work if _states(part) and not states_an_item(part)]
    topic = (plain or work or own or said)[0]
    last = plain[-1] if plain else None
    if last is not None and _folded(last) == _folded(topic):
        last = None
    parts = SummaryParts(
        topic,
        len(said),
        decided=tuple(d.text for d in decisions[-2:]),
        open=tuple(q.text for q in questions[-2:]),
        ended=last,
    )
    for shorter in (
        replace(parts, ended=None),
        replace(parts, ended=None, open=()),
        replace(parts, ended=None, open=(), decided=()),
    ):
        if len(parts.text()) <= SUMMARY_MAX:
            break
        parts = shorter
    return parts


def _about_the_work(text: str) -> str | None:
    """The part of a user message about the work, from its first such sentence on: none
    for "ok", "let's continue" or "talk later"; a greeting ("Hi!") and what the user says
    of themselves for living memory ("Remember that I'm a backend developer.") are read
    past."""
    if not _substantive(text):
        return None
    sentences = split_sentences(text)
    for index, sentence in enumerate(sentences):
        if len(content_words(sentence)) >= 2 and not detect_memory(sentence):
            rest = " ".join(sentences[index:])
            return rest if _substantive(rest) else None
    return None


def _left_for_next(messages: Sequence[StoredMessage]) -> _Item | None:
    """What the session ended on turning to, left open: "ok, next the retry policy" as
    the user's last word about the work leaves "the retry policy" open (said before
    more work, the session went on to it)."""
    for message in reversed(messages):
        if (
            message.role != "user"
            or (part := _about_the_work(own_words(message.text).strip())) is None
        ):
            continue  # "ok", "brb": not about the work
        name = moved_on_to(split_sentences(part)[-1])
        return None if name is None else _Item(name, part, MOVED_ON_CONFIDENCE, message.at)
    return None


def _states(text: str) -> bool:
    """Whether ``text`` ends on a statement, not a question, a request to the model or a
    cue to move on ("ok, next the retry policy")."""
    last = split_sentences(text)[-1]
    return not last.rstrip().endswith("?") and _REQUEST.match(last) is None and not moves_on(last)


def _folded(text: str) -> str:
    return " ".join(text.split())


# "hi again", "good morning everyone": a hello says nothing of the work.
_GREETING = re.compile(
    r"(?:hi|hello|hey|hiya|howdy|yo|morning|evening|good\s+(?:morning|afternoon|evening|day))"
    r"(?:[\s,]+(?:again|there|all|everyone|team|folks|friend))*[\s.!…]*",
    re.IGNORECASE,
)


def _substantive(text: str) -> bool:
    """A message with something in it: not "ok", "thanks", "let's continue" or "talk
    later"."""
    return (
        len(content_words(text)) >= 2
        and not is_terse_continuation(text)
        and not is_sign_off(text)
        and _GREETING.fullmatch(" ".join(text.split())) is None
    )


def _heuristic(
    item: Extracted, messages: Sequence[StoredMessage], *, rationale: bool = False
) -> _Item:
    """A heuristic item, said when its turn was; a decision has no rationale to give."""
    detail = None if rationale else item.context
    return _Item(
        item.text, detail, min(item.confidence, HEURISTIC_CONFIDENCE), messages[item.turn].at
    )


def _item_text(entry: ContinuityEntry) -> str:
    return str(entry.content.get("question") or entry.content.get("decision") or "")


def _from_synthesis(result: SynthesisResult) -> _Extraction:
    return _Extraction(
        summary=result.session_summary,
        phase=result.work_phase,
        questions=[_Item(q.question, q.context, 1.0) for q in result.open_questions],
        decisions=[_Item(d.decision, d.rationale, 1.0) for d in result.key_decisions],
        mode="llm_enriched",
    )


def _said_at(entry: ContinuityEntry) -> datetime:
    """When the user said the item, or, for one captured without it, when it was captured."""
    said = entry.content.get("said_at")
    return datetime.fromisoformat(str(said)) if said else entry.captured_at


def _current_phase(existing: Sequence[ContinuityEntry]) -> str:
    phases = [e for e in existing if e.entry_type == "work_phase_change"]
    return str(phases[-1].content.get("new_phase")) if phases else "unknown"


def _minutes(start: datetime, end: datetime) -> int:
    return max(0, int((end - start).total_seconds() // 60))


def new_entry_id() -> str:
    return f"ce_{uuid.uuid4().hex[:16]}"


def place_name(thread_key: str, channel: str) -> str:
    """A readable name for where a thread is, e.g. "Discord" or "Telegram (group)"."""
    label = channel_name(channel)
    if channel in ("api", "terminal"):
        label = f"the {label}"
    return f"{label} (group)" if ":group:" in thread_key else label


def shown_context_name(context: WorkContext) -> str:
    """A work context as a person reads it: its name, or for a thread's own context where
    that thread is ("a thread of its own on Telegram (group)", "… on the API ('planning')"),
    never the thread key it is named after; the unlinked bucket as "the API, in no
    thread of its own"."""
    if context.named:
        return context.name
    if is_unlinked(context.work_context_id):
        return "the API, in no thread of its own"
    try:
        channel, _ = thread_channel(context.name)
    except ValueError:
        return "a thread of its own"
    where = place_name(context.name, channel)
    if channel == "api":
        # The API thread's id is the one the agent chose (X-Chronorelay-Thread).
        where += f" ('{unquote(context.name.split(':', 3)[3])}')"
    return f"a thread of its own on {where}"


def is_unlinked(work_context_id: str) -> bool:
    return work_context_id.startswith(UNLINKED_CONTEXT_PREFIX)
