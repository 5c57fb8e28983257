"""``[continuity]``, ``[cards]`` and ``[memory]``: spec 001 §5.1's config, with its names
and defaults, plus the relay's own keys (how sessions split, when "night" is, how
compaction is recognised for API clients)."""

from __future__ import annotations

from datetime import time, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, field_validator, model_validator

ContinuityMode = Literal["full", "deterministic", "off"]


class _Block(BaseModel):
    # strict, as the rest of the config (proxy/config.py): no "yes" for true, no "30" for 30.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ContinuityConfig(_Block):
    """``[continuity]`` (spec 001 §5.1 ``ContinuityConfigSchema``)."""

    # full: deterministic capture plus one LLM pass per capture; deterministic: no LLM
    # (free, offline, heuristic extraction); off: nothing captured.
    mode: ContinuityMode = "full"
    # The model the capture pass asks; empty means [upstream] model.
    synthesis_model: str = ""
    # How long the capture pass may take before falling back to deterministic capture.
    synthesis_timeout_seconds: Annotated[float, Field(gt=0, le=600)] = 60
    # A session is dirty after this many user messages since its last capture (or fewer
    # that state a decision or an open item, or a tool run: ``triggers.is_dirty``).
    min_dirty_turns: Annotated[int, Field(ge=1)] = 3
    # Capture the focused dirty session once its user has been idle this long.
    idle_trigger_minutes: Annotated[int, Field(ge=1)] = 15
    # Capture a dirty session the user moved away from once this long has passed since
    # its last capture (or its start).
    debounce_minutes: Annotated[int, Field(ge=1)] = 30
    max_session_history_window: Annotated[int, Field(ge=3, le=25)] = 15
    session_summary_ttl_days: Annotated[int, Field(ge=1)] = 30
    open_question_ttl_days: Annotated[int, Field(ge=1)] = 60
    key_decision_ttl_days: Annotated[int, Field(ge=1)] = 60
    cross_update_ttl_days_after_delivery: Annotated[int, Field(ge=1)] = 7
    work_phase_ttl_days: Annotated[int, Field(ge=1)] = 30
    # Before delivery a cross-conversation update waits at most this long.
    cross_update_ttl_days_undelivered: Annotated[int, Field(ge=1)] = 30
    deterministic_heuristic_capture: bool = True
    schema_version: Literal[2] = 2
    # A new session starts after this long without a message in the thread.
    session_gap_minutes: Annotated[int, Field(ge=1)] = 60
    # Entries kept in a user's unlinked bucket (API turns without a thread), oldest
    # evicted first (spec 001 §3.1).
    unlinked_max_entries: Annotated[int, Field(ge=1)] = 20
    # API clients: capture before the client compacts, once the forwarded request
    # reaches this fraction of the model's context window.
    precompaction_fraction: Annotated[float, Field(gt=0, le=1)] = 0.8
    model_context_tokens: Annotated[int, Field(ge=1000)] = 128_000
    # Nightly job: runs once per person per local night, after this local time, in the
    # person's timezone (nightly_timezone when they have none).
    nightly_at: Annotated[time, Strict(False)] = time(3, 0)  # a TOML time or "03:00"
    nightly_timezone: str = "UTC"
    # How often the background scheduler looks for captures and nightly runs due.
    scheduler_interval_seconds: Annotated[float, Field(gt=0, le=3600)] = 60
    # Promotion (spec 001 §3.3): an open question unresolved this long becomes an
    # obligation shown in tier 1; a decision referenced in this many sessions becomes a
    # standing directive in tier 3.
    obligation_after_days: Annotated[int, Field(ge=1)] = 14
    directive_after_sessions: Annotated[int, Field(ge=2)] = 3

    @field_validator("nightly_timezone")
    @classmethod
    def _iana(cls, value: str) -> str:
        from middleware.clock.zones import get_zone

        get_zone(value)
        return value

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    @property
    def session_gap(self) -> timedelta:
        return timedelta(minutes=self.session_gap_minutes)


class CardsConfig(_Block):
    """``[cards]``: the three tier cards (spec 001 §6) and their token budgets."""

    enabled: bool = True
    max_tokens: Annotated[int, Field(ge=50, le=4000)] = 420
    resume_max_tokens: Annotated[int, Field(ge=20, le=2000)] = 120
    recent_activity_max_tokens: Annotated[int, Field(ge=20, le=2000)] = 200
    living_memory_max_tokens: Annotated[int, Field(ge=30, le=2000)] = 100
    # Tier 1 only when the latest summary is at least this old (spec 001 §6.1 rule 3).
    resume_min_gap_minutes: Annotated[int, Field(ge=0)] = 30
    # Tier 2 is skipped when the rollup was not refreshed for this long (§6.2 rule 3).
    recent_activity_max_age_days: Annotated[int, Field(ge=1)] = 7
    # The rollup covers work contexts active within this many days.
    recent_activity_window_days: Annotated[int, Field(ge=1)] = 14

    @model_validator(mode="after")
    def _memory_fits(self) -> CardsConfig:
        if self.living_memory_max_tokens > self.max_tokens:
            raise ValueError(
                "living_memory_max_tokens must not exceed max_tokens: the living memory "
                "card is never dropped, so it has to fit the total"
            )
        return self


class MemoryConfig(_Block):
    """``[memory]``: the living memory behind tier 3."""

    enabled: bool = True
    # Learn facts and preferences the user states ("remember that …", "call me …").
    capture_from_messages: bool = True
    # Facts kept per person; the oldest non-name facts go first.
    max_facts: Annotated[int, Field(ge=1, le=1000)] = 50
