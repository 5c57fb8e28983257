"""A latest action (spec 000 §6): what a user said they were about to do, stored minimally.

The stored shape is the spec's §10.2 ``latest_actions`` entry, plus a few optional fields
of ours (``activity``, ``scope``, ``user_key``, ``chat_type``, ``quote``, ``start_iso``,
``updated_iso``, ``due_by_iso``, ``deadline``, ``postponed_iso``);
a document exported here is a valid v3 clock-state file, and v3 entries from elsewhere
load (an entry stored before a field of ours existed loads without it).

Status moves with time without being written: past the typical duration an open action
reads as ``likely_done``, past ``expires`` as ``expired`` (``status_at``). The duration
window (§6.5) opens at ``start_at`` for an action the user placed later ("call the bank
tomorrow at 9"), else when it was recorded. A plan given a day but no time ("gym
tomorrow") may happen any time that day: it stays planned until ``due_by``, the day's
end, and is only looked back on after it. Only what the user says (done, canceled,
confirmed) changes the stored status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast, get_args

from middleware.types import ChatType

Status = Literal["planned", "in_progress", "likely_done", "done", "canceled", "expired"]
Source = Literal["auto", "clock_it", "user_confirmed"]
# "user": only surfaced to its owner; "group": surfaced to anyone in its group thread.
Scope = Literal["user", "group"]
# "temporal_action" has a duration window; "note" is a clocked non-temporal item
# ("clock: paid invoice") that only expires.
ActionType = Literal["temporal_action", "note"]

OPEN_STATUSES: frozenset[str] = frozenset({"planned", "in_progress", "likely_done"})
CLOSED_STATUSES: frozenset[str] = frozenset({"done", "canceled", "expired"})


@dataclass(frozen=True, slots=True)
class Action:
    """One clocked action. All instants are aware UTC."""

    id: str
    label: str
    recorded_at: datetime
    expires_at: datetime
    status: Status
    source: Source
    thread_key: str
    user_key: str = ""
    type: ActionType = "temporal_action"
    activity: str | None = None  # a template key such as "gym" or "meal:dinner"
    expected_typical_minutes: int | None = None
    expected_max_minutes: int | None = None
    scope: Scope = "user"
    quote: str | None = None  # only with store_quotes
    updated_at: datetime | None = None
    # When a check-in last asked the model to mention it: once is enough (spec 000 §9).
    referenced_at: datetime | None = None
    # When a planned action begins, if the user said a later time for it; None: at once.
    start_at: datetime | None = None
    # Where it was recorded, a DM or a group (an API thread key does not say); None for an
    # action stored before this was kept.
    chat_type: ChatType | None = None
    # For a plan given a day but no time ("gym tomorrow", "call the dentist on Friday"):
    # the end of that day (of the span the user gave). It may happen any time before.
    due_by: datetime | None = None
    # For a deadline ("finish the report by Friday"): when it is due as the user meant it,
    # in their zone when they said it ("Fri 27 Nov", "Mon 23 Nov 17:00"). Such an action
    # has no start: it may be done any time until ``due_by``.
    deadline: str | None = None
    # When the user last put it off ("can't call the bank until Monday"): it stays open,
    # and what was first said of its day ("tomorrow") no longer holds.
    postponed_at: datetime | None = None

    @property
    def window_opens_at(self) -> datetime:
        """When the action's duration window starts (spec 000 §6.5): its start, if the
        user gave one, else when it was recorded."""
        return self.start_at or self.recorded_at

    def has_started(self, now: datetime) -> bool:
        """Whether ``now`` is at or past the action's start: before it, there is nothing
        to ask about yet ("how did it go?" about tomorrow's call)."""
        return self.start_at is None or now >= self.start_at

    @property
    def past_due_at(self) -> datetime:
        """When there is something to look back on ("how did the gym go?"): for a plan
        given only a day, that day's end (at 9am the day's gym session may be hours off);
        for one set for a time, its start, plus its usual length when known (five minutes
        into a 20-minute call set for 10:00 it may only be starting); else when said."""
        if self.due_by is not None:
            return self.due_by
        if self.start_at is not None and self.expected_typical_minutes is not None:
            return self.start_at + timedelta(minutes=self.expected_typical_minutes)
        return self.window_opens_at

    @property
    def looked_ahead_from(self) -> datetime | None:
        """When a check-in may first look ahead to it ("are you still planning to …?"):
        its start, for one the user placed in time; for a deadline, the morning of the day
        it is due ("standup notes due tomorrow": from the start of tomorrow), or a lead of
        ``DEADLINE_LEAD`` before a time it is due at ("by 5pm": from 5am); None for one
        that was under way when said, which is only ever looked back on."""
        if self.start_at is not None:
            return self.start_at
        if self.deadline is None or self.due_by is None:
            return None
        # A day's deadline is due when the day ends, and is stamped with no time.
        due_at_a_time = _STAMPED_TIME.search(self.deadline) is not None
        return self.due_by - (DEADLINE_LEAD if due_at_a_time else timedelta(days=1))

    def is_past_due(self, now: datetime) -> bool:
        """Whether ``now`` is at or past ``past_due_at``: only then is it looked back on."""
        return now >= self.past_due_at

    def status_at(self, now: datetime) -> Status:
        """The status as of ``now``: stored, unless time has moved it on."""
        if self.status in ("done", "canceled", "expired"):
            return self.status
        if now >= self.expires_at:
            return "expired"
        if self.due_by is not None:
            # No hour was given, so its duration says nothing until the day is over.
            return "likely_done" if now >= self.due_by else self.status
        typical = self.expected_typical_minutes
        if typical is not None and now >= self.window_opens_at + timedelta(minutes=typical):
            return "likely_done"
        return self.status

    def is_open(self, now: datetime) -> bool:
        """Planned, in progress or likely done, and not expired: usable for continuity."""
        return self.status_at(now) in OPEN_STATUSES

    def with_status(self, status: Status, now: datetime, source: Source | None = None) -> Action:
        """A copy moved to ``status`` (and ``source``, when the user confirmed it)."""
        return replace(self, status=status, source=source or self.source, updated_at=now)

    def to_json(self) -> dict[str, Any]:
        """The §10.2 entry (ISO instants with offsets; optional fields only when set)."""
        data: dict[str, Any] = {
            "id": self.id,
            "label": self.label,
            "type": self.type,
            "status": self.status,
            "recorded_iso": self.recorded_at.isoformat(timespec="seconds"),
            "expires_iso": self.expires_at.isoformat(timespec="seconds"),
            "thread_key": self.thread_key,
            "source": self.source,
            "scope": self.scope,
        }
        optional = {
            "user_key": self.user_key or None,
            "chat_type": self.chat_type,
            "activity": self.activity,
            "expected_typical_minutes": self.expected_typical_minutes,
            "expected_max_minutes": self.expected_max_minutes,
            "quote": self.quote,
            "start_iso": _iso(self.start_at),
            "updated_iso": _iso(self.updated_at),
            "referenced_iso": _iso(self.referenced_at),
            "due_by_iso": _iso(self.due_by),
            "deadline": self.deadline,
            "postponed_iso": _iso(self.postponed_at),
        }
        data.update({key: value for key, value in optional.items() if value is not None})
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Action:
        """Parse a §10.2 entry; raises ``ValueError`` naming the field that is wrong."""
        try:
            recorded = _instant(data["recorded_iso"], "recorded_iso")
            expires_raw = data.get("expires_iso")
            expires = (
                _instant(expires_raw, "expires_iso")
                if expires_raw
                else recorded + timedelta(hours=24)
            )
            updated_raw = data.get("updated_iso")
            referenced_raw = data.get("referenced_iso")
            start_raw = data.get("start_iso")
            chat_raw = data.get("chat_type")
            due_raw = data.get("due_by_iso")
            postponed_raw = data.get("postponed_iso")
            action = cls(
                id=_text(data["id"], "id"),
                label=_text(data["label"], "label"),
                recorded_at=recorded,
                expires_at=expires,
                status=_choice(data.get("status", "planned"), Status, "status"),
                source=_choice(data.get("source", "auto"), Source, "source"),
                thread_key=str(data.get("thread_key") or ""),
                user_key=str(data.get("user_key") or ""),
                type=_choice(data.get("type", "temporal_action"), ActionType, "type"),
                activity=_optional_text(data.get("activity"), "activity"),
                expected_typical_minutes=_minutes(data.get("expected_typical_minutes")),
                expected_max_minutes=_minutes(data.get("expected_max_minutes")),
                scope=_choice(data.get("scope", "user"), Scope, "scope"),
                quote=_optional_text(data.get("quote"), "quote"),
                updated_at=_instant(updated_raw, "updated_iso") if updated_raw else None,
                referenced_at=(
                    _instant(referenced_raw, "referenced_iso") if referenced_raw else None
                ),
                start_at=_instant(start_raw, "start_iso") if start_raw else None,
                chat_type=_choice(chat_raw, ChatType, "chat_type") if chat_raw else None,
                due_by=_instant(due_raw, "due_by_iso") if due_raw else None,
                deadline=_optional_text(data.get("deadline"), "deadline"),
                postponed_at=(_instant(postponed_raw, "postponed_iso") if postponed_raw else None),
            )
            # Every instant its status is worked out from must exist in the calendar.
            longest = max(action.expected_typical_minutes or 0, action.expected_max_minutes or 0)
            action.window_opens_at + timedelta(minutes=longest)
            return action
        except KeyError as exc:
            raise ValueError(f"a latest action needs {exc.args[0]!r}") from exc
        except OverflowError:
            raise ValueError(
                "a latest action's times must fall well within the years 1 to 9999"
            ) from None


def load_actions(entries: Any) -> list[Action]:
    """Parse a stored list, skipping (not failing on) entries that do not parse."""
    actions: list[Action] = []
    if not isinstance(entries, list):
        return actions
    for entry in entries:
        if isinstance(entry, dict):
            try:
                actions.append(Action.from_json(entry))
            except ValueError:
                continue
    return actions


def _iso(instant: datetime | None) -> str | None:
    return instant.isoformat(timespec="seconds") if instant else None


def _instant(value: Any, name: str) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be an ISO 8601 instant")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"{name} is not an ISO 8601 instant: {value!r}") from exc
    if parsed.tzinfo is None:
        raise ValueError(f"{name} needs an offset: {value!r}")
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{name} is out of range once in UTC: {value!r}") from None


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string")
    return value


def _choice(value: Any, kind: Any, name: str) -> Any:
    allowed = get_args(kind)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    return cast(Any, value)


def _optional_text(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    return value or None


# An expected duration longer than a year is not one (and a huge one overflows the dates).
_MAX_MINUTES = 366 * 24 * 60
# How long before a deadline set for a time ("by 5pm") it is looked ahead to.
DEADLINE_LEAD = timedelta(hours=12)
_STAMPED_TIME = re.compile(r"\d{1,2}:\d\d$")


def _minutes(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError("expected minutes must be a positive number")
    if value > _MAX_MINUTES:
        raise ValueError(f"expected minutes must be at most a year ({_MAX_MINUTES}), not {value}")
    return int(value)
