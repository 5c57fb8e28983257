"""The nightly job (spec 001 §3.3, §4.3): sweep-capture dirty sessions, decay expired
entries, promote what proved durable, regenerate rollups, rebuild stale views, and forget
the living memory that aged out (spec 003 §5.5's compactor rule, ``forget_aged_memory``).

Idempotent: promotion marks what it promoted and never does it twice, rollups are
replaced whole, a view rebuilt twice is the same view. Run it twice, or again after a
restart, and nothing changes the second time.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from middleware.cards.content import CardBudget
from middleware.continuity.capture import Capturer, rebuild_view, shown_context_name
from middleware.continuity.model import (
    STANDING_DECISION_PREFIX,
    RollupSegment,
    unlinked_context_id,
)
from middleware.continuity.settings import CardsConfig, ContinuityConfig
from middleware.continuity.triggers import TriggerSettings
from middleware.store import Store

log = logging.getLogger(__name__)

ROLLUP_SEGMENTS = 8
# ``recent_work_contexts`` limit that means all of a person's contexts.
_EVERY_CONTEXT = 100_000
_SEGMENT_CHARS = 220


@dataclass(frozen=True, slots=True)
class NightlyReport:
    captured: int = 0
    decayed_contexts: int = 0
    obligations: int = 0
    directives: int = 0
    rollups: int = 0
    rebuilt: int = 0
    forgotten_facts: int = 0


def trigger_settings(settings: ContinuityConfig) -> TriggerSettings:
    return TriggerSettings(
        min_dirty_turns=settings.min_dirty_turns,
        idle=timedelta(minutes=settings.idle_trigger_minutes),
        debounce=timedelta(minutes=settings.debounce_minutes),
    )


async def run_nightly(
    store: Store,
    capturer: Capturer,
    cards: CardsConfig,
    now: datetime,
    user_keys: Collection[str],
    *,
    whole_log: bool = False,
) -> NightlyReport:
    """One nightly run for ``user_keys``: their dirty sessions, rollups, and the log of
    their work contexts (decay, promotion, views), so that each person's continuity
    changes in their own night, not in someone else's. ``whole_log`` covers every
    context's log instead (an operator's run for everyone)."""
    settings = capturer.settings
    captured = 0
    if settings.enabled:
        for session in await store.capture_candidates():
            if session.speaker_key in user_keys and await capturer.is_dirty(session):
                if await capturer.capture(session.session_id, "nightly_sweep"):
                    captured += 1
    contexts = None if whole_log else await contexts_of(store, user_keys)
    decayed = await store.decay_entries(now=now, work_context_ids=contexts)
    obligations, directives = await promote(store, settings, now, contexts)
    rollups = 0
    for user_key in user_keys:
        rollups += await refresh_rollup(store, cards, user_key, now)
    rebuilt = 0
    for work_context_id in await store.stale_constellations():
        if contexts is not None and work_context_id not in contexts:
            continue
        await rebuild_view(store, settings, work_context_id, now)
        rebuilt += 1
    forgotten = await forget_aged_memory(store, now, None if whole_log else user_keys)
    report = NightlyReport(
        captured, len(decayed), obligations, directives, rollups, rebuilt, forgotten
    )
    log.info("nightly job: %s", report)
    return report


async def housekeep(store: Store, settings: ContinuityConfig, now: datetime) -> int:
    """The relay's daily pass over everyone's log: delete the entries expired by ``now``
    and rebuild those contexts' views without them, so that the log of someone no longer
    active (whom no night visits) keeps nothing past the next pass after it decayed
    (spec 001 §3.3: an entry expires at its ``decay_at``, cleaned nightly). No grace: an
    expired entry is read by nothing (views, cards and promotion see only live entries),
    so removing it before its owner's own night takes nothing from that night. Nothing
    per person: no captures, promotion or rollups; but living memory that aged out is
    forgotten for everyone (``forget_aged_memory``), so that someone back after months
    is not told, before their first night, what they should no longer be. Idempotent.
    Returns the contexts it decayed in."""
    await forget_aged_memory(store, now, None)
    decayed = await store.decay_entries(now=now)
    for work_context_id in decayed:
        await rebuild_view(store, settings, work_context_id, now)
    if decayed:
        log.info("housekeeping: decayed entries in %d contexts", len(decayed))
    return len(decayed)


async def forget_aged_memory(store: Store, now: datetime, user_keys: Collection[str] | None) -> int:
    """Spec 003 §5.5's compactor rule on living memory: forget the facts of ``user_keys``
    (everyone's when ``None``) whose confidence has aged below 0.3 with no mention in 60
    days; never a correction, nor a fact the user asked to keep (spec 002 tier 3:
    ``middleware.memory.confidence``). Idempotent: confidence
    is computed from when each fact was last mentioned. Returns how many it forgot."""
    gone = await store.compact_memory(now, user_keys)
    for fact in gone:
        # The compaction log (§5.5 rule 1): which fact and why, not what it said.
        log.info(
            "living memory of %s: forgot fact %d (%s, last mentioned %s)",
            fact.user_key,
            fact.fact_id,
            fact.kind,
            fact.last_mentioned_at.date().isoformat(),
        )
    return len(gone)


async def contexts_of(store: Store, user_keys: Collection[str]) -> set[str]:
    """The work contexts whose log belongs to ``user_keys``' nights: their named ones,
    those of the threads they spoke in (a group's is every member's: the first member's
    night handles it, the others' find nothing left to do) and their unlinked buckets."""
    contexts: set[str] = set()
    for user_key in user_keys:
        contexts.add(unlinked_context_id(user_key))
        for context in await store.recent_work_contexts(user_key, _EVERY_CONTEXT, unlisted=True):
            contexts.add(context.work_context_id)
    return contexts


async def promote(
    store: Store,
    settings: ContinuityConfig,
    now: datetime,
    work_context_ids: Collection[str] | None = None,
) -> tuple[int, int]:
    """Spec 001 §3.3's pre-decay promotion: an open question unresolved for
    ``obligation_after_days`` becomes an obligation (shown in tier 1); a key decision
    referenced in ``directive_after_sessions`` sessions becomes a standing directive: in
    the living memory of the one who made it in a private chat (tier 3), or, made in a
    group, a standing decision in the group's own resume card (tier 1), since per-person
    memory must never hold what another member decided."""
    obligations = directives = 0
    old_enough = now - timedelta(days=settings.obligation_after_days)
    for entry in await store.all_live_entries(now=now):
        if entry.promoted_to_graph:
            continue
        if work_context_ids is not None and entry.work_context_id not in work_context_ids:
            continue
        content = entry.content
        if entry.entry_type == "open_question":
            if not content.get("resolved") and entry.captured_at <= old_enough:
                await store.update_entry(
                    entry.entry_id, promoted_node_id=f"obligation:{entry.entry_id}"
                )
                obligations += 1
        elif entry.entry_type == "key_decision":
            sessions = {entry.source_session_id, *(content.get("referenced_in") or [])}
            if len(sessions) < settings.directive_after_sessions:
                continue
            source = await store.get_session(entry.source_session_id)
            if source is None:
                continue
            if source.chat_type == "group":
                # Made in a group: no one member's to keep (whoever spoke last need not be
                # who decided), so it stands in the group's own resume card instead.
                node = f"{STANDING_DECISION_PREFIX}{entry.entry_id}"
            else:
                fact = await store.add_memory_fact(
                    source.speaker_key,
                    "directive",
                    str(content.get("decision", "")),
                    source="promoted",
                    at=now,
                    source_entry_id=entry.entry_id,
                )
                node = f"memory_fact:{fact.fact_id}" if fact else "memory_fact:existing"
            await store.update_entry(entry.entry_id, promoted_node_id=node)
            directives += 1
    return obligations, directives


async def refresh_rollup(store: Store, cards: CardsConfig, user_key: str, now: datetime) -> int:
    """Regenerate the user's recent-activity rollup (tier 2): one segment per work
    context active within the window, from its view. Returns the segments written."""
    since = now - timedelta(days=cards.recent_activity_window_days)
    segments: list[RollupSegment] = []
    # A thread moved into a named context ("/context job hunt") left its own behind, and
    # the work done there (the move, its open items) is the user's recent activity still.
    contexts = await store.recent_work_contexts(user_key, ROLLUP_SEGMENTS * 2, unlisted=True)
    for context in contexts:
        if context.last_active_at < since or len(segments) >= ROLLUP_SEGMENTS:
            continue
        view = await store.constellation(context.work_context_id)
        text = segment_text(shown_context_name(context), view)
        if text:
            segments.append(
                RollupSegment(context.work_context_id, text, context.last_active_at, now)
            )
    await store.replace_rollup(user_key, segments, generated_at=now)
    return len(segments)


def segment_text(name: str, view: dict[str, Any] | None) -> str | None:
    """One line for a context: its name, phase and latest summary, as the view has it
    (without the items since resolved or replaced, as on the resume card)."""
    if not view:
        return None
    history = view.get("session_history")
    latest = history[0]["summary"] if isinstance(history, list) and history else ""
    phase = view.get("active_work_phase")
    label = f"{name} ({phase})" if phase and phase != "unknown" else name
    if not latest:
        return None
    text = f"{label}: {latest}"
    return text if len(text) <= _SEGMENT_CHARS else text[: _SEGMENT_CHARS - 1] + "…"


def card_budget(cards: CardsConfig) -> CardBudget:
    return CardBudget(
        total=cards.max_tokens,
        resume=cards.resume_max_tokens,
        recent_activity=cards.recent_activity_max_tokens,
        living_memory=cards.living_memory_max_tokens,
    )
