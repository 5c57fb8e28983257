"""Fixtures for the channel tests: the fake Telegram Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.telegram_api import FakeTelegramApi


@pytest.fixture
async def telegram_api() -> AsyncIterator[FakeTelegramApi]:
    api = FakeTelegramApi()
    await api.start()
    yield api
    await api.stop()
