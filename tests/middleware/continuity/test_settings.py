"""``[continuity]`` and ``[cards]`` defaults and ranges are spec 001's numbers (§5.1
``ContinuityConfigSchema``, §3.3 TTLs, §3.4 window, §6 tier budgets), pinned as literals."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from middleware.continuity.settings import CardsConfig, ContinuityConfig


def test_continuity_defaults_are_the_specs() -> None:
    config = ContinuityConfig()
    assert config.mode == "full"
    assert (config.min_dirty_turns, config.idle_trigger_minutes, config.debounce_minutes) == (
        3,
        15,
        30,
    )
    assert config.max_session_history_window == 15
    assert (
        config.session_summary_ttl_days,
        config.open_question_ttl_days,
        config.key_decision_ttl_days,
        config.cross_update_ttl_days_after_delivery,
        config.work_phase_ttl_days,
    ) == (30, 60, 60, 7, 30)
    assert config.deterministic_heuristic_capture is True
    assert config.schema_version == 2
    # §3.1: the unlinked bucket holds 20 entries; §3.3: 14 days, 3 sessions to promote.
    assert config.unlinked_max_entries == 20
    assert (config.obligation_after_days, config.directive_after_sessions) == (14, 3)


@pytest.mark.parametrize("window", [3, 25])
def test_the_history_window_takes_three_to_twenty_five(window: int) -> None:
    assert ContinuityConfig(max_session_history_window=window).max_session_history_window == window


@pytest.mark.parametrize("window", [2, 26])
def test_a_history_window_outside_three_to_twenty_five_is_refused(window: int) -> None:
    with pytest.raises(ValidationError, match="max_session_history_window"):
        ContinuityConfig(max_session_history_window=window)


def test_card_budgets_are_the_specs() -> None:
    cards = CardsConfig()
    assert (
        cards.max_tokens,
        cards.resume_max_tokens,
        cards.recent_activity_max_tokens,
        cards.living_memory_max_tokens,
    ) == (420, 120, 200, 100)
    # §6.1 rule 3: no resume card within 30 minutes; §6.2 rule 3: a rollup older than 7
    # days is skipped.
    assert (cards.resume_min_gap_minutes, cards.recent_activity_max_age_days) == (30, 7)
