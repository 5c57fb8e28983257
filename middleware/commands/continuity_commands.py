"""``/context``, ``/recap``, ``/capture``, ``/memory``: see and steer continuity (spec 001).

- ``/context`` shows the thread's work context and the user's recent ones;
  ``/context NAME`` moves this thread into the context called NAME (made if new), so
  threads on several channels can share one.
- ``/recap`` shows where this work context stands (phase, last sessions, open questions,
  decisions), whatever the injection rules would say.
- ``/capture`` captures the current session now.
- ``/memory`` lists what the relay remembers about the user, each with when it was last
  said and how sure memory is of it now (spec 003 §8); ``/memory forget N``
  deletes one item (and its line from the cards of the blocks stored for earlier
  messages, which are replayed), ``/memory add TEXT`` adds one, kept on request (never
  forgotten for its age or to make room). In a group, where everyone reads the
  answer, the list (and ``/context``'s list of the user's other contexts) is only
  offered in a direct chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any

from middleware.actions.model import Action
from middleware.cards.content import CardItem
from middleware.cards.resume import put_off_marks, session_length, without_relative_days
from middleware.clock.zones import get_zone
from middleware.commands import Command, CommandHandler
from middleware.continuity.capture import rebuild_view, shown_context_name
from middleware.continuity.constellation import item_said_at, session_ended_at, session_minutes
from middleware.continuity.model import MemoryFact
from middleware.continuity.put_off import actions_here, put_off_items
from middleware.continuity.service import ContinuityService
from middleware.continuity.summary import SummaryParts, item_key
from middleware.injection import InjectionMemory
from middleware.memory.confidence import confidence_now, is_hedged, is_kept
from middleware.memory.learn import enforce_limit
from middleware.memory.triggers import stated_memory
from middleware.types import Turn

_RECENT_CONTEXTS = 8
_NAME_LIMIT = 80
# What a group must not read: everyone there sees the answer.
_PRIVATE_IN_GROUPS = (
    "Everyone here would read what I remember about you, so I list it and forget items "
    "only in a direct chat with me: send /memory there. (/memory add TEXT works here.)"
)


def continuity_commands(
    service: ContinuityService, injections: InjectionMemory
) -> dict[str, CommandHandler]:
    """The handlers, keyed by command name. ``injections`` is the injection stage's
    memory: a fact forgotten with ``/memory forget`` leaves the blocks it replays too."""
    store = service.store
    settings = service.settings

    async def context(turn: Turn, command: Command) -> str:
        name = " ".join(command.args.split())
        if name:
            if len(name) > _NAME_LIMIT:
                return (
                    f"That name is too long ({len(name)} characters); keep it under {_NAME_LIMIT}."
                )
            was = await store.thread_work_context(turn.thread_key, now=turn.received_at)
            chosen, made = await service.move_thread(
                turn.thread_key, turn.user_key, name, now=turn.received_at
            )
            others = [
                k
                for k in await store.context_threads(chosen.work_context_id)
                if k != turn.thread_key
            ]
            shared = (
                f" It is also used by {len(others)} other thread{'s' if len(others) != 1 else ''}."
                if others
                else ""
            )
            if chosen.work_context_id == was.work_context_id:
                return f"This thread is already in “{chosen.name}”.{shared}"
            verb = "Started a new work context" if made else "Moved this thread into"
            return (
                f"{verb} “{chosen.name}”.{shared} What you do here now continues it, on any "
                "channel where you use the same name."
            )
        current = await store.thread_work_context(turn.thread_key, now=turn.received_at)
        lines = [
            f"This thread's work context: “{current.name}”."
            if current.named
            # A thread's own context is named after the thread's key, which means nothing
            # to the person: say what it does for them instead.
            else "This thread has no named work context: what you do here is remembered "
            "for this thread alone."
        ]
        recent = [
            c
            for c in await store.recent_work_contexts(turn.user_key, _RECENT_CONTEXTS)
            if c.work_context_id != current.work_context_id
        ]
        if recent and turn.chat_type == "group":
            # Their other work is theirs: everyone in the group reads this answer.
            lines.append("Send /context to me in a direct chat to see your other contexts.")
        elif recent:
            lines.append("Your recent ones:")
            lines.extend(
                f"- {shown_context_name(c)}, active {c.last_active_at:%Y-%m-%d}" for c in recent
            )
        lines.append(
            "Send /context NAME to move this thread into a named context."
            if current.named
            else "Send /context NAME to give it a name: threads on any channel where you "
            "use the same name carry on the same work."
        )
        return "\n".join(lines)

    async def recap(turn: Turn, command: Command) -> str:
        now = turn.received_at
        current = await store.thread_work_context(turn.thread_key, now=now)
        await rebuild_view(store, settings.continuity, current.work_context_id, now)
        view = await store.constellation(current.work_context_id)
        return recap_text(
            current.name if current.named else None, view, _user_zone(turn), actions_here(turn)
        )

    async def capture(turn: Turn, command: Command) -> str:
        if not settings.continuity.enabled:
            return (
                'Continuity is off on this relay ([continuity] mode = "off"): nothing is captured.'
            )
        outcome = await service.capture_thread(turn.thread_key, "manual_request")
        if outcome is None:
            return "Nothing new to capture in this session yet."
        how = "with the LLM" if outcome.mode == "llm_enriched" else "deterministically"
        fallback = (
            f" (the LLM pass failed: {outcome.fallback_reason})" if outcome.fallback_reason else ""
        )
        summary = f"\nSummary: {outcome.summary}" if outcome.summary else ""
        entries = f"{outcome.entries} entr{'y' if outcome.entries == 1 else 'ies'}"
        return f"Captured this session {how}{fallback}: {entries}.{summary}"

    async def memory(turn: Turn, command: Command) -> str:
        verb, _, rest = command.args.partition(" ")
        verb = verb.lower()
        if verb in {"forget", "delete", "remove"}:
            if turn.chat_type == "group":
                return _PRIVATE_IN_GROUPS
            return await forget(turn, rest.strip())
        if verb == "add":
            text = " ".join(rest.split())
            if not text:
                return "Say what to remember: /memory add I prefer short answers"
            # Kept about the user, as a learned fact is: the card's reader is the model,
            # for whom "I" is itself.
            stated = stated_memory(text)
            fact = await store.add_memory_fact(
                turn.user_key,
                stated.kind,
                stated.text,
                source="user",
                at=turn.received_at,
                replaces_kind=stated.replaces_kind,
                committed=stated.committed,
            )
            if fact is None:
                return f"I already remember that; it is {_KEPT}."
            await enforce_limit(
                store, turn.user_key, settings.memory.max_facts, now=turn.received_at
            )
            return f"Remembered: {stated.text}"
        if verb:
            return "Use /memory to list, /memory add TEXT, or /memory forget N."
        if turn.chat_type == "group":
            return _PRIVATE_IN_GROUPS
        facts = await store.memory_facts(turn.user_key)
        if not facts:
            return (
                'I don\'t remember anything about you yet. Tell me ("remember that …", '
                '"call me …") or use /memory add TEXT.'
            )
        now, zone = turn.received_at, _user_zone(turn)
        lines = ["What I remember about you (shown to the model at the start of a session):"]
        lines.extend(
            f"{n}. {fact.text} — {_how_sure(fact, now, zone)}" for n, fact in enumerate(facts, 1)
        )
        if any(is_kept(fact, now) for fact in facts):
            lines.append(_KEPT_NOTE)
        lines.append("Send /memory forget N to delete one.")
        return "\n".join(lines)

    async def forget(turn: Turn, which: str) -> str:
        facts = await store.memory_facts(turn.user_key)
        if not which.isdigit() or not 1 <= int(which) <= len(facts):
            count = len(facts)
            if not count:
                return "There is nothing to forget."
            numbers = "only 1" if count == 1 else f"1 to {count}"
            problem = f"There is no item {which}. " if which else ""
            return (
                f"{problem}Give the number of the item to forget as /memory lists it "
                f"({numbers}), e.g. /memory forget {count}"
            )
        fact = facts[int(which) - 1]
        if not await store.delete_memory_fact(turn.user_key, fact.fact_id):
            return f"Item {which} was already forgotten."
        # Asked to forget, it is not told to the model again: not even in the card of an
        # earlier message that a client sends back with its history.
        await injections.forget_fact(turn.user_key, fact.text)
        return f"Forgotten: {fact.text}"

    return {"context": context, "recap": recap, "capture": capture, "memory": memory}


def _user_zone(turn: Turn) -> tzinfo:
    """Where the person is, for the dates they read (UTC when unknown)."""
    prior = turn.prior
    zone_name = (prior.thread_tz or prior.user_tz) if prior else None
    return get_zone(zone_name) if zone_name else UTC


_SAID = {"user": "said", "promoted": "inferred from your decisions", "admin": "added by an admin"}
_KEPT = "kept on request"
_KEPT_NOTE = (
    f"Items {_KEPT} are ones you asked me to remember: I never drop them on my own, "
    "however long since you mentioned them."
)


def _how_sure(fact: MemoryFact, now: datetime, zone: tzinfo) -> str:
    """When a remembered fact was last said and how sure memory is of it now (spec 003
    §8): "said 2 Mar 2026, 80% sure", and when that is low, that it may be out of date;
    and that it is kept on request when the user asked for it to be."""
    said = fact.last_mentioned_at.astimezone(zone)
    sure = round(confidence_now(fact, now) * 100)
    doubt = "; may be out of date" if is_hedged(fact, now) else ""
    kept = f"; {_KEPT}" if is_kept(fact, now) else ""
    return f"{_SAID[fact.source]} {said.day} {said:%b %Y}, {sure}% sure{doubt}{kept}"


def recap_text(
    name: str | None,
    view: dict[str, Any] | None,
    zone: tzinfo = UTC,
    actions: Sequence[Action] = (),
) -> str:
    """Where a work context stands, for a person to read; ``name`` is None for the
    thread's own context (named after the thread's key, which means nothing to them).
    Dates are the person's own (``zone``), as the rest of the relay shows them. An open
    item put off since (one of ``actions``, the person's) says to when, as the card does."""
    if not view or not (
        view.get("session_history") or view.get("open_questions") or view.get("key_decisions")
    ):
        where = f"for “{name}”" if name else "in this thread"
        return (
            f"Nothing captured {where} yet. A session is captured after a pause, or "
            "now with /capture."
        )
    phase = str(view.get("active_work_phase") or "unknown").replace("_", " ")
    title = f"“{name}”" if name else "This thread"
    lines = [title + ("" if phase == "unknown" else f" — {phase} phase") + "."]
    questions = view.get("open_questions", [])[:5]
    decisions = view.get("key_decisions", [])[:5]
    # Each item once: on its own line, not again in the session it came from.
    listed = {item_key(q["question"]) for q in questions} | {
        item_key(d["decision"]) for d in decisions
    }
    for line in view.get("session_history", [])[:3]:
        ended = session_ended_at(line) or datetime.fromisoformat(line["captured_at"])
        day = ended.astimezone(zone)
        parts = SummaryParts.from_json(line.get("summary_parts"))
        summary = parts.text(leave_out=listed) if parts is not None else line["summary"]
        length = session_length(session_minutes(line))
        lines.append(f"- {day:%Y-%m-%d}" + (f" ({length})" if length else "") + f": {summary}")
    items = put_off_items(
        [CardItem(str(q["question"]), said_at=item_said_at(q)) for q in questions], actions
    )
    for question, item in zip(questions, items, strict=True):
        text, marks = item.text, put_off_marks(item, zone)
        if item.put_off_at is not None:
            # Put off since: the day first said for it ("tomorrow") is not the plan now.
            text = without_relative_days(text) or text
        marks += ["unconfirmed"] if question.get("tentative") else []
        lines.append(f"Open: {text}" + (f" ({'; '.join(marks)})" if marks else ""))
    for decision in decisions:
        mark = " (unconfirmed)" if decision.get("tentative") else ""
        lines.append(f"Decided: {decision['decision']}{mark}")
    return "\n".join(lines)
