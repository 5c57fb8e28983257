"""A fake Telegram Bot API: a real aiohttp server on loopback for python-telegram-bot.

Point the bot's ``base_url`` at ``api.base_url``. It answers the methods the channel uses
(``getMe``, ``setMyCommands``, ``setWebhook``, ``deleteWebhook``, ``getUpdates``,
``sendMessage``, ``editMessageText``, ``sendChatAction``) in the Bot API's
``{"ok": true, "result": ...}`` shape and records every call. Tests queue updates with
``push_message`` (or build one with ``message_update`` to POST to a webhook), wait for the
bot's answers with ``wait_for_sent``, make a method answer 429 with ``flood``, fail with
another error status with ``fail``, and refuse a message's formatting with
``refuse_entities``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
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
_STRING_PARAMS = {"text", "parse_mode", "action", "url", "secret_token"}


_FILE = {"file_id": "file-1", "file_unique_id": "f1"}
# What each kind of media message carries, as the Bot API sends it.
_MEDIA: dict[str, Any] = {
    "photo": [{**_FILE, "width": 90, "height": 90}],
    "sticker": {
        **_FILE,
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
    },
    "voice": {**_FILE, "duration": 3},
    "document": {**_FILE, "file_name": "notes.pdf"},
}


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
        # The text of every message the bot sent, by (chat id, message id).
        self.texts: dict[tuple[int, int], str] = {}
        # Methods that answer 429 (flood control) next, with their retry_after.
        self._floods: dict[str, list[int]] = {}
        # Methods that fail next, with the status and description they answer.
        # None: a call let through before the failures that follow it.
        self._failures: dict[str, list[tuple[int, str] | None]] = {}
        # Methods that refuse the next calls carrying entities, with the error they give.
        self._entity_refusals: dict[str, list[str]] = {}
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

    async def push_message(self, text: str, **fields: Any) -> dict[str, Any]:
        """Queue a text message update (``fields`` as for ``message_update``); returns the
        message as sent to the bot."""
        update = self.message_update(text, **fields)
        async with self._new_update:
            self._updates.append(update)
            self._new_update.notify_all()
        message: dict[str, Any] = update["message"]
        return message

    async def push_edit(self, message: dict[str, Any], text: str) -> None:
        """Queue the update Telegram sends when ``message`` (one ``push_message``
        returned) is edited by its sender to say ``text``."""
        edited = {**message, "text": text, "edit_date": message["date"] + 60}
        async with self._new_update:
            self._updates.append({"update_id": next(self._update_ids), "edited_message": edited})
            self._new_update.notify_all()

    async def push_member_left(
        self, chat_id: int, user_id: int, first_name: str, *, date: datetime | None = None
    ) -> None:
        """Queue the service message Telegram sends when member ``user_id`` leaves the
        group ``chat_id`` (``left_chat_member``; they are its sender too)."""
        update = self.message_update("", chat_id=chat_id, chat_type="supergroup",
                                     user_id=user_id, first_name=first_name, date=date)  # fmt: skip
        message = update["message"]
        del message["text"]
        message["left_chat_member"] = dict(message["from"])
        async with self._new_update:
            self._updates.append(update)
            self._new_update.notify_all()

    def message_update(
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
        replying_to: dict[str, Any] | None = None,
        quote: str | None = None,
        entities: list[dict[str, Any]] | None = None,
        forwarded_from: str | None = None,
        media: str | None = None,
        attachment: dict[str, Any] | None = None,
        language_code: str | None = None,
    ) -> dict[str, Any]:
        """A text message update as Telegram sends it (not queued); ``forwarded_from``
        makes it a forward of a message by a user of that first name, ``media``
        (``"photo"``, ``"sticker"``, ``"voice"``, ``"document"``) that kind of message with
        ``text`` (and ``entities``) as its caption, or with none when ``text`` is empty;
        ``attachment`` is what the message carries under ``media`` instead of the usual
        (a ``"location"``'s coordinates, a ``"poll"``…). ``replying_to`` is the message it
        replies to (one ``push_message`` returned), ``quote`` the part of it quoted.
        ``language_code`` is the sender's app language, as Telegram sends it ("de",
        "pt-br")."""
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if last_name:
            user["last_name"] = last_name
        if language_code is not None:
            user["language_code"] = language_code
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
        if media is not None:
            caption = message.pop("text")
            if caption:
                message["caption"] = caption
            if "entities" in message:
                message["caption_entities"] = message.pop("entities")
            message[media] = attachment if attachment is not None else _MEDIA[media]
        if forwarded_from is not None:
            author = {"id": user_id + 1000, "is_bot": False, "first_name": forwarded_from}
            message["forward_origin"] = {
                "type": "user",
                "date": int(when.timestamp()) - 3600,
                "sender_user": author,
            }
        if topic_id is not None:
            chat["is_forum"] = True
            message["message_thread_id"] = topic_id
            message["is_topic_message"] = True
        if replying_to is not None:
            message["reply_to_message"] = replying_to
        if quote is not None:
            message["quote"] = {"text": quote, "position": 0}
        if reply_to_bot:
            message["reply_to_message"] = {
                "message_id": next(self._message_ids),
                "date": int(when.timestamp()) - 60,
                "chat": chat,
                "from": BOT,
                "text": "an earlier answer",
            }
        return {"update_id": next(self._update_ids), "message": message}

    def flood(self, method: str, retry_after: int = 1, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with 429 and ``retry_after``."""
        self._floods.setdefault(method, []).extend([retry_after] * times)

    def fail(
        self, method: str, status: int, description: str, times: int = 1, *, after: int = 0
    ) -> None:
        """Answer ``times`` calls of ``method``, the next but ``after`` of them, with
        ``status`` and ``description`` (502 "Bad Gateway", 403 "Forbidden: bot was blocked
        by the user", …)."""
        failures: list[tuple[int, str] | None] = [None] * after
        failures += [(status, description)] * times
        self._failures.setdefault(method, []).extend(failures)

    def refuse_entities(
        self,
        method: str = "sendMessage",
        description: str = (
            "Bad Request: can't parse entities: Can't find end of the entity starting at "
            "byte offset 12"
        ),
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` that carry ``entities`` as Telegram
        answers formatting it cannot apply: 400 with ``description`` (PTB raises
        ``telegram.error.BadRequest``). Calls without entities go through."""
        self._entity_refusals.setdefault(method, []).extend([description] * times)

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

    async def wait_until(self, done: Callable[[], bool], within: float = 5.0) -> None:
        """Wait until ``done()`` holds, checking after each message sent or edited."""
        async with asyncio.timeout(within), self._sent:
            await self._sent.wait_for(done)

    def edits(self) -> list[dict[str, Any]]:
        """The ``editMessageText`` parameters so far."""
        return [call.params for call in self.calls if call.method == "editMessageText"]

    def methods(self) -> list[str]:
        return [call.method for call in self.calls]

    def params(self, method: str) -> dict[str, Any]:
        """The parameters of the last call of ``method``."""
        return next(call.params for call in reversed(self.calls) if call.method == method)

    # ---- the Bot API -----------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return _error(401, "Unauthorized")
        method = request.match_info["method"]
        params = _decode(dict(await request.post()))
        self.calls.append(Call(method, params))
        if self._floods.get(method):
            retry_after = self._floods[method].pop(0)
            return web.json_response(
                {
                    "ok": False,
                    "error_code": 429,
                    "description": f"Too Many Requests: retry after {retry_after}",
                    "parameters": {"retry_after": retry_after},
                },
                status=429,
            )
        failure = self._failures[method].pop(0) if self._failures.get(method) else None
        if failure is not None:
            return _error(*failure)
        if params.get("entities") and self._entity_refusals.get(method):
            return _error(400, self._entity_refusals[method].pop(0))
        if method == "getMe":
            return _ok(BOT)
        if method in ("deleteWebhook", "setWebhook", "setMyCommands", "sendChatAction"):
            return _ok(True)
        if method == "editMessageText":
            return await self._edit_message(params)
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
        self.texts[(chat_id, message["message_id"])] = params["text"]
        async with self._sent:
            self._sent.notify_all()
        return message

    async def _edit_message(self, params: dict[str, Any]) -> web.Response:
        key = (params["chat_id"], params["message_id"])
        if key not in self.texts:
            return _error(400, "Bad Request: message to edit not found")
        if self.texts[key] == params["text"]:
            return _error(
                400,
                "Bad Request: message is not modified: specified new message content and "
                "reply markup are exactly the same as a current content and reply markup "
                "of the message",
            )
        self.texts[key] = params["text"]
        async with self._sent:
            self._sent.notify_all()
        chat_type = "private" if key[0] > 0 else "supergroup"
        return _ok(
            {
                "message_id": key[1],
                "date": int(datetime.now(UTC).timestamp()),
                "edit_date": int(datetime.now(UTC).timestamp()),
                "chat": {"id": key[0], "type": chat_type},
                "from": BOT,
                "text": params["text"],
            }
        )


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
