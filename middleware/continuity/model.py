"""The continuity log's values (spec 001 §3.2, §4.1), as they cross the store interface.

A *work context* is what a thread works on: by default one per thread, or one a user
named (``/context damages brief``) and moved threads of any channel into. A *session* is
a run of a thread's turns without an idle gap. Captures write *entries* to the context's
append-only log; the *constellation* is the derived view the cards are rendered from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

EntryType = Literal[
    "session_summary_ref",
    "open_question",
    "key_decision",
    "cross_conversation_update",
    "work_phase_change",
]
CaptureMode = Literal["deterministic", "llm_enriched"]
WorkPhase = Literal[
    "research",
    "drafting",
    "review",
    "revision",
    "waiting_for_external",
    "completed",
    "paused",
    "unknown",
]
WORK_PHASES: tuple[str, ...] = get_args(WorkPhase)
# ``session_end``: the user left a chat that ends with them (the terminal's /quit,
# Ctrl-D, Ctrl-C: spec 004 §4 "user exits").
Trigger = Literal[
    "idle_timeout",
    "debounced_defocus",
    "pre_compaction",
    "nightly_sweep",
    "manual_request",
    "session_end",
]
SCHEMA_VERSION = 2
# The id prefix of a thread's own (unnamed) work context: ``wc:<thread_key>``.
DEFAULT_CONTEXT_PREFIX = "wc:"
# API turns without a thread header have no thread identity to hang work on (spec 001
# §3.1 "no entities resolved"): they share the user's unlinked bucket, capped in size.
UNLINKED_CONTEXT_PREFIX = "wc_unlinked:"


# The promoted node id of a key decision a group made, standing in its resume card (a
# private chat's becomes a living-memory directive instead): ``standing_decision:<entry>``.
STANDING_DECISION_PREFIX = "standing_decision:"


def default_context_id(thread_key: str) -> str:
    return f"{DEFAULT_CONTEXT_PREFIX}{thread_key}"


def unlinked_context_id(user_key: str) -> str:
    return f"{UNLINKED_CONTEXT_PREFIX}{user_key}"


@dataclass(frozen=True, slots=True)
class WorkContext:
    """A work context. ``named`` is false for a thread's own default context."""

    work_context_id: str
    name: str
    owner_key: str
    named: bool
    created_at: datetime
    last_active_at: datetime


@dataclass(frozen=True, slots=True)
class Session:
    """A run of a thread's turns without an idle gap, with what capture needs to know.

    ``user_turns`` counts the session's user messages; ``dirty_turns`` those after the
    last capture (``captured_message_id``). ``last_turn_at`` is the latest user message of
    the session. ``speaker_key`` is whoever spoke last (the session's focus owner).
    """

    session_id: str
    thread_key: str
    channel: str
    work_context_id: str
    speaker_key: str
    started_at: datetime
    first_message_id: int
    last_turn_at: datetime
    user_turns: int = 0
    dirty_turns: int = 0
    tool_used: bool = False
    captured_message_id: int | None = None
    last_capture_at: datetime | None = None
    summary: str | None = None
    summary_mode: CaptureMode | None = None
    cards_fingerprint: str | None = None
    chat_type: Literal["dm", "group"] = "dm"


@dataclass(frozen=True, slots=True)
class ContinuityEntry:
    """One continuity log entry (spec 001 §3.2, schema_version 2).

    ``content`` holds the entry type's fields as JSON values:

    - ``session_summary_ref``: ``doc73_session_summary_id`` (our session id),
      ``entities_referenced``, ``procedures_executed``, ``tools_used``, ``turn_count``,
      ``duration_minutes``, ``ended_at`` (its last message, which the card dates it by)
    - ``open_question``: ``question``, ``context``, ``resolved``, ``resolved_at``,
      ``resolution_summary``
    - ``key_decision``: ``decision``, ``rationale``, ``superseded_by``,
      ``referenced_in`` (session ids that came back to it)
    - ``cross_conversation_update``: ``summary``, ``source_session_id``,
      ``affected_entity_ids``, ``for_thread_key`` (the thread it is news for),
      ``source_channel``, ``source_place``
    - ``work_phase_change``: ``previous_phase``, ``new_phase``, ``reason``

    plus ``confidence`` (1.0, lower for heuristic extraction) on questions and decisions.
    Entries are append-only; only the lifecycle fields (``delivered``, ``promoted_*``,
    ``decay_at``) and an open question's resolution change after writing.
    """

    entry_id: str
    entry_type: EntryType
    work_context_id: str
    source_session_id: str
    captured_at: datetime
    capture_mode: CaptureMode
    content: dict[str, Any]
    decay_at: datetime
    delivered: bool = False
    delivered_at: datetime | None = None
    promoted_to_graph: bool = False
    promoted_node_id: str | None = None
    linked_entity_ids: tuple[str, ...] = ()
    source_agent_id: str | None = None
    schema_version: int = SCHEMA_VERSION


@dataclass(frozen=True, slots=True)
class RollupSegment:
    """One work context's part of a person's recent-activity rollup (spec 001 §6.2)."""

    work_context_id: str
    text: str
    last_activity_at: datetime
    generated_at: datetime


MemoryKind = Literal["name", "fact", "preference", "directive", "correction"]
MemorySource = Literal["user", "promoted", "admin"]


@dataclass(frozen=True, slots=True)
class MemoryFact:
    """A stable fact or standing preference of a person (tier 3, ``living_memory``).

    ``confidence`` is how sure memory was of it when the user last said it,
    ``last_mentioned_at`` (spec 003 §8); :func:`middleware.memory.confidence.confidence_now`
    is how sure it is now. ``committed`` when the user asked for it to be kept ("remember
    that …", ``/memory add``; spec 002 tier 3): it is never forgotten for its age or to
    make room, only when they ask or correct it."""

    fact_id: int
    user_key: str
    kind: MemoryKind
    text: str
    source: MemorySource
    created_at: datetime
    confidence: float
    last_mentioned_at: datetime
    source_entry_id: str | None = None
    committed: bool = False


@dataclass(frozen=True, slots=True)
class CardSources:
    """Everything card assembly reads, fetched in one store round trip."""

    work_context: WorkContext
    constellation: dict[str, Any] | None
    rollups: tuple[RollupSegment, ...] = ()
    memory: tuple[MemoryFact, ...] = field(default_factory=tuple)
