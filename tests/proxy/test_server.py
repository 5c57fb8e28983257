"""Starting and stopping the server: the GC threshold is raised while any server runs."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from aiohttp import web

from proxy.server import GC_THRESHOLD, start


@pytest.fixture
def default_threshold() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield (700, 10, 10)
    gc.set_threshold(*saved)


async def test_gc_threshold_raised_while_serving_and_restored_after_the_last(
    default_threshold: tuple[int, int, int],
) -> None:
    first = await start(web.Application(), "127.0.0.1", 0, shutdown_timeout=1)
    assert gc.get_threshold() == (GC_THRESHOLD, 10, 10)
    second = await start(web.Application(), "127.0.0.1", 0, shutdown_timeout=1)
    await first.stop()
    assert gc.get_threshold() == (GC_THRESHOLD, 10, 10)  # the second still runs
    await second.stop()
    assert gc.get_threshold() == default_threshold
    await second.stop()  # stopping twice releases once
    assert gc.get_threshold() == default_threshold


async def test_a_higher_threshold_set_by_the_operator_is_kept(
    default_threshold: tuple[int, int, int],
) -> None:
    gc.set_threshold(GC_THRESHOLD * 5, 20, 30)
    server = await start(web.Application(), "127.0.0.1", 0, shutdown_timeout=1)
    assert gc.get_threshold() == (GC_THRESHOLD * 5, 20, 30)
    await server.stop()
    assert gc.get_threshold() == (GC_THRESHOLD * 5, 20, 30)


async def test_automatic_collection_switched_off_stays_off(
    default_threshold: tuple[int, int, int],
) -> None:
    gc.set_threshold(0, 10, 10)
    server = await start(web.Application(), "127.0.0.1", 0, shutdown_timeout=1)
    assert gc.get_threshold() == (0, 10, 10)
    await server.stop()
    assert gc.get_threshold() == (0, 10, 10)
