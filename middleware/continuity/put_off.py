"""Open items the user has put off since they said them.

An open item keeps the user's words as captured ("call the bank tomorrow", spec 001
§4.2); a postponement said later ("I can't call the bank until Monday") keeps the clocked
action open and moves its start (``actions.lifecycle.postpone_latest``). The item is
matched to that action by its words, so the card shows it put off, to its new day, and
not the day first said for it as if that were still the plan. They are matched by what
they are about, not their exact words: "call the bank tomorrow" is put off by "Ring the
bank" too, and never by "Call mom".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from middleware.actions.detect import key_words, object_words
from middleware.actions.lifecycle import Speaker, visible_actions
from middleware.actions.model import Action, load_actions
from middleware.cards.content import CardItem
from middleware.types import Turn

__all__ = ["actions_here", "put_off_items"]


def actions_here(turn: Turn) -> list[Action]:
    """The user's actions visible where ``turn`` is said, closed ones too (one past its
    time was put off and never done; :func:`put_off_items` leaves out the rest)."""
    stored = turn.prior.clock_data.latest_actions if turn.prior else []
    return visible_actions(
        load_actions(stored),
        now=turn.received_at,
        speaker=Speaker(turn.user_key, turn.thread_key, turn.chat_type),
        include_closed=True,
    )


def put_off_items(items: Sequence[CardItem], actions: Sequence[Action]) -> tuple[CardItem, ...]:
    """``items``, each one an action put off after it was said marked as put off (when,
    and to which start, the latest such action says). An action done or called off puts
    nothing off; one past its time still does (it was put off, and never done). An item
    matches an action when the item's words include what the action is about, however
    the item words what is done to it ("call the bank tomorrow" and "Ring the bank":
    bank; see :func:`~middleware.actions.detect.object_words`)."""
    postponed = [
        (action, object_words(action.label))
        for action in actions
        if action.postponed_at is not None and action.status not in ("done", "canceled")
    ]
    return tuple(_put_off(item, postponed) for item in items)


def _put_off(item: CardItem, postponed: Sequence[tuple[Action, frozenset[str]]]) -> CardItem:
    words = key_words(item.text)
    later = [
        action
        for action, label in postponed
        if label
        and label <= words
        and action.postponed_at is not None
        and (item.said_at is None or action.postponed_at > item.said_at)
    ]
    if not later:
        return item
    latest = max(later, key=lambda action: action.postponed_at or action.recorded_at)
    return replace(item, put_off_at=latest.postponed_at, put_off_to=latest.start_at)
