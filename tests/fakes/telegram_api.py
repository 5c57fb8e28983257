"""A fake Telegram Bot API: a real aiohttp server on loopback for python-telegram-bot.

Point the bot's ``base_url`` at ``api.base_url``. It answers the methods the channel uses
(``getMe``, ``deleteWebhook``, ``getUpdates``, ``sendMessage``, ``sendChatAction``) in
the Bot API's ``{"ok": true, "result": ...}`` shape and records every call. Tests queue
updates with ``push_message`` and wait for the bot's answers with ``wait_for_sent``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

TOKEN = "123456:TEST-token"
BOT = {
    "id": 777,
    "is_bot": True,
    "first_name": "Chronorelay",
    "username": "chronorelay_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}
# Parameters PTB sends as plain strings; every other one is JSON-encoded.
_STRING_PARAMS = {"text", "parse_mode", "action"}


@dataclass
class Call:
    method: str
    params: dict[str, Any]


class FakeTelegramApi:
    """Serves ``/bot<token>/<method>``; ``calls`` lists what the bot asked, in order."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.calls: list[Call] = []
        self._updates: list[dict[str, Any]] = []
        self._new_update = asyncio.Condition()
        self._sent = asyncio.Condition()
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._dispatch)
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/bot"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # ---- what tests do -------------------------------------------------------------

    async def push_message(
        self,
        text: str,
        *,
        chat_id: int = 1001,
        chat_type: str = "private",
        user_id: int = 42,
        first_name: str = "Ana",
        last_name: str | None = None,
        date: datetime | None = None,
        topic_id: int | None = None,
        reply_to_bot: bool = False,
        entities: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Queue a text message update; returns the message as sent to the bot."""
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if last_name:
            user["last_name"] = last_name
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = first_name
        else:
            chat["title"] = "Test group"
        when = date or datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(when.timestamp()),
            "chat": chat,
            "from": user,
            "text": text,
        }
        if entities:
            message["entities"] = entities
        elif text.startswith("/"):
            command = text.split(maxsplit=1)[0]
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
        if topic_id is not None:
            chat["is_forum"] = True
            message["message_thread_id"] = topic_id
            message["is_topic_message"] = True
        if reply_to_bot:
            message["reply_to_message"] = {
                "message_id": next(self._message_ids),
                "date": int(when.timestamp()) - 60,
                "chat": chat,
                "from": BOT,
                "text": "an earlier answer",
            }
        async with self._new_update:
            self._updates.append({"update_id": next(self._update_ids), "message": message})
            self._new_update.notify_all()
        return message

    def sent(self, chat_id: int | None = None) -> list[dict[str, Any]]:
        """The ``sendMessage`` parameters so far, optionally for one chat."""
        return [
            call.params
            for call in self.calls
            if call.method == "sendMessage"
            and (chat_id is None or call.params.get("chat_id") == chat_id)
        ]

    async def wait_for_sent(self, count: int, within: float = 5.0) -> list[dict[str, Any]]:
        """Wait until at least ``count`` messages were sent; return them all."""
        async with asyncio.timeout(within), self._sent:
            await self._sent.wait_for(lambda: len(self.sent()) >= count)
        return self.sent()

    def methods(self) -> list[str]:
        return [call.method for call in self.calls]

    # ---- the Bot API -----------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return _error(401, "Unauthorized")
        method = request.match_info["method"]
        params = _decode(dict(await request.post()))
        self.calls.append(Call(method, params))
        if method == "getMe":
            return _ok(BOT)
        if method in ("deleteWebhook", "sendChatAction"):
            return _ok(True)
        if method == "getUpdates":
            return _ok(await self._get_updates(params))
        if method == "sendMessage":
            return _ok(await self._send_message(params))
        return _error(404, f"Not Found: method {method} is not faked")

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        async with self._new_update:
            # Updates below the offset were confirmed by the bot: Telegram forgets them.
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
            if not self._updates and timeout:
                # Long polling: answer as soon as an update arrives, else empty at timeout.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._new_update.wait_for(lambda: bool(self._updates))
            return list(self._updates)

    async def _send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params["chat_id"]
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(datetime.now(UTC).timestamp()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "from": BOT,
            "text": params["text"],
        }
        if params.get("message_thread_id"):
            message["message_thread_id"] = params["message_thread_id"]
        async with self._sent:
            self._sent.notify_all()
        return message


def _decode(form: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = {}
    for name, value in form.items():
        if name in _STRING_PARAMS or not isinstance(value, str):
            decoded[name] = value
            continue
        try:
            decoded[name] = json.loads(value)
        except ValueError:
            decoded[name] = value
    return decoded


def _ok(result: Any) -> web.Response:
    return web.json_response({"ok": True, "result": result})


def _error(status: int, description: str) -> web.Response:
    return web.json_response(
        {"ok": False, "error_code": status, "description": description}, status=status
    )
