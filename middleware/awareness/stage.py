"""The awareness stage: decide (``view.awareness_view``), store what changed, add the
section to the block, or answer a settings-only directive itself."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from middleware.actions.directives import ClockIt, is_directive_only, parse_directive
from middleware.awareness.group import group_plans
from middleware.awareness.view import (
    AwarenessSettings,
    AwarenessView,
    ClockOp,
    apply_ops,
    awareness_view,
)
from middleware.awareness.wording import tell_user
from middleware.pipeline import Handler, Stage
from middleware.store import Store
from middleware.types import COMMAND, Reply, Turn

log = logging.getLogger(__name__)


def awareness_stage(store: Store, settings: AwarenessSettings) -> Stage:
    """Runs after the clock stage (it reads ``turn.time_expressions``), before injection."""

    async def awareness(turn: Turn, call_next: Handler) -> Reply:
        if turn.continuation or not settings.enabled:
            return await call_next(turn)
        linked = await _linked(store, turn)
        group = await group_plans(store, turn)
        view = awareness_view(turn, settings, linked, group)
        # Stored before the upstream is called: what the user said is kept even if the
        # model never answers.
        await save(store, turn, view)
        if view.reply is not None and turn.commands_allowed:
            return Reply(text=view.reply, meta={COMMAND: "clock"})
        turn.context.sections.extend(awareness_sections(view, relay_answers=False))
        # Raises when the upstream gave no answer: what the model was to be asked about
        # then stays unasked, and the user's next message (a retry, say) asks it.
        reply = await call_next(turn)
        if view.told_ops:
            await _write(store, view.told_ops)
        return reply

    return awareness


def answers_directive(settings: AwarenessSettings) -> Callable[[Turn], bool]:
    """Whether the awareness stage will answer a new turn itself, told before the turn is
    recorded, so its message is stored as a command from the start (``answers_itself``
    for chat commands): a command moves no "last contact on any channel" (spec 000 §4.1).

    A message that is nothing but a directive, where commands are allowed, in a turn the
    relay answers: any settings directive (``clock: kind project``, ``clock: off``) or
    invalid one, and ``clock it: …`` only while clocking is off — else the model hears
    what was clocked and answers it, a message of the conversation like any other.
    Agrees with ``AwarenessView.reply`` (``awareness_view``).
    """
    clocking = settings.actions.enabled

    def answered(turn: Turn) -> bool:
        if not settings.enabled or not turn.commands_allowed or turn.observe_only:
            return False
        directive = parse_directive(turn.text)
        if directive is None or (isinstance(directive, ClockIt) and clocking):
            return False
        return is_directive_only(turn.text, directive)

    return answered


async def _linked(store: Store, turn: Turn) -> list[str]:
    """The accounts linked to the speaker; asked of the store only when they are linked."""
    if turn.prior is None or turn.prior.person_id is None:
        return []
    return await store.linked_users(turn.user_key)


def awareness_sections(view: AwarenessView, *, relay_answers: bool) -> list[str]:
    """The view's block sections. Where the relay does not answer a settings directive
    itself (the API channel), the model is asked to pass the answer on."""
    sections = []
    if view.reply is not None and not relay_answers:
        sections.append(tell_user(view.reply))
    if view.section is not None:
        sections.append(view.section)
    return sections


async def save(store: Store, turn: Turn, view: AwarenessView) -> None:
    """Apply the view's changes: the user's clock data, the clock data of members whose
    group plans it closed or asked about, and the thread's kind, together."""
    writes: list[Awaitable[object]] = []
    if view.ops:
        writes.append(store.update_clock_data(turn.user_key, apply_ops(view.ops)))
    writes.extend(_clock_data_writes(store, view.others_ops))
    if view.kind_change is not None:
        kind, explicit = view.kind_change
        writes.append(store.set_thread_kind(turn.thread_key, kind, explicit=explicit))
    await _together(writes)


async def _write(store: Store, owned_ops: Sequence[tuple[str, ClockOp]]) -> None:
    """Apply changes to the clock data of whoever owns each (user key, change)."""
    await _together(_clock_data_writes(store, owned_ops))


def _clock_data_writes(
    store: Store, owned_ops: Sequence[tuple[str, ClockOp]]
) -> list[Awaitable[object]]:
    by_owner: dict[str, list[ClockOp]] = {}
    for owner, op in owned_ops:
        by_owner.setdefault(owner, []).append(op)
    return [store.update_clock_data(owner, apply_ops(ops)) for owner, ops in by_owner.items()]


async def _together(writes: Sequence[Awaitable[object]]) -> None:
    if len(writes) == 1:
        await writes[0]  # alone, it needs no task of its own
    elif writes:
        await asyncio.gather(*writes)
