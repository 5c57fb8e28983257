"""Pure operations on a user's latest actions (spec 000 §6.2–§6.4, §7.3, §10.2, §10.3).

Lists in, lists out; nothing here reads a clock or a store ("now" is a parameter). Lists
are kept oldest first by ``recorded_at``.

Precedence (§6.2 "explicit directive (highest priority)"): within one user's thread, two
open actions about the same thing — same activity, unless each names something the other
does not ("Call the bank", "Call mom"), or the same label — cannot both stand.
The newer one replaces the older (it is removed, not marked canceled: we do not know
whether the older one happened, and a false "canceled" would be a claim the user never
made), except that an automatic action never replaces a clocked one: it is dropped instead.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from middleware.actions.detect import (
    DetectedAction,
    DurationReport,
    StatusUpdate,
    key_words,
    object_words,
)
from middleware.actions.model import Action, Scope, Source, Status
from middleware.actions.templates import TEMPLATES, expected_minutes, said_minutes
from middleware.types import ChatType

__all__ = [
    "CLOSED_RETENTION",
    "add_action",
    "calibrate",
    "close_latest",
    "compact",
    "mark",
    "new_action",
    "postpone_latest",
    "visible_actions",
]

# Done/canceled actions stay this long (an "/actions" listing, a "how was it?") then go.
CLOSED_RETENTION = timedelta(days=1)
# Sleep and a moment away keep their own short TTLs even in a project thread.
_SHORT_LIVED = frozenset({"sleep", "nap", "brb"})


def new_action(
    detected: DetectedAction,
    *,
    now: datetime,
    thread_key: str,
    chat_type: ChatType,
    user_key: str,
    source: Source,
    scope: Scope,
    calibration: Mapping[str, Any],
    ttl_default: timedelta,
    project: bool,
    project_ttl: timedelta,
    max_ttl: timedelta,
    quote: str | None,
    action_id: str,
    start: datetime | None = None,
    due_by: datetime | None = None,
    deadline: str | None = None,
) -> Action:
    """An action recorded ``now`` in ``thread_key`` (a ``chat_type`` chat) from what was
    detected (§6.3, §6.4).

    Expected durations come from the activity template, a user's calibration winning, or
    from how long the user said it would last ("for an hour", ``detected.minutes``).
    TTL: ``ttl_default``, or the activity template's when that is shorter (sleep 12h,
    nap 4h); in a project thread (``project``) every action but sleep/nap gets
    ``project_ttl``. The TTL is clamped to ``max_ttl``, and expiry is never before the
    expected maximum duration has passed (a 12h-max activity outlives a shorter TTL).
    A non-temporal item is a ``note`` with no duration window.

    ``start``, a later instant the user gave for a planned action, is the user's longer
    horizon (§6.4): the TTL and the maximum duration count from it rather than from
    ``now``, but expiry stays within ``max_ttl`` of ``now``. A ``start`` that is not
    after ``now``, or given for an action already under way, is ignored. An action under
    way only for want of a word for when (``detected.may_be_later``: "clock it: standup
    notes due tomorrow") is planned when given a later ``start``, or a ``deadline`` not
    yet due ("gym by 5pm").

    ``due_by``, the end of the day (or span) the user gave for a plan with no time of day
    ("gym tomorrow", "call the dentist today"), keeps it planned until then and is when
    its TTL starts counting: it is looked back on after its day, not during it. It is
    ignored, like ``start``, when not after ``now`` or for an action already under way.
    ``deadline``, the user's own words for when a deadline ("by Friday") is due, comes
    with a ``due_by`` and no ``start``, and goes with ``due_by``.
    """
    if detected.may_be_later and _later(now, start, due_by if deadline else None):
        detected = replace(detected, status="planned")
    template = TEMPLATES.get(detected.activity or "") if detected.temporal else None
    typical: int | None = None
    maximum: int | None = None
    ttl = ttl_default
    if template is not None:
        typical, maximum = expected_minutes(template, calibration)
        ttl = min(ttl, template.ttl)
    if detected.temporal and detected.minutes is not None:
        typical, maximum = said_minutes(detected.minutes, template)  # "for an hour"
    if project and detected.activity not in _SHORT_LIVED:
        ttl = project_ttl
    if start is not None and (start <= now or detected.status != "planned"):
        start = None
    if due_by is not None and (due_by <= now or detected.status != "planned"):
        due_by = None
    if due_by is None:
        deadline = None
    opens = start or now
    expires = (due_by or opens) + ttl
    if maximum is not None:
        expires = max(expires, opens + timedelta(minutes=maximum))
    # The ceiling, whatever the user said (a 12h-max activity still outlives a shorter one).
    expires = min(expires, now + max(max_ttl, timedelta(minutes=maximum or 0)))
    return Action(
        id=action_id,
        label=detected.label,
        recorded_at=now,
        expires_at=expires,
        status=detected.status,
        source=source,
        thread_key=thread_key,
        user_key=user_key,
        type="temporal_action" if detected.temporal else "note",
        activity=detected.activity,
        expected_typical_minutes=typical,
        expected_max_minutes=maximum,
        scope=scope,
        quote=quote,
        start_at=start,
        chat_type=chat_type,
        due_by=due_by,
        deadline=deadline,
    )


def _later(now: datetime, *instants: datetime | None) -> bool:
    return any(instant is not None and instant > now for instant in instants)


def add_action(
    actions: Sequence[Action], action: Action, *, now: datetime, max_items: int
) -> list[Action]:
    """``actions`` with ``action`` added, following the precedence in the module docstring.

    Only open actions of the same user in the same thread are compared; an auto action
    that a clocked one of the same activity/label already covers is not added. The
    result is :func:`compact`-ed.
    """
    related = [a for a in actions if a.is_open(now) and _same_thing(a, action)]
    if action.source == "auto" and any(a.source != "auto" for a in related):
        return compact(actions, now=now, max_items=max_items)
    kept = [a for a in actions if a not in related]
    return compact([*kept, action], now=now, max_items=max_items)


def compact(actions: Sequence[Action], *, now: datetime, max_items: int) -> list[Action]:
    """Drop expired actions and ones closed more than :data:`CLOSED_RETENTION` ago, then
    keep the newest ``max_items`` by ``recorded_at``; oldest first, ties in input order."""
    kept = [
        a
        for a in actions
        if a.status_at(now) != "expired"
        and not (
            a.status in ("done", "canceled")
            and now - (a.updated_at or a.recorded_at) > CLOSED_RETENTION
        )
    ]
    kept.sort(key=lambda a: a.recorded_at)
    return kept[-max_items:] if max_items > 0 else []


@dataclass(frozen=True, slots=True)
class Speaker:
    """Who speaks, and where: whose actions a turn may see and change (§7.3).
    ``linked`` are the accounts linked to ``user_key`` (one person, spec 000 §7.0)."""

    user_key: str
    thread_key: str
    chat_type: ChatType
    linked: Collection[str] = ()


def close_latest(
    actions: Sequence[Action],
    update: StatusUpdate,
    *,
    now: datetime,
    speaker: Speaker,
) -> tuple[list[Action], Action | None]:
    """Apply a done/canceled the user just said to the open action it is about.

    Candidates are the user's own open actions in this thread, or in any private thread
    when this is a DM (as :func:`visible_actions` shows them, ``linked`` accounts' too);
    in a group, also a plan any member clocked for it, when the update names it.
    When ``update`` names an activity, only actions of that activity family qualify
    ("meal" closes "meal:dinner", "woke up" closes a nap), and the most recent is
    closed. When it names words ("the bank call is done"), the one action whose label
    has all of them is closed; none when several have (a wrong close is worse than a
    missed one). A bare "done" or "I'm back" closes the most recent. A "done" that names
    no words never closes an action that has not begun ("I'm back" says nothing of
    tomorrow's call), nor, naming no activity either, one set for a day or a time: back
    the next morning, or back from the gym after saying "I'll call mom at 10", the user
    has said nothing of the call ("called mom" closes it). A postponement is about what
    it names, however worded (``update.about``: "can't ring the bank" puts off "Call the
    bank", never "Call mom"). When none qualifies nothing changes. A "done" is marked
    ``user_confirmed``. Returns the new list and the changed action (or None).
    """
    target = _about(actions, update, now=now, speaker=speaker)
    if target is None or update.status == "postponed":
        return list(actions), None
    source: Source | None = "user_confirmed" if update.status == "done" else None
    changed = target.with_status(update.status, now, source)
    return [changed if a is target else a for a in actions], changed


def postpone_latest(
    actions: Sequence[Action],
    update: StatusUpdate,
    *,
    now: datetime,
    speaker: Speaker,
    start: datetime | None,
    due_by: datetime | None = None,
) -> tuple[list[Action], Action | None]:
    """Apply a postponement ("can't call the bank until Monday") to the open action it is
    about, chosen as :func:`close_latest` chooses: it stays open (``planned``), marked
    put off (``postponed_at``, so the cards no longer show its first day), and when
    ``start`` is known (Monday's beginning) it begins then, at the earliest, and is due
    by ``due_by`` (Monday's end, for a day); a deadline it had gives way to the new day.
    It lives as long after its new start as it would have after its old one, and may be
    asked about again once that comes. Without a ``start`` ("till the freeze ends") only
    its status changes. Put off by a duration (``update.later_by``: "the standup is
    delayed by an hour"), it begins that much later than it was to, or than now when it
    had begun. Returns the new list and the changed action (or None)."""
    target = _about(actions, update, now=now, speaker=speaker)
    if target is None:
        return list(actions), None
    if start is None and update.later_by is not None:
        start = max(target.window_opens_at, now) + timedelta(minutes=update.later_by)
    changed = replace(target, status="planned", updated_at=now, postponed_at=now)
    if start is not None and start > now:
        life = target.expires_at - target.window_opens_at
        changed = replace(
            changed,
            start_at=start,
            due_by=due_by,
            deadline=None,
            referenced_at=None,
            expires_at=max(target.expires_at, start + life, due_by or start),
        )
    return [changed if a is target else a for a in actions], changed


def _about(
    actions: Sequence[Action],
    update: StatusUpdate,
    *,
    now: datetime,
    speaker: Speaker,
) -> Action | None:
    """The open action ``update`` is about (see :func:`close_latest`), or None."""
    user_key, thread_key = speaker.user_key, speaker.thread_key
    candidates = [
        a
        for a in actions
        if a.is_open(now)
        and (
            (a.user_key == user_key and a.thread_key == thread_key)
            or (speaker.chat_type == "dm" and _private_and_own(a, user_key, speaker.linked))
            or (speaker.chat_type == "group" and _named_group_plan(a, update, thread_key))
        )
    ]
    if update.named:
        named = [a for a in candidates if update.named <= key_words(a.label)]
        if not named and update.about:
            # "can't email the landlord" for "Write to the landlord": the same thing.
            named = [a for a in candidates if update.about <= key_words(a.label)]
        candidates = named if len(named) == 1 else []
    else:
        candidates = [
            a
            for a in candidates
            if (update.activity is None or _family(a.activity) == _family(update.activity))
            and (update.status != "done" or _over_by_a_done(a, update, now))
        ]
        if update.about:
            # Of two calls, "can't ring the bank" puts off the bank's, never mom's.
            candidates = [a for a in candidates if update.about <= key_words(a.label)]
    return max(candidates, key=lambda a: a.recorded_at) if candidates else None


def _named_group_plan(action: Action, update: StatusUpdate, thread_key: str) -> bool:
    """Whether ``update`` may be about a plan another member clocked for this group
    (§7.3): only when it names something ("the standup notes are done", "done with the
    standup"); a member's bare "done" or "I'm back" is about their own doings."""
    named = bool(update.named or update.about or update.activity)
    return named and action.scope == "group" and action.thread_key == thread_key


def _over_by_a_done(action: Action, update: StatusUpdate, now: datetime) -> bool:
    """Whether a "done" that names no words ("I'm back", "back from the gym") may be about
    ``action``: it has begun, and unless the update names its activity, it was not a plan
    set for a day or time, which the user's return says nothing of."""
    if not action.has_started(now):
        return False
    return update.activity is not None or (action.start_at is None and action.due_by is None)


def mark(
    actions: Sequence[Action], action_id: str, status: Status, *, now: datetime
) -> list[Action]:
    """``/actions done|cancel``: the action ``action_id`` moved to ``status`` (a "done" is
    ``user_confirmed``); the list is unchanged when no action has that id."""
    source: Source | None = "user_confirmed" if status == "done" else None
    return [a.with_status(status, now, source) if a.id == action_id else a for a in actions]


def calibrate(
    calibration: Mapping[str, Any], report: DurationReport, *, now: datetime
) -> dict[str, Any]:
    """A new §10.2 ``calibration`` with the user's reported duration for the activity.

    ``typical_minutes`` is what they reported; ``max_minutes`` the larger of the
    template's maximum and 1.5× the report. Other keys and other activities are kept; a
    malformed ``activity_overrides`` is replaced. A non-positive report changes nothing.
    """
    updated = dict(calibration)
    if report.minutes <= 0:
        return updated
    raw = calibration.get("activity_overrides")
    overrides = dict(raw) if isinstance(raw, Mapping) else {}
    typical, maximum = said_minutes(report.minutes, TEMPLATES.get(report.activity))
    overrides[report.activity] = {
        "typical_minutes": typical,
        "max_minutes": maximum,
        "updated_iso": now.isoformat(timespec="seconds"),
    }
    updated["activity_overrides"] = overrides
    return updated


def visible_actions(
    actions: Sequence[Action],
    *,
    now: datetime,
    speaker: Speaker,
    include_closed: bool = False,
) -> list[Action]:
    """The open actions usable when ``speaker`` speaks in their thread (§7.3).

    In a group: the user's own actions recorded in this thread, plus ``scope="group"``
    actions recorded in this thread by anyone. In a DM: the user's own actions from this
    thread or any private one — never one recorded in a group (an API thread included,
    whose key does not say it is one), so nothing said in a group leaks into a private
    chat or the other way round. ``linked`` are the accounts linked to ``user_key`` (one
    person, spec 000 §7.0): in a DM their private actions are the user's own, so
    "heading to the gym" clocked on Telegram is asked about on Discord. Expired and
    closed actions appear only with ``include_closed`` (still stored, not yet compacted
    away). Oldest first.
    """
    user_key, thread_key, linked = speaker.user_key, speaker.thread_key, speaker.linked
    visible: list[Action] = []
    for action in actions:
        if not include_closed and not action.is_open(now):
            continue
        if speaker.chat_type == "group":
            shown = action.thread_key == thread_key and (
                action.user_key == user_key or action.scope == "group"
            )
        else:
            shown = (
                action.user_key == user_key and action.thread_key == thread_key
            ) or _private_and_own(action, user_key, linked)
        if shown:
            visible.append(action)
    return sorted(visible, key=lambda a: a.recorded_at)


def _private_and_own(action: Action, user_key: str, linked: Collection[str]) -> bool:
    """Whether ``action`` was recorded in a private chat by the user or an account linked
    to them."""
    return (action.user_key == user_key or action.user_key in linked) and _recorded_in_private(
        action
    )


def _same_thing(older: Action, newer: Action) -> bool:
    if older.user_key != newer.user_key or older.thread_key != newer.thread_key:
        return False
    if older.activity is not None and older.activity == newer.activity:
        return not _about_other_things(older, newer)
    return older.label.casefold() == newer.label.casefold()


def _about_other_things(one: Action, other: Action) -> bool:
    """Whether two actions of one activity are about different things: each names
    something the other does not ("Call the bank" and "Call mom" both stand; "Heading to
    the gym" and "Going to the gym" are one)."""
    ones = object_words(one.label, one.activity)
    others = object_words(other.label, other.activity)
    return bool(
        ones
        and others
        and not ones <= key_words(other.label)
        and not others <= key_words(one.label)
    )


def _family(activity: str | None) -> str | None:
    # "meal:dinner" belongs to "meal"; waking up ends a nap as well as a night's sleep.
    if activity is None:
        return None
    family = activity.split(":", 1)[0]
    return "sleep" if family == "nap" else family


def _recorded_in_private(action: Action) -> bool:
    """Whether the action was said in a private chat: as recorded with it, or, for one
    stored before the chat type was kept, as its thread key says (a DM or API thread)."""
    if action.chat_type is not None:
        return action.chat_type == "dm"
    key = action.thread_key
    return ":group:" not in key and (":dm:" in key or ":api:" in key)
