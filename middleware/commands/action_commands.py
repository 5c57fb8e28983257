"""``/actions``: the user's open actions with their ages; mark one done or cancel it.

``/actions`` lists, ``/actions done 2`` / ``/actions cancel 2`` (the number shown, or the
action's id) close one. Only the actions this user could be reminded of here are shown:
in a group, the ones they clocked in that group and the ones any member clocked for the
group (spec 000 §7.3), which any member may close.

An action's number is its place among all of the user's stored actions here, closed and
expired ones included, so closing #1 leaves #2 as #2: a user working down the list they
were shown never closes the wrong one. Numbers move on only when old entries are
compacted away (when a new action is added).
"""

from __future__ import annotations

from datetime import datetime

from middleware.actions.lifecycle import Speaker, mark, visible_actions
from middleware.actions.model import Action, Status, load_actions
from middleware.awareness.group import GroupPlans, group_plans
from middleware.awareness.view import on_actions
from middleware.clock.temporal import ago
from middleware.commands import Command, CommandHandler
from middleware.store import ClockData, Store
from middleware.types import Turn

_STATUS = {
    "planned": "planned",
    "in_progress": "in progress",
    "likely_done": "likely done",
}

USAGE = "Use /actions to list, /actions done <number> or /actions cancel <number> to close one."


def action_commands(store: Store) -> dict[str, CommandHandler]:
    """The handler, keyed by command name."""

    async def actions(turn: Turn, command: Command) -> str:
        now = turn.received_at
        data = await store.get_clock_data(turn.user_key) or ClockData()
        plans = await group_plans(store, turn)
        # Linked accounts are one person: the actions clocked on the others count here.
        shown = _shown(data, plans, turn, now, await store.linked_users(turn.user_key))
        verb, _, which = command.args.partition(" ")
        verb = verb.lower()
        group = turn.chat_type == "group"
        if not verb:
            return _listing(shown, plans, turn.user_key, now, group=group)
        if verb not in ("done", "cancel") or not which.strip():
            return f"I don't know '/actions {command.args}'. {USAGE}"
        target = _pick(shown, which.strip())
        if target is None:
            return f"There is no open action '{which.strip()}' here. " + (
                _listing(shown, plans, turn.user_key, now, group=group)
                if shown
                else _none_open(group) + "."
            )
        status: Status = "done" if verb == "done" else "canceled"

        close = on_actions(lambda stored: mark(stored, target.id, status, now=now))
        # A plan another member clocked for the group is kept with their actions.
        owner = target.user_key if plans.by(target, turn.user_key) else turn.user_key
        await store.update_clock_data(owner, close)
        word = "done" if status == "done" else "canceled"
        return f'Marked "{target.label}" as {word}.'

    return {"actions": actions}


def _shown(
    data: ClockData, plans: GroupPlans, turn: Turn, now: datetime, linked: list[str]
) -> list[tuple[int, Action]]:
    """The open actions shown here, each with its number (see the module docstring)."""
    own = load_actions(data.latest_actions)
    ids = {a.id for a in own}
    stored = visible_actions(
        [*own, *(a for a in plans.actions if a.id not in ids)],
        now=now,
        speaker=Speaker(turn.user_key, turn.thread_key, turn.chat_type, linked),
        include_closed=True,
    )
    return [(number, a) for number, a in enumerate(stored, start=1) if a.is_open(now)]


def _none_open(group: bool) -> str:
    """'You have no open actions', limited to the group's in a group: the ones from the
    user's private chats are not shown there, and may well exist."""
    if group:
        return (
            "You have no open actions from this group (the ones from your private chats "
            "are listed only there)"
        )
    return "You have no open actions"


def _listing(
    shown: list[tuple[int, Action]], plans: GroupPlans, speaker: str, now: datetime, *, group: bool
) -> str:
    if not shown:
        return (
            f"{_none_open(group)}. Say 'clock it: <what you're doing>' and I'll keep "
            "it in mind for a while."
        )
    others = any(plans.by(action, speaker) for _, action in shown)
    lines = [
        "Open actions in this group:"
        if others
        else "Your open actions from this group:"
        if group
        else "Your open actions:"
    ]
    for number, action in shown:
        status = _STATUS.get(action.status_at(now), action.status_at(now))
        whose = ""
        if action.scope == "group":
            whose = f" (for the group, clocked by {plans.by(action, speaker) or 'you'})"
        lines.append(f"{number}. {action.label}{whose} — {_when(action, now)}, {status}")
    lines.append(USAGE)
    return "\n".join(lines)


def _when(action: Action, now: datetime) -> str:
    """How old the action is, or for one set for later when it is set for: its label no
    longer says ("tomorrow at 9" would be wrong the next day). One given a day but no
    time is open until that day ends; a deadline ("by Friday") is due, not begun."""
    start = action.start_at
    due = action.due_by
    if action.deadline is not None and due is not None:
        return f"due by {action.deadline}" if due > now else f"was due by {action.deadline}"
    if due is not None and (start is None or start <= now):
        if due <= now:
            return f"set for a day that ended {ago(now - due)}"
        return f"any time in the next {ago(due - now).removesuffix(' ago')}"
    if start is None:
        return ago(now - action.recorded_at)
    if start <= now:
        return f"set for {ago(now - start)}"
    ahead = ago(start - now)
    return "starts in a moment" if ahead == "just now" else f"starts in {ahead[: -len(' ago')]}"


def _pick(shown: list[tuple[int, Action]], which: str) -> Action | None:
    if which.isdigit():
        return next((action for number, action in shown if number == int(which)), None)
    return next((action for _, action in shown if action.id == which), None)
