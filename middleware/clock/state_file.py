"""The spec 000 §10.2 ``clock-state.json`` (version 3) to and from a ``ClockStateSnapshot``.

Pure: no I/O and no clock; the caller passes the agent's zone and the instant to write
for. Reading validates the whole document (pydantic, strict types) and reports every
problem with its JSON path; unknown keys are ignored, so a file written by another
implementation, with fields of its own, still loads. Instants may carry any offset and
are held in UTC; writing gives UTC ISO 8601 with ``+00:00``, to the second unless the
instant has microseconds. ``agent_tz`` and ``delta_hours`` are derived values: written
from the agent's zone at the given instant, ignored when read.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from middleware.actions.model import Action
from middleware.actions.templates import MAX_CALIBRATED_MINUTES
from middleware.clock.policy import THREAD_KINDS, Mode, ThreadKind
from middleware.clock.source import CLOCK_SKEW
from middleware.clock.zones import get_zone, is_valid_zone, offset_minutes
from middleware.errors import RequestError
from middleware.identity import (
    DISPLAY_NAME_MAX,
    display_label,
    key_chat_type,
    split_user_key,
    thread_channel,
)
from middleware.store.clock_state import (
    ChannelTimes,
    ClockStateSnapshot,
    KindSource,
    ThreadClockState,
    UserClockState,
)
from middleware.store.records import StatedLocation
from middleware.types import JSON, ChatType

VERSION = 3
# Problems listed in one error message; the rest are counted.
_MAX_PROBLEMS = 20
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def iso_utc(instant: datetime) -> str:
    """``2026-02-09T01:00:00+00:00``: UTC, seconds unless there are microseconds."""
    spec = "microseconds" if instant.microsecond else "seconds"
    return instant.astimezone(UTC).isoformat(timespec=spec)


def parse_instant(value: object) -> datetime:
    """An ISO 8601 instant with an offset (``Z`` included), as aware UTC.

    Raises ``ValueError`` saying what is wrong: not a string, not ISO 8601, or no offset.
    """
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 string such as '2026-02-09T10:00:00+09:00'")
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 instant") from None
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{value!r} has no UTC offset; add one, e.g. '+09:00' or 'Z'")
    try:
        return instant.astimezone(UTC)
    except OverflowError:
        # 9999-12-31T23:00:00-01:00 is in year 10000 once in UTC, past what Python holds.
        raise ValueError(f"{value!r} is out of range once in UTC") from None


def _past_instant(value: object, info: ValidationInfo) -> datetime:
    """An instant of the file's past: one ahead of the importing relay's clock (``now`` in
    the validation context) would read as "just now" on every turn until it passed, and
    times never move backwards."""
    instant = parse_instant(value)
    now = info.context.get("now") if info.context else None
    if now is not None and instant > now + CLOCK_SKEW:
        raise ValueError(
            f"{value!r} is in the future (the relay's clock says "
            f"{iso_utc(now.replace(microsecond=0))}); a clock state holds past instants: fix "
            "the file's clock or leave the value out"
        )
    return instant


def _zone(name: str) -> str:
    try:
        get_zone(name)
    except ValueError as exc:
        # Its message says what to use instead; null is the other way out of a bad entry.
        raise ValueError(f"{exc}; or null to leave it unset") from None
    return name


def _action(entry: Any) -> dict[str, Any]:
    # Stored as given (fields of other implementations included), once it parses: an
    # entry that does not would be dropped on every read, an unusable one fail them.
    if not isinstance(entry, dict):
        raise ValueError("a latest action must be a JSON object")
    Action.from_json(entry)
    return entry


def _display_name(name: str) -> str:
    if display_label(name) != name:
        raise ValueError(
            f"a display name is one line of at most {DISPLAY_NAME_MAX} characters, without "
            f"leading or trailing spaces; write it as {display_label(name)!r}, or null"
        )
    return name


def _user_key(key: str) -> str:
    split_user_key(key)
    return key


def _thread_key(key: str) -> str:
    thread_channel(key)
    return key


Instant = Annotated[datetime, BeforeValidator(_past_instant)]
Zone = Annotated[str, AfterValidator(_zone)]
UserKey = Annotated[str, AfterValidator(_user_key)]
DisplayName = Annotated[str, AfterValidator(_display_name)]
ThreadKey = Annotated[str, AfterValidator(_thread_key)]
LatestAction = Annotated[dict[str, Any], AfterValidator(_action)]


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class _Channel(_Model):
    last_user_message_iso: Instant | None = None
    last_agent_message_iso: Instant | None = None


class _Located(_Model):
    zone: Zone
    place: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    kind: Literal["current", "home"]
    said_iso: Instant


class _Overrides(_Model):
    """The overrides the relay reads must be ones it can use: the relay would drop one it
    cannot (and the others with it) on every turn, while the admin API still showed it.
    Other keys (another implementation's) are kept as given."""

    model_config = ConfigDict(extra="allow")

    mode: Mode | None = None
    auto_clock_temporal_actions: bool | None = None


Minutes = Annotated[int, Field(ge=1, le=MAX_CALIBRATED_MINUTES)]


class _ActivityOverride(_Model):
    """One activity's calibrated durations, as the relay writes them (``calibrate``)."""

    typical_minutes: Minutes
    max_minutes: Minutes
    updated_iso: Instant

    @model_validator(mode="after")
    def _max_covers_typical(self) -> _ActivityOverride:
        if self.max_minutes < self.typical_minutes:
            raise ValueError(
                f"max_minutes ({self.max_minutes}) is less than typical_minutes "
                f"({self.typical_minutes}); the maximum must be at least the typical duration"
            )
        return self


class _Calibration(_Model):
    """Spec 000 §10.2 ``calibration``: what the relay reads of it must be usable, or the
    user's reported durations would silently be ignored. Other keys are kept as given."""

    model_config = ConfigDict(extra="allow")

    activity_overrides: (
        dict[Annotated[str, StringConstraints(min_length=1)], _ActivityOverride] | None
    ) = None


class _User(_Model):
    default_tz: Zone | None = None
    policy_overrides: _Overrides | None = None
    last_interaction_any_channel_iso: Instant | None = None
    channels: dict[ThreadKey, _Channel] | None = None
    latest_actions: list[LatestAction] | None = None
    calibration: _Calibration | None = None
    # Ours (v3 readers ignore it): the place the user last said they are in.
    located: _Located | None = None
    # Ours: the name groups know the user by, one line as the relay stores it.
    display_name: DisplayName | None = None


class _Thread(_Model):
    # The kinds the relay's rules know (a kind of another implementation would never match
    # one, and the thread would silently lose its check-ins).
    thread_kind: ThreadKind | None = None
    # Ours (v3 readers ignore them): an API thread's key does not say whether it is a
    # group, and whether its kind was chosen decides whether the relay may infer one.
    thread_kind_source: KindSource | None = None
    chat_type: ChatType | None = None
    session_tz: Zone | None = None
    participants: list[UserKey] | None = None
    last_interaction_iso: Instant | None = None
    last_user_message_iso_by_user: dict[UserKey, Instant] | None = None
    # Ours (v3 readers ignore it): when each member was last seen leaving the group; a
    # document without it (older, or another implementation's) marks nobody.
    left_iso_by_user: dict[UserKey, Instant] | None = None
    # Ours: the name each member went by in this thread (a Discord server nickname); a
    # document without it names members by their accounts' names.
    display_name_by_user: dict[UserKey, DisplayName] | None = None


class _Link(_Model):
    user_keys: list[UserKey]


class _File(_Model):
    version: int
    users: dict[UserKey, _User] | None = None
    threads: dict[ThreadKey, _Thread] | None = None
    # Ours, beside the spec's keys (v3 readers ignore unknown keys): the users linked to
    # one person, one entry per person, as ``POST /admin/links`` takes them.
    links: list[_Link] | None = None


def read_clock_state(data: object, *, now: datetime | None = None) -> ClockStateSnapshot:
    """The snapshot a parsed v3 document describes.

    Raises ``RequestError`` for anything else: not an object, a version other than 3, or
    values of the wrong type or form (each listed with its JSON path), an instant more
    than ``CLOCK_SKEW`` after ``now`` among them, or ``links`` the store cannot hold (see
    ``_link_problems``). A document without ``links`` (one written before they were
    exported) links nobody.
    """
    if not isinstance(data, dict):
        raise RequestError(
            "a clock-state file must be a JSON object with 'version', 'users' and 'threads'"
        )
    version = data.get("version")
    if version != VERSION or isinstance(version, bool):
        found = "no 'version'" if version is None else f"version {json.dumps(version)}"
        raise RequestError(
            f"unsupported clock-state file: it has {found}; this relay reads version "
            f"{VERSION} (spec 000 §10.2)"
        )
    try:
        parsed = _File.model_validate(data, context={"now": now})
    except ValidationError as exc:
        raise RequestError(f"invalid clock-state file: {describe_validation_error(exc)}") from exc
    links = [tuple(link.user_keys) for link in parsed.links or []]
    problems = _chat_type_problems(parsed.threads or {})
    problems += _link_problems(links, set(parsed.users or {}))
    if problems:
        raise RequestError(f"invalid clock-state file: {_listed(problems)}")
    raw_users = data.get("users") or {}
    users = tuple(
        UserClockState(
            user_key=key,
            default_tz=user.default_tz,
            policy_overrides=(
                user.policy_overrides.model_dump(exclude_unset=True)
                if user.policy_overrides
                else {}
            ),
            last_interaction_any_channel_at=user.last_interaction_any_channel_iso,
            channels={
                thread: ChannelTimes(times.last_user_message_iso, times.last_agent_message_iso)
                for thread, times in (user.channels or {}).items()
            },
            latest_actions=list(user.latest_actions or []),
            # Kept as given, once valid: its instants and other keys verbatim.
            calibration=dict(raw_users[key].get("calibration") or {}),
            located=_stated(user.located),
            display_name=user.display_name,
        )
        for key, user in (parsed.users or {}).items()
    )
    threads = tuple(
        ThreadClockState(
            thread_key=key,
            kind=thread.thread_kind,
            session_tz=thread.session_tz,
            participants=tuple(dict.fromkeys(thread.participants or [])),
            last_interaction_at=thread.last_interaction_iso,
            last_user_message_by_user=dict(thread.last_user_message_iso_by_user or {}),
            chat_type=thread.chat_type,
            kind_source=thread.thread_kind_source,
            left_by_user=dict(thread.left_iso_by_user or {}),
            display_name_by_user=dict(thread.display_name_by_user or {}),
        )
        for key, thread in (parsed.threads or {}).items()
    )
    return ClockStateSnapshot(
        users=users, threads=threads, links=tuple(tuple(sorted(keys)) for keys in links)
    )


def _chat_type_problems(threads: dict[str, _Thread]) -> list[str]:
    problems = []
    for key, thread in threads.items():
        named = key_chat_type(key)
        if thread.chat_type is not None and named is not None and thread.chat_type != named:
            problems.append(
                f"threads[{json.dumps(key)}].chat_type: {thread.chat_type!r} contradicts the "
                f"key, which names a {named} chat; use {named!r} or leave it out"
            )
    return problems


def _link_problems(links: list[tuple[str, ...]], users: set[str]) -> list[str]:
    """What keeps ``links`` from being linked as they are: in the store a user belongs to
    at most one person, and a person has at least two users, all of them known."""
    problems: list[str] = []
    linked_in: dict[str, int] = {}
    for index, keys in enumerate(links):
        if len(set(keys)) < 2:
            problems.append(
                f"links[{index}].user_keys: a link needs at least two different users, "
                'e.g. {"user_keys": ["telegram:1", "discord:2"]}'
            )
        for position, key in enumerate(keys):
            where = f"links[{index}].user_keys[{position}]"
            if key not in users:
                problems.append(
                    f"{where}: {key!r} is not one of the document's users; add it to "
                    "'users' or take it out of the link"
                )
            elif key in keys[:position]:
                problems.append(f"{where}: {key!r} is listed twice in this link")
            elif key in linked_in and linked_in[key] != index:
                problems.append(
                    f"{where}: {key!r} is already linked in links[{linked_in[key]}]; a user "
                    "belongs to one person, so put all of that person's users in one link"
                )
            else:
                linked_in[key] = index
    return problems


def write_clock_state(snapshot: ClockStateSnapshot, *, agent_tz: str, at: datetime) -> JSON:
    """The v3 document for ``snapshot``; ``delta_hours`` is taken at the instant ``at``."""
    users = {
        user.user_key: {
            "default_tz": user.default_tz,
            "policy_overrides": user.policy_overrides,
            "last_interaction_any_channel_iso": _iso(user.last_interaction_any_channel_at),
            "channels": {
                thread: {
                    "last_user_message_iso": _iso(times.last_user_message_at),
                    "last_agent_message_iso": _iso(times.last_agent_message_at),
                }
                for thread, times in user.channels.items()
            },
            "latest_actions": user.latest_actions,
            "calibration": user.calibration,
            "located": _located_entry(user.located),
            "display_name": user.display_name,
        }
        for user in snapshot.users
    }
    threads = {
        thread.thread_key: {
            "thread_kind": thread.kind,
            "thread_kind_source": thread.kind_source,
            "chat_type": thread.chat_type,
            "session_tz": thread.session_tz,
            "agent_tz": agent_tz,
            "delta_hours": delta_hours(thread.session_tz, agent_tz, at),
            "participants": list(thread.participants),
            "last_interaction_iso": _iso(thread.last_interaction_at),
            "last_user_message_iso_by_user": {
                user: iso_utc(seen) for user, seen in thread.last_user_message_by_user.items()
            },
            "left_iso_by_user": {user: iso_utc(at) for user, at in thread.left_by_user.items()},
            "display_name_by_user": dict(thread.display_name_by_user),
        }
        for thread in snapshot.threads
    }
    links = [{"user_keys": list(keys)} for keys in snapshot.links]
    return {"version": VERSION, "users": users, "threads": threads, "links": links}


def _stated(located: _Located | None) -> StatedLocation | None:
    if located is None:
        return None
    return StatedLocation(located.zone, located.place, located.kind, located.said_iso)


def _located_entry(located: StatedLocation | None) -> JSON | None:
    if located is None:
        return None
    return {
        "zone": located.zone,
        "place": located.place,
        "kind": located.kind,
        "said_iso": iso_utc(located.said_at),
    }


def exportable(snapshot: ClockStateSnapshot) -> tuple[ClockStateSnapshot, tuple[str, ...]]:
    """``snapshot`` as a document that imports again, and a warning for each value left out,
    naming its user or thread and what to do: a zone the relay refuses (``Etc/GMT+2``,
    stored by an older version) is unset, as the clock already reads it; a latest action
    that does not parse (imported before entries were checked) is dropped, as every read
    already skips it; so is a policy override the relay cannot use (the same)."""
    warnings: list[str] = []
    users = []
    for user in snapshot.users:
        if user.default_tz is not None and not is_valid_zone(user.default_tz):
            warnings.append(
                f"user {user.user_key!r}: the stored timezone {user.default_tz!r} is not one "
                "the relay accepts, so it is exported as unset (null); set a location zone "
                f"again with /tz or PUT /admin/users/{user.user_key}/timezone"
            )
            user = replace(user, default_tz=None)
        actions = []
        for entry in user.latest_actions:
            try:
                actions.append(_action(entry))
            except ValueError as exc:
                warnings.append(
                    f"user {user.user_key!r}: the stored latest action "
                    f"{json.dumps(entry.get('id') if isinstance(entry, dict) else None)} is "
                    f"left out because it is unusable ({exc}); the relay already ignores it"
                )
        overrides = dict(user.policy_overrides)
        for key in _Overrides.model_fields:
            try:
                _Overrides.model_validate({key: overrides.get(key)})
            except ValidationError:
                warnings.append(
                    f"user {user.user_key!r}: the stored policy override {key} = "
                    f"{json.dumps(overrides.pop(key))} is left out because the relay cannot "
                    f"use it (it already ignores it); set it again with PUT "
                    f"/admin/users/{user.user_key}/policy"
                )
        calibration, left_out = _usable_calibration(user.calibration)
        warnings += [
            f"user {user.user_key!r}: the stored calibration {what} is left out because it "
            f"is unusable ({problem}); the relay already ignores it"
            for what, problem in left_out
        ]
        users.append(
            replace(
                user, latest_actions=actions, policy_overrides=overrides, calibration=calibration
            )
        )
    threads = []
    for thread in snapshot.threads:
        if thread.session_tz is not None and not is_valid_zone(thread.session_tz):
            warnings.append(
                f"thread {thread.thread_key!r}: the stored session timezone "
                f"{thread.session_tz!r} is not one the relay accepts, so it is exported as "
                "unset (null), as the clock already reads it (it uses the users' zones)"
            )
            thread = replace(thread, session_tz=None)
        if thread.kind is not None and thread.kind not in THREAD_KINDS:
            warnings.append(
                f"thread {thread.thread_key!r}: the stored thread kind {thread.kind!r} is not "
                f"one the relay knows ({', '.join(THREAD_KINDS)}), so it is exported as unset "
                "(null), as the check-in rules already read it (a conversation)"
            )
            thread = replace(thread, kind=None, kind_source=None)
        threads.append(thread)
    exported = ClockStateSnapshot(users=tuple(users), threads=tuple(threads), links=snapshot.links)
    return exported, tuple(warnings)


def _usable_calibration(
    calibration: dict[str, Any],
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """``calibration`` without the activity overrides that would not import again, and
    for each left out, what it was and why."""
    overrides = calibration.get("activity_overrides")
    if overrides is None:
        return calibration, []
    if not isinstance(overrides, dict):
        kept = {key: value for key, value in calibration.items() if key != "activity_overrides"}
        return kept, [("activity_overrides", "not a JSON object")]
    usable: dict[str, Any] = {}
    left_out = []
    for activity, entry in overrides.items():
        try:
            _Calibration.model_validate({"activity_overrides": {activity: entry}})
        except ValidationError as exc:
            left_out.append((f"for {activity!r}", describe_validation_error(exc)))
        else:
            usable[activity] = entry
    if not left_out:
        return calibration, []
    return {**calibration, "activity_overrides": usable}, left_out


def delta_hours(session_tz: str | None, agent_tz: str, at: datetime) -> int | float | None:
    """How far the session zone is ahead of the agent's at ``at``, in hours (4.75 for
    Asia/Kathmandu against UTC); ``None`` when either zone is unknown."""
    if session_tz is None or not is_valid_zone(session_tz) or not is_valid_zone(agent_tz):
        return None
    minutes = offset_minutes(session_tz, at) - offset_minutes(agent_tz, at)
    return minutes // 60 if minutes % 60 == 0 else minutes / 60


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else iso_utc(instant)


def describe_validation_error(exc: ValidationError) -> str:
    """Every problem pydantic found, each as ``<JSON path>: <what is wrong>``."""
    return _listed([f"{_path(e['loc'])}: {_message(e['type'], e['msg'])}" for e in exc.errors()])


def _listed(problems: list[str]) -> str:
    listed = problems[:_MAX_PROBLEMS]
    more = len(problems) - len(listed)
    return "; ".join(listed) + (f"; and {more} more" if more > 0 else "")


# pydantic's words for "not an object" name a class ("instance of _Calibration").
_NOT_AN_OBJECT = frozenset({"model_type", "model_attributes_type", "dict_type"})


def _message(kind: str, msg: str) -> str:
    if kind in _NOT_AN_OBJECT:
        return "Input should be a JSON object"
    return msg.removeprefix("Value error, ")


def _path(loc: tuple[int | str, ...]) -> str:
    """A JSON path such as ``users["telegram:1"].channels`` for a pydantic location."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part == "[key]":
            path += " (the key)"
        elif _IDENTIFIER.match(part):
            path += f".{part}" if path else part
        else:
            path += f"[{json.dumps(part)}]"
    return path or "the document"
