"""The Discord channel: a bot on the Discord gateway, through discord.py.

Each message the bot should answer becomes a ``Turn`` (the channel id as the thread),
runs through the pipeline, and the reply goes back to the same channel. Discord renders
Markdown itself, so the model's text passes through unchanged, split at Discord's 2000
character limit on line boundaries. In servers, ``group_policy = "mention"`` answers only
messages that mention the bot, reply to it, or are commands; a server reply quotes the
message it answers.

No discord.py type leaves this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC

import discord

from channels.base import ConversationLocks, answer_in_order
from middleware.errors import ChannelError, ConfigError
from middleware.types import Turn
from proxy.config import DiscordConfig
from proxy.services import Services

log = logging.getLogger(__name__)

MESSAGE_LIMIT = 2000
# How long start() waits for the gateway's READY before giving up.
_READY_TIMEOUT = 30.0
_EMPTY_REPLY = "[the LLM's reply had no text]"
# The model's text must never ping @everyone, roles or users by accident.
_NO_PINGS = discord.AllowedMentions.none()


def discord_parts(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """``text`` as Discord messages of at most ``limit`` characters, split on line
    boundaries; a single line longer than ``limit`` is cut where it must be."""
    parts: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:
            if current:
                parts.append(current)
                current = ""
            parts.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) <= limit:
            current = candidate
        else:
            parts.append(current)
            current = line
    parts.append(current)
    return [part for part in (p.strip("\n") for p in parts) if part.strip()]


class DiscordChannel:
    """A Discord bot serving DMs and server channels."""

    name = "discord"

    def __init__(
        self,
        services: Services,
        settings: DiscordConfig | None = None,
        *,
        client: discord.Client | None = None,
    ) -> None:
        self._services = services
        self._settings = settings or services.config.channels.discord
        intents = discord.Intents.default()
        intents.message_content = True
        # Reconnects are discord.py's job; the relay only starts and stops it.
        self._client = client or discord.Client(intents=intents, allowed_mentions=_NO_PINGS)
        self._client.event(self.on_message)
        self._task: asyncio.Task[None] | None = None
        self._running = False
        self._turns: set[asyncio.Task[None]] = set()
        # One turn at a time per channel, so history and replies keep the messages' order.
        self._locks = ConversationLocks()

    @property
    def bot_id(self) -> int:
        user = self._client.user
        return user.id if user is not None else 0

    async def start(self) -> None:
        """Log in (checks the token), connect to the gateway, return once READY."""
        client = self._client
        try:
            await client.login(self._settings.bot_token.get_secret_value())
        except discord.LoginFailure:
            await client.close()
            raise ConfigError(
                "channels.discord.bot_token was rejected by Discord; "
                "check the bot token in the Developer Portal"
            ) from None
        except (discord.HTTPException, OSError) as exc:
            await client.close()
            raise ChannelError(f"cannot reach the Discord API: {exc}; check the network") from exc
        self._task = asyncio.create_task(client.connect(), name="discord-gateway")
        ready = asyncio.create_task(client.wait_until_ready())
        try:
            done, _ = await asyncio.wait(
                {ready, self._task}, timeout=_READY_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
            )
            if ready not in done:
                error = self._task.exception() if self._task in done else None
                if isinstance(error, discord.PrivilegedIntentsRequired):
                    raise ConfigError(
                        "Discord refused the message content intent; turn on "
                        '"Message Content Intent" for the bot in the Developer Portal'
                    ) from None
                raise ChannelError(
                    f"the Discord gateway did not become ready: {error or 'timed out'}"
                ) from error
        except BaseException:
            ready.cancel()
            await self._shut()
            raise
        self._running = True
        log.info("discord channel connected as %s", client.user)

    async def stop(self) -> None:
        """Stop receiving, let turns in flight finish, close the gateway and HTTP pool."""
        if self._task is None:
            return
        await self._shut()
        log.info("discord channel stopped")

    async def send(self, thread_id: str, text: str, *, reply_to: int | None = None) -> None:
        """Send ``text`` (Markdown) to channel ``thread_id``, split to Discord's limit; the
        first part replies to message ``reply_to``."""
        if self._client.is_closed():
            raise ChannelError("the discord channel is not running; start it first")
        target = self._client.get_partial_messageable(int(thread_id))
        for index, part in enumerate(discord_parts(text) or [_EMPTY_REPLY]):
            reference = (
                target.get_partial_message(reply_to).to_reference(fail_if_not_exists=False)
                if reply_to is not None and index == 0
                else None
            )
            try:
                if reference is None:
                    await target.send(part, allowed_mentions=_NO_PINGS)
                else:
                    await target.send(
                        part, reference=reference, allowed_mentions=_NO_PINGS, mention_author=False
                    )
            except discord.HTTPException as exc:
                # discord.py already waited out rate limits; this is a real refusal.
                raise ChannelError(
                    f"Discord refused a reply to channel {thread_id}: {exc}"
                ) from exc

    def to_turn(self, message: discord.Message) -> Turn | None:
        """The ``Turn`` for ``message``, or ``None`` when the bot should not answer it."""
        author = message.author
        if author.bot or author.id == self.bot_id or not message.content:
            return None
        if not self._addressed(message):
            return None
        group = not isinstance(message.channel, discord.DMChannel)
        text = message.content
        return Turn(
            channel=self.name,
            thread_id=str(message.channel.id),
            user_id=str(author.id),
            text=self._without_mention(text) if group else text,
            received_at=message.created_at.astimezone(UTC),
            body={},
            chat_type="group" if group else "dm",
            display_name=author.display_name or author.name,
        )

    async def on_message(self, message: discord.Message) -> None:
        """discord.py's event: answer ``message`` if it is for the bot."""
        turn = self.to_turn(message) if self._running else None
        if turn is None:
            return
        task = asyncio.current_task()
        if task is not None:
            self._turns.add(task)
        try:
            await self._handle(message, turn)
        except ChannelError as exc:
            log.error("discord: %s", exc)
        finally:
            if task is not None:
                self._turns.discard(task)

    async def _handle(self, message: discord.Message, turn: Turn) -> None:
        await answer_in_order(
            self._services,
            turn,
            lock=self._locks(turn.thread_id),
            history_limit=self._settings.history_messages,
            typing=lambda: self._keep_typing(message),
            deliver=lambda text: self.send(
                turn.thread_id,
                text,
                reply_to=message.id if turn.chat_type == "group" else None,
            ),
        )

    def _addressed(self, message: discord.Message) -> bool:
        """Whether a message is for this bot: always in DMs; in servers by the policy."""
        if isinstance(message.channel, discord.DMChannel):
            return True
        if message.content.startswith("/") or self._settings.group_policy == "all":
            return True
        if any(user.id == self.bot_id for user in message.mentions):
            return True
        replied = message.reference.resolved if message.reference is not None else None
        return isinstance(replied, discord.Message) and replied.author.id == self.bot_id

    def _without_mention(self, text: str) -> str:
        """Drop a leading "@bot" the user typed only to address the bot."""
        for handle in (f"<@{self.bot_id}>", f"<@!{self.bot_id}>"):
            if text.startswith(handle):
                return text[len(handle) :].lstrip(" ,:") or text
        return text

    async def _keep_typing(self, message: discord.Message) -> None:
        """Show "typing…" in the channel until cancelled."""
        try:
            async with message.channel.typing():
                await asyncio.Event().wait()
        except discord.HTTPException as exc:
            # Cosmetic: the reply matters, the indicator does not.
            log.debug("typing indicator failed: %s", exc)

    async def _shut(self) -> None:
        # In stages: stop taking new messages, let turns in flight finish (the runner
        # bounds stop() with the shutdown timeout), then close the gateway and the pool.
        self._running = False
        if self._turns:
            await asyncio.gather(*self._turns, return_exceptions=True)
        await self._client.close()
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
