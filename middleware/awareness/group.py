"""Actions clocked for a group (spec 000 §7.3: latest actions are per user "unless
explicitly clocked as group-relevant").

``clock it for the group: standup notes due friday`` is kept with the clocking member's
own actions — they are that member's words, so ``/forget`` takes them and an export
carries them — but belongs to the group thread: any member speaking there may be asked
about it, as the group's plan and naming who clocked it, may close it by naming it, and
sees it in ``/actions``. It never shows in anyone's private chat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

from middleware.actions.model import Action, load_actions
from middleware.clock.stage import member_labels
from middleware.store import Store
from middleware.types import Turn

# The most members whose group plans are read, the most recently active first: members
# who clocked one for the group and still hold it, not every member it ever had.
_HOLDER_LIMIT = 50


@dataclass(frozen=True, slots=True)
class GroupPlans:
    """The open-or-closed actions other members clocked for this group thread, and the
    name each of those members goes by in it (by user key)."""

    actions: tuple[Action, ...] = ()
    clocked_by: Mapping[str, str] = field(default_factory=dict)

    def by(self, action: Action, speaker: str) -> str | None:
        """Who clocked ``action``, as the model is told: None for the speaker's own (or a
        private action), else the member's name in the group."""
        if action.scope != "group" or action.user_key == speaker:
            return None
        return self.clocked_by.get(action.user_key, "another member")


# None clocked by another member (a DM, or a group whose others clocked nothing for it).
NO_PLANS = GroupPlans()


async def group_plans(store: Store, turn: Turn) -> GroupPlans:
    """The actions clocked for ``turn``'s group thread by its other members (none outside
    a group): each as long as it lives, whether or not the member who clocked it has
    written there since or is still in the group — the plan is the group's."""
    if turn.chat_type != "group":
        return NO_PLANS
    holders = await store.group_plan_holders(turn.thread_key, _HOLDER_LIMIT)
    others = [m for m in holders if m.user_key != turn.user_key]
    if not others:
        return NO_PLANS
    stored = await asyncio.gather(*(store.get_clock_data(m.user_key) for m in others))
    actions = [
        action
        for member, data in zip(others, stored, strict=True)
        if data is not None
        for action in load_actions(data.latest_actions)
        if action.scope == "group"
        and action.thread_key == turn.thread_key
        and action.user_key == member.user_key
    ]
    return GroupPlans(tuple(actions), member_labels(others))
