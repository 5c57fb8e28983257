"""The check-in policy block and the pure relevance decision (spec 000 §0, §5.1)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from middleware.clock.policy import (
    CheckinRule,
    CheckinsPolicy,
    InferencePolicy,
    LatestActionsPolicy,
    PolicyOverrides,
    RuleFacts,
    RuleWhen,
    evaluate,
    rule_fires,
)

NOW = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)
DEFAULTS = CheckinsPolicy()
MINUTE = timedelta(minutes=1)


def facts(**changes: Any) -> RuleFacts:
    """A light-mode DM message in a conversation thread; ``changes`` override fields."""
    base = RuleFacts(
        now=NOW,
        mode="light",
        thread_kind="conversation",
        chat_type="dm",
        elapsed=timedelta(0),
        elapsed_any_channel=timedelta(0),
        has_open_action=False,
        mentions_time=False,
        elapsed_speaker=timedelta(0),
    )
    # A DM's unless told: the speaker's own gap is the thread's.
    changes.setdefault("elapsed_speaker", changes.get("elapsed", base.elapsed))
    return base._replace(**changes)


def fired(policy: CheckinsPolicy, **changes: Any) -> list[str]:
    return [rule.id for rule in evaluate(policy, facts(**changes))]


def rule(rule_id: str, **when: Any) -> dict[str, Any]:
    return {"id": rule_id, "when": when, "then": {"offer_recap": True}}


def test_project_gap_fires_from_exactly_one_day_in_project_threads() -> None:
    day = timedelta(days=1)
    assert fired(DEFAULTS, thread_kind="project", elapsed=day) == ["project_gap_1d"]
    assert fired(DEFAULTS, thread_kind="project", elapsed=day - MINUTE) == []
    assert fired(DEFAULTS, thread_kind="conversation", elapsed=day) == []


def test_action_gap_fires_from_two_hours_with_an_open_action() -> None:
    two_hours = timedelta(hours=2)
    assert fired(DEFAULTS, has_open_action=True, elapsed=two_hours) == ["action_gap_2h"]
    assert fired(DEFAULTS, has_open_action=True, elapsed=two_hours - MINUTE) == []
    assert fired(DEFAULTS, has_open_action=False, elapsed=two_hours) == []


def test_long_gap_fires_from_thirty_days_in_any_thread() -> None:
    assert fired(DEFAULTS, elapsed=timedelta(days=30)) == ["long_gap_30d"]
    assert fired(DEFAULTS, elapsed=timedelta(days=29)) == []
    assert fired(DEFAULTS, elapsed=timedelta(days=30) - MINUTE) == []


def test_every_default_rule_can_fire_together_in_order() -> None:
    assert fired(
        DEFAULTS, thread_kind="project", has_open_action=True, elapsed=timedelta(days=31)
    ) == ["project_gap_1d", "action_gap_2h", "long_gap_30d"]


def test_first_message_never_fires_an_elapsed_rule() -> None:
    first = {"elapsed": None, "elapsed_any_channel": None}
    assert fired(DEFAULTS, thread_kind="project", has_open_action=True, **first) == []
    assert fired(DEFAULTS, mode="normal", has_open_action=True, **first) == []
    below = CheckinsPolicy(rules=[CheckinRule.model_validate(rule("soon", elapsed_lt="PT1H"))])
    # "Less than an hour since nothing" is not true either.
    assert fired(below, **first) == []


def test_mode_off_fires_nothing() -> None:
    everything = {"thread_kind": "project", "has_open_action": True, "elapsed": timedelta(days=60)}
    assert fired(DEFAULTS, mode="off", **everything) == []
    always = CheckinsPolicy(rules=[CheckinRule.model_validate(rule("always"))])
    assert fired(always, mode="off") == []
    assert fired(always, mode="light") == ["always"]


def test_normal_mode_adds_normal_rules_after_rules() -> None:
    many = {"thread_kind": "project", "has_open_action": True, "elapsed": timedelta(days=31)}
    assert fired(DEFAULTS, mode="normal", **many) == [
        "project_gap_1d",
        "action_gap_2h",
        "long_gap_30d",
        "normal_gap_1d",
        "normal_action_gap_30m",
    ]
    assert fired(DEFAULTS, mode="light", **many) == [
        "project_gap_1d",
        "action_gap_2h",
        "long_gap_30d",
    ]
    # The normal-only rules at their own boundaries.
    assert fired(DEFAULTS, mode="normal", elapsed=timedelta(days=1)) == ["normal_gap_1d"]
    assert fired(DEFAULTS, mode="light", elapsed=timedelta(days=1)) == []
    assert fired(DEFAULTS, mode="normal", has_open_action=True, elapsed=30 * MINUTE) == [
        "normal_action_gap_30m"
    ]
    assert fired(DEFAULTS, mode="normal", has_open_action=True, elapsed=29 * MINUTE) == []


def test_configured_order_is_kept() -> None:
    policy = CheckinsPolicy.model_validate(
        {"rules": [rule("b"), rule("a")], "normal_rules": [rule("d"), rule("c")]}
    )
    assert fired(policy, mode="normal") == ["b", "a", "d", "c"]
    assert fired(policy, mode="light") == ["b", "a"]


def test_disabled_checkins_fire_nothing() -> None:
    disabled = CheckinsPolicy(enabled=False)
    assert fired(disabled, mode="normal", thread_kind="project", elapsed=timedelta(days=60)) == []


def test_custom_rule_thread_kind_list() -> None:
    policy = CheckinsPolicy.model_validate(
        {"rules": [rule("ops", thread_kind=["scheduling", "operations"])], "normal_rules": []}
    )
    assert fired(policy, thread_kind="scheduling") == ["ops"]
    assert fired(policy, thread_kind="operations") == ["ops"]
    assert fired(policy, thread_kind="project") == []


def test_in_a_group_an_action_rule_measures_the_speakers_own_return() -> None:
    # Bob spoke five minutes ago; Ana, who has an open action, last spoke three hours ago.
    busy = {
        "chat_type": "group",
        "has_open_action": True,
        "elapsed": 5 * MINUTE,
        "elapsed_speaker": timedelta(hours=3),
    }
    assert fired(DEFAULTS, **busy) == ["action_gap_2h"]
    # The other way round: the thread was quiet, the speaker was not.
    quiet = {**busy, "elapsed": timedelta(days=31), "elapsed_speaker": 5 * MINUTE}
    assert fired(DEFAULTS, **quiet) == ["long_gap_30d"]
    # A first message from the speaker here measures nothing for their action.
    assert fired(DEFAULTS, **{**busy, "elapsed_speaker": None}) == []


def test_custom_rule_mentions_time_and_chat_type() -> None:
    policy = CheckinsPolicy.model_validate(
        {
            "rules": [
                rule("timely", mentions_time=True),
                rule("quiet", mentions_time=False),
                rule("group", chat_type="group"),
            ],
            "normal_rules": [],
        }
    )
    assert fired(policy, mentions_time=True, chat_type="dm") == ["timely"]
    assert fired(policy, mentions_time=False, chat_type="group") == ["quiet", "group"]


def test_custom_rule_elapsed_lt_is_exclusive() -> None:
    policy = CheckinsPolicy.model_validate(
        {"rules": [rule("recent", elapsed_lt="PT10M")], "normal_rules": []}
    )
    assert fired(policy, elapsed=10 * MINUTE - timedelta(seconds=1)) == ["recent"]
    assert fired(policy, elapsed=10 * MINUTE) == []


def test_custom_rule_elapsed_any_channel_gte() -> None:
    policy = CheckinsPolicy.model_validate(
        {"rules": [rule("away", elapsed_any_channel_gte="P7D")], "normal_rules": []}
    )
    # Measured from the last contact anywhere, not from this thread's last interaction.
    assert fired(policy, elapsed=None, elapsed_any_channel=timedelta(days=7)) == ["away"]
    assert fired(policy, elapsed=timedelta(days=8), elapsed_any_channel=timedelta(days=6)) == []
    assert fired(policy, elapsed_any_channel=None) == []


def test_custom_rule_with_several_conditions_needs_all() -> None:
    policy = CheckinsPolicy.model_validate(
        {
            "rules": [
                rule(
                    "window",
                    thread_kind="project",
                    chat_type="group",
                    elapsed_gte="PT1H",
                    elapsed_lt="PT3H",
                    mode=["normal"],
                )
            ],
            "normal_rules": [],
        }
    )
    hit = {
        "thread_kind": "project",
        "chat_type": "group",
        "elapsed": timedelta(hours=2),
        "mode": "normal",
    }
    assert fired(policy, **hit) == ["window"]
    for miss in (
        {"thread_kind": "conversation"},
        {"chat_type": "dm"},
        {"elapsed": timedelta(minutes=59)},
        {"elapsed": timedelta(hours=3)},
        {"mode": "light"},
    ):
        assert fired(policy, **{**hit, **miss}) == [], miss


def test_policy_overrides_from_stored_keeps_known_keys() -> None:
    stored = {"mode": "normal", "auto_clock_temporal_actions": False, "checkins": False}
    assert PolicyOverrides.from_stored(stored) == PolicyOverrides(
        mode="normal", auto_clock_temporal_actions=False
    )
    assert PolicyOverrides.from_stored({"nickname": "x"}) == PolicyOverrides()


@pytest.mark.parametrize(
    "stored",
    [
        {"mode": "loud"},
        {"mode": "light", "auto_clock_temporal_actions": "sometimes"},
        ["mode", "light"],
        None,
        "light",
    ],
)
def test_policy_overrides_from_invalid_stored_value_is_empty(stored: Any) -> None:
    assert PolicyOverrides.from_stored(stored) == PolicyOverrides()


def test_duplicate_rule_ids_are_refused() -> None:
    with pytest.raises(ValidationError, match="two check-in rules have the id 'same'"):
        CheckinsPolicy.model_validate({"rules": [rule("same"), rule("same")]})
    # Across the two lists too: a default normal rule's id cannot be reused.
    with pytest.raises(ValidationError, match="'normal_gap_1d'"):
        CheckinsPolicy.model_validate({"rules": [rule("normal_gap_1d")]})


@pytest.mark.parametrize("value", ["2 days", "1d", 2, 7200, 1.5, "02:00"])
def test_durations_must_be_iso_8601(value: Any) -> None:
    with pytest.raises(ValidationError, match="ISO 8601"):
        RuleWhen.model_validate({"elapsed_gte": value})
    with pytest.raises(ValidationError, match="ISO 8601"):
        LatestActionsPolicy.model_validate({"ttl": value})


def test_durations_accept_iso_8601_in_either_case() -> None:
    when = RuleWhen.model_validate({"elapsed_gte": "p1d", "elapsed_lt": "PT2H30M"})
    assert when.elapsed_gte == timedelta(days=1)
    assert when.elapsed_lt == timedelta(hours=2, minutes=30)


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (CheckinsPolicy, {"enabled": "no"}),
        (RuleWhen, {"has_open_action": 1}),
        (LatestActionsPolicy, {"max_items": "25"}),
        (LatestActionsPolicy, {"store_quotes": "false"}),
    ],
)
def test_policy_values_are_not_converted_from_another_type(
    model: type[BaseModel], data: dict[str, Any]
) -> None:
    # The policy is read from TOML, which has real booleans and numbers.
    with pytest.raises(ValidationError, match="Input should be a valid"):
        model.model_validate(data)


def test_a_rule_that_allows_nothing_is_refused_saying_what_to_set() -> None:
    nothing = {"id": "idle", "then": {"offer_recap": False}}
    with pytest.raises(ValidationError, match="a rule must set at least one of ask_for_updates"):
        CheckinRule.model_validate(nothing)
    for allowed in ("ask_for_updates", "allow_hedged_reference", "offer_recap"):
        checkin = CheckinRule.model_validate({"id": "ok", "then": {allowed: True}})
        assert getattr(checkin.then, allowed) is True


def test_latest_actions_max_items_is_bounded_to_one_to_five_hundred() -> None:
    assert LatestActionsPolicy().max_items == 25
    assert LatestActionsPolicy.model_validate({"max_items": 500}).max_items == 500
    assert LatestActionsPolicy.model_validate({"max_items": 1}).max_items == 1
    for out_of_range in (0, 501):
        with pytest.raises(ValidationError, match="max_items"):
            LatestActionsPolicy.model_validate({"max_items": out_of_range})


@pytest.mark.parametrize("kind", ["project", "conversation", "scheduling", "operations"])
def test_a_rule_may_name_every_thread_kind(kind: str) -> None:
    policy = CheckinsPolicy.model_validate({"rules": [rule("k", thread_kind=kind)]})
    assert fired(policy, thread_kind=kind) == ["k"]


@pytest.mark.parametrize(("chat_type", "other"), [("dm", "group"), ("group", "dm")])
def test_a_rule_may_name_either_chat_type(chat_type: str, other: str) -> None:
    policy = CheckinsPolicy.model_validate({"rules": [rule("c", chat_type=chat_type)]})
    assert fired(policy, chat_type=chat_type) == ["c"]
    assert fired(policy, chat_type=other) == []


@pytest.mark.parametrize("guard", ["enforce", "annotate", "off"])
def test_every_impactful_tool_guard_setting_is_accepted(guard: str) -> None:
    policy = InferencePolicy.model_validate({"impactful_tool_guard": guard})
    assert policy.impactful_tool_guard == guard


def test_an_unknown_impactful_tool_guard_is_refused_naming_the_settings() -> None:
    with pytest.raises(ValidationError, match="'enforce', 'annotate' or 'off'"):
        InferencePolicy.model_validate({"impactful_tool_guard": "warn"})


def test_cues_name_known_activities() -> None:
    policy = InferencePolicy.model_validate({"cues": {"gym": ["jelly arms"], "meal:dinner": []}})
    assert set(policy.cues) == {"gym", "meal:dinner"}
    with pytest.raises(
        ValidationError,
        match=r"unknown activity 'gymm'; cues are added to one "
        r"of: appointment, brb, call, commute, .*, gym, .*, walk",
    ):
        InferencePolicy.model_validate({"cues": {"gymm": ["jelly arms"]}})


def test_policy_overrides_stay_lax_for_stored_json() -> None:
    assert PolicyOverrides.model_validate({"auto_clock_temporal_actions": "false"}) == (
        PolicyOverrides(auto_clock_temporal_actions=False)
    )


@pytest.mark.parametrize("value", ["P1M", "P1Y", "P2Y3M"])
def test_months_and_years_are_refused_with_a_hint(value: str) -> None:
    with pytest.raises(ValidationError, match="use days, e.g. P30D"):
        RuleWhen(elapsed_gte=value)  # type: ignore[arg-type]


# --- rule_fires stops at the first condition that fails: the same answer as all of them --

_SPANS = st.none() | st.sampled_from([timedelta(0), MINUTE, timedelta(hours=2), timedelta(days=1)])


def _all_conditions(rule: CheckinRule, facts: RuleFacts) -> bool:
    """Every condition evaluated, then combined: the reading the rule table is written for."""
    when = rule.when

    def listed(value: Any) -> list[Any]:
        return value if isinstance(value, list) else [value]

    checks = (
        when.thread_kind is None or facts.thread_kind in listed(when.thread_kind),
        when.mode is None or facts.mode in listed(when.mode),
        when.chat_type is None or facts.chat_type == when.chat_type,
        when.has_open_action is None or facts.has_open_action == when.has_open_action,
        when.mentions_time is None or facts.mentions_time == when.mentions_time,
        when.elapsed_gte is None
        or (facts.elapsed is not None and facts.elapsed >= when.elapsed_gte),
        when.elapsed_lt is None or (facts.elapsed is not None and facts.elapsed < when.elapsed_lt),
        when.elapsed_any_channel_gte is None
        or (
            facts.elapsed_any_channel is not None
            and facts.elapsed_any_channel >= when.elapsed_any_channel_gte
        ),
    )
    return all(checks)


@settings(max_examples=600, deadline=None)
@given(
    when=st.fixed_dictionaries(
        {},
        optional={
            "thread_kind": st.sampled_from(["project", ["project", "scheduling"]]),
            "mode": st.sampled_from(["light", ["light", "normal"]]),
            "chat_type": st.sampled_from(["dm", "group"]),
            "has_open_action": st.booleans(),
            "mentions_time": st.booleans(),
            "elapsed_gte": _SPANS.filter(bool),
            "elapsed_lt": _SPANS.filter(bool),
            "elapsed_any_channel_gte": _SPANS.filter(bool),
        },
    ),
    thread_kind=st.sampled_from(["project", "conversation", "scheduling"]),
    mode=st.sampled_from(["light", "normal"]),
    chat_type=st.sampled_from(["dm", "group"]),
    has_open_action=st.booleans(),
    mentions_time=st.booleans(),
    elapsed=_SPANS,
    elapsed_any_channel=_SPANS,
)
def test_rule_fires_as_when_every_condition_is_checked(
    when: dict[str, Any], **changes: Any
) -> None:
    checkin = CheckinRule.model_validate(rule("r", **when))
    assert rule_fires(checkin, facts(**changes)) == _all_conditions(checkin, facts(**changes))
