"""The clock stage's own helpers."""

from __future__ import annotations

import pytest

from middleware.clock.presentation import DirectAudience
from middleware.clock.stage import _direct_audience


def test_the_kept_direct_audience_is_the_one_built_for_its_zone_and_locale() -> None:
    for zone, locale in [("Europe/Berlin", "de-DE"), ("UTC", "en"), ("Asia/Kathmandu", "en")]:
        assert _direct_audience(zone, locale) == DirectAudience(zone, locale)
        assert _direct_audience(zone, locale) is _direct_audience(zone, locale)
    assert _direct_audience("UTC", "de-DE") != _direct_audience("UTC", "en")


def test_a_bad_zone_fails_every_time_it_is_asked_for() -> None:
    for _ in range(2):
        with pytest.raises(ValueError):
            _direct_audience("Mars/Olympus", "en")
