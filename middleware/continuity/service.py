"""Continuity's long-lived part: the capturer, the background work, and the scheduler
that fires idle/debounce captures, each person's nightly job (spec 001 §5.2, §3.3) and
the relay's daily housekeeping.

``tick`` is one pass of the scheduler, so tests (and ``POST /admin/jobs/…``) drive it
with a fake clock instead of waiting for the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from middleware.clock.source import Clock
from middleware.clock.zones import get_zone
from middleware.continuity.background import Background
from middleware.continuity.capture import CaptureOutcome, Capturer, rebuild_view
from middleware.continuity.model import Session, Trigger, WorkContext
from middleware.continuity.nightly import (
    NightlyReport,
    housekeep,
    refresh_rollup,
    run_nightly,
    trigger_settings,
)
from middleware.continuity.schedule import nightly_due
from middleware.continuity.sessions import CurrentSessions
from middleware.continuity.settings import CardsConfig, ContinuityConfig, MemoryConfig
from middleware.continuity.triggers import timed_trigger
from middleware.store import Store
from middleware.types import Upstream

log = logging.getLogger(__name__)

NIGHTLY = "nightly"
HOUSEKEEPING = "housekeeping"
# The housekeeping mark's scope: the whole relay (no user key lacks a colon).
_RELAY = "relay"
# Seconds captures in flight may still run when the relay stops (``ContinuityService.stop``)
# or a chat ends (the terminal's capture as its user leaves) before they are left undone.
DRAIN_GRACE = 10.0
# Users seen within this long are visited by the nightly job.
_ACTIVE_DAYS = 60
# What a session's dirty flag depends on besides its words, which these fix: the last
# message captured, the user messages since, whether a tool ran.
_Counts = tuple[int | None, int, bool]


@dataclass(frozen=True, slots=True)
class ContinuitySettings:
    continuity: ContinuityConfig = field(default_factory=ContinuityConfig)
    cards: CardsConfig = field(default_factory=CardsConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)


@dataclass(frozen=True, slots=True)
class TickReport:
    captures: tuple[CaptureOutcome, ...] = ()
    nightly: NightlyReport | None = None
    # Contexts the daily housekeeping decayed in, when it ran in this pass.
    housekeeping: int | None = None


class ContinuityService:
    def __init__(
        self,
        store: Store,
        settings: ContinuitySettings,
        clock: Clock,
        upstream: Upstream | None,
        *,
        model: str,
    ) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.capturer = Capturer(
            store,
            settings.continuity,
            clock,
            upstream,
            model=model,
            after_capture=self._refresh_rollup,
        )
        self.background = Background()
        self.sessions = CurrentSessions()
        self._loop_task: asyncio.Task[None] | None = None
        self._tick_lock = asyncio.Lock()
        # Sessions read and found a glance ("hi", "thanks"), with the state they were read
        # in: a glanced thread stays a capture candidate, and its words are read again
        # only once it has new ones, not on every pass.
        self._glances: dict[str, _Counts] = {}

    async def _refresh_rollup(self, session: Session, now: datetime) -> None:
        """Tier 2 of the user's other threads shows this session's work from now on
        (spec 001 §6.2), not from the next nightly run."""
        if self.settings.cards.enabled:
            await refresh_rollup(self.store, self.settings.cards, session.speaker_key, now)

    async def capture_thread(
        self, thread_key: str, trigger: Trigger = "manual_request"
    ) -> CaptureOutcome | None:
        """Capture the thread's current session now."""
        session = await self.store.current_session(thread_key)
        if session is None:
            return None
        return await self.capturer.capture(session.session_id, trigger)

    async def move_thread(
        self, thread_key: str, user_key: str, name: str, *, now: datetime
    ) -> tuple[WorkContext, bool]:
        """Move the thread into the user's work context called ``name`` (made if new:
        ``Store.use_work_context``); return it and whether it was made.

        Out of a named context the session so far stays behind: it is captured there (in
        the background) and ends, so the thread's next message starts a new session,
        which brings the resume card of the context moved to. Naming the thread's own
        context keeps the session going: its work is that context's."""
        was = await self.store.thread_work_context(thread_key, now=now)
        left = await self.store.current_session(thread_key) if was.named else None
        chosen, made = await self.store.use_work_context(thread_key, user_key, name, now=now)
        if left is not None and chosen.work_context_id != was.work_context_id:
            self.sessions.forget(thread_key)
            self.background.spawn(
                self.capturer.capture(left.session_id, "manual_request"),
                what="capture of a session moved away from",
            )
        return chosen, made

    async def deliver_updates(self, work_context_id: str, entry_ids: Collection[str]) -> None:
        """Mark cross-conversation updates shown: they decay a few days later (spec 001
        §3.3) and leave the view at once."""
        now = self.clock.now()
        decay_at = now + timedelta(
            days=self.settings.continuity.cross_update_ttl_days_after_delivery
        )
        for entry_id in entry_ids:
            await self.store.update_entry(entry_id, delivered_at=now, decay_at=decay_at)
        await rebuild_view(self.store, self.settings.continuity, work_context_id, now)

    async def tick(self) -> TickReport:
        """One scheduler pass: captures due now, then nightly runs due now, then the
        relay's housekeeping if its night has come."""
        async with self._tick_lock:
            captures = await self._due_captures()
            nightly = await self._due_nightly()
            housekeeping = await self._due_housekeeping()
        return TickReport(tuple(captures), nightly, housekeeping)

    async def run_nightly(self, user_keys: Collection[str] | None = None) -> NightlyReport:
        """Run the nightly job now (on demand) for ``user_keys``, or everyone active."""
        now = self.clock.now()
        everyone = user_keys is None
        if user_keys is None:
            user_keys = [key for key, _ in await self.store.active_users(_active_since(now))]
        async with self._tick_lock:
            return await run_nightly(
                self.store,
                self.capturer,
                self.settings.cards,
                now,
                set(user_keys),
                whole_log=everyone,
            )

    async def _due_captures(self) -> list[CaptureOutcome]:
        settings = self.settings.continuity
        if not settings.enabled:
            return []
        rules = trigger_settings(settings)
        done: list[CaptureOutcome] = []
        candidates = await self.store.capture_candidates()
        live = {session.session_id for session in candidates}
        self._glances = {key: seen for key, seen in self._glances.items() if key in live}
        for session in candidates:
            focus = await self.store.latest_thread_of(session.speaker_key)
            now = self.clock.now()
            trigger = timed_trigger(
                session, focused=focus == session.thread_key, now=now, settings=rules
            )
            if trigger is None or not await self._is_dirty(session):
                continue
            outcome = await self.capturer.capture(session.session_id, trigger)
            if outcome is not None:
                done.append(outcome)
        return done

    async def _is_dirty(self, session: Session) -> bool:
        counts = _counts(session)
        if self._glances.get(session.session_id) == counts:
            return False
        dirty = await self.capturer.is_dirty(session)
        if dirty:
            self._glances.pop(session.session_id, None)
        else:
            self._glances[session.session_id] = counts
        return dirty

    async def _due_nightly(self) -> NightlyReport | None:
        settings = self.settings.continuity
        now = self.clock.now()
        due: dict[str, str] = {}
        for user_key, tz in await self.store.active_users(_active_since(now)):
            zone = get_zone(tz or settings.nightly_timezone)
            mark = await self.store.job_mark(NIGHTLY, user_key)
            if mark is None:
                # Someone new: their first night is the next one, not a run right now in
                # the middle of their first conversation.
                today = now.astimezone(zone).date().isoformat()
                await self.store.set_job_mark(NIGHTLY, user_key, today, at=now)
                continue
            night = nightly_due(mark, now, zone, settings.nightly_at)
            if night is not None:
                due[user_key] = night
        if not due:
            return None
        report = await run_nightly(self.store, self.capturer, self.settings.cards, now, set(due))
        for user_key, night in due.items():
            await self.store.set_job_mark(NIGHTLY, user_key, night, at=now)
        return report

    async def _due_housekeeping(self) -> int | None:
        """Once a day, at ``nightly_at`` in ``nightly_timezone`` (the relay's own night):
        decay what expired in everyone's log (``housekeep``). The store's mark keeps a
        restart, or a second process on the same file, from running it twice."""
        settings = self.settings.continuity
        now = self.clock.now()
        zone = get_zone(settings.nightly_timezone)
        mark = await self.store.job_mark(HOUSEKEEPING, _RELAY)
        night = nightly_due(mark, now, zone, settings.nightly_at)
        if night is None or not await self.store.claim_job_mark(
            HOUSEKEEPING, _RELAY, night, at=now
        ):
            return None
        return await housekeep(self.store, settings, now)

    def start(self) -> None:
        """Run the scheduler loop in the background until ``stop``."""
        if self._loop_task is None:
            self._loop_task = asyncio.ensure_future(self._loop())

    async def stop(self, grace: float = DRAIN_GRACE) -> None:
        """Stop the scheduler, then let captures in flight finish (within ``grace`` s)."""
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None
        await self.background.drain(grace)

    async def _loop(self) -> None:
        interval = self.settings.continuity.scheduler_interval_seconds
        while True:
            await asyncio.sleep(interval)
            try:
                await self.tick()
            except Exception:
                # One bad pass (a locked file, say) must not end the scheduler.
                log.exception("continuity scheduler pass failed; retrying next interval")


def _active_since(now: datetime) -> datetime:
    return now - timedelta(days=_ACTIVE_DAYS)


def _counts(session: Session) -> _Counts:
    return session.captured_message_id, session.dirty_turns, session.tool_used
