"""A fake Discord API and gateway: a real aiohttp server on loopback for discord.py.

Point discord.py at it by setting ``discord.http.Route.BASE`` to ``api.base_url`` and
``DiscordWebSocket.DEFAULT_GATEWAY`` to ``api.ws_url``. It
answers login (``GET /users/@me``), ``GET /gateway/bot``, typing and message sends, and
runs a websocket gateway that says HELLO, answers IDENTIFY with READY and heartbeats
with ACKs. Tests push messages with ``push_message`` and wait for the bot's answers with
``wait_for_sent``.

Servers: ``push_guild`` dispatches a GUILD_CREATE with the roles given (``role_payload``;
a bot's managed role carries ``tags.bot_id``), so discord.py caches the server and
resolves the role mentions (``mention_roles``) of its messages; with ``channels`` it
caches them too. ``push_member_remove`` dispatches a GUILD_MEMBER_REMOVE.

Slash commands: the bot's command sync (``PUT /applications/{id}/commands``) is kept in
``commands``; ``push_interaction`` dispatches an INTERACTION_CREATE, the bot's responses
(``POST /interactions/{id}/{token}/callback``) land in ``callbacks`` and its follow-ups
(``POST /webhooks/{app}/{token}``) in ``sent`` like any message.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import mimetypes
from datetime import UTC, datetime
from typing import Any

import discord.utils
from aiohttp import WSMsgType, web

TOKEN = "discord-test-token"
BOT_ID = 777
BOT = {
    "id": str(BOT_ID),
    "username": "chronorelay",
    "discriminator": "0",
    "global_name": None,
    "avatar": None,
    "bot": True,
}


def _json(data: dict[str, Any], status: int = 200) -> web.Response:
    # discord.py parses a body as JSON only for exactly "application/json" (no charset).
    return web.Response(
        body=json.dumps(data).encode(), status=status, content_type="application/json"
    )


def user_payload(user_id: int, name: str = "ada", *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "global_name": name.title(),
        "avatar": None,
        "bot": bot,
    }


class FakeDiscordApi:
    """Serves ``/api/v10/...`` and the gateway at ``/gateway``; ``sent`` lists the message
    bodies the bot posted, each with its ``channel_id``."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.typing: list[str] = []
        # The last command list the bot synced, and every interaction callback body.
        self.commands: list[dict[str, Any]] = []
        self.callbacks: list[dict[str, Any]] = []
        self._interaction_channels: dict[str, int] = {}
        self._sent: list[dict[str, Any]] = []
        # Message posts refused with 429 next, by their retry_after (seconds).
        self._floods: list[float] = []
        self.refused_posts = 0
        # Channels where the bot lacks Send Messages, or Read Message History (which a
        # reply needs): posts there are refused with 403 as Discord does.
        self.cannot_send: set[int] = set()
        self.cannot_read_history: set[int] = set()
        self._sent_changed = asyncio.Condition()
        self._sockets: list[web.WebSocketResponse] = []
        self._ready = asyncio.Event()
        # A gateway close code to answer IDENTIFY with (4014: a privileged intent is off).
        self.refuse_identify: int | None = None
        # Gateway connections the bot opened (a reconnect opens another).
        self.connections = 0
        # Snowflakes of "now": discord.py reads a message's time from its id.
        self._ids = (discord.utils.time_snowflake(datetime.now(UTC)) + n for n in itertools.count())
        self._seq = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.ws_url = ""
        self._root = ""

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._application)
        app.router.add_get("/api/v10/gateway/bot", self._gateway_bot)
        app.router.add_post("/api/v10/channels/{channel}/messages", self._post_message)
        app.router.add_post("/api/v10/channels/{channel}/typing", self._typing)
        app.router.add_put("/api/v10/applications/{app}/commands", self._sync_commands)
        app.router.add_post(
            "/api/v10/interactions/{interaction}/{token}/callback", self._interaction_callback
        )
        app.router.add_post("/api/v10/webhooks/{app}/{token}", self._follow_up)
        app.router.add_get("/gateway", self._gateway)
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._root = f"127.0.0.1:{port}"
        self.base_url = f"http://{self._root}/api/v10"
        self.ws_url = f"ws://{self._root}/gateway"
        return self.base_url

    async def stop(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def close_gateway(self, code: int) -> None:
        """Close the bot's gateway connection with ``code``, as Discord does when it drops
        a session (4000: reconnect and resume; 4014: a privileged intent was turned off)."""
        for ws in list(self._sockets):
            await ws.close(code=code)

    async def wait_for_connections(self, count: int, within: float = 5.0) -> None:
        """Wait until the bot has opened ``count`` gateway connections, the last still open."""
        async with asyncio.timeout(within):
            async with self._sent_changed:
                await self._sent_changed.wait_for(
                    lambda: self.connections >= count and bool(self._sockets)
                )

    def flood(self, retry_after: float = 0.05, times: int = 1) -> None:
        """Answer the next ``times`` message posts with 429 and ``retry_after``, as
        Discord's per-route rate limit does."""
        self._floods.extend([retry_after] * times)

    def sent(self) -> list[dict[str, Any]]:
        return list(self._sent)

    async def wait_for_sent(self, count: int, within: float = 5.0) -> list[dict[str, Any]]:
        async with asyncio.timeout(within):
            async with self._sent_changed:
                await self._sent_changed.wait_for(lambda: len(self._sent) >= count)
        return self.sent()

    async def wait_for_callbacks(self, count: int, within: float = 5.0) -> list[dict[str, Any]]:
        """The interaction callbacks, once there are at least ``count``."""
        async with asyncio.timeout(within):
            async with self._sent_changed:
                await self._sent_changed.wait_for(lambda: len(self.callbacks) >= count)
        return list(self.callbacks)

    async def push_message(
        self,
        text: str,
        *,
        channel_id: int,
        user_id: int,
        guild_id: int | None = None,
        mentions: list[dict[str, Any]] | None = None,
        mention_roles: list[int] | None = None,
        author: dict[str, Any] | None = None,
        replying_to: dict[str, Any] | None = None,
        files: list[str] | None = None,
        message_type: int | None = None,
        at: datetime | None = None,
        fields: dict[str, Any] | None = None,
    ) -> int:
        """Dispatch a MESSAGE_CREATE to the connected bot; returns the message id.
        ``replying_to`` is the message object it replies to (e.g. one of ``sent_objects``),
        ``files`` the names of files attached, ``message_type`` Discord's type number (18:
        a thread was created, with the thread's name as the content), ``at`` when it was
        written (discord.py reads that from the id; default now), ``fields`` more of the
        message object (``sticker_items``, a ``poll``)."""
        await asyncio.wait_for(self._ready.wait(), 5.0)
        message_id = next(self._ids)
        if at is not None:
            # Unique still: the low bits of a snowflake count messages, not time.
            message_id = discord.utils.time_snowflake(at) + message_id % 4096
        data = message_payload(
            message_id,
            text,
            channel_id=channel_id,
            author=author or user_payload(user_id),
            guild_id=guild_id,
            mentions=mentions,
            mention_roles=mention_roles,
            referenced=replying_to,
            files=files,
        )
        if message_type is not None:
            data["type"] = message_type
        data.update(fields or {})
        await self._dispatch("MESSAGE_CREATE", data)
        return message_id

    async def push_guild(
        self, guild_id: int, roles: list[dict[str, Any]], *, channels: tuple[int, ...] = ()
    ) -> None:
        """Dispatch a GUILD_CREATE: the bot joined server ``guild_id``, which has ``roles``
        (besides @everyone) and the text channels ``channels``."""
        await asyncio.wait_for(self._ready.wait(), 5.0)
        everyone = role_payload(guild_id, "@everyone")
        data = {
            "id": str(guild_id),
            "name": "Test server",
            "owner_id": "1",
            "roles": [everyone, *roles],
            "channels": [
                {
                    "id": str(channel),
                    "type": 0,
                    "name": f"channel-{channel}",
                    "position": index,
                    "guild_id": str(guild_id),
                    "permission_overwrites": [],
                }
                for index, channel in enumerate(channels)
            ],  # fmt: skip
            "members": [],
            "member_count": 2,
            "emojis": [],
            "stickers": [],
            "features": [],
            "large": False,
        }
        await self._dispatch("GUILD_CREATE", data)

    async def push_member_remove(self, guild_id: int, user: dict[str, Any]) -> None:
        """Dispatch a GUILD_MEMBER_REMOVE: ``user`` (``user_payload``) left server
        ``guild_id`` (sent only to a bot with the Server Members intent)."""
        await self._dispatch("GUILD_MEMBER_REMOVE", {"guild_id": str(guild_id), "user": user})

    async def push_interaction(
        self,
        command: str,
        argument: str | None = None,
        *,
        channel_id: int,
        user_id: int,
        guild_id: int | None = None,
        locale: str = "en-US",
    ) -> str:
        """Dispatch a slash command's INTERACTION_CREATE (from a client set to ``locale``);
        returns its token."""
        await asyncio.wait_for(self._ready.wait(), 5.0)
        interaction_id = next(self._ids)
        token = f"token-{interaction_id}"
        self._interaction_channels[token] = channel_id
        user = user_payload(user_id)
        options = [{"name": "text", "type": 3, "value": argument}] if argument else []
        data: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(BOT_ID),
            "type": 2,
            "token": token,
            "version": 1,
            "channel_id": str(channel_id),
            "locale": locale,
            "app_permissions": "0",
            "attachment_size_limit": 8388608,
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(guild_id or 0)},
            "context": 0 if guild_id is not None else 1,
            "data": {"id": "1", "name": command, "type": 1, "options": options},
        }
        if guild_id is None:
            data["user"] = user
            data["channel"] = {"id": str(channel_id), "type": 1, "recipients": [user]}
        else:
            data["guild_id"] = str(guild_id)
            data["member"] = {
                "user": user,
                "roles": [],
                "joined_at": datetime.now(UTC).isoformat(),
                "deaf": False,
                "mute": False,
                "flags": 0,
                "permissions": "0",
            }
            data["channel"] = {
                "id": str(channel_id),
                "type": 0,
                "guild_id": str(guild_id),
                "name": "general",
                "position": 0,
                "permission_overwrites": [],
                "nsfw": False,
                "parent_id": None,
            }
        await self._dispatch("INTERACTION_CREATE", data)
        return token

    async def push_edit(
        self,
        message_id: int,
        text: str,
        *,
        channel_id: int,
        user_id: int,
        guild_id: int | None = None,
        mentions: list[dict[str, Any]] | None = None,
        edited: bool = True,
    ) -> None:
        """Dispatch a MESSAGE_UPDATE of message ``message_id``, now saying ``text``: an
        edit by its author, or (``edited=False``) Discord adding a link's preview."""
        data = message_payload(
            message_id,
            text,
            channel_id=channel_id,
            author=user_payload(user_id),
            guild_id=guild_id,
            mentions=mentions,
        )
        if edited:
            data["edited_timestamp"] = datetime.now(UTC).isoformat()
        await self._dispatch("MESSAGE_UPDATE", data)

    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        for ws in self._sockets:
            await ws.send_json({"op": 0, "t": event, "s": next(self._seq), "d": data})

    async def _record(self, body: dict[str, Any]) -> None:
        async with self._sent_changed:
            self._sent.append(body)
            self._sent_changed.notify_all()

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {self.token}"

    async def _me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        return _json(BOT)

    async def _application(self, request: web.Request) -> web.Response:
        return _json(
            {
                "id": str(BOT_ID),
                "name": "Chronorelay",
                "icon": None,
                "description": "",
                "rpc_origins": [],
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": user_payload(1, "owner"),
                "summary": "",
                "verify_key": "0" * 64,
                "flags": 0,
            }
        )

    async def _gateway_bot(self, request: web.Request) -> web.Response:
        return _json(
            {
                "url": f"ws://{self._root}/gateway",
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 1000,
                    "reset_after": 0,
                    "max_concurrency": 1,
                },
            }
        )

    async def _post_message(self, request: web.Request) -> web.Response:
        body = await request.json()
        if self._floods:
            self.refused_posts += 1
            retry_after = self._floods.pop(0)
            refusal = _json(
                {
                    "message": "You are being rate limited.",
                    "retry_after": retry_after,
                    "global": False,
                },
                status=429,
            )
            # discord.py reads a 429 without Cloudflare's Via header as a ban.
            refusal.headers.update(
                {
                    "Via": "1.1 google",
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset-After": str(retry_after),
                    "X-RateLimit-Bucket": "messages",
                    "X-RateLimit-Scope": "user",
                }
            )
            return refusal
        channel_id = int(request.match_info["channel"])
        if channel_id in self.cannot_send:
            return _json({"message": "Missing Permissions", "code": 50013}, status=403)
        if channel_id in self.cannot_read_history and "message_reference" in body:
            return _json(
                {
                    "message": "Cannot reply without permission to read message history",
                    "code": 160002,
                },
                status=403,
            )
        message = message_payload(
            next(self._ids), body.get("content", ""), channel_id=channel_id, author=BOT
        )
        await self._record({**body, "channel_id": channel_id, "id": int(message["id"])})
        return _json(message)

    async def _sync_commands(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        self.commands = await request.json()
        synced = [
            {
                **command,
                "id": str(900 + index),
                "application_id": str(BOT_ID),
                "type": command.get("type", 1),
                "version": "1",
                "default_member_permissions": None,
                "dm_permission": True,
                "nsfw": False,
            }
            for index, command in enumerate(self.commands)
        ]
        return web.Response(body=json.dumps(synced).encode(), content_type="application/json")

    async def _interaction_callback(self, request: web.Request) -> web.Response:
        body = await request.json()
        async with self._sent_changed:
            self.callbacks.append(body)
            self._sent_changed.notify_all()
        # discord.py asks with_response=1: the callback object comes back.
        flags = (body.get("data") or {}).get("flags", 0)
        return _json(
            {
                "interaction": {
                    "id": request.match_info["interaction"],
                    "type": 2,
                    "response_message_loading": body["type"] == 5,
                    "response_message_ephemeral": bool(flags & 64),
                },
                "resource": {"type": body["type"]},
            }
        )

    async def _follow_up(self, request: web.Request) -> web.Response:
        # discord.py sends follow-ups as multipart when there are files, JSON otherwise.
        body = await request.json()
        channel_id = self._interaction_channels.get(request.match_info["token"], 0)
        message = message_payload(
            next(self._ids), body.get("content", ""), channel_id=channel_id, author=BOT
        )
        await self._record({**body, "channel_id": channel_id, "interaction": True})
        return _json(message)

    async def _typing(self, request: web.Request) -> web.Response:
        self.typing.append(request.match_info["channel"])
        return web.Response(status=204)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        async with self._sent_changed:
            self.connections += 1
            self._sent_changed.notify_all()
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 45000}})
        try:
            async for frame in ws:
                if frame.type != WSMsgType.TEXT:
                    continue
                payload = frame.json()
                if payload["op"] == 1:
                    await ws.send_json({"op": 11})
                elif payload["op"] == 2 and self.refuse_identify is not None:
                    await ws.close(code=self.refuse_identify)
                elif payload["op"] == 2:
                    await ws.send_json(
                        {
                            "op": 0,
                            "t": "READY",
                            "s": next(self._seq),
                            "d": {
                                "v": 10,
                                "user": BOT,
                                "guilds": [],
                                "session_id": "fake-session",
                                "resume_gateway_url": f"ws://{self._root}/gateway",
                                "application": {"id": str(BOT_ID), "flags": 0},
                            },
                        }
                    )
                    self._ready.set()
        finally:
            self._sockets.remove(ws)
        return ws


