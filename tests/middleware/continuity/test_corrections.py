"""Corrections: what a session's summary still states of an item since corrected."""

from __future__ import annotations

import pytest

from middleware.continuity.corrections import still_states

POSTGRES = "Use Postgres for the billing service"
MYSQL = "Use MySQL for the billing service"


@pytest.mark.parametrize(
    ("summary", "corrected", "correction"),
    [
        ("Chose Postgres for the billing service; migration pending.", POSTGRES, MYSQL),
        # A correction that names what it turns away from still drops it.
        (
            "On “Let's go with Postgres for the billing service.” (5 messages).",
            "go with Postgres for the billing service",
            "we're using MySQL for the billing service, not Postgres",
        ),
        ("Planned the report, due Friday.", "the report is due Friday", "the report is due Monday"),
    ],
)
def test_a_summary_naming_the_old_value_alone_still_states_it(
    summary: str, corrected: str, correction: str
) -> None:
    assert still_states(summary, corrected, correction)


@pytest.mark.parametrize(
    ("summary", "corrected", "correction"),
    [
        # The change itself, naming both.
        ("Switched the billing service from Postgres to MySQL.", POSTGRES, MYSQL),
        ("Outlined the event study section.", POSTGRES, MYSQL),
        # Nothing tells the two apart: the summary is kept.
        ("Chose Postgres.", POSTGRES, POSTGRES),
    ],
)
def test_a_summary_of_the_change_or_of_other_work_does_not(
    summary: str, corrected: str, correction: str
) -> None:
    assert not still_states(summary, corrected, correction)
