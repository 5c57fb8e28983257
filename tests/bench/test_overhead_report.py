"""The overhead bench's own logic: which relay variants it runs and what it checks.

The bench itself is run by hand (it measures wall-clock time); these pin the parts a
wrong edit would silently change: the variants' configs and the verdicts.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from bench import overhead
from proxy.config import Config

CLOCK_OFF = {"clock": {"enabled": False}}


def _added(**plain_ms: float) -> dict[str, dict[str, float]]:
    return {name: dict.fromkeys(overhead.ADDED, value) for name, value in plain_ms.items()}


def _summary(**rps: float) -> dict[str, dict[str, float]]:
    return {name: {"concurrent_rps": value} for name, value in rps.items()}


def test_default_variants_are_valid_relay_configs_and_differ_from_the_relay() -> None:
    for name, overrides in overhead.DEFAULT_COMPARISONS.items():
        raw = overhead.relay_raw_config("http://127.0.0.1:9/v1", overhead.Path("x"), overrides)
        assert Config.model_validate(raw) != Config.model_validate(
            overhead.relay_raw_config("http://127.0.0.1:9/v1", overhead.Path("x"), {})
        ), name


def test_compare_options_replace_the_defaults() -> None:
    assert overhead._comparisons(None) == overhead.DEFAULT_COMPARISONS
    found = overhead._comparisons(['nc={"clock": {"enabled": false}}', " a = {} "])
    assert found == {"nc": CLOCK_OFF, "a": {}}


@pytest.mark.parametrize(
    "spec", ["no-equals", "={}", "relay={}", "floor={}", "x=[1]", "x={", "x={}|x={}"]
)
def test_a_bad_compare_option_is_refused_with_what_to_write(spec: str) -> None:
    with pytest.raises(SystemExit) as refused:
        overhead._comparisons(spec.split("|"))
    assert "--compare" in str(refused.value)


@pytest.mark.parametrize(
    ("relay", "comparisons", "expected"),
    [
        ({}, {"nc": CLOCK_OFF}, "nc"),
        ({}, {"core": overhead.DEFAULT_COMPARISONS["core"], "nc": CLOCK_OFF}, "nc"),
        # Other changes too: not the clock's cost alone.
        ({}, {"core": overhead.DEFAULT_COMPARISONS["core"]}, None),
        # The relay's own overrides carry over to the variant.
        ({"cards": {"enabled": False}}, {"nc": CLOCK_OFF}, "nc"),
        # The relay has no clock to measure.
        (CLOCK_OFF, {"nc": CLOCK_OFF}, None),
        ({}, {}, None),
    ],
)
def test_the_clock_budget_compares_only_a_variant_that_is_the_relay_without_its_clock(
    relay: dict[str, Any], comparisons: dict[str, dict[str, Any]], expected: str | None
) -> None:
    assert overhead._clock_off_variant(relay, comparisons) == expected


def test_added_latency_covers_every_proxied_target() -> None:
    summary = {
        name: {key: base for key in overhead.ADDED.values()}
        for name, base in (("direct", 0.3), ("floor", 0.9), ("relay", 1.3), ("nc", 1.1))
    }
    added = overhead.added_latency(summary)
    assert set(added) == {"floor", "relay", "nc"}
    assert added["relay"]["plain"] == pytest.approx(1.0)
    assert added["nc"]["stream_first_chunk"] == pytest.approx(0.8)


def test_checks_give_issue_2_targets_and_the_clock_budget_their_verdicts() -> None:
    rows = overhead.checks(
        _summary(floor=1000.0, relay=650.0, nc=800.0),
        _added(floor=0.6, relay=1.0, nc=0.75),
        relay_rss=79.0,
        clock_off="nc",
    )
    verdicts = {row["name"]: (row["value"], row["pass"]) for row in rows}
    latency, latency_ok = verdicts["relay/floor added p50, plain"]
    assert math.isclose(latency, 1.0 / 0.6) and not latency_ok
    assert verdicts["relay/floor req/s"] == (pytest.approx(65.0), False)
    assert verdicts["relay RSS after load"] == (79.0, True)
    cost, cost_ok = verdicts["Core Clock cost (relay - nc) p50"]
    assert cost == pytest.approx(0.25) and cost_ok
    over = overhead.checks(
        _summary(floor=1.0, relay=1.0, nc=1.0), _added(floor=1, relay=1.0, nc=0.6), 1.0, "nc"
    )
    assert not over[-1]["pass"]
    assert len(overhead.checks(_summary(floor=1.0, relay=1.0), _added(floor=1, relay=1), 1.0)) == 5
