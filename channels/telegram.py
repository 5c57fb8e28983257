"""The Telegram channel: a bot on the Bot API, through python-telegram-bot.

Updates arrive by long polling, or (``mode = "webhook"``) as POSTs to the relay's own HTTP
server at ``/channels/telegram/<secret>``, checked against ``X-Telegram-Bot-Api-Secret-Token``
and fed to PTB's update queue. Each text message the bot should answer becomes a ``Turn``
(chat id as the thread, the forum topic as ``topic_id``), runs through the pipeline, and
the reply goes back to the same chat and topic. The model writes Markdown; it is sent as
plain text plus message entities, split at Telegram's limit (``channels.telegram_format``);
with ``stream_edits`` it is shown while written by editing one message (``channels.live``).

A photo or file is not passed on; its caption is, marked as coming with one. One without a
caption (a photo, sticker, voice note, file) is recorded for the clock as what it was
(``[photo, not passed on]``) and told, without asking the model, that the relay reads only
text: in a DM, or in a group when it replies to the bot. What is shared as data reaches the
model in words, as a message: a location as its coordinates, a place as its name and
address, a contact, a poll's question and options, a sticker's emoji, a die's roll. A
forwarded message reaches the model as ``[forwarded from Bo] …``: someone else's words,
never run as the sender's command or clock directive. A reply to someone's message reaches
it after what a reader sees above it, ``[replying to Bo: "meet at 9"] …`` (the part
quoted, if one was); a reply to the bot does not, its words being in the history. A
formatted date (a ``date_time`` entity, which Telegram shows each reader in their own zone)
reaches the model as its instant in UTC (``2026-09-21 14:13 UTC``); one shown as its own
words keeps them, with the instant after them. A link under words reaches it as ``words
(https://…)``.

In groups, ``group_policy = "mention"`` answers only messages that mention the bot, reply
to it, or are relay commands; the others are still recorded for the clock (``observe``).
Messages from outside the allow-lists are ignored altogether. A message is read once, as
first sent: an edit of one that was for the bot is answered, without asking the model, that
the edit was not read (``EDIT_NOT_READ``). The command menu (``setMyCommands``) is the
relay's command catalog.

No python-telegram-bot type leaves this module.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, timedelta
from typing import Any, TypeVar

import httpx
import telegramify_markdown
from aiohttp import web
from telegram import (
    Location,
    Message,
    MessageEntity,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatAction, ChatType, MessageEntityType
from telegram.error import BadRequest, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import AIORateLimiter, Application, ContextTypes, MessageHandler, filters

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
from channels.live import LiveMessage
from channels.telegram_format import MESSAGE_LIMIT, Part, telegram_parts
from middleware.commands.catalog import COMMANDS
from middleware.errors import ChannelError, ConfigError, ReplyNotDelivered
from middleware.locales import babel_locale
from middleware.quoting import forwarded
from middleware.types import Turn
from proxy.config import TelegramConfig
from proxy.services import Services
from proxy.webhooks import PREFIX

log = logging.getLogger(__name__)

# Telegram shows "typing…" for about five seconds per chat action.
_TYPING_EVERY = 4.0
_SEND_ATTEMPTS = 3
# Seconds before sending again after the Bot API could not be reached (times the attempt).
_NETWORK_PAUSE = 1.0
_EMPTY_REPLY = "[the LLM's reply had no text]"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# New messages, and edits of them (each answered only with ``EDIT_NOT_READ``).
_UPDATES = ["message", "edited_message"]
# Telegram allows about one edit of a message per second.
EDIT_INTERVAL = 1.0

T = TypeVar("T")


def _entity(entity: telegramify_markdown.MessageEntity) -> MessageEntity:
    return MessageEntity(
        type=entity.type,
        offset=entity.offset,
        length=entity.length,
        url=entity.url,
        language=entity.language,
        custom_emoji_id=entity.custom_emoji_id,
    )


class TelegramChannel:
    """A Telegram bot serving DMs, groups and forum topics."""

    name = "telegram"

    def __init__(
        self,
        services: Services,
        settings: TelegramConfig | None = None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._services = services
        self._settings = settings = settings or services.config.channels.telegram
        self._app: Application[Any, Any, Any, Any, Any, Any] | None = None
        self._bot_id = 0
        self._username = ""
        # One turn at a time per chat, so history and replies keep the messages' order.
        self._locks = ConversationLocks()
        self._edits_told = SeenOnce()
        # For throttling streamed edits; injectable so tests need not wait.
        self._monotonic = monotonic
        self._sleep = sleep
        self._allowed_users = frozenset(settings.allowed_user_ids)
        self._allowed_chats = frozenset(settings.allowed_chat_ids)
        # Where Telegram posts updates in webhook mode (registered by the channel runner).
        self.webhook_path: str | None = (
            webhook_path(settings.webhook_secret.get_secret_value())
            if settings.mode == "webhook"
            else None
        )

    async def start(self) -> None:
        """Check the token (getMe), register the command menu, then receive updates:
        poll in the background, or point Telegram's webhook at the relay."""
        settings = self._settings
        base_url = settings.base_url
        # httpx logs every request URL at INFO, and the URL holds the bot token.
        httpx_log = logging.getLogger("httpx")
        if httpx_log.level == logging.NOTSET:
            httpx_log.setLevel(logging.WARNING)
        builder = (
            Application.builder()
            .token(settings.bot_token.get_secret_value())
            .base_url(base_url)
            .base_file_url(_file_url(base_url))
            .concurrent_updates(True)
            # Telegram's flood limits (30 messages/s, 20/min per group) are kept by PTB's
            # limiter; a 429 that still happens is waited out by ``_call`` (no retries
            # here, so a retry is never doubled).
            .rate_limiter(AIORateLimiter(max_retries=0))
        )
        if self.webhook_path is not None:
            # Updates come through handle_webhook into the update queue; nothing polls.
            builder = builder.updater(None)
        app = builder.build()
        app.add_handler(
            MessageHandler(
                filters.UpdateType.MESSAGE & (filters.TEXT | filters.CAPTION), self._on_message
            )
        )
        app.add_handler(
            MessageHandler(
                filters.UpdateType.MESSAGE & filters.ATTACHMENT & ~filters.TEXT & ~filters.CAPTION,
                self._on_attachment_only,
            )
        )
        # A live location moving is an edit too: only edits of words are told.
        app.add_handler(
            MessageHandler(
                filters.UpdateType.EDITED_MESSAGE & (filters.TEXT | filters.CAPTION),
                self._on_edit,
            )
        )
        # A member leaving is a service message: the same "message" updates bring it.
        app.add_handler(
            MessageHandler(
                filters.UpdateType.MESSAGE & filters.StatusUpdate.LEFT_CHAT_MEMBER, self._on_left
            )
        )
        app.add_error_handler(self._on_error)
        try:
            await app.initialize()
        except TelegramError as exc:
            # getMe failed after the HTTP pool was opened: close it before giving up.
            await app.bot.shutdown()
            if isinstance(exc, InvalidToken):
                raise ConfigError(
                    "channels.telegram.bot_token was rejected by Telegram; "
                    "check the token @BotFather gave you"
                ) from None  # PTB's message repeats the token
            raise ChannelError(
                f"cannot reach the Telegram Bot API at {base_url}: {exc}; "
                "check the network or channels.telegram.base_url"
            ) from exc
        self._bot_id = app.bot.id
        self._username = app.bot.username
        try:
            await self._register_commands(app)
            await app.start()
            if self.webhook_path is None:
                updater = app.updater
                assert updater is not None  # the builder makes one unless told not to
                await updater.start_polling(
                    timeout=timedelta(seconds=settings.poll_timeout),
                    allowed_updates=_UPDATES,
                )
            else:
                # Running before Telegram learns the URL, so the first update finds us.
                self._app = app
                await self._set_webhook(app)
        except BaseException:
            self._app = None
            await _shut(app, webhook=False)
            raise
        self._app = app
        how = "polling" if self.webhook_path is None else "on its webhook"
        log.info("telegram channel running as @%s, %s", self._username, how)

    async def stop(self) -> None:
        """Stop receiving (deleting the webhook in webhook mode), let turns in flight
        finish, close the HTTP pool."""
        app, self._app = self._app, None
        if app is not None:
            await _shut(app, webhook=self.webhook_path is not None)
            log.info("telegram channel stopped")

    async def handle_webhook(self, request: web.Request) -> web.StreamResponse:
        """One update POSTed by Telegram: refused (403) without the right secret token,
        else handed to PTB's update queue and acknowledged at once."""
        expected = self._settings.webhook_secret.get_secret_value().encode()
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not expected or not hmac.compare_digest(given, expected):
            log.warning("telegram webhook: refused a request without the right secret token")
            return web.Response(status=403, text="wrong secret token")
        app = self._app
        if app is None:
            # Starting or stopping: Telegram delivers it again later.
            return web.Response(status=503, text="the telegram channel is not running")
        try:
            update = Update.de_json(await request.json(), app.bot)
        except (ValueError, TypeError, KeyError) as exc:
            log.warning("telegram webhook: not an update: %s", exc)
            return web.Response(status=400, text="not a Telegram update")
        await app.update_queue.put(update)
        return web.Response(text="ok")

    async def send(
        self,
        thread_id: str,
        text: str,
        *,
        topic_id: str | None = None,
        reply_to: int | None = None,
    ) -> None:
        """Send ``text`` (Markdown) to chat ``thread_id``, in ``topic_id`` if given, split to
        Telegram's limit; the first part replies to message ``reply_to``. Raises
        ``ReplyNotDelivered`` when the first part could not be sent (nothing reached the
        chat), ``ChannelError`` when a later one could not."""
        first, *rest = telegram_parts(text) or [(_EMPTY_REPLY, [])]
        try:
            await self._send_part(thread_id, first, topic_id=topic_id, reply_to=reply_to)
        except ChannelError as exc:
            raise ReplyNotDelivered(str(exc)) from exc
        for part in rest:
            await self._send_part(thread_id, part, topic_id=topic_id)

    def to_turn(self, message: Message) -> Turn | None:
        """The ``Turn`` for ``message``, or ``None`` when the bot ignores it (nothing a
        person wrote or sent, from a bot, or from outside the allow-lists). Media without a
        caption is ``media_only_text``. Whether to answer is ``_addressed``'s."""
        user = message.from_user
        caption = message.caption if message.text is None else None
        if message.text is not None:
            written: str | None = readable_text(message.text, message.entities)
        else:
            written = readable_text(caption, message.caption_entities) if caption else None
        text = written or shared_text(message) or _media_only(message)
        if user is None or user.is_bot or not text or not self._allowed(message):
            return None
        group = message.chat.type != ChatType.PRIVATE
        topic = message.message_thread_id if message.is_topic_message else None
        if group:
            text = self._without_mention(text)
        if caption:
            # The model is asked about something it cannot see, and must know.
            text = f"{ATTACHED} {text}"
        replied = self._replied(message)
        if replied is not None:
            text = with_reply_context(text, *replied)
        if message.forward_origin is not None:
            # Someone else's words: shown as such to the model, and never run as the
            # sender's own command or clock directive.
            text = forwarded(text, _origin_name(message.forward_origin))
        return Turn(
            channel=self.name,
            thread_id=str(message.chat.id),
            user_id=str(user.id),
            text=text,
            received_at=message.date.astimezone(UTC),
            body={},
            chat_type="group" if group else "dm",
            display_name=user.full_name or user.username,
            topic_id=str(topic) if topic is not None else None,
            # The language of the sender's Telegram app ("de", "pt-br"), on every message.
            locale=babel_locale(user.language_code),
        )

    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        if message is None:
            return
        turn = self.to_turn(message)
        if turn is None:
            return
        lock = self._locks(f"{turn.thread_id}:{turn.topic_id or ''}")
        if not self._addressed(message):
            # Not for the bot, yet the clock keeps every group message's time.
            async with lock:
                await observe(self._services, turn)
            return
        reply_to = message.message_id if turn.chat_type == "group" else None
        turn.addressed = reply_to is None or self._called(message)
        await answer_in_order(
            self._services,
            turn,
            lock=lock,
            history_limit=self._settings.history_messages,
            typing=lambda: self._keep_typing(message),
            deliver=lambda text: self.send(
                turn.thread_id, text, topic_id=turn.topic_id, reply_to=reply_to
            ),
            live=self._live(turn, reply_to) if self._settings.stream_edits else None,
        )

    async def _on_attachment_only(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A photo, sticker, voice note or file without a caption: recorded for the clock
        (the user did write), but nothing the model could read, so the sender is told so
        without asking it; in a DM, or in a group when it replies to the bot (other media
        in groups are not for the bot). A location, place, contact, poll, a sticker with
        its emoji or a die (``shared_text``) says something in words: a message like any
        other."""
        message = update.message
        if message is not None and shared_text(message) is not None:
            # What was shared says something in words: a message like any other.
            await self._on_message(update, context)
            return
        turn = self.to_turn(message) if message is not None else None
        if message is None or turn is None:
            return
        group = turn.chat_type == "group"

        async def tell(text: str) -> None:
            reply_to = message.message_id if group else None
            await self.send(turn.thread_id, text, topic_id=turn.topic_id, reply_to=reply_to)

        addressed = not group or self._replies_to_bot(message)
        async with self._locks(f"{turn.thread_id}:{turn.topic_id or ''}"):
            await observe_media_only(self._services, turn, tell if addressed else None)

    async def _on_edit(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A message edited: the relay read it as first sent, and does not read it again.
        When it was for the bot, the sender is told so (``EDIT_NOT_READ``, once per
        message, replying to it), without asking the model or recording anything."""
        message = update.edited_message
        if message is None or self.to_turn(message) is None or not self._addressed(message):
            return
        if not self._edits_told.first(f"{message.chat.id}:{message.message_id}"):
            return
        topic = message.message_thread_id if message.is_topic_message else None
        await self.send(
            str(message.chat.id),
            EDIT_NOT_READ,
            topic_id=str(topic) if topic is not None else None,
            reply_to=message.message_id,
        )

    async def _on_left(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A member left the group (or was removed): the group's times leave them out
        until they write there again."""
        message = update.message
        gone = message.left_chat_member if message is not None else None
        if message is None or gone is None or gone.id == self._bot_id:
            return
        chat = message.chat.id
        if self._allowed_chats and chat not in self._allowed_chats:
            return
        async with self._locks(f"{chat}:"):
            at = message.date.astimezone(UTC)
            await member_left(self._services, self.name, str(chat), str(gone.id), at)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        error = context.error
        if isinstance(error, ChannelError):
            log.error("telegram: %s", error)
        else:
            log.error("telegram: handling an update failed", exc_info=error)

    def _allowed(self, message: Message) -> bool:
        """The allow-lists (the same rule as Discord's): the sender must be listed in
        ``allowed_user_ids``, and a group in ``allowed_chat_ids``; an empty list allows
        all, and DMs are governed by ``allowed_user_ids`` alone."""
        user = message.from_user
        if self._allowed_users and (user is None or user.id not in self._allowed_users):
            return False
        if message.chat.type == ChatType.PRIVATE or not self._allowed_chats:
            return True
        return message.chat.id in self._allowed_chats

    def _addressed(self, message: Message) -> bool:
        """Whether a message is for this bot: always in DMs; in groups by the policy."""
        if message.chat.type == ChatType.PRIVATE:
            return True
        text = message.text or message.caption or ""
        if text.startswith("/"):
            # "/time@other_bot" is for another bot, "/time@this_bot" for this one; a bare
            # command is for every bot that knows it (the relay's own, "/roll" is not).
            _, at, target = text.split(maxsplit=1)[0].partition("@")
            if at:
                return target.lower() == self._username.lower()
            if is_relay_command(text):
                return True
        return self._settings.group_policy == "all" or self._called(message)

    def _called(self, message: Message) -> bool:
        """Whether a group message mentions the bot or replies to it (whatever the policy:
        under "all" the others are answered too, yet may be said to the room)."""
        if self._replies_to_bot(message):
            return True
        kinds: list[str | None] = [MessageEntityType.MENTION, MessageEntityType.TEXT_MENTION]
        mentions = (
            message.parse_entities(kinds)
            if message.text is not None
            else message.parse_caption_entities(kinds)
        )
        for entity, value in mentions.items():
            if entity.type == MessageEntityType.MENTION:
                if value[1:].lower() == self._username.lower():
                    return True
            elif entity.user is not None and entity.user.id == self._bot_id:
                return True
        return False

    def _replied(self, message: Message) -> tuple[str, str] | None:
        """Who wrote the message ``message`` replies to, and what of it a reader sees
        above the reply (the part quoted, if one was); ``None`` for no reply, a reply to
        the bot that quotes nothing (its own words are in the history, and replying is how
        a group addresses it), or the forum topic's root every topic message "replies" to.
        A part of the bot's words quoted is the model's own: ``you``."""
        replied = message.reply_to_message
        if replied is None:
            return None
        if self._replies_to_bot(message):
            return ("you", message.quote.text) if message.quote is not None else None
        if replied.from_user is not None and replied.from_user.id == self._bot_id:
            return None  # the topic's root, when the bot opened the topic
        if message.is_topic_message and replied.forum_topic_created:
            return None
        if message.quote is not None:
            words: str | None = message.quote.text
        elif replied.text is not None:
            words = readable_text(replied.text, replied.entities)
        else:
            caption = replied.caption
            words = readable_text(caption, replied.caption_entities) if caption else None
        words = words or shared_text(replied) or _media_only(replied)
        if not words:
            return None
        if replied.forward_origin is not None:
            # A forward's words are its author's, not those of whoever forwarded it.
            speaker = _origin_name(replied.forward_origin)
        elif replied.from_user is not None:
            speaker = replied.from_user.full_name
        elif replied.sender_chat is not None:
            speaker = replied.sender_chat.title or "a channel"
        else:
            speaker = "someone"
        return speaker, words

    def _replies_to_bot(self, message: Message) -> bool:
        replied = message.reply_to_message
        if replied is None or replied.from_user is None:
            return False
        # In forum topics every message "replies" to the topic's first message.
        is_topic_root = message.is_topic_message and replied.forum_topic_created
        return replied.from_user.id == self._bot_id and not is_topic_root

    def _without_mention(self, text: str) -> str:
        """Drop a leading "@bot" the user typed only to address the bot."""
        handle = f"@{self._username}"
        if not text.lower().startswith(handle.lower()):
            return text
        rest = text[len(handle) :].lstrip(" ,:")
        return rest or text

    async def _keep_typing(self, message: Message) -> None:
        """Show "typing…" in the chat until cancelled (Telegram drops it after 5 s)."""
        while True:
            try:
                await message.get_bot().send_chat_action(
                    message.chat.id,
                    ChatAction.TYPING,
                    message_thread_id=message.message_thread_id
                    if message.is_topic_message
                    else None,
                )
            except TelegramError as exc:
                # Cosmetic: the reply matters, the indicator does not.
                log.debug("typing indicator failed: %s", exc)
            await asyncio.sleep(_TYPING_EVERY)

    def _live(self, turn: Turn, reply_to: int | None) -> LiveMessage[int]:
        """The reply to ``turn`` shown while written: previews are the first message's
        worth of the text so far; the final text replaces them and any rest follows."""
        shown: list[Part] = []

        async def start(text: str) -> int:
            part = _preview(text)
            message_id = await self._send_part(
                turn.thread_id, part, topic_id=turn.topic_id, reply_to=reply_to, retry=False
            )
            shown[:] = [part]
            return message_id

        async def edit(message_id: int, text: str) -> None:
            part = _preview(text)
            if shown != [part]:
                await self._edit_part(turn.thread_id, message_id, part, retry=False)
                shown[:] = [part]

        async def finish(message_id: int | None, text: str) -> None:
            if message_id is None:
                await self.send(turn.thread_id, text, topic_id=turn.topic_id, reply_to=reply_to)
                return
            first, *rest = telegram_parts(text) or [(_EMPTY_REPLY, [])]
            if shown != [first]:
                await self._edit_part(turn.thread_id, message_id, first)
            for part in rest:
                await self._send_part(turn.thread_id, part, topic_id=turn.topic_id)

        return LiveMessage(
            start=start,
            edit=edit,
            finish=finish,
            interval=EDIT_INTERVAL,
            monotonic=self._monotonic,
            sleep=self._sleep,
        )

    async def _register_commands(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Offer the relay's commands in Telegram's menu and autocomplete."""
        try:
            await app.bot.set_my_commands(COMMANDS)
        except TelegramError as exc:
            # Cosmetic: typed commands work without the menu.
            log.warning("telegram: could not register the command menu: %s", exc)

    async def _set_webhook(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        assert self.webhook_path is not None
        url = self._settings.webhook_url + self.webhook_path
        try:
            await app.bot.set_webhook(
                url,
                secret_token=self._settings.webhook_secret.get_secret_value(),
                allowed_updates=_UPDATES,
            )
        except TelegramError as exc:
            raise ChannelError(
                f"Telegram refused the webhook at {self._settings.webhook_url}/…: {exc}; "
                "check channels.telegram.webhook_url (a public https URL that reaches "
                "this relay)"
            ) from exc

    async def _send_part(
        self,
        thread_id: str,
        part: Part,
        *,
        topic_id: str | None = None,
        reply_to: int | None = None,
        retry: bool = True,
    ) -> int:
        """Send one part; return its message id. Formatting Telegram refuses is dropped:
        the part goes again as plain text."""
        app = self._running()
        reply = ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None

        async def send(text: str, entities: list[MessageEntity]) -> int:
            sent: Message = await self._call(
                lambda: app.bot.send_message(
                    chat_id=int(thread_id),
                    text=text,
                    entities=entities,
                    message_thread_id=int(topic_id) if topic_id else None,
                    reply_parameters=reply,
                ),
                thread_id,
                retry=retry,
            )
            return sent.message_id

        return await _formatted_or_plain(send, part, thread_id)

    async def _edit_part(
        self, thread_id: str, message_id: int, part: Part, *, retry: bool = True
    ) -> None:
        """Show ``part`` in message ``message_id``, as plain text if Telegram refuses its
        formatting."""
        app = self._running()

        async def edit(text: str, entities: list[MessageEntity]) -> None:
            try:
                await self._call(
                    lambda: app.bot.edit_message_text(
                        text, chat_id=int(thread_id), message_id=message_id, entities=entities
                    ),
                    thread_id,
                    retry=retry,
                )
            except ChannelError as exc:
                # Telegram refuses an edit that changes nothing; the message is right already.
                if not isinstance(exc.__cause__, BadRequest) or "not modified" not in str(exc):
                    raise

        await _formatted_or_plain(edit, part, thread_id)

    async def _call(self, request: Callable[[], Awaitable[T]], chat: str, *, retry: bool) -> T:
        """Make a Bot API request; when ``retry``, up to ``_SEND_ATTEMPTS`` times, waiting
        out flood control (``retry_after``) or, after a failure that surely showed the user
        nothing (``_not_delivered``), a short pause. Failures become ``ChannelError``."""
        attempts = _SEND_ATTEMPTS if retry else 1
        for attempt in range(1, attempts + 1):
            try:
                return await request()
            except RetryAfter as exc:
                if attempt == attempts:
                    raise ChannelError(
                        f"Telegram kept rate-limiting replies to chat {chat}"
                    ) from exc
                await self._sleep(_seconds(exc.retry_after))
            except TelegramError as exc:
                if not _not_delivered(exc):
                    raise ChannelError(f"Telegram refused a reply to chat {chat}: {exc}") from exc
                if attempt == attempts:
                    raise ChannelError(
                        f"could not deliver a reply to chat {chat}: the Telegram Bot API "
                        f"failed {attempts} times ({exc}); check the network"
                    ) from exc
                pause = _NETWORK_PAUSE * attempt
                log.warning(
                    "telegram: a reply to chat %s failed (%s); trying again in %gs",
                    chat,
                    exc,
                    pause,
                )
                await self._sleep(pause)
        raise AssertionError("unreachable")

    def _running(self) -> Application[Any, Any, Any, Any, Any, Any]:
        if self._app is None:
            raise ChannelError("the telegram channel is not running; start it first")
        return self._app


def readable_text(text: str, entities: Sequence[MessageEntity]) -> str:
    """``text`` as a reader of the message reads it, from its ``entities``: each formatted
    date written as its instant in UTC, named (``2026-09-21 14:13 UTC``, seconds only when
    there are some), and each link under words (``text_link``) followed by its address,
    ``word (https://…)``, which a reader learns by tapping it and the model otherwise
    never would. A mention of someone without a username (``text_mention``) is their
    name, as shown; so is a link to a user (``tg://user?id=…``), Markdown's way to
    mention one.

    Telegram shows a formatted date to each reader in their own zone, in place of the words
    under it, which were the sender's (often in the sender's zone): those words give way to
    the instant. A date with no format shows its words as they are (the date only on a
    tap), so they stay, with the instant after them. UTC, not the speaker's zone: the
    channel builds the turn before the clock stage decides which zone is the speaker's,
    and an instant with its zone named is read as that instant."""
    rewritten = sorted(
        (entity for entity in entities if _rewritten(entity)), key=lambda e: e.offset
    )
    if not rewritten:
        return text
    # Entity offsets and lengths count UTF-16 code units.
    encoded = text.encode("utf-16-le")
    pieces: list[str] = []
    done = 0
    for entity in rewritten:
        start, end = entity.offset * 2, (entity.offset + entity.length) * 2
        if start < done:
            continue  # inside one rewritten already
        words = encoded[start:end].decode("utf-16-le")
        pieces.append(encoded[done:start].decode("utf-16-le"))
        pieces.append(_as_read(entity, words))
        done = end
    pieces.append(encoded[done:].decode("utf-16-le"))
    return "".join(pieces)


def _rewritten(entity: MessageEntity) -> bool:
    """Whether ``readable_text`` writes ``entity``'s words otherwise than they are."""
    if entity.type == MessageEntityType.DATE_TIME:
        return entity.unix_time is not None
    return (
        entity.type == MessageEntityType.TEXT_LINK
        and entity.url is not None
        and not entity.url.startswith("tg://user")
    )


def _as_read(entity: MessageEntity, words: str) -> str:
    if entity.type == MessageEntityType.TEXT_LINK:
        url = entity.url or ""
        # A link whose words are its address already ("example.com" for https://…) says it.
        if url.rstrip("/").removeprefix("https://").removeprefix("http://") in words:
            return words
        return f"{words} ({url})"
    assert entity.unix_time is not None
    instant = utc_instant_text(entity.unix_time)
    return instant if entity.date_time_format else f"{words} ({instant})"


def webhook_path(secret: str) -> str:
    """The relay path Telegram posts to: fixed by the secret, unguessable without it."""
    digest = hashlib.sha256(f"chronorelay telegram webhook {secret}".encode()).hexdigest()
    return f"{PREFIX}telegram/{digest[:32]}"


def shared_text(message: Message) -> str | None:
    """What a message that shares something the model can read, and has no text, says:
    a location's coordinates, a place's name and address, a contact's name and number, a
    poll's question and options, a sticker's emoji, a die's roll. Only what Telegram sent,
    in fixed words; ``None`` for anything else (a photo, a voice note, a sticker without
    an emoji), which is ``_media_only``'s."""
    if message.venue is not None:
        venue = message.venue
        where = ", ".join(part for part in (venue.title, venue.address) if part)
        return f"[shared a place: {where} ({_coordinates(venue.location)})]"
    if message.location is not None:
        # Read from the dict: PTB warns that the attribute's type will change.
        shared = message.location.to_dict()
        live = "their live location" if shared.get("live_period") else "a location"
        return f"[shared {live}: {_coordinates(message.location)}]"
    if message.contact is not None:
        contact = message.contact
        name = " ".join(part for part in (contact.first_name, contact.last_name) if part)
        return f"[shared a contact: {name}, {contact.phone_number}]"
    if message.poll is not None:
        poll = message.poll
        kind = "quiz" if poll.type == "quiz" else "poll"
        options = " / ".join(option.text for option in poll.options)
        return f'[shared a {kind}: "{poll.question}" — {options}]'
    if message.sticker is not None and message.sticker.emoji:
        return f"[sticker: {message.sticker.emoji}]"
    if message.dice is not None:
        return f"[rolled a {message.dice.emoji}: {message.dice.value}]"
    return None


def _coordinates(location: Location) -> str:
    """Latitude and longitude, as a map search takes them (about a metre's precision)."""
    return f"{location.latitude:.5f}, {location.longitude:.5f}"


def _media_only(message: Message) -> str | None:
    """What a message with media and no text is recorded as; ``None`` without media."""
    if message.effective_attachment is None:
        return None
    kind: MediaKind = "attachment"  # a game, an invoice…
    if message.photo:
        kind = "photo"
    elif message.sticker:
        kind = "sticker"
    elif message.voice:
        kind = "voice note"
    elif message.video or message.video_note:
        kind = "video"
    elif message.animation:  # before the document an animation also comes as
        kind = "GIF"
    elif message.audio:
        kind = "audio"
    elif message.document:
        kind = "file"
    return media_only_text(kind)


def _origin_name(origin: MessageOrigin) -> str:
    """Who wrote a forwarded message, as Telegram lets the bot know."""
    if isinstance(origin, MessageOriginUser):
        return origin.sender_user.full_name
    if isinstance(origin, MessageOriginHiddenUser):
        return origin.sender_user_name
    if isinstance(origin, MessageOriginChat):
        return origin.sender_chat.title or "a group"
    if isinstance(origin, MessageOriginChannel):
        return origin.chat.title or "a channel"
    return "someone"


def _not_delivered(error: TelegramError) -> bool:
    """Whether a failed Bot API request surely showed the user nothing, so that sending it
    again cannot show a message twice: the connection could not be made (or had to wait
    for a free one), or Telegram answered with a server error (502 Bad Gateway, 5xx).
    Not a timeout or a connection broken after sending: the message may have arrived."""
    cause = error.__cause__
    if isinstance(cause, httpx.HTTPError):
        return isinstance(cause, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
    # PTB raises a bare NetworkError for an answer that is no refusal (400, 401, 403, 404,
    # 409, 429 have their own classes): Telegram's own failure.
    return type(error) is NetworkError


async def _formatted_or_plain(
    deliver: Callable[[str, list[MessageEntity]], Awaitable[T]], part: Part, chat: str
) -> T:
    """``deliver`` the part with its entities; if Telegram refuses them (a 400 naming
    entities, e.g. "can't parse entities"), deliver its text again without them, so a
    formatting problem costs the formatting, never the reply."""
    text, entities = part
    try:
        return await deliver(text, [_entity(e) for e in entities])
    except ChannelError as exc:
        if not entities or not _refuses_entities(exc.__cause__):
            raise
        log.warning(
            "telegram refused the formatting of a reply to chat %s (%s); sent as plain text",
            chat,
            exc.__cause__,
        )
    return await deliver(text, [])


def _refuses_entities(error: BaseException | None) -> bool:
    """Whether a Bot API error is about a message's entities (a 400 such as "can't parse
    entities: …", "entity beginning at UTF-16 offset … ends after the end of the text" or
    "ENTITY_TEXT_INVALID"; PTB drops the "Bad Request: " prefix)."""
    if not isinstance(error, BadRequest):
        return False
    said = error.message.lower()
    return "entit" in said or "can't parse" in said


def _preview(text: str) -> Part:
    """What a reply written so far looks like in its first message."""
    parts = telegram_parts(text)
    return parts[0] if parts else (text.strip()[: MESSAGE_LIMIT // 2], [])


async def _shut(app: Application[Any, Any, Any, Any, Any, Any], *, webhook: bool) -> None:
    # In stages: stop receiving updates, let handlers in flight finish, close the pool.
    if app.updater is not None and app.updater.running:
        await app.updater.stop()
    if webhook:
        try:
            await app.bot.delete_webhook()
        except TelegramError as exc:
            log.warning("telegram: could not delete the webhook: %s", exc)
    if app.running:
        await app.stop()
    await app.shutdown()


def _file_url(base_url: str) -> str:
    """The file download root that goes with a Bot API root (``…/bot`` → ``…/file/bot``)."""
    root, sep, _ = base_url.rpartition("/bot")
    return f"{root}/file/bot" if sep else base_url


def _seconds(delay: int | float | timedelta) -> float:
    return delay.total_seconds() if isinstance(delay, timedelta) else float(delay)
