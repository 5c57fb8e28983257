"""Learning living memory (tier 3) from what the user says: "remember that …", "call me
…", standing preferences and corrections (spec 003 §7's triggers, ``triggers.py``). A
correction retires what it corrects (spec 003 §5.4: the correction always wins), and
"please forget that …" retires what it names, as does news that something remembered
has ended ("my dog Rex died", "we broke up")."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from middleware.continuity.model import MemoryFact
from middleware.continuity.settings import MemoryConfig
from middleware.memory.confidence import is_kept
from middleware.memory.replacement import is_about, still_stands, supersedes
from middleware.memory.triggers import detect_forgetting, detect_memory
from middleware.store import Store
from middleware.types import ChatType

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Learned:
    """What one message changed in living memory: the facts it stated (``new``) and
    those it asked to be forgotten (``forgotten``), which the caller also takes out of
    the blocks replayed to the model. A fact a change retired ("I moved to Lisbon"
    retiring "Lives in Porto") is in neither: the user did not ask to unsay it, and
    the history carries the change right after it."""

    new: list[MemoryFact] = field(default_factory=list)
    forgotten: list[MemoryFact] = field(default_factory=list)


async def learn_from_message(
    store: Store,
    settings: MemoryConfig,
    user_key: str,
    text: str,
    at: datetime,
    *,
    chat_type: ChatType = "dm",
    addressed: bool = True,
) -> Learned:
    """Store the facts ``text`` states for the user, and drop those it asks to be
    forgotten ("please forget that I'm vegetarian"); return both. In a group only
    what the user plainly asks the assistant to keep is learned (see
    :mod:`middleware.memory.triggers`; ``addressed`` when the message mentions or replies
    to it): their personal memory is not rewritten by what they say to the room."""
    learned = Learned()
    known: list[MemoryFact] | None = None
    for asked in detect_forgetting(text):
        known = await store.memory_facts(user_key) if known is None else known
        for kept in known:
            if is_about(asked, kept.text) and await store.delete_memory_fact(
                user_key, kept.fact_id
            ):
                learned.forgotten.append(kept)
        known = None
    for candidate in detect_memory(text, in_group=chat_type == "group", addressed=addressed):
        # Read only when there is something to store (rarely): what it corrects goes.
        known = await store.memory_facts(user_key) if known is None else known
        retired = [
            old
            for old in known
            if old.kind in ("fact", "correction", "preference") and supersedes(candidate, old.text)
        ]
        replaced = [old.fact_id for old in retired]
        if candidate.retire_only:
            # "My dog Rex died": the dog goes from the card, and nothing takes its place;
            # "Leo died" of two cats, Mia and Leo: Mia stays (kept if they were).
            for old in retired:
                await store.delete_memory_fact(user_key, old.fact_id)
                if (standing := still_stands(candidate, old.text)) is not None:
                    await store.add_memory_fact(
                        user_key, old.kind, standing, source="user", at=at, committed=old.committed
                    )
            known = None if replaced else known
            continue
        for old in retired:
            # "Is a software engineer at Acme" → "Is a software engineer" at Globex.
            if (standing := still_stands(candidate, old.text)) is not None:
                await store.add_memory_fact(
                    user_key, old.kind, standing, source="user", at=at, committed=old.committed
                )
        fact = await store.add_memory_fact(
            user_key,
            candidate.kind,
            candidate.text,
            source="user",
            at=at,
            replaces_kind=candidate.replaces_kind,
            replaces=replaced,
            committed=candidate.committed,
        )
        if fact is not None or replaced:
            known = None  # a later sentence of the message may correct this one
        if fact is not None:
            learned.new.append(fact)
    if learned.new:
        await enforce_limit(store, user_key, settings.max_facts, now=at)
    return learned


# Never forgotten to make room: a person's name, and a correction they made (spec 003
# §5.1 rule 4: corrections are never discarded; the compactor keeps them too, §5.5).
_KEPT_OVER_LIMIT = frozenset({"name", "correction"})


def _kept_over_limit(fact: MemoryFact, now: datetime) -> bool:
    # And what they asked us to keep (spec 002: a committed entry is never pruned), for as
    # long as they said it holds, as the compactor keeps it: "remember that I'm in Lisbon
    # this week" is an ordinary fact once that week is over.
    return is_kept(fact, now) or fact.kind in _KEPT_OVER_LIMIT


async def enforce_limit(store: Store, user_key: str, max_facts: int, *, now: datetime) -> int:
    """Forget the oldest facts beyond ``max_facts``, never a name, a correction or a fact
    the user asked to keep (``committed``, until the period it names is over at ``now``:
    :func:`~middleware.memory.confidence.is_kept`); return how many. When those alone are more
    than ``max_facts``, they all stay, over the limit: a correction is the user's own word
    on what memory got wrong, and forgetting it would let the old, wrong fact be learned
    back; a committed fact is one they asked us not to lose. The limit keeps memory tidy;
    the card's own token budget is what bounds the prompt."""
    facts = await store.memory_facts(user_key)
    excess = len(facts) - max_facts
    dropped = 0
    for fact in facts:
        if dropped >= excess:
            break
        if not _kept_over_limit(fact, now) and await store.delete_memory_fact(
            user_key, fact.fact_id
        ):
            dropped += 1
    if dropped:
        log.info("living memory of %s over its limit: forgot %d oldest facts", user_key, dropped)
    elif excess > 0:
        log.info(
            "living memory of %s is %d over its limit in names, corrections and facts asked "
            "to be kept, which it keeps",
            user_key,
            excess,
        )
    return dropped