def role_payload(role_id: int, name: str, *, bot_id: int | None = None) -> dict[str, Any]:
    """A server role; with ``bot_id`` the role Discord manages for that bot."""
    role: dict[str, Any] = {
        "id": str(role_id),
        "name": name,
        "permissions": "0",
        "position": 0,
        "color": 0,
        "hoist": False,
        "managed": bot_id is not None,
        "mentionable": True,
        "flags": 0,
    }
    if bot_id is not None:
        role["tags"] = {"bot_id": str(bot_id)}
    return role


def message_payload(
    message_id: int,
    text: str,
    *,
    channel_id: int,
    author: dict[str, Any],
    guild_id: int | None = None,
    mentions: list[dict[str, Any]] | None = None,
    mention_roles: list[int] | None = None,
    referenced: dict[str, Any] | None = None,
    files: list[str] | None = None,
) -> dict[str, Any]:
    """A Discord message object, as the gateway and the API send it; ``files`` names its
    attachments."""
    data: dict[str, Any] = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": text,
        "timestamp": datetime.now(UTC).isoformat(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": mentions or [],
        "mention_roles": [str(role) for role in mention_roles or []],
        "attachments": [
            {
                "id": str(message_id + n + 1),
                "filename": name,
                "size": 1024,
                "url": f"https://cdn.example/{name}",
                "proxy_url": f"https://media.example/{name}",
                **({"content_type": kind} if (kind := mimetypes.guess_type(name)[0]) else {}),
            }
            for n, name in enumerate(files or [])
        ],
        "embeds": [],
        "pinned": False,
        "type": 19 if referenced else 0,
    }
    if guild_id is not None:
        data["guild_id"] = str(guild_id)
    if referenced is not None:
        data["referenced_message"] = referenced
        data["message_reference"] = {
            "message_id": referenced["id"],
            "channel_id": referenced["channel_id"],
        }
    return data
