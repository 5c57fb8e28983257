"""The spec 000 §4.4 timezone provider: one object with the whole interface.

It gathers what the clock modules do (zones, parsing, resolution) behind the spec's
names, bound to the relay's clock and store, so other components (and later channels or
jobs) resolve time the same way the pipeline does.
"""

from __future__ import annotations

from datetime import datetime

from middleware.clock import parsing, zones
from middleware.clock.resolution import TimezoneResolution, resolve_session_timezone
from middleware.clock.source import Clock
from middleware.clock.stage import stated_location
from middleware.store import Store


class TimezoneProvider:
    """``now``, ``agent_timezone``, ``session_timezone``, ``offset_minutes``, ``to_iso``,
    ``parse_anchored_time`` — IANA ids only, DST-aware, offsets in minutes."""

    def __init__(self, clock: Clock, store: Store, agent_zone: str = "") -> None:
        self._clock = clock
        self._store = store
        self._agent_zone = agent_zone or zones.agent_timezone()

    def now(self) -> datetime:
        """The current instant (UTC) for this decision cycle."""
        return self._clock.now()

    def agent_timezone(self) -> str:
        """The host's IANA zone (configured, else the OS's, else ``UTC``)."""
        return self._agent_zone

    async def session_timezone(
        self, thread_key: str, user_key: str | None = None, text: str = ""
    ) -> TimezoneResolution:
        """The thread's session zone by §4.2 precedence: explicit in ``text`` → thread
        override → user (or linked person) default → mentioned location → the place
        the user said they are in earlier → UTC fallback."""
        prior = await self._store.peek_prior(thread_key, user_key or "")
        now = self.now()
        stated = stated_location(prior, now)
        return resolve_session_timezone(
            text,
            thread_tz=prior.thread_tz,
            user_tz=prior.user_tz,
            stated_tz=stated.zone if stated else None,
            now=now,
        )

    @staticmethod
    def offset_minutes(tz: str, instant: datetime) -> int:
        return zones.offset_minutes(tz, instant)

    @staticmethod
    def to_iso(instant: datetime, tz: str) -> str:
        return zones.to_iso(instant, tz)

    @staticmethod
    def parse_anchored_time(
        text: str, tz: str | None, reference_instant: datetime
    ) -> parsing.ParseResult:
        return parsing.parse_anchored_time(text, tz, reference_instant)
