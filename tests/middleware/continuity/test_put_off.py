"""Open items marked put off by the user's actions put off since (continuity.put_off)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from middleware.actions.model import Action
from middleware.cards.content import CardItem
from middleware.continuity.put_off import put_off_items

MONDAY = datetime(2026, 11, 9, 9, 0, tzinfo=UTC)
TUESDAY = MONDAY + timedelta(days=1)
NEXT_MONDAY = MONDAY + timedelta(days=7)


def put_off(label: str) -> Action:
    """``label``, clocked on Monday and put off on Tuesday to next Monday."""
    return Action(
        id="a1",
        label=label,
        recorded_at=MONDAY,
        expires_at=NEXT_MONDAY + timedelta(days=2),
        status="planned",
        source="auto",
        thread_key="agent:main:telegram:dm:11",
        activity="call",
        start_at=NEXT_MONDAY,
        postponed_at=TUESDAY,
    )


def test_an_item_worded_otherwise_is_put_off_by_what_it_is_about() -> None:
    # The item "ring the bank tomorrow" kept its first day on the card: the action it was
    # put off by reads "Call the bank", and not every word of it was in the item.
    items = (
        CardItem("ring the bank tomorrow", said_at=MONDAY),
        CardItem("call the bank tomorrow", said_at=MONDAY),
        CardItem("call mom tomorrow", said_at=MONDAY),
    )
    ring, call, mom = put_off_items(items, [put_off("Call the bank")])
    assert (ring.put_off_at, ring.put_off_to) == (TUESDAY, NEXT_MONDAY)
    assert (call.put_off_at, call.put_off_to) == (TUESDAY, NEXT_MONDAY)
    assert mom == items[2], "another thing to call about is not put off"
    # The other way round: the action worded otherwise than the item.
    (item,) = put_off_items(items[1:2], [put_off("Ring the bank")])
    assert item.put_off_to == NEXT_MONDAY
