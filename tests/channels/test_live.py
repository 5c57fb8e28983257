"""``LiveMessage``: when a reply being written is sent, edited and finished."""

from __future__ import annotations

import pytest

from channels.live import LiveMessage
from middleware.errors import ChannelError


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Platform:
    """Records what the live message asked for, with the time it asked."""

    def __init__(self, clock: ManualClock, *, fail_start: bool = False) -> None:
        self.clock = clock
        self.fail_start = fail_start
        self.log: list[tuple[str, float, int | None, str]] = []

    async def start(self, text: str) -> int:
        if self.fail_start:
            raise ChannelError("Telegram refused a reply to chat 1: Forbidden")
        self.log.append(("start", self.clock.now, None, text))
        return 7

    async def edit(self, handle: int, text: str) -> None:
        self.log.append(("edit", self.clock.now, handle, text))

    async def finish(self, handle: int | None, text: str) -> None:
        self.log.append(("finish", self.clock.now, handle, text))

    def live(self) -> LiveMessage[int]:
        return LiveMessage(
            start=self.start,
            edit=self.edit,
            finish=self.finish,
            interval=1.0,
            monotonic=self.clock.monotonic,
            sleep=self.clock.sleep,
        )


async def test_edits_are_at_least_an_interval_apart_and_the_end_always_arrives() -> None:
    clock = ManualClock()
    platform = Platform(clock)
    live = platform.live()
    await live.update("  ")  # nothing to show yet
    await live.update("Hel")
    for now, text in [(0.5, "Hello"), (1.0, "Hello wo"), (1.2, "Hello world"), (1.9, "Hello w!")]:
        clock.now = now
        await live.update(text)
    await live.finish("Hello world!")
    assert platform.log == [
        ("start", 0.0, None, "Hel"),
        ("edit", 1.0, 7, "Hello wo"),
        ("finish", 2.0, 7, "Hello world!"),
    ]
    # The final text waited out what was left of the interval after the last edit.
    assert clock.slept == [pytest.approx(0.1)]
    times = [at for _, at, _, _ in platform.log]
    assert all(later - earlier >= 1.0 for earlier, later in zip(times, times[1:], strict=False))


async def test_unchanged_text_is_not_edited_and_a_late_finish_does_not_wait() -> None:
    clock = ManualClock()
    platform = Platform(clock)
    live = platform.live()
    await live.update("same")
    clock.now = 5.0
    await live.update("same")
    await live.finish("same")
    assert [kind for kind, *_ in platform.log] == ["start", "finish"]
    assert clock.slept == []


async def test_nothing_shown_means_a_plain_delivery() -> None:
    clock = ManualClock()
    platform = Platform(clock)
    await platform.live().finish("/time answered by the relay")
    assert platform.log == [("finish", 0.0, None, "/time answered by the relay")]


async def test_a_failed_preview_ends_the_previews_not_the_reply() -> None:
    clock = ManualClock()
    platform = Platform(clock, fail_start=True)
    live = platform.live()
    await live.update("Hel")
    platform.fail_start = False
    clock.now = 3.0
    await live.update("Hello")
    await live.finish("Hello!")
    assert platform.log == [("finish", 3.0, None, "Hello!")]
