"""The continuity stage: sessions, living-memory learning, pre-compaction capture and
the three tier cards at fresh-surface boot (spec 001 §5.2, §6).

On most turns it does no store work at all (the thread's current session is cached).
At a *boot* — the first turn of a new session, or the first after the history was
compacted — it reads the card sources in one round trip and renders the cards; the
injection stage then puts them in the block of that message, and its replay keeps them
in the forwarded conversation for the rest of the session. Captures never run here:
they are handed to the background.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

from middleware.cards.content import ResumeContent
from middleware.cards.render import render_cards
from middleware.cards.resume import UPDATE_LABEL
from middleware.clock.temporal import estimate_tokens
from middleware.clock.zones import get_zone
from middleware.continuity.agent_turns import is_compaction_turn
from middleware.continuity.capture import conversation_only
from middleware.continuity.constellation import (
    View,
    delivered_update_ids,
    resume_content,
    without_open_items,
)
from middleware.continuity.extract import ExtractTurn, find_resolved, is_terse_continuation
from middleware.continuity.model import (
    CardSources,
    RollupSegment,
    WorkContext,
    default_context_id,
)
from middleware.continuity.nightly import card_budget
from middleware.continuity.put_off import actions_here, put_off_items
from middleware.continuity.service import ContinuityService
from middleware.continuity.sessions import CurrentSession
from middleware.continuity.summary import item_key
from middleware.identity import API_CHANNEL
from middleware.injection import InjectionMemory, fingerprint
from middleware.memory.learn import learn_from_message
from middleware.pipeline import Handler, Stage
from middleware.store import StoredMessage
from middleware.types import JSON, Reply, Turn

log = logging.getLogger(__name__)

# The messages of a session read back after a compaction, as capture reads them.
_SESSION_READ = 40
RESUME_OPEN = '<card type="continuity"'


def continuity_stage(service: ContinuityService, injections: InjectionMemory) -> Stage:
    """The stage over ``service``; ``injections``, the blocks replayed to the model, is
    where a fact the user asks in chat to forget is taken out of earlier messages too."""
    settings = service.settings
    store = service.store
    sessions = service.sessions
    gap = settings.continuity.session_gap
    window_limit = (
        settings.continuity.precompaction_fraction * settings.continuity.model_context_tokens
    )
    active = settings.continuity.enabled or settings.cards.enabled or settings.memory.enabled

    remember = sessions.remember

    async def resolve(turn: Turn) -> tuple[CurrentSession, bool]:
        """The thread's session for this turn, and whether this turn starts it."""
        known = sessions.get(turn.thread_key)
        if continues_session(turn, gap):
            if known is not None:
                return known, False
            stored = await store.current_session(turn.thread_key)
            if stored is not None:
                current = CurrentSession(stored.session_id, stored.cards_fingerprint)
                remember(turn.thread_key, current)
                return current, False
        assert turn.inbound_id is not None
        first_message_id = await turn.inbound_id
        if _unthreaded(turn):
            await store.assign_unlinked_context(
                turn.thread_key, turn.user_key, now=turn.received_at
            )
        session = await store.start_session(
            f"s_{uuid.uuid4().hex[:16]}",
            turn.thread_key,
            turn.user_key,
            turn.received_at,
            first_message_id,
        )
        current = CurrentSession(session.session_id)
        remember(turn.thread_key, current)
        return current, True

    async def stage(turn: Turn, call_next: Handler) -> Reply:
        if not active or not turn.thread_key:
            return await call_next(turn)
        if turn.continuation:
            known = sessions.get(turn.thread_key)
            if known is not None and _ran_tools(turn.body):
                service.background.spawn(
                    store.mark_session_tool_use(known.session_id), what="session tool mark"
                )
            return await call_next(turn)
        if turn.inbound_id is None:
            return await call_next(turn)
        current, boot = await resolve(turn)
        # An agent's request to compact its history quotes the user ("The user said: I
        # live in Berlin"): neither news nor the user saying it again (agent_turns.py).
        if (
            settings.memory.enabled
            and settings.memory.capture_from_messages
            and not is_compaction_turn(turn.text)
        ):
            learned = await learn_from_message(
                store,
                settings.memory,
                turn.user_key,
                turn.own_text,
                turn.received_at,
                chat_type=turn.chat_type,
                addressed=turn.addressed,
            )
            # "Please forget that I'm vegan", as /memory forget: not told to the model
            # again in an earlier message's card either.
            for fact in learned.forgotten:
                await injections.forget_fact(turn.user_key, fact.text)
        messages = turn.body.get("messages")
        messages = messages if isinstance(messages, list) else []
        compacted = turn.compacted or _lost_cards(messages, current.cards_fingerprint)
        near_window = not current.near_window_captured and _request_tokens(messages) >= window_limit
        if settings.continuity.enabled and (compacted or near_window):
            # Capture what the session holds before the history is (or gets) summarised
            # away (spec 001 §5.2 "pre_compaction", mandatory when continuity is on).
            service.background.spawn(
                service.capturer.capture(current.session_id, "pre_compaction"),
                what="pre-compaction capture",
            )
            if near_window:
                current = replace(current, near_window_captured=True)
                remember(turn.thread_key, current)
        if settings.cards.enabled and (boot or compacted):
            newest = _newest_user(messages)
            cards = await boot_cards(turn, current.session_id, boot, compacted and not boot)
            if cards:
                turn.context.cards = cards
                mark = fingerprint(newest) if newest is not None else None
                current = replace(current, cards_fingerprint=mark)
                remember(turn.thread_key, current)
                service.background.spawn(
                    store.set_session_cards(current.session_id, mark), what="session cards mark"
                )
        return await call_next(turn)

    async def boot_cards(
        turn: Turn, session_id: str, boot: bool, after_compaction: bool
    ) -> list[str]:
        sources = await store.card_sources(turn.thread_key, turn.user_key, now=turn.received_at)
        if after_compaction and sources.constellation is not None:
            # The session's capture runs in the background: what it did so far ("the
            # webhook handler is written") is not in the view yet, and the model, its
            # history summarised away, would take those items for still open.
            said = conversation_only(await store.session_messages(session_id, _SESSION_READ))
            sources = replace(
                sources,
                constellation=without_open_items(
                    sources.constellation, done_in(sources.constellation, said)
                ),
            )
        cards, shown = render_boot_cards(
            service,
            turn,
            sources,
            session_id=session_id,
            boot=boot,
            after_compaction=after_compaction,
        )
        if shown:
            service.background.spawn(
                service.deliver_updates(sources.work_context.work_context_id, shown),
                what="mark updates delivered",
            )
        return cards

    return stage


