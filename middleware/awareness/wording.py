"""What the awareness layer says: the model's directives and the user's confirmations.

Stable wording (tests and prompt caches depend on it). Everything about the user's past
actions is hedged and correctable (spec 000 §11): the model is told what the user *said*,
never what happened.
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

from babel.dates import format_datetime

from middleware.actions.cues import CueMatch
from middleware.actions.detect import DurationReport
from middleware.actions.model import Action
from middleware.actions.templates import TEMPLATES
from middleware.clock.policy import Mode
from middleware.clock.temporal import ago

CORRECTABLE = "Never state it as fact; if the user corrects you, accept it at once."

CONFIRM_IMPACTFUL = (
    "Before sending messages or emails to anyone else, creating or changing calendar "
    "events or reminders, buying or paying for anything, publishing or deploying, or "
    "deleting data: say exactly what you will do and wait for the user's explicit yes."
)

CLOCKING_DISABLED = (
    "Clocking actions is turned off on this relay ([clock.store.latest_actions] enabled "
    "= false), so nothing was stored."
)

_MODE_MEANING = {
    "off": "no check-ins or action references, just the time",
    "light": "check-ins only when a rule says the gap matters",
    "normal": "more proactive check-ins and recaps after long gaps",
}

_KIND_MEANING = {
    "project": "I'll ask for updates when you come back after a day or more",
    "conversation": "no project check-ins",
    "scheduling": "times are anchored and confirmed before anything is scheduled",
    "operations": "treated as operational work",
}


def tell_user(text: str) -> str:
    return f"Relay note for the user (pass it on briefly): {text}"


def mode_set(requested: Mode | None, effective: Mode) -> str:
    if requested is None:
        return f"Clock mode is back to the default: {effective} ({_MODE_MEANING[effective]})."
    return f"Clock mode is now {effective}: {_MODE_MEANING[effective]}."


def auto_set(enabled: bool) -> str:
    if enabled:
        return "I'll note near-term plans like 'heading to the gym' automatically again."
    return (
        "I won't note your plans automatically any more; say 'clock it: …' for anything "
        "you want me to remember."
    )


def kind_set(kind: str) -> str:
    return f"This thread is now a {kind} thread: {_KIND_MEANING[kind]}."


def clocked(action: Action, tz: tzinfo | None = None) -> str:
    """``tz``: the zone the user's time phrase was read in, which the day or time it is
    for is written in (none given: no phrase placed it later)."""
    whose = " for the whole group" if action.scope == "group" else ""
    return (
        f'The user clocked an action{whose}: "{action.label}"{_expected(action)}'
        f"{_for_when(action, tz)}. Acknowledge it briefly."
    )


def too_far_ahead(action: Action, tz: tzinfo | None, max_ttl: timedelta) -> str:
    """A clocked plan that would expire before it begins: not stored."""
    kept = f"{max_ttl.days} days" if max_ttl.days else _ahead(max_ttl)
    when = _for_when(action, tz)
    return (
        f'Not clocked: "{action.label}"{when}{"," if when else ""} is further ahead than this '
        f"relay keeps plans ({kept}: max_ttl in [clock.store.latest_actions]), so it would "
        "be dropped before then. Clock it again nearer the time, or ask the relay's admin "
        "to raise max_ttl."
    )


def _for_when(action: Action, tz: tzinfo | None) -> str:
    """', due by Tue 3 Nov', ', for tomorrow, Tue 3 Nov', ', starting today, Mon 2 Nov
    18:00': when a clocked plan is for, in ``tz``, as the block's other lines write days."""
    if action.deadline is not None:
        return f", due by {action.deadline}"
    if action.start_at is None or tz is None:
        return ""
    day = _day(action.start_at, action.recorded_at, tz)
    if action.due_by is not None:  # a day with no time of day
        return f", for {day}"
    return f", starting {day} {format_datetime(action.start_at, 'HH:mm', tzinfo=tz, locale='en')}"


def _day(instant: datetime, now: datetime, tz: tzinfo) -> str:
    """'today, Mon 2 Nov', 'tomorrow, Tue 3 Nov' or 'Fri 6 Nov', in ``tz``."""
    stamp = format_datetime(instant, "EEE d MMM", tzinfo=tz, locale="en")
    days = (instant.astimezone(tz).date() - now.astimezone(tz).date()).days
    near = {0: "today, ", 1: "tomorrow, "}.get(days, "")
    return f"{near}{stamp}"


def closed(action: Action, now: datetime, by: str | None = None) -> str:
    """``by``: the member who clocked it for the group, when not the user (see
    ``GroupPlans.by``)."""
    said = ago(now - action.recorded_at)
    if action.scope == "group":
        word = "done" if action.status == "done" else "off"
        return (
            f'The user says the group\'s plan is {word}: "{action.label}" (clocked for the '
            f"group by {by or 'the user'}, {said})."
        )
    verb = "done with" if action.status == "done" else "no longer doing"
    return f'The user says they are {verb}: "{action.label}" (said {said}).'


def postponed(action: Action, now: datetime, by: str | None = None) -> str:
    """A postponed action: still open, and from when it can happen, if the user said."""
    if action.start_at is not None and action.start_at > now:
        when = f"; it can happen at the earliest in {_ahead(action.start_at - now)}"
    else:
        when = ""
    said = ago(now - action.recorded_at)
    if action.scope == "group":
        said = f"clocked for the group by {by or 'the user'}, {said}"
    else:
        said = f"said {said}"
    return (
        f'The user is putting off, not calling off: "{action.label}" ({said}). It stays '
        f"open{when}; do not treat it as canceled."
    )


def calibrated(report: DurationReport) -> str:
    return (
        f"The user says {report.activity.replace('meal:', '')} took {_duration(report.minutes)}; "
        "their usual duration for it is updated."
    )


def ask_for_updates(rule_id: str, elapsed: timedelta, kind: str) -> str:
    return (
        f"Check-in ({rule_id}): the last interaction in this {kind} thread was "
        f"{ago(elapsed)}. Before continuing, briefly ask the user for any updates since then."
    )


def offer_recap(rule_id: str, elapsed: timedelta) -> str:
    return (
        f"Check-in ({rule_id}): the last interaction here was {ago(elapsed)}. Offer a "
        "one- or two-line recap of where things stood, then follow the user's lead."
    )


def hedged_reference(rule_id: str, action: Action, now: datetime, by: str | None = None) -> str:
    """``by``: the member who clocked it for the group, when not the user."""
    if action.scope == "group":
        return _group_reference(rule_id, action, now, by)
    template = TEMPLATES.get(action.activity or "")
    if not action.is_past_due(now):
        # Its day has come but not gone: nothing to look back on yet.
        question = f"are you still planning to {_in_sentence(action.label)}?"
    elif template is not None:
        question = template.question
    else:
        question = f"did you end up getting to {_in_sentence(action.label)}?"
    return (
        f"Check-in ({rule_id}): {_said(action, now)}: "
        f'"{action.label}"{_due(action, now)} ({_status(action, now)}). If it fits, mention it '
        f'in a hedged way, e.g. "Welcome back — {question}" {CORRECTABLE}'
    )


def _group_reference(rule_id: str, action: Action, now: datetime, by: str | None) -> str:
    """A plan clocked for the whole group (spec 000 §7.3): the group's, asked of whoever
    speaks, and never credited to them when another member clocked it."""
    who = by or "the user"
    if not action.is_past_due(now):
        question = f'is "{action.label}" still the plan?'
    else:
        question = f'did "{action.label}" happen?'
    not_theirs = "" if by is None else " It is the group's plan, not the user's own."
    return (
        f"Check-in ({rule_id}): {ago(now - action.recorded_at)} {who} clocked for the whole "
        f'group: "{action.label}"{_due(action, now)} ({_status(action, now)}).{not_theirs} '
        f"If it fits, mention it as the group's plan in a hedged way, e.g. "
        f'"{_clocked_by(by)}{question}" {CORRECTABLE}'
    )


def _clocked_by(by: str | None) -> str:
    return "About the group's plan — " if by is None else f"About the plan {by} clocked — "


def _in_sentence(label: str) -> str:
    """A label read inside a sentence: its first letter lowered, the rest as the user wrote
    it ("Fix the CI", "Fly to Tokyo": not "fix the ci", "fly to tokyo")."""
    return label[:1].lower() + label[1:]


def _said(action: Action, now: datetime) -> str:
    # One set for later was a plan when said, not something the user was about to do.
    verb = "planned" if action.start_at or action.due_by else "was about to"
    return f"{ago(now - action.recorded_at)} the user {verb}"


def _due(action: Action, now: datetime) -> str:
    """When a planned action that has begun was set for (its label has no time); it is
    only asked about once it has. One given a day but no time may happen until that day
    ends; a deadline ("by Friday") until it is due."""
    if action.deadline is not None and action.due_by is not None:
        if action.due_by <= now:
            return f", due by {action.deadline}, which passed {ago(now - action.due_by)}"
        return f", due by {action.deadline} (in {_ahead(action.due_by - now)})"
    if action.due_by is not None:
        if action.due_by <= now:
            return f", set for a day (no time given) that ended {ago(now - action.due_by)}"
        return f", set for a day (no time given) that ends in {_ahead(action.due_by - now)}"
    return "" if action.start_at is None else f", set for {ago(now - action.start_at)}"


def _ahead(delta: timedelta) -> str:
    """'3 days 14 hours' from now (``ago`` without its "ago")."""
    return ago(delta).removesuffix(" ago")


def cue(match: CueMatch, now: datetime, by: str | None = None) -> str:
    """``by``: the member who clocked it for the group, when not the user. The cue's own
    question asks "did you …?": of another member's plan for the group it asks whether the
    group's plan happened, naming who clocked it, never what the speaker did."""
    action = match.action
    said = "the user said" if action.scope != "group" else f"{by or 'the user'} clocked"
    for_group = " for the whole group" if action.scope == "group" else ""
    question, not_theirs = match.question, ""
    if action.scope == "group" and by is not None:
        question = f'{_clocked_by(by)}did "{action.label}" happen?'
        not_theirs = " It is the group's plan, not the user's own."
    return (
        f"Possible connection (unconfirmed): {ago(now - action.recorded_at)} {said}"
        f'{for_group} "{action.label}"{_due(action, now)}, and this message mentions '
        f'"{match.cue}".{not_theirs} You may ask a confirming question such as '
        f'"{question}" {CORRECTABLE}'
    )


def _status(action: Action, now: datetime) -> str:
    status = action.status_at(now)
    return {
        "planned": "planned, not confirmed",
        "in_progress": "under way when they said it, not confirmed",
        "likely_done": "likely done by now, not confirmed",
    }.get(status, status)


def _expected(action: Action) -> str:
    if action.expected_typical_minutes is None:
        return ""
    return f" (usually takes about {_duration(action.expected_typical_minutes)})"


def _duration(minutes: int) -> str:
    if minutes < 90:
        return f"{minutes} minutes"
    hours = minutes / 60
    shown = f"{hours:.1f}".rstrip("0").rstrip(".")
    return f"{shown} hours"
