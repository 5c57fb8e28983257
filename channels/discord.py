"""The Discord channel: a bot on the Discord gateway, through discord.py.

Each message the bot should answer becomes a ``Turn`` (the channel or thread id as the
thread), runs through the pipeline, and the reply goes back to the same channel. Discord
renders Markdown itself, so the model's text passes through unchanged, split at Discord's
2000 character limit on line boundaries with code blocks kept whole. In servers,
``group_policy = "mention"`` answers only messages that mention the bot (its user, or the
role Discord manages for it in the server), reply to it, or are relay commands; a server
reply quotes the message it answers. Mentions reach the model as people read them
(``@Ada``, ``@moderators``, ``#general``), named from what Discord resolved with the
message; the model's reply never pings anyone. A timestamp (``<t:1790000000:R>``, shown
to each reader in their own zone) reaches the model as its instant in UTC
(``2026-09-21 14:13:20 UTC``), a server's emoji as ``:name:``, a slash command's mention
(``</tz:id>``) as the ``/tz`` Discord shows. Files and stickers are
not passed on: text sent with them is, marked as such; without text they are recorded for
the clock as what they were (``[file, not passed on]``) and the sender is told the relay
reads only text (in a DM, or replying to the bot); a sticker alone reaches the model as
its name (``[sticker: Wave]``), a poll as its question and options, a forwarded message
as ``[forwarded] …`` (never run as the sender's command), as a message. A reply to
someone's message reaches the model after what it replies to, ``[replying to Bo: "meet
at 9"] …``, Bo named as the server shows them (their server nickname, when the reply pings
them) and as the model knows them there (``Cara (discord:103)`` beside another Cara); a
reply to the bot does not, its words being in the history. System messages
(a thread created, a pin) are not anyone's words and are ignored. A message is read once,
as first sent: an edit of one that was for the bot is answered, without asking the model,
that the edit was not read (``EDIT_NOT_READ``).

The relay's commands are also slash commands (synced at start): ``/tz Europe/Paris``
picked from Discord's menu runs the same text through the pipeline as the typed command,
and the answer comes back as the interaction's follow-up. ``allowed_user_ids`` and
``allowed_channel_ids`` restrict who and where (empty: everyone, everywhere).

No discord.py type leaves this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import discord
from discord import app_commands

from channels.base import (
    ATTACHED,
    EDIT_NOT_READ,
    ConversationLocks,
    MediaKind,
    SeenOnce,
    answer_in_order,
    is_relay_command,
    media_only_text,
    member_left,
    observe,
    observe_media_only,
    utc_instant_text,
    with_reply_context,
)
from middleware.commands.catalog import COMMANDS
from middleware.errors import ChannelError, ConfigError, ReplyNotDelivered, StoreError
from middleware.identity import thread_key, user_key
from middleware.locales import babel_locale
from middleware.quoting import forwarded
from middleware.types import Turn
from proxy.config import DiscordConfig
from proxy.services import Services

log = logging.getLogger(__name__)

MESSAGE_LIMIT = 2000
# How long start() waits for the gateway's READY before giving up.
_READY_TIMEOUT = 30.0
# discord.py holds READY back until no server has arrived for this long (default 2 s) to
# fill its caches; the relay needs none of them (it answers through partial channels), and
# servers arriving later are still cached, so it starts promptly.
_GUILD_READY_TIMEOUT = 0.1
_NOT_ALLOWED = "This bot doesn't answer you here (the relay's allow-lists)."
_STOPPING = "The relay is restarting; try again in a moment."
_ARGUMENT_HELP = "What follows the command, e.g. Europe/Paris for /tz"
_EMPTY_REPLY = "[the LLM's reply had no text]"
# The model's text must never ping @everyone, roles or users by accident.
_NO_PINGS = discord.AllowedMentions.none()
# Discord's error code for a reply the bot may not make: it lacks Read Message History.
_CANNOT_REPLY = 160002


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
# A user (``<@id>``, ``<@!id>``), role (``<@&id>``) or channel (``<#id>``) mention.
_MENTION = re.compile(r"<(@!?|@&|#)(\d+)>")
# A timestamp: seconds since 1970 (UTC), and how Discord shows it to each reader, in their
# own zone (``F`` a full date, ``R`` "in 3 hours", ...).
_TIMESTAMP = re.compile(r"<t:(-?\d{1,17})(?::[tTdDfFR])?>")
# A server's own emoji (``<:name:id>``), or an animated one (``<a:name:id>``).
_CUSTOM_EMOJI = re.compile(r"<a?:(\w+):\d+>")
# A slash command's mention (``</tz:id>``, a subcommand ``</tz set:id>``, one in a group
# ``</tz zone set:id>``), which Discord shows as a clickable ``/tz``.
_COMMAND_MENTION = re.compile(r"</([-\w]{1,32}(?: [-\w]{1,32}){0,2}):\d+>")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def readable_mentions(
    text: str,
    *,
    users: dict[int, str],
    roles: dict[int, str] | None = None,
    channels: dict[int, str] | None = None,
) -> str:
    """``text`` with Discord's mention markup written as a reader sees it: ``@name`` for
    users and roles, ``#name`` for channels, named from the given ids; a mention of an id
    not given is left as it is (a model can still tell it is a mention)."""
    names = {"@": users, "@!": users, "@&": roles or {}, "#": channels or {}}

    def name(found: re.Match[str]) -> str:
        kind, known = found.group(1), names[found.group(1)].get(int(found.group(2)))
        if known is None:
            return found.group(0)
        return f"#{known}" if kind == "#" else f"@{known}"

    return _MENTION.sub(name, text)


def readable_markup(text: str) -> str:
    """``text`` with Discord's timestamp, custom emoji and command markup written as a
    reader sees it: a timestamp as the instant in UTC, named (``2026-09-21 14:13 UTC``,
    seconds only when there are some), whatever style it asked for; an emoji as
    ``:name:``; a slash command's mention as the command (``/tz``, ``/tz set``).

    A timestamp is written in UTC, not in the speaker's zone: the channel builds the turn
    before the clock stage decides which zone is the speaker's, and an instant with its
    zone named is read as that instant whatever the reader's zone. Markup that is not a
    valid timestamp (``<t:abc>``, a year Python cannot hold) is left as it is."""
    text = _COMMAND_MENTION.sub(r"/\1", text)
    return _CUSTOM_EMOJI.sub(r":\1:", _TIMESTAMP.sub(_utc_instant, text))


def _utc_instant(found: re.Match[str]) -> str:
    try:
        instant = _EPOCH + timedelta(seconds=int(found.group(1)))
    except OverflowError:
        return found.group(0)
    return utc_instant_text(instant)


def discord_parts(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """``text`` as Discord messages of at most ``limit`` characters, split on line
    boundaries; a single line longer than ``limit`` is cut between words.

    A fenced code block split across messages is closed at the end of one and reopened,
    with its language, at the start of the next, so each message renders on its own.
    """
    parts: list[str] = []
    lines: list[str] = []
    size = 0
    # The opening line of the code block open at the end of ``lines``, and its marker.
    fence: str | None = None
    marker = ""
    fresh = True  # nothing but a reopened fence in ``lines`` yet

    def flush() -> None:
        nonlocal lines, size, fresh
        body = "\n".join(lines)
        parts.append(f"{body}\n{marker}" if fence is not None else body)
        lines = [fence] if fence is not None else []
        size = len(fence) if fence is not None else 0
        fresh = True

    for line in text.split("\n"):
        found = _FENCE.match(line)
        if fence is None and found:
            after, after_marker = line.strip(), found.group(1)
        elif fence is not None and found and _closes(line.strip(), marker):
            after, after_marker = None, ""
        else:
            after, after_marker = fence, marker
        # Room for the line itself once a part holds a reopened fence and its closing.
        room = max(limit - ((len(fence) + len(marker) + 2) if fence is not None else 0), 1)
        for piece in _cut(line, room):
            closing = len(after_marker) + 1 if after is not None else 0
            if size + (1 if lines else 0) + len(piece) + closing > limit and not fresh:
                flush()
            size += (1 if lines else 0) + len(piece)
            lines.append(piece)
            fresh = False
        fence, marker = after, after_marker
    if lines and not fresh:
        parts.append("\n".join(lines))
    return [part for part in (p.strip("\n") for p in parts) if part.strip()]


def _cut(line: str, room: int) -> list[str]:
    """``line`` in pieces of at most ``room`` characters, cut at the last space within
    reach (the space dropped), so a long paragraph is never split inside a word; a run
    with no space in the second half of a piece is cut where it must be."""
    pieces: list[str] = []
    while len(line) > room:
        at = line.rfind(" ", room // 2, room + 1)
        if at == -1:
            pieces.append(line[:room])
            line = line[room:]
        else:
            pieces.append(line[:at])
            line = line[at + 1 :]
    pieces.append(line)
    return pieces


def _closes(line: str, marker: str) -> bool:
    """Whether ``line`` closes a block opened with ``marker`` (CommonMark: the same
    character, at least as many, nothing else)."""
    return len(line) >= len(marker) and set(line) == {marker[0]}


class DiscordChannel:
    """A Discord bot serving DMs, server channels and threads.

    The user's locale comes from their slash commands (the interaction's ``locale``, their
    client's language); a message carries none, so a user who only writes keeps the one
    last seen, or none. A server's ``preferred_locale`` is not taken as its members':
    it is the server's language, often left at Discord's default ("en-US"), and a
    member's locale stays theirs on every channel (a linked Telegram account included).
    Nor is it needed for times: ``<t:…>`` timestamps are shown in each reader's own
    client language; only a date-only markup is written as text.
    """

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
        intents.members = self._settings.member_events
        # Reconnects are discord.py's job; the relay only starts and stops it.
        self._client = client or discord.Client(
            intents=intents,
            allowed_mentions=_NO_PINGS,
            guild_ready_timeout=_GUILD_READY_TIMEOUT,
            # No message cache: the relay reads no cached message, and the cached ones
            # would keep each author's User alive in discord.py's user cache, where a
            # member's new display name never reaches it (without the members intent,
            # nothing updates a cached User): their messages would keep the old name.
            max_messages=None,
        )
        self._client.event(self.on_message)
        self._client.event(self.on_raw_message_edit)
        self._client.event(self.on_raw_member_remove)
        self._tree: app_commands.CommandTree[discord.Client] = app_commands.CommandTree(
            self._client
        )
        for command, description in COMMANDS:
            self._tree.add_command(self._slash_command(command, description))
        self._tree.error(self._on_tree_error)
        self._task: asyncio.Task[None] | None = None
        self._running = False
        self._turns: set[asyncio.Task[None]] = set()
        # One turn at a time per channel, so history and replies keep the messages' order.
        self._locks = ConversationLocks()
        self._edits_told = SeenOnce()

    @property
    def bot_id(self) -> int:
        user = self._client.user
        return user.id if user is not None else 0

    async def start(self) -> None:
        """Log in (checks the token), connect to the gateway, return once READY with the
        slash commands synced."""
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
                    raise ConfigError(self._intents_advice()) from None
                raise ChannelError(
                    f"the Discord gateway did not become ready: {error or 'timed out'}"
                ) from error
        except BaseException:
            ready.cancel()
            await self._shut()
            raise
        self._running = True
        self._task.add_done_callback(self._gateway_ended)
        await self._sync_commands()
        log.info("discord channel connected as %s", client.user)

    async def stop(self) -> None:
        """Stop receiving, let turns in flight finish, close the gateway and HTTP pool."""
        if self._task is None:
            return
        await self._shut()
        log.info("discord channel stopped")

    async def send(self, thread_id: str, text: str, *, reply_to: int | None = None) -> None:
        """Send ``text`` (Markdown) to channel ``thread_id``, split to Discord's limit; the
        first part replies to message ``reply_to``. Raises ``ReplyNotDelivered`` when the
        first part could not be sent (nothing reached the channel), ``ChannelError`` when a
        later one could not."""
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
                try:
                    await _post(target, part, reference)
                except discord.Forbidden as exc:
                    if reference is None or exc.code != _CANNOT_REPLY:
                        raise
                    # Without "Read Message History" the bot may post but not reply: the
                    # answer goes out unquoted rather than not at all.
                    log.warning(
                        "discord: cannot quote the message answered in channel %s (give the "
                        "bot Read Message History there); answering without the quote",
                        thread_id,
                    )
                    await _post(target, part, None)
            except discord.Forbidden as exc:
                raise _refused(index)(
                    f"Discord refused a reply to channel {thread_id}: {exc}; give the bot "
                    '"Send Messages" there ("Send Messages in Threads" for a thread)'
                ) from exc
            except (discord.HTTPException, aiohttp.ClientError) as exc:
                # discord.py already waited out rate limits (and retried 5xx answers);
                # this is a real refusal, or Discord could not be reached.
                raise _refused(index)(
                    f"Discord refused a reply to channel {thread_id}: {exc}"
                ) from exc

    async def to_turn(self, message: discord.Message) -> Turn | None:
        """The ``Turn`` for ``message``, or ``None`` when the relay ignores it (a bot, a
        system message, nothing written or sent, or from outside the allow-lists). Files
        or stickers without text are ``media_only_text``. Whether to answer is
        ``_addressed``'s."""
        if not self._from_someone_allowed(message):
            return None
        author = message.author
        group = not isinstance(message.channel, discord.DMChannel)
        text = self._without_mention(message) if group else message.content
        if not text:
            shared, kind = shared_text(message), _media_kind(message)
            if shared is None and kind is None:
                return None
            text = shared or media_only_text(kind or "attachment")
        elif message.attachments or message.stickers:
            text = f"{ATTACHED} {text}"
        text = self._with_named_mentions(text, message)
        replied = await self._replied(message)
        if replied is not None:
            text = with_reply_context(text, *replied)
        return Turn(
            channel=self.name,
            thread_id=str(message.channel.id),
            user_id=str(author.id),
            text=text,
            received_at=message.created_at.astimezone(UTC),
            body={},
            chat_type="group" if group else "dm",
            display_name=author.display_name or author.name,
            mentioned_names=self._server_names(message) if group else {},
        )

    def slash_turn(
        self, interaction: discord.Interaction, command: str, argument: str | None
    ) -> Turn | None:
        """The ``Turn`` for a slash command: the same text the typed command would be;
        ``None`` when the allow-lists refuse the user or the channel."""
        user, channel_id = interaction.user, interaction.channel_id
        group = interaction.guild_id is not None
        if channel_id is None or not self._allowed(user.id, interaction.channel, group):
            return None
        text = f"/{command} {argument.strip()}" if argument and argument.strip() else f"/{command}"
        return Turn(
            channel=self.name,
            thread_id=str(channel_id),
            user_id=str(user.id),
            text=text,
            received_at=interaction.created_at.astimezone(UTC),
            body={},
            chat_type="group" if group else "dm",
            display_name=user.display_name or user.name,
            # The language of the user's Discord client (see the class's docstring).
            locale=babel_locale(interaction.locale.value),
        )

    async def on_message(self, message: discord.Message) -> None:
        """discord.py's event: answer ``message`` if it is for the bot, else record it."""
        if not self._running:
            return
        turn = await self.to_turn(message)
        if turn is None:
            return
        if not message.content and shared_text(message) is None:
            await self._tracked(self._media_only(message, turn))
            return
        if not self._addressed(message):
            # Not for the bot, yet the clock keeps every group message's time.
            async with self._locks(turn.thread_id):
                await self._tracked(observe(self._services, turn))
            return
        turn.addressed = turn.chat_type != "group" or self._called(message)
        await self._tracked(
            answer_in_order(
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
        )

    async def on_raw_message_edit(self, event: discord.RawMessageUpdateEvent) -> None:
        """discord.py's event: a message edited. The relay read it as first sent, and does
        not read it again; when it was for the bot, the sender is told so
        (``EDIT_NOT_READ``, once per message), without asking the model or recording
        anything. An update that is no edit (Discord adding a link's preview) is not."""
        message = event.message
        if not self._running or message.edited_at is None:
            return
        if await self.to_turn(message) is None or not self._addressed(message):
            return
        if not self._edits_told.first(str(message.id)):
            return
        dm = isinstance(message.channel, discord.DMChannel)
        await self._tracked(
            self.send(str(message.channel.id), EDIT_NOT_READ, reply_to=None if dm else message.id)
        )

    async def on_slash(
        self, interaction: discord.Interaction, command: str, argument: str | None
    ) -> None:
        """A slash command: acknowledge it at once (Discord allows 3 s), run the command
        text through the pipeline, post the answer as the interaction's follow-up."""
        turn = self.slash_turn(interaction, command, argument) if self._running else None
        if turn is None:
            refusal = _NOT_ALLOWED if self._running else _STOPPING
            await interaction.response.send_message(refusal, ephemeral=True)
            return
        await interaction.response.defer(thinking=True)
        await self._tracked(
            answer_in_order(
                self._services,
                turn,
                lock=self._locks(turn.thread_id),
                history_limit=self._settings.history_messages,
                # Discord shows "thinking…" until the follow-up arrives.
                typing=_idle,
                deliver=lambda text: self._follow_up(interaction, text),
            )
        )

    async def _media_only(self, message: discord.Message, turn: Turn) -> None:
        """A file or sticker without text (``turn``): recorded for the clock (the user did
        write), but nothing the model could read, so the sender is told so without asking
        it; in a DM, or in a server when it replies to the bot."""
        dm = turn.chat_type == "dm"

        async def tell(text: str) -> None:
            await self.send(turn.thread_id, text, reply_to=None if dm else message.id)

        addressed = dm or self._replies_to_bot(message)
        async with self._locks(turn.thread_id):
            await observe_media_only(self._services, turn, tell if addressed else None)

    async def on_raw_member_remove(self, event: discord.RawMemberRemoveEvent) -> None:
        """discord.py's event (with ``member_events``): a member left the server, or was
        removed; its channels' times leave them out until they write there again."""
        guild = self._client.get_guild(event.guild_id)
        if not self._running or guild is None or event.user.id == self.bot_id:
            return
        at = self._services.clock.now()
        for channel in (*guild.channels, *guild.threads):
            async with self._locks(str(channel.id)):
                await self._tracked(
                    member_left(self._services, self.name, str(channel.id), str(event.user.id), at)
                )

    def _gateway_ended(self, task: asyncio.Task[None]) -> None:
        """The gateway task's end. Once started, discord.py reconnects and resumes by
        itself, so while running the task ends only when Discord refused the session for
        good (an intent turned off, the token reset): the bot is then deaf, and the
        operator must hear why."""
        if not self._running or task.cancelled():
            return
        error = task.exception()
        if isinstance(error, discord.PrivilegedIntentsRequired):
            reason = self._intents_advice()
        else:
            reason = f"{error or 'closed'}; check the bot in the Developer Portal"
        log.error(
            "discord: the gateway connection ended and the bot no longer receives "
            "messages: %s, then restart the relay",
            reason,
        )

    def _intents_advice(self) -> str:
        members = (
            ' and "Server Members Intent" (or set channels.discord.member_events = false)'
            if self._settings.member_events
            else ""
        )
        return (
            f'Discord refused a privileged intent; turn on "Message Content Intent"{members} '
            "for the bot in the Developer Portal (Bot → Privileged Gateway Intents)"
        )

    async def _tracked(self, work: Awaitable[None]) -> None:
        """Run a turn so that stop() waits for it; log what the platform refused."""
        task = asyncio.current_task()
        if task is not None:
            self._turns.add(task)
        try:
            await work
        except ChannelError as exc:
            log.error("discord: %s", exc)
        finally:
            if task is not None:
                self._turns.discard(task)

    async def _follow_up(self, interaction: discord.Interaction, text: str) -> None:
        for part in discord_parts(text) or [_EMPTY_REPLY]:
            try:
                await interaction.followup.send(part, allowed_mentions=_NO_PINGS)
            except discord.HTTPException as exc:
                raise ChannelError(f"Discord refused a slash command's answer: {exc}") from exc

    def _slash_command(
        self, command: str, description: str
    ) -> app_commands.Command[Any, ..., None]:
        async def run(interaction: discord.Interaction, text: str | None = None) -> None:
            await self.on_slash(interaction, command, text)

        described = app_commands.describe(text=_ARGUMENT_HELP)(run)
        return app_commands.Command(name=command, description=description, callback=described)

    async def _sync_commands(self) -> None:
        """Register the slash commands with Discord (global, replacing what was there)."""
        try:
            synced = await self._tree.sync()
        except discord.HTTPException as exc:
            # The typed commands still work; only the menu is missing.
            log.warning("discord: could not register the slash commands: %s", exc)
            return
        log.info("discord: %d slash commands registered", len(synced))

    async def _on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        log.error("discord: slash command failed: %s", error, exc_info=error)

    def _from_someone_allowed(self, message: discord.Message) -> bool:
        """Whether ``message`` was written by a person the allow-lists admit, where they
        admit them: not a bot (this one included), not a system message."""
        author = message.author
        if author.bot or author.id == self.bot_id or message.is_system():
            return False
        group = not isinstance(message.channel, discord.DMChannel)
        return self._allowed(author.id, message.channel, group)

    def _allowed(self, user_id: int, channel: object, group: bool) -> bool:
        """The allow-lists: the user, and in servers the channel (or a thread's parent)."""
        users, channels = self._settings.allowed_user_ids, self._settings.allowed_channel_ids
        if users and user_id not in users:
            return False
        if not group or not channels:
            return True
        ids = (getattr(channel, "id", None), getattr(channel, "parent_id", None))
        return any(found in channels for found in ids if found is not None)

    def _addressed(self, message: discord.Message) -> bool:
        """Whether a message is for this bot: always in DMs; in servers by the policy."""
        if isinstance(message.channel, discord.DMChannel):
            return True
        if is_relay_command(message.content) or self._settings.group_policy == "all":
            return True
        return self._called(message)

    def _called(self, message: discord.Message) -> bool:
        """Whether a server message mentions the bot or replies to it (whatever the
        policy: under "all" the others are answered too, yet may be said to the room)."""
        return self._mentions_bot(message) or self._replies_to_bot(message)

    def _mentions_bot(self, message: discord.Message) -> bool:
        """Whether ``message`` mentions this bot: its user, or the role Discord manages for
        it in the server (people often pick that one from the mention list)."""
        if any(user.id == self.bot_id for user in message.mentions):
            return True
        own = _own_role(message)
        return own is not None and any(role.id == own.id for role in message.role_mentions)

    async def _replied(self, message: discord.Message) -> tuple[str, str] | None:
        """Who wrote the message ``message`` replies to, and what of it a reader sees
        above the reply; ``None`` for no reply, a reply to a message Discord did not send
        along (deleted), or one to the bot (its own words are in the history, and
        replying is how a server addresses it)."""
        reference = message.reference
        replied = reference.resolved if reference is not None else None
        if not isinstance(replied, discord.Message) or replied.author.id == self.bot_id:
            return None
        if replied.content:
            words = self._with_named_mentions(replied.content, replied)
        else:
            kind = _media_kind(replied)
            words = shared_text(replied) or (media_only_text(kind) if kind else "")
        if not words:
            return None
        return await self._member_label(message, replied.author), words

    async def _member_label(self, message: discord.Message, user: discord.abc.User) -> str:
        """``user`` named as the model knows them in ``message``'s channel: as the server
        shows them (``_server_member``; without it, as they went by there when they last
        wrote, which the store keeps), followed by their user key when another member there
        goes by that name, as their own messages are (``Store.speaker_label``): a reply to
        one of two "Cara"s says which one it quotes."""
        server_member = _server_member(message, user)
        shown = _display_name(server_member or user)
        if isinstance(message.channel, discord.DMChannel):
            return shown
        agent_id = self._services.config.server.agent_id
        chat = thread_key(agent_id, self.name, "group", str(message.channel.id))
        member = user_key(self.name, str(user.id))
        # The account's name is not the server's: with no member at hand, the store's.
        name = server_member.display_name if server_member is not None else None
        try:
            label = await self._services.store.speaker_label(chat, "group", member, name)
        except StoreError as exc:
            # The quote still names them as the server does; the reply is not lost for it.
            log.warning("discord: cannot tell namesakes apart in a reply's quote: %s", exc)
            return shown
        return label or shown

    def _replies_to_bot(self, message: discord.Message) -> bool:
        replied = message.reference.resolved if message.reference is not None else None
        return isinstance(replied, discord.Message) and replied.author.id == self.bot_id

    def _without_mention(self, message: discord.Message) -> str:
        """``message``'s text without a leading "@bot" (its user or its own role) the user
        typed only to address the bot."""
        text = message.content
        handles = [f"<@{self.bot_id}>", f"<@!{self.bot_id}>"]
        own = _own_role(message)
        if own is not None:
            handles.append(own.mention)
        for handle in handles:
            if text.startswith(handle):
                return text[len(handle) :].lstrip(" ,:") or text
        return text

    def _server_names(self, message: discord.Message) -> dict[str, str]:
        """The members ``message`` mentions, by user id, with the name the server shows
        them by: Discord sends each with their member (nickname included) in a server."""
        return {
            str(user.id): user.display_name
            for user in message.mentions
            if isinstance(user, discord.Member) and user.id != self.bot_id and not user.bot
        }

    def _with_named_mentions(self, text: str, message: discord.Message) -> str:
        """``text`` (from ``message``) with its mentions named as Discord resolved them with
        the message (never looked up: a lookup can fail, and costs a request). The bot's
        own role is named as the bot, like a mention of its user."""
        users = {user.id: user.display_name for user in message.mentions}
        roles = {role.id: role.name for role in message.role_mentions}
        own = _own_role(message)
        if own is not None and own.id in roles:
            me = message.guild.me if message.guild is not None else None
            roles[own.id] = users.get(self.bot_id) or _display_name(me or self._client.user)
        return readable_mentions(
            readable_markup(text),
            users=users,
            roles=roles,
            channels={channel.id: channel.name for channel in message.channel_mentions},
        )

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


async def _post(
    target: discord.PartialMessageable, part: str, reference: discord.MessageReference | None
) -> None:
    """Send ``part`` to ``target``, pinging no one; with ``reference``, as a reply to it."""
    if reference is None:
        await target.send(part, allowed_mentions=_NO_PINGS)
    else:
        await target.send(
            part, reference=reference, allowed_mentions=_NO_PINGS, mention_author=False
        )


def _refused(index: int) -> type[ChannelError]:
    """The error for a reply whose part ``index`` could not be sent: nothing of it reached
    the user when that was the first."""
    return ReplyNotDelivered if index == 0 else ChannelError


def _own_role(message: discord.Message) -> discord.Role | None:
    """The role Discord manages for this bot in ``message``'s server (``None`` in a DM,
    or while the server is not cached)."""
    return message.guild.self_role if message.guild is not None else None


def shared_text(message: discord.Message) -> str | None:
    """What a message without text that shares something the model can read says: a
    forwarded message's words, a poll's question and options, a sticker's name (what a
    reader sees of it). Only what
    Discord sent, in fixed words; ``None`` for anything else (files), which
    ``media_only_text`` records."""
    snapshot = message.message_snapshots[0] if message.message_snapshots else None
    if snapshot is not None and snapshot.content:
        # Someone else's words (Discord does not say whose): never run as the sender's
        # own command or clock directive.
        return forwarded(readable_markup(snapshot.content))
    if message.poll is not None:
        poll = message.poll
        options = " / ".join(answer.text for answer in poll.answers)
        return f'[shared a poll: "{poll.question}" — {options}]'
    if message.stickers and message.stickers[0].name:
        return f"[sticker: {message.stickers[0].name}]"
    return None


def _media_kind(message: discord.Message) -> MediaKind | None:
    """What a message's stickers or files are (its first file, for several)."""
    if message.stickers:
        return "sticker"
    if not message.attachments:
        return None
    first = message.attachments[0]
    if first.is_voice_message():
        return "voice note"
    kinds: dict[str, MediaKind] = {"image": "photo", "video": "video", "audio": "audio"}
    return kinds.get((first.content_type or "").partition("/")[0], "file")


def _server_member(message: discord.Message, user: discord.abc.User) -> discord.abc.User | None:
    """``user`` as ``message``'s server shows them, if it says: a message replied to
    carries its author's account only, without the server nickname; a reply that pings
    that author carries them among its mentions as a member, nickname included (and a
    server whose members are cached knows them)."""
    member = next((found for found in message.mentions if found.id == user.id), None)
    if member is None and message.guild is not None:
        member = message.guild.get_member(user.id)
    return member


def _display_name(user: discord.abc.User | None) -> str:
    return user.display_name if user is not None else "bot"


async def _idle() -> None:
    return None
