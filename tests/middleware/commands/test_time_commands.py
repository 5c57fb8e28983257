"""``/tz`` arguments: what resolves to a zone, and what each refusal tells the user."""

from __future__ import annotations

from zoneinfo import available_timezones

import pytest

from middleware.clock.zones import is_valid_zone, valid_zones
from middleware.commands.time_commands import resolve_zone_argument

REFUSED_KEYS = sorted(available_timezones() - valid_zones())


@pytest.mark.parametrize("key", REFUSED_KEYS)
def test_a_zone_the_relay_refuses_is_never_resolved(key: str) -> None:
    zone, problem = resolve_zone_argument(key)
    assert zone is None or is_valid_zone(zone)  # "Japan" is a country: Asia/Tokyo
    assert zone is not None or problem


@pytest.mark.parametrize("argument", ["Etc/GMT+2", "etc/gmt-14", "Etc/GMT-9"])
def test_etc_offsets_are_refused_with_their_real_offset(argument: str) -> None:
    zone, problem = resolve_zone_argument(argument)
    assert zone is None
    assert "offsets and Etc ids aren't accepted" in problem
    assert "Send your city or a region id" in problem
    offset = {"Etc/GMT+2": "UTC-02:00", "etc/gmt-14": "UTC+14:00", "Etc/GMT-9": "UTC+09:00"}
    assert offset[argument] in problem


@pytest.mark.parametrize("argument", ["GMT", "Zulu", "Etc/Zulu", "UCT", "Greenwich"])
def test_names_of_utc_point_to_utc(argument: str) -> None:
    zone, problem = resolve_zone_argument(argument)
    assert zone is None
    assert "/tz UTC" in problem and "Europe/London" in problem
    assert "Asia/Tokyo" not in problem


@pytest.mark.parametrize("argument", ["UTC+5", "GMT-3", "UTC+05:30", "+0530", "utc -3"])
def test_offsets_are_refused_saying_so(argument: str) -> None:
    zone, problem = resolve_zone_argument(argument)
    assert zone is None
    assert "offsets aren't accepted" in problem


@pytest.mark.parametrize(
    ("argument", "zone"),
    [
        ("UTC", "UTC"),
        ("etc/utc", "Etc/UTC"),
        ("asia/tokyo", "Asia/Tokyo"),
        ("Lisbon", "Europe/Lisbon"),
    ],
)
def test_zones_and_places_resolve(argument: str, zone: str) -> None:
    assert resolve_zone_argument(argument) == (zone, "")
