"""Adapters load by import string, and an unknown channel is a clear config error."""

from __future__ import annotations

import pytest

from channels.base import load_channel_class
from channels.terminal import TerminalChannel
from middleware.errors import ConfigError


def test_registered_channel_loads() -> None:
    assert load_channel_class("terminal") is TerminalChannel


def test_unknown_channel_names_the_known_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown channel 'irc' \(known: discord, telegram, terminal\)"
    ):
        load_channel_class("irc")


def test_telegram_loads_by_name() -> None:
    from channels.telegram import TelegramChannel

    assert load_channel_class("telegram") is TelegramChannel
