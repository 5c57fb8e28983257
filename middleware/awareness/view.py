"""Temporal awareness for one message (spec 000 §5, §6, §6.5, §8, §9): what the model is
told, and what changes in the store.

``awareness_view`` is pure: it reads the turn and the state from before the message and
returns the lines for the block plus the changes to make. The stage applies the changes;
``preview`` shows the lines without applying anything. When no rule fires, no action is
clocked or closed and nothing is asked, the view has no lines: the Core Clock line is
all the model gets (spec 000 §3: no time preamble, no check-in).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, tzinfo
from typing import NamedTuple

from babel.dates import format_datetime

from middleware.actions.cues import find_cue
from middleware.actions.detect import (
    DetectedAction,
    detect_duration_report,
    detect_status_update,
    detect_temporal_action,
    is_time_or_scheduling,
    label_for_clocked,
    scheduling_confidence,
)
from middleware.actions.directives import (
    ClockIt,
    InvalidDirective,
    SetAuto,
    SetKind,
    SetMode,
    is_directive_only,
    parse_directive,
)
from middleware.actions.lifecycle import (
    Speaker,
    add_action,
    calibrate,
    close_latest,
    new_action,
    postpone_latest,
    visible_actions,
)
from middleware.actions.model import Action, Scope, Source, load_actions
from middleware.awareness import wording
from middleware.awareness.group import NO_PLANS, GroupPlans
from middleware.clock.parsing import ParseResult
from middleware.clock.policy import (
    CheckinRule,
    CheckinsPolicy,
    InferencePolicy,
    LatestActionsPolicy,
    Mode,
    PolicyOverrides,
    RuleFacts,
    evaluate,
    rule_elapsed,
)
from middleware.clock.zones import label_tzinfo, session_tzinfo
from middleware.impact.intent import asks_for_impactful_action
from middleware.impact.tool_calls import impactful_names
from middleware.store import ClockData, PriorState
from middleware.types import Turn

ClockOp = Callable[[ClockData], ClockData]

# An inferred "scheduling" kind is persisted only at or above this confidence (§5.2).
_CONFIDENT = 0.8
# Words that make a time phrase a deadline, when something is due rather than when it
# begins: "by Friday", "no later than Friday", "due Friday", "due by 5pm" (due when it
# ends), "before Friday" (due when it begins), right before the phrase or at its start.
_DUE_WORDS = r"(?:(?:due\s+)?(?P<word>by|before|(?:no|not)\s+later\s+than)|due)\s+"
_DUE_BEFORE_PHRASE = re.compile(rf"\b{_DUE_WORDS}$", re.IGNORECASE)
_DUE_IN_PHRASE = re.compile(_DUE_WORDS, re.IGNORECASE)
# ... or right after it: "Friday at the latest".
_AT_THE_LATEST = re.compile(r",?\s+at\s+the\s+latest\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class AwarenessSettings:
    """The policy parts of ``[clock]`` (spec 000 §0) the awareness layer reads."""

    enabled: bool = True
    mode: Mode = "light"
    checkins: CheckinsPolicy = field(default_factory=CheckinsPolicy)
    actions: LatestActionsPolicy = field(default_factory=LatestActionsPolicy)
    inference: InferencePolicy = field(default_factory=InferencePolicy)


class AwarenessView(NamedTuple):
    """What awareness decided for one message.

    A NamedTuple rather than a frozen dataclass: one is built on every turn, and a frozen
    dataclass sets each of its fields through ``object.__setattr__`` (about 3x the cost).
    """

    mode: Mode
    thread_kind: str
    lines: tuple[str, ...] = ()
    fired: tuple[str, ...] = ()  # ids of the check-in rules that fired, in order
    # Changes to the user's clock data, applied in order on the stored data at write time.
    ops: tuple[ClockOp, ...] = ()
    # (kind, explicit) to store on the thread.
    kind_change: tuple[str, bool] | None = None
    # The relay's own answer, for a message that is only a settings directive.
    reply: str | None = None
    # Changes to actions other members clocked for the group, as (their user key, change):
    # written to their clock data, which holds them (``middleware.awareness.group``).
    others_ops: tuple[tuple[str, ClockOp], ...] = ()
    # The actions the lines ask about (a cue, a check-in), marked asked as (whose clock
    # data, change): written only once the model answered, so a turn whose upstream
    # failed asks again on the next message (§9: asked once — once it was heard).
    told_ops: tuple[tuple[str, ClockOp], ...] = ()

    @property
    def section(self) -> str | None:
        return "\n".join(self.lines) if self.lines else None


def awareness_view(
    turn: Turn,
    settings: AwarenessSettings,
    linked: Collection[str] = (),
    group: GroupPlans = NO_PLANS,
) -> AwarenessView:
    """Decide what the model is told about elapsed time, actions and confirmations;
    ``linked`` are the accounts linked to the speaker (whose private actions are theirs),
    ``group`` the plans other members clocked for this group thread."""
    prior = turn.prior or PriorState()
    now = turn.received_at
    data = prior.clock_data
    overrides = PolicyOverrides.from_stored(data.policy_overrides)
    actions = load_actions(data.latest_actions)
    own = {a.id for a in actions}
    actions += [a for a in group.actions if a.id not in own]
    others_ops: list[tuple[str, ClockOp]] = []
    told_ops: list[tuple[str, ClockOp]] = []

    def change(action: Action, op: ClockOp) -> None:
        # A group plan another member clocked is kept in their clock data.
        if action.id in own:
            ops.append(op)
        else:
            others_ops.append((action.user_key, op))

    def asked(action: Action) -> None:
        whose = turn.user_key if action.id in own else action.user_key
        told_ops.append((whose, _mark_referenced(action.id, now)))

    def by(action: Action) -> str | None:
        return group.by(action, turn.user_key)

    mode: Mode = overrides.mode or settings.mode
    kind = prior.thread_kind or "conversation"
    lines: list[str] = []
    ops: list[ClockOp] = []
    kind_change: tuple[str, bool] | None = None
    reply: str | None = None
    policy = settings.actions

    directive = parse_directive(turn.text)
    if isinstance(directive, SetMode):
        mode = directive.mode or settings.mode
        ops.append(_set_override("mode", directive.mode))
        reply = wording.mode_set(directive.mode, mode)
    elif isinstance(directive, SetAuto):
        ops.append(_set_override("auto_clock_temporal_actions", directive.enabled))
        reply = wording.auto_set(directive.enabled)
    elif isinstance(directive, SetKind):
        kind = directive.kind
        kind_change = (directive.kind, True)
        reply = wording.kind_set(directive.kind)
    elif isinstance(directive, InvalidDirective):
        reply = directive.problem
    elif isinstance(directive, ClockIt):
        if not policy.enabled:
            reply = wording.CLOCKING_DISABLED
        else:
            detected = label_for_clocked(directive.label_text)
            scope: Scope = "group" if directive.group and turn.chat_type == "group" else "user"
            said = directive.label_text
            clocked = _new(turn, detected, "clock_it", scope, data, settings, kind, said, said)
            tz = _zone_read_in(turn, said)
            if _placed_later(clocked) and not _starts_within_its_life(clocked):
                # It would expire before it begins: say so rather than keep it.
                reply = wording.too_far_ahead(clocked, tz, policy.max_ttl)
            else:
                ops.append(_add(clocked, policy.max_items))
                lines.append(wording.clocked(clocked, tz))
    directive_only = directive is not None and is_directive_only(turn.text, directive)
    if reply is not None and not directive_only:
        # Mixed with a message: the model hears it and tells the user.
        lines.append(wording.tell_user(reply))
    if reply is not None and directive_only and turn.commands_allowed:
        # The relay answers it itself (the stage): the model hears nothing of this turn,
        # so no check-in or cue is spent on it — the open plan waits for the next message.
        return AwarenessView(mode, kind, ops=tuple(ops), kind_change=kind_change, reply=reply)

    auto = overrides.auto_clock_temporal_actions
    if auto is None:
        auto = policy.auto_clock_temporal_actions
    speaker = Speaker(turn.user_key, turn.thread_key, turn.chat_type, linked)
    visible = visible_actions(actions, now=now, speaker=speaker)
    if directive is None and policy.enabled:
        # Only an open action can be closed: without one the text need not be read.
        update = detect_status_update(turn.own_text) if visible else None
        if update is not None and update.status == "postponed":
            start, due_by = _earliest(turn, update.until)
            _, moved = postpone_latest(
                visible,
                update,
                now=now,
                speaker=speaker,
                start=start,
                due_by=due_by,
            )
            if moved is not None:
                change(moved, _close(moved))
                lines.append(wording.postponed(moved, now, by(moved)))
        elif update is not None:
            _, closed = close_latest(
                visible,
                update,
                now=now,
                speaker=speaker,
            )
            if closed is not None:
                change(closed, _close(closed))
                lines.append(wording.closed(closed, now, by(closed)))
                # Done now: no cue or check-in may ask whether it happened.
                visible = [a for a in visible if a.id != closed.id]
        report = detect_duration_report(turn.own_text)
        if report is not None:
            ops.append(lambda d: replace(d, calibration=calibrate(d.calibration, report, now=now)))
            lines.append(wording.calibrated(report))
        found = detect_temporal_action(turn.own_text) if auto and mode != "off" else None
        if found is not None and (
            found.temporal or not policy.require_explicit_clock_it_for_non_temporal
        ):
            quote = turn.own_text if policy.store_quotes else None
            action = _new(turn, found, "auto", "user", data, settings, kind, turn.own_text, quote)
            if not found.dated or _starts_within_its_life(action):
                ops.append(_add(action, policy.max_items))

    mentions_time = turn.mentions_time or is_time_or_scheduling(turn.text)
    if (
        kind_change is None
        and prior.thread_kind_source in (None, "default")
        and kind == "conversation"
        and turn.mentions_time
        and scheduling_confidence(turn.text) >= _CONFIDENT
    ):
        kind_change = ("scheduling", False)

    elapsed = _since(now, prior.last_conversation_seen_at(now))
    facts = RuleFacts(
        now=now,
        mode=mode,
        thread_kind=kind,
        chat_type=turn.chat_type,
        elapsed=elapsed,
        elapsed_any_channel=_since(now, prior.any_channel_at),
        has_open_action=bool(visible),
        mentions_time=mentions_time,
        # In a group, others' messages say nothing about the speaker's own return, nor
        # does a command of theirs the relay answered ("/time").
        elapsed_speaker=(
            _since(now, prior.user_last_conversation_here_at)
            if turn.chat_type == "group"
            else elapsed
        ),
    )
    fired = evaluate(settings.checkins, facts)
    cue = None
    if settings.inference.enabled and mode != "off" and visible:
        # An action is asked about once (§9): a welcome back or an earlier cue already did.
        unasked = [a for a in visible if a.referenced_at is None]
        cue = find_cue(turn.own_text, unasked, now=now, extra=settings.inference.cues)
        if cue is not None:
            lines.append(wording.cue(cue, now, by(cue.action)))
            asked(cue.action)
    # One directive (spec 000 §9): the first rule that has something to say (a hedged
    # reference has nothing once every open action was mentioned).
    for rule in fired:
        checkin, referenced = _checkin(rule, facts, visible, cue.action if cue else None, by)
        if referenced is not None:
            asked(referenced)
        if checkin:
            lines.extend(checkin)
            break
    if settings.inference.require_confirmation_for_impactful_actions and (
        _impactful_tools(turn, settings.inference.impactful_tool_patterns)
        or asks_for_impactful_action(turn.own_text)
    ):
        lines.append(wording.CONFIRM_IMPACTFUL)
    return AwarenessView(
        mode=mode,
        thread_kind=kind,
        lines=tuple(lines),
        fired=tuple(rule.id for rule in fired),
        ops=tuple(ops),
        kind_change=kind_change,
        reply=reply if directive_only else None,
        others_ops=tuple(others_ops),
        told_ops=tuple(told_ops),
    )


def _impactful_tools(turn: Turn, patterns: Sequence[str]) -> bool:
    """Whether the client offers the model a tool that acts for the user in a way spec 000
    §8.2 requires confirming first (by the names the tool-call guard holds): a client
    with only read-only tools (a search, the weather) gets no "confirm first" line."""
    tools = turn.body.get("tools")
    if not isinstance(tools, list):
        return False
    names = [
        function["name"]
        for tool in tools
        if isinstance(tool, dict)
        and isinstance(function := tool.get("function"), dict)
        and isinstance(function.get("name"), str)
    ]
    return bool(impactful_names(names, patterns))


def apply_ops(ops: Sequence[ClockOp]) -> Callable[[ClockData], ClockData | None]:
    """One store change running ``ops`` in order (``None`` when there are none)."""

    def change(data: ClockData) -> ClockData | None:
        if not ops:
            return None
        for op in ops:
            data = op(data)
        return data

    return change


def _checkin(
    rule: CheckinRule,
    facts: RuleFacts,
    visible: Sequence[Action],
    cued: Action | None,
    by: Callable[[Action], str | None],
) -> tuple[list[str], Action | None]:
    """The one check-in directive of the first rule that fired (spec 000 §9), and the
    action it asks the model to mention, if any (``by``: who clocked it, when another
    member did, for the group)."""
    elapsed = rule_elapsed(rule, facts) or timedelta(0)
    now_lines: list[str] = []
    referenced = None
    if rule.then.ask_for_updates:
        now_lines.append(wording.ask_for_updates(rule.id, elapsed, facts.thread_kind))
    if rule.then.offer_recap:
        now_lines.append(wording.offer_recap(rule.id, elapsed))
    if rule.then.allow_hedged_reference:
        # The newest action there is something to say about; one the cue line already
        # asks about is not asked about twice.
        candidates = [
            a
            for a in sorted(visible, key=lambda a: a.recorded_at)
            if a != cued and _to_mention(a, facts.now)
        ]
        if candidates:
            referenced = candidates[-1]
            now_lines.append(
                wording.hedged_reference(rule.id, referenced, facts.now, by(referenced))
            )
    return now_lines, referenced


def _to_mention(action: Action, now: datetime) -> bool:
    """Whether a check-in may mention ``action`` now (spec 000 §9), once each way: looking
    back once its time has come ("how did the gym go?"; once it is over, even if it was
    looked ahead to), or looking ahead once it has begun but may not be over: on the day
    a plan was set for with no time ("gym tomorrow"), which may be hours off, or just
    after the time set for one ("call the bank at 10", at 10:05), or on the day a deadline
    is due ("standup notes due tomorrow", ``Action.looked_ahead_from``)."""
    if action.is_past_due(now):
        return action.referenced_at is None or action.referenced_at < action.past_due_at
    opens = action.looked_ahead_from
    return action.referenced_at is None and opens is not None and opens <= now


def _new(
    turn: Turn,
    detected: DetectedAction,
    source: Source,
    scope: Scope,
    data: ClockData,
    settings: AwarenessSettings,
    kind: str,
    said: str,
    quote: str | None,
) -> Action:
    """The action ``detected`` in ``said`` (the user's words about it), recorded now.

    A start the user gave is kept as the start, so its phrase leaves the label: "Call the
    bank tomorrow at 9am" would read as the day after once that day came. A day with no
    time ("gym tomorrow") gives its end as well: the plan is open all that day."""
    policy = settings.actions
    start, due_by, phrase, deadline = _start(turn, said)
    if phrase:
        undated = _without_phrase(detected.label, phrase)
        if undated:
            detected = replace(detected, label=undated[:1].upper() + undated[1:])
    return new_action(
        detected,
        now=turn.received_at,
        thread_key=turn.thread_key,
        chat_type=turn.chat_type,
        user_key=turn.user_key,
        source=source,
        scope=scope,
        calibration=data.calibration,
        ttl_default=policy.ttl,
        project=kind == "project",
        project_ttl=policy.project_ttl,
        max_ttl=policy.max_ttl,
        quote=quote[:200] if quote and policy.store_quotes else None,
        action_id=f"act_{secrets.token_hex(4)}",
        start=start,
        due_by=due_by,
        deadline=deadline,
    )


def _earliest(turn: Turn, until: str | None) -> tuple[datetime | None, datetime | None]:
    """When a postponed action can happen at the earliest, from the time phrase in its
    ``until`` words ("Monday": its beginning, and its end as when it is due), as the clock
    stage read it; ``(None, None)`` for words with no time ("till the freeze ends") or a
    phrase with no zone to anchor it."""
    if not until:
        return None, None
    for found in turn.time_expressions:
        if not found.matched_text or found.matched_text.casefold() not in until.casefold():
            continue
        if found.start_instant is not None:
            return found.start_instant, found.end_instant
        later = [instant for instant in found.candidates if instant > turn.received_at]
        if later:
            return min(later), None
    return None, None


def _without_phrase(label: str, phrase: str) -> str:
    """``label`` with the time phrase taken out, also where the label stops inside it
    ("Pay rent by Friday UTC+5" of "by Friday UTC+5:30": a label ends at a colon)."""
    undated = re.sub(rf"\s*\b{re.escape(phrase)}(?!\w)", "", label, flags=re.IGNORECASE)
    if undated == label:
        first = phrase.split(maxsplit=1)[0]
        for found in re.finditer(rf"\b{re.escape(first)}\b", label, flags=re.IGNORECASE):
            if phrase.lower().startswith(label[found.start() :].lower()):
                undated = label[: found.start()]
                break
    return undated.strip(" ,;:-")


class _When(NamedTuple):
    """When an action the user placed in time begins or is due, and the phrase that said so."""

    start: datetime | None = None
    due_by: datetime | None = None
    phrase: str = ""
    deadline: str | None = None  # when it is due, as the user meant it ("Fri 27 Nov")


def _start(turn: Turn, said: str) -> _When:
    """The first later instant a time phrase in ``said`` gives ("call the bank tomorrow at
    9"), as the clock stage read the message in its session zone (spec 000 §4.3: a phrase
    with no zone to anchor it gives none), the end of the day it names when it gives no
    time ("tomorrow", "today": a start at midnight is not when anyone goes to the gym),
    and that phrase. A phrase that could mean several instants ("at 9": 09:00 or 21:00)
    gives the earliest: the action cannot begin before it. A deadline gives no start, only
    when it is due (see ``_due``)."""
    now = turn.received_at
    for found in turn.time_expressions:
        at = said.find(found.matched_text)
        if at < 0:
            continue
        phrase = found.matched_text
        due = _due(said, at, found)
        if due is not None and due.due_by is not None and due.due_by > now:
            return due
        if found.start_instant and found.end_instant and found.end_instant > now:
            start = found.start_instant if found.start_instant > now else None
            return _When(start, found.end_instant, phrase)
        readings = (found.start_instant,) if found.start_instant else found.candidates
        later = [instant for instant in readings if instant > now]
        if later:
            return _When(min(later), None, phrase)
    return _When()


def _due(said: str, at: int, found: ParseResult) -> _When | None:
    """The deadline the phrase ``found`` (at ``at`` in ``said``) sets, if words make it one.

    "By Friday", "due Friday", "no later than Friday" and "Friday at the latest" are due
    when Friday ends; "before Friday" when it begins, which is when Thursday ends: a user
    who must send a report before Friday has until Thursday night, and is asked about it
    on Friday, not on Saturday. A time ("by 5pm", "before 5pm") is due at that time either way. The
    phrase returned takes in the deadline words, so they leave the action's label."""
    phrase = found.matched_text
    end = at + len(phrase)
    lead = _DUE_BEFORE_PHRASE.search(said, max(0, at - 24), at) or _DUE_IN_PHRASE.match(phrase)
    tail = _AT_THE_LATEST.match(said, end)
    if lead is None and tail is None:
        return None
    before = lead is not None and (lead["word"] or "").lower() == "before"
    due = found.start_instant if before else found.end_instant or found.start_instant
    if due is None:
        return None
    start = lead.start() if lead is not None and lead.re is _DUE_BEFORE_PHRASE else at
    words = said[start : tail.end() if tail else end].strip()
    return _When(None, due, words, _deadline_stamp(found, due))


def _deadline_stamp(found: ParseResult, due: datetime) -> str | None:
    """'Fri 27 Nov' for a day ("by Friday": due when it ends; "before Friday": due when
    Thursday ends, 'Thu 26 Nov'), 'Fri 27 Nov 17:00' for a time, in the zone or fixed
    offset the phrase was read in."""
    tz = label_tzinfo(found.zone) if found.zone is not None else None
    if tz is None:
        return None
    if found.end_instant is None:
        return format_datetime(due, "EEE d MMM HH:mm", tzinfo=tz, locale="en")
    # A span's bounds are midnights: the day due is the one that ends there.
    return format_datetime(due - timedelta(microseconds=1), "EEE d MMM", tzinfo=tz, locale="en")


def _zone_read_in(turn: Turn, said: str) -> tzinfo | None:
    """The zone the clock stage read the first time phrase in ``said`` in, or for one
    with none ("in 3 months"), the session's; None when there is neither."""
    for found in turn.time_expressions:
        if found.zone is not None and found.matched_text and found.matched_text in said:
            return label_tzinfo(found.zone)
    prior = turn.prior or PriorState()
    session = prior.thread_tz or prior.user_tz
    return session_tzinfo(session) if session else None


def _placed_later(action: Action) -> bool:
    return action.start_at is not None or action.deadline is not None


def _starts_within_its_life(action: Action) -> bool:
    """Whether an action the user placed on a later day got the start that day gives,
    and will still be kept when it comes: one stored without it ("tomorrow" with no zone
    to anchor it) would be asked about before its day, and one beyond ``max_ttl`` would
    expire before it begins. A deadline ("by Friday") has no start, only when it is due,
    and is kept until then."""
    if action.start_at is None and action.deadline is not None and action.due_by is not None:
        return action.expires_at > action.due_by
    return action.start_at is not None and action.expires_at > action.start_at


def on_actions(change: Callable[[list[Action]], list[Action]]) -> ClockOp:
    """A clock-data change made by changing the stored latest actions."""

    def op(data: ClockData) -> ClockData:
        changed = change(load_actions(data.latest_actions))
        return replace(data, latest_actions=[action.to_json() for action in changed])

    return op


def _add(action: Action, max_items: int) -> ClockOp:
    return on_actions(
        lambda stored: add_action(stored, action, now=action.recorded_at, max_items=max_items)
    )


def _close(closed: Action) -> ClockOp:
    return on_actions(lambda stored: [closed if a.id == closed.id else a for a in stored])


def _mark_referenced(action_id: str, now: datetime) -> ClockOp:
    return on_actions(
        lambda stored: [replace(a, referenced_at=now) if a.id == action_id else a for a in stored]
    )


def _set_override(key: str, value: object) -> ClockOp:
    def op(data: ClockData) -> ClockData:
        overrides = {k: v for k, v in data.policy_overrides.items() if k != key}
        if value is not None:
            overrides[key] = value
        return replace(data, policy_overrides=overrides)

    return op


def _since(now: datetime, then: datetime | None) -> timedelta | None:
    # None: a first message, or one replayed out of order (no meaningful gap).
    if then is None or then > now:
        return None
    return now - then