def done_in(view: View, messages: Sequence[StoredMessage]) -> set[str]:
    """The :func:`item_key` of the view's open questions that ``messages`` report done."""
    # The view lists them newest first; find_resolved wants them oldest first.
    questions = [str(q["question"]) for q in reversed(view.get("open_questions") or [])]
    turns = [ExtractTurn(m.role, m.text) for m in messages]
    return {item_key(questions[index]) for index in find_resolved(questions, turns)}


def render_boot_cards(
    service: ContinuityService,
    turn: Turn,
    sources: CardSources,
    *,
    session_id: str,
    boot: bool,
    after_compaction: bool = False,
) -> tuple[list[str], list[str]]:
    """The cards for a boot turn, and the ids of the cross-conversation updates they
    show (to be marked delivered). Pure given ``sources``: previews use it too.

    In a group only tier 1 (the group's own work context) is shown: the speaker's
    recent activity and living memory are personal."""
    settings = service.settings
    now = turn.received_at
    prior = turn.prior
    zone_name = (prior.thread_tz or prior.user_tz) if prior else None
    resume = None
    view = sources.constellation
    if view is not None and settings.continuity.enabled:
        phase = str(view.get("active_work_phase") or "unknown")
        hint = None
        if boot and phase != "unknown" and is_terse_continuation(turn.text):
            # A thread's own context is named after its key, which is not for the model.
            context = sources.work_context
            on = f"on {context.name}" if context.named else "in this conversation"
            hint = f"“{turn.text.strip()}” continues the {phase.replace('_', ' ')} work {on}."
        resume = resume_content(
            view,
            thread_key=turn.thread_key,
            session_id=session_id,
            now=now,
            min_gap=timedelta(minutes=settings.cards.resume_min_gap_minutes),
            phase_hint=hint,
            after_compaction=after_compaction,
        )
        if resume is not None:
            resume = _with_put_off(resume, turn)
    # A group's block is read by everyone in it and replayed to the end of the session:
    # the speaker's other work (tier 2) and what they told the relay about themselves,
    # often in private (tier 3), are theirs alone. Only the group's own work (tier 1).
    personal = turn.chat_type != "group"
    rendered = render_cards(
        resume,
        _unique_segments(sources) if personal else [],
        sources.memory if personal else (),
        current_context_id=sources.work_context.work_context_id,
        budget=card_budget(settings.cards),
        now=now,
        zone=get_zone(zone_name) if zone_name else None,
        activity_max_age=timedelta(days=settings.cards.recent_activity_max_age_days),
    )
    shown: list[str] = []
    resume_card = next((card for card in rendered.cards if card.startswith(RESUME_OPEN)), None)
    if view is not None and resume is not None and resume_card is not None:
        # Only the updates the card kept whole are delivered: one trimmed away for budget
        # is shown at the next boot instead of never.
        shown = [
            entry_id
            for entry_id, line in zip(
                delivered_update_ids(view, turn.thread_key),
                resume.cross_conversation_updates,
                strict=True,
            )
            if f"{UPDATE_LABEL}: {' '.join(line.split())}\n" in resume_card
        ]
    return list(rendered.cards), shown


