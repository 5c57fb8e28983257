"""Telegram in webhook mode: updates POSTed to the relay's own HTTP server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from channels.telegram import SECRET_HEADER
from middleware.errors import ConfigError
from proxy.app import build_app
from proxy.config import parse_config
from proxy.keys import SERVICES
from proxy.server import RunningServer, start
from tests.channels.support import telegram_section
from tests.conftest import relay_config
from tests.fakes.telegram_api import TOKEN, FakeTelegramApi
from tests.fakes.upstream import FakeUpstream

SECRET = "s3cret_webhook-token-0123456789"
PUBLIC = "https://relay.example.com"


@pytest.fixture
async def relay(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> AsyncIterator[RunningServer]:
    section = telegram_section(
        telegram_api, mode="webhook", webhook_url=PUBLIC + "/", webhook_secret=SECRET
    )
    app = build_app(relay_config(tmp_path, fake_upstream.url, channels=section))
    server = await start(app, "127.0.0.1", 0, shutdown_timeout=2)
    try:
        yield server
    finally:
        await server.stop()


def webhook_path(api: FakeTelegramApi) -> str:
    """The path the relay told Telegram to post to."""
    url: str = api.params("setWebhook")["url"]
    assert url.startswith(PUBLIC + "/channels/telegram/")
    return url.removeprefix(PUBLIC)


async def test_the_webhook_is_set_with_the_secret_and_nothing_polls(
    relay: RunningServer, telegram_api: FakeTelegramApi
) -> None:
    params = telegram_api.params("setWebhook")
    assert params["secret_token"] == SECRET
    assert params["allowed_updates"] == ["message", "edited_message"]
    # The path has a secret component, but is not the secret itself.
    path = webhook_path(telegram_api)
    assert len(path.rsplit("/", 1)[1]) == 32 and SECRET not in path
    assert "getUpdates" not in telegram_api.methods()
    assert "setMyCommands" in telegram_api.methods()


async def test_an_update_with_the_secret_is_answered_and_others_are_refused(
    relay: RunningServer, telegram_api: FakeTelegramApi, fake_upstream: FakeUpstream
) -> None:
    url = relay.url + webhook_path(telegram_api)
    async with aiohttp.ClientSession() as http:
        refused = telegram_api.message_update("let me in", user_id=66, chat_id=66)
        for headers in ({SECRET_HEADER: SECRET[:-1] + "X"}, {}):
            async with http.post(url, json=refused, headers=headers) as response:
                assert response.status == 403
        # A path nobody registered is unknown, whatever the header says.
        async with http.post(
            relay.url + "/channels/telegram/guess", json=refused, headers={SECRET_HEADER: SECRET}
        ) as response:
            assert response.status == 404
        update = telegram_api.message_update("hello by webhook")
        async with http.post(url, json=update, headers={SECRET_HEADER: SECRET}) as response:
            assert response.status == 200
        [sent] = await telegram_api.wait_for_sent(1)
        async with http.post(url, data=b"{not json", headers={SECRET_HEADER: SECRET}) as response:
            assert response.status == 400
    assert (sent["chat_id"], sent["text"]) == (1001, "echo: hello by webhook")
    # The refused update left no trace: not answered, not forwarded, not recorded.
    assert len(fake_upstream.requests) == 1
    store = relay.runner.app[SERVICES].store
    assert await store.get_user("telegram:66") is None


async def test_stopping_deletes_the_webhook(
    tmp_path: Path, fake_upstream: FakeUpstream, telegram_api: FakeTelegramApi
) -> None:
    section = telegram_section(
        telegram_api, mode="webhook", webhook_url=PUBLIC, webhook_secret=SECRET
    )
    app = build_app(relay_config(tmp_path, fake_upstream.url, channels=section))
    server = await start(app, "127.0.0.1", 0, shutdown_timeout=2)
    assert "deleteWebhook" not in telegram_api.methods()
    await server.stop()
    assert telegram_api.methods()[-1] == "deleteWebhook"


def test_webhook_mode_needs_a_url_and_a_good_secret() -> None:
    base = f'[channels.telegram]\nenabled = true\nbot_token = "{TOKEN}"\nmode = "webhook"\n'
    with pytest.raises(ConfigError, match="webhook_url is required"):
        parse_config(base + f'webhook_secret = "{SECRET}"\n')
    with pytest.raises(ConfigError, match="webhook_secret is required"):
        parse_config(base + f'webhook_url = "{PUBLIC}"\n')
    with pytest.raises(ConfigError, match="16-256 characters"):
        parse_config(base + f'webhook_url = "{PUBLIC}"\nwebhook_secret = "short"\n')
    config = parse_config(
        base + f'webhook_url = "{PUBLIC}/"\nwebhook_secret = "${{TELEGRAM_WEBHOOK_SECRET}}"\n',
        env={"TELEGRAM_WEBHOOK_SECRET": SECRET},
    )
    assert config.channels.telegram.webhook_url == PUBLIC
    assert SECRET not in repr(config)


@pytest.mark.parametrize("url", ["http://relay.example.com", "https://", "relay.example.com"])
def test_the_webhook_url_must_be_https_with_a_host(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(f'[channels.telegram]\nwebhook_url = "{url}"\n')
    assert "line 2: channels.telegram.webhook_url: must be an https:// URL with a host" in str(
        caught.value
    )
