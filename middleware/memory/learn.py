"""Learning living memory (tier 3) from what the user says: "remember that …", "call me
…", standing preferences and corrections (spec 003 §7's triggers, ``triggers.py``)."""

from __future__ import annotations

import logging
from datetime import datetime

from middleware.continuity.model import MemoryFact
from middleware.continuity.settings import MemoryConfig
from middleware.memory.triggers import detect_memory
from middleware.store import Store

log = logging.getLogger(__name__)


async def learn_from_message(
    store: Store, settings: MemoryConfig, user_key: str, text: str, at: datetime
) -> list[MemoryFact]:
    """Store the facts ``text`` states for the user; return the new ones."""
    learned: list[MemoryFact] = []
    for candidate in detect_memory(text):
        fact = await store.add_memory_fact(
            user_key,
            candidate.kind,
            candidate.text,
            source="user",
            at=at,
            replaces_kind=candidate.replaces_kind,
        )
        if fact is not None:
            learned.append(fact)
    if learned:
        await enforce_limit(store, user_key, settings.max_facts)
    return learned


async def enforce_limit(store: Store, user_key: str, max_facts: int) -> int:
    """Forget the oldest facts beyond ``max_facts`` (a name is kept); return how many."""
    facts = await store.memory_facts(user_key)
    excess = len(facts) - max_facts
    dropped = 0
    for fact in facts:
        if dropped >= excess:
            break
        if fact.kind != "name" and await store.delete_memory_fact(user_key, fact.fact_id):
            dropped += 1
    if dropped:
        log.info("living memory of %s over its limit: forgot %d oldest facts", user_key, dropped)
    return dropped