def continues_session(turn: Turn, gap: timedelta) -> bool:
    """Whether ``turn`` continues its thread's current session: the thread's last message
    of the conversation is under ``gap`` old. A command the relay answered itself ("/tz",
    "/recap" first thing after two days) is none: it continues no session, or the next
    real message would neither start the new one nor bring its cards (spec 001 §6), and
    the clock's gap line, which it does not move either, would say otherwise."""
    last = turn.prior.thread_last_conversation_at if turn.prior else None
    return last is not None and turn.received_at - last < gap


async def preview_cards(service: ContinuityService, turn: Turn) -> list[str]:
    """The cards ``turn`` would get, without starting a session or marking anything
    delivered (for ``POST /admin/threads/{thread_key}/preview``)."""
    settings = service.settings
    if not settings.cards.enabled:
        return []
    store = service.store
    # A session ended by a move to another work context continues no more.
    if continues_session(turn, settings.continuity.session_gap) and (
        await store.current_session(turn.thread_key) is not None
    ):
        return []
    if await store.get_thread(turn.thread_key) is None:
        sources = CardSources(
            work_context=WorkContext(
                default_context_id(turn.thread_key),
                turn.thread_key,
                turn.user_key,
                False,
                turn.received_at,
                turn.received_at,
            ),
            constellation=None,
            rollups=tuple(await store.rollup_segments(turn.user_key)),
            memory=tuple(await store.memory_facts(turn.user_key)),
        )
    else:
        sources = await store.card_sources(turn.thread_key, turn.user_key, now=turn.received_at)
    cards, _ = render_boot_cards(service, turn, sources, session_id="preview", boot=True)
    return cards


def _with_put_off(resume: ResumeContent, turn: Turn) -> ResumeContent:
    """``resume`` with the open items the user has put off since marked so."""
    if not resume.open_questions and not resume.obligations:
        return resume  # nothing to mark: the user's actions need not be loaded
    actions = actions_here(turn)
    return replace(
        resume,
        open_questions=put_off_items(resume.open_questions, actions),
        obligations=put_off_items(resume.obligations, actions),
    )


def _unthreaded(turn: Turn) -> bool:
    """An API turn without a thread of its own (no thread header: the thread is the
    user): its continuity goes to the user's unlinked bucket (spec 001 §3.1)."""
    return turn.channel == API_CHANNEL and turn.thread_id == turn.user_id


def _unique_segments(sources: CardSources) -> list[RollupSegment]:
    # Linked users each keep a rollup of the same person's contexts: show each once.
    seen: dict[str, RollupSegment] = {}
    for segment in sources.rollups:
        known = seen.get(segment.work_context_id)
        if known is None or segment.generated_at > known.generated_at:
            seen[segment.work_context_id] = segment
    return sorted(seen.values(), key=lambda s: s.last_activity_at, reverse=True)


def _newest_user(messages: Sequence[Any]) -> JSON | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return message
    return None


def _lost_cards(messages: Sequence[Any], cards_fingerprint: str | None) -> bool:
    """Whether a request that carries history no longer has the message the session's
    cards rode with: the client (or the relay) compacted the conversation. A request of
    one message carries no history (a channel may send only the newest), unless that
    message is an agent going on from its summary of the conversation so far."""
    if cards_fingerprint is None:
        return False
    history = [m for m in messages if isinstance(m, dict) and m.get("role") != "system"]
    if len(history) < 2 and not (
        history
        and isinstance(content := history[0].get("content"), str)
        and is_compaction_turn(content)
    ):
        return False
    return not any(m.get("role") == "user" and fingerprint(m) == cards_fingerprint for m in history)


def _request_tokens(messages: Sequence[Any]) -> int:
    total = 0
    for message in messages:
        if isinstance(message, dict):
            content = message.get("content")
            total += estimate_tokens(content if isinstance(content, str) else str(content))
    return total


def _ran_tools(body: JSON) -> bool:
    messages = body.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "tool" for m in messages[-3:]
    )
