"""The user policy block (spec 000 §0) and the per-prompt relevance decision (§5.1).

The pydantic models here are the ``[clock]`` table's policy keys, with the spec's names
and defaults: a config that says nothing gets exactly the spec's block. Durations are
ISO 8601 strings (``P1D``, ``PT2H``, ``P30D``) parsed by pydantic.

``evaluate`` is pure: given what is known about this message it returns the rules that
fire, in order; the awareness stage turns the first one into a single directive (§9: do
*one* of ask, recap, reference).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal, NamedTuple, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    model_validator,
)

Mode = Literal["off", "light", "normal"]
ThreadKind = Literal["project", "conversation", "scheduling", "operations"]
THREAD_KINDS: tuple[ThreadKind, ...] = get_args(ThreadKind)
MODES: tuple[Mode, ...] = get_args(Mode)


# Weeks, days, hours, minutes, seconds: the units with a fixed length.
_ISO_DURATION = re.compile(r"^P(?=\d|T\d)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")


def _iso_duration(value: Any) -> Any:
    # pydantic also takes numbers (seconds) and "HH:MM" text; the policy speaks ISO 8601
    # only, so "2" is never silently two seconds; pydantic then does the arithmetic.
    if isinstance(value, timedelta):
        return value
    text = value.strip().upper() if isinstance(value, str) else ""
    if not _ISO_DURATION.match(text):
        months = re.match(r"^P[^T]*[YM]", text)
        hint = " (months and years have no fixed length: use days, e.g. P30D)" if months else ""
        raise ValueError(
            f"must be an ISO 8601 duration such as 'P1D', 'PT2H' or 'P30D', not {value!r}{hint}"
        )
    return text


# Not strict: the ISO 8601 text is the intended input, turned into a timedelta here.
Duration = Annotated[timedelta, Strict(False), BeforeValidator(_iso_duration)]


class _Block(BaseModel):
    # strict: the policy block is read from TOML, whose booleans and numbers are typed;
    # "no" or 1 for a boolean is a mistake to report, not a value to convert.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class RuleWhen(_Block):
    """Conditions; all that are set must hold. Elapsed conditions never hold on the first
    message in a thread (there is nothing to measure from)."""

    thread_kind: ThreadKind | list[ThreadKind] | None = None
    # Since the last interaction in this thread (user or agent message). A rule that sets
    # ``has_open_action: true`` is about the speaker's own action (spec 000 §7.3), so in a
    # group it measures the speaker's own return: since their last message here.
    elapsed_gte: Duration | None = None
    elapsed_lt: Duration | None = None
    # Since the user's (person's, when linked) last contact on any channel.
    elapsed_any_channel_gte: Duration | None = None
    has_open_action: bool | None = None
    # The message has time references or scheduling intent.
    mentions_time: bool | None = None
    chat_type: Literal["dm", "group"] | None = None
    mode: Mode | list[Mode] | None = None


class RuleThen(_Block):
    """What a firing rule allows; at least one must be true."""

    ask_for_updates: bool = False
    allow_hedged_reference: bool = False
    offer_recap: bool = False

    @model_validator(mode="after")
    def _something(self) -> RuleThen:
        if not (self.ask_for_updates or self.allow_hedged_reference or self.offer_recap):
            raise ValueError(
                "a rule must set at least one of ask_for_updates, allow_hedged_reference, "
                "offer_recap to true"
            )
        return self


class CheckinRule(_Block):
    id: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")]
    when: RuleWhen = Field(default_factory=RuleWhen)
    then: RuleThen


def _rules(*rules: dict[str, Any]) -> list[CheckinRule]:
    return [CheckinRule.model_validate(rule) for rule in rules]


def _default_rules() -> list[CheckinRule]:
    return _rules(
        {
            "id": "project_gap_1d",
            "when": {"thread_kind": "project", "elapsed_gte": "P1D"},
            "then": {"ask_for_updates": True},
        },
        {
            "id": "action_gap_2h",
            "when": {"has_open_action": True, "elapsed_gte": "PT2H"},
            "then": {"allow_hedged_reference": True},
        },
        {
            "id": "long_gap_30d",
            "when": {"elapsed_gte": "P30D"},
            "then": {"offer_recap": True},
        },
    )


def _default_normal_rules() -> list[CheckinRule]:
    return _rules(
        {
            "id": "normal_gap_1d",
            "when": {"elapsed_gte": "P1D"},
            "then": {"offer_recap": True},
        },
        {
            "id": "normal_action_gap_30m",
            "when": {"has_open_action": True, "elapsed_gte": "PT30M"},
            "then": {"allow_hedged_reference": True},
        },
    )


class CheckinsPolicy(_Block):
    enabled: bool = True
    rules: list[CheckinRule] = Field(default_factory=_default_rules)
    # Extra rules evaluated after ``rules`` only in mode "normal" (spec 000 §0: "more
    # proactive check-ins/summaries when gaps are large"); "light" uses ``rules`` alone.
    normal_rules: list[CheckinRule] = Field(default_factory=_default_normal_rules)

    @model_validator(mode="after")
    def _unique_ids(self) -> CheckinsPolicy:
        seen: set[str] = set()
        for rule in [*self.rules, *self.normal_rules]:
            if rule.id in seen:
                raise ValueError(f"two check-in rules have the id {rule.id!r}; ids must differ")
            seen.add(rule.id)
        return self


class LatestActionsPolicy(_Block):
    enabled: bool = True
    max_items: Annotated[int, Field(ge=1, le=500)] = 25
    auto_clock_temporal_actions: bool = True
    require_explicit_clock_it_for_non_temporal: bool = True
    store_quotes: bool = False
    # How long an action stays usable (spec 000 §6.4): the default, the default in
    # project threads, and the ceiling whatever the user says.
    ttl: Duration = timedelta(days=1)
    project_ttl: Duration = timedelta(days=7)
    max_ttl: Duration = timedelta(days=30)


class StorePolicy(_Block):
    # Core Clock MUST record timestamps (spec 000 §4.1): only true is accepted.
    last_message_timestamps: Literal[True] = True
    latest_actions: LatestActionsPolicy = Field(default_factory=LatestActionsPolicy)


def _default_tool_patterns() -> list[str]:
    from middleware.impact.tool_calls import DEFAULT_PATTERNS

    return list(DEFAULT_PATTERNS)


def _known_activity(name: str) -> str:
    # Only actions of a known activity are ever matched: a misspelt one would never be.
    from middleware.actions.templates import TEMPLATES

    if name not in TEMPLATES:
        raise ValueError(
            f"unknown activity {name!r}; cues are added to one of: {', '.join(sorted(TEMPLATES))}"
        )
    return name


class InferencePolicy(_Block):
    enabled: bool = True
    # Inference shapes tone and confirming questions, never facts (spec 000 §6.5 "hard
    # rule", §8.1): only true is accepted.
    allow_for_tone_only: Literal[True] = True
    require_confirmation_for_impactful_actions: bool = True
    # Tool calls the upstream makes whose names match these (fnmatch, case-insensitive):
    # "enforce" holds them until the user confirms, "annotate" only flags them.
    impactful_tool_guard: Literal["enforce", "annotate", "off"] = "enforce"
    impactful_tool_patterns: list[str] = Field(default_factory=_default_tool_patterns)
    # How long a held call waits for the user's confirmation.
    confirmation_ttl: Duration = timedelta(hours=1)
    # Extra cue words per activity for confirming questions (§6.5), added to the built-in
    # table: e.g. {gym = ["my arms are jelly"]}.
    cues: dict[Annotated[str, AfterValidator(_known_activity)], list[str]] = Field(
        default_factory=dict
    )


class PolicyOverrides(_Block):
    """What a user (or an admin for them) may override (spec 000 §10.2 ``policy_overrides``)."""

    # Read from stored JSON and the admin API rather than the config file: as lax as before.
    model_config = ConfigDict(strict=False)

    mode: Mode | None = None
    auto_clock_temporal_actions: bool | None = None

    @classmethod
    def from_stored(cls, data: Any) -> PolicyOverrides:
        """Stored overrides, keeping the keys we understand (imports may carry others)."""
        if not data or not isinstance(data, dict):
            return _NO_OVERRIDES
        known = {key: data[key] for key in cls.model_fields if key in data}
        try:
            return cls.model_validate(known)
        except ValueError:
            return cls()


_NO_OVERRIDES = PolicyOverrides()


class RuleFacts(NamedTuple):
    """What the relevance decision looks at for one message (spec 000 §5.1).

    A NamedTuple rather than a frozen dataclass: one is built on every turn, for a third
    of the cost."""

    now: datetime
    mode: Mode
    thread_kind: str
    chat_type: Literal["dm", "group"]
    elapsed: timedelta | None  # since the last interaction here; None: first message
    elapsed_any_channel: timedelta | None
    has_open_action: bool
    mentions_time: bool
    # Since the speaker's own last message here (group); in a DM, ``elapsed`` itself.
    elapsed_speaker: timedelta | None


def rule_elapsed(rule: CheckinRule, facts: RuleFacts) -> timedelta | None:
    """The gap ``rule``'s elapsed conditions measure: the speaker's own return for a rule
    about their open action (in a busy group, Bob's message five minutes ago says nothing
    about Ana's coming back), the thread's last interaction otherwise."""
    return facts.elapsed_speaker if rule.when.has_open_action else facts.elapsed


def rule_fires(rule: CheckinRule, facts: RuleFacts) -> bool:
    """Whether every condition the rule sets holds for ``facts``."""
    # One condition at a time: every turn asks every rule, and most rules are settled by
    # the first condition that does not hold.
    when = rule.when
    if when.thread_kind is not None and facts.thread_kind not in _as_list(when.thread_kind):
        return False
    if when.mode is not None and facts.mode not in _as_list(when.mode):
        return False
    if when.chat_type is not None and facts.chat_type != when.chat_type:
        return False
    if when.has_open_action is not None and facts.has_open_action != when.has_open_action:
        return False
    if when.mentions_time is not None and facts.mentions_time != when.mentions_time:
        return False
    elapsed = rule_elapsed(rule, facts)
    if when.elapsed_gte is not None and (elapsed is None or elapsed < when.elapsed_gte):
        return False
    if when.elapsed_lt is not None and (elapsed is None or elapsed >= when.elapsed_lt):
        return False
    any_channel = facts.elapsed_any_channel
    return when.elapsed_any_channel_gte is None or (
        any_channel is not None and any_channel >= when.elapsed_any_channel_gte
    )


def evaluate(checkins: CheckinsPolicy, facts: RuleFacts) -> list[CheckinRule]:
    """The rules that fire, in their configured order (``normal_rules`` after ``rules``,
    in mode normal only); none while check-ins are disabled or the mode is ``off``."""
    if not checkins.enabled or facts.mode == "off":
        return []
    rules = [*checkins.rules, *(checkins.normal_rules if facts.mode == "normal" else ())]
    return [rule for rule in rules if rule_fires(rule, facts)]


def _as_list(value: str | list[Any]) -> list[Any]:
    return value if isinstance(value, list) else [value]
