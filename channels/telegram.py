"""The Telegram channel: a bot on the Bot API, through python-telegram-bot long polling.

Each text message the bot should answer becomes a ``Turn`` (chat id as the thread, the
forum topic as ``topic_id``), runs through the pipeline, and the reply goes back to the
same chat and topic. The model writes Markdown; it is sent as plain text plus message
entities (no ``parse_mode``, so no escaping can go wrong), split at Telegram's 4096
UTF-16 code unit limit on line boundaries. In groups, ``group_policy = "mention"`` answers
only messages that mention the bot, reply to it, or are commands.

No python-telegram-bot type leaves this module.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, timedelta
from typing import Any

import telegramify_markdown
from telegram import Message, MessageEntity, ReplyParameters, Update
from telegram.constants import ChatAction, ChatType, MessageEntityType, MessageLimit
from telegram.error import InvalidToken, RetryAfter, TelegramError
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from channels.base import ConversationLocks, answer_in_order
from middleware.errors import ChannelError, ConfigError
from middleware.types import Turn
from proxy.config import TelegramConfig
from proxy.services import Services

log = logging.getLogger(__name__)

MESSAGE_LIMIT: int = MessageLimit.MAX_TEXT_LENGTH
# Telegram shows "typing…" for about five seconds per chat action.
_TYPING_EVERY = 4.0
_SEND_ATTEMPTS = 3
_EMPTY_REPLY = "[the LLM's reply had no text]"

Part = tuple[str, list[telegramify_markdown.MessageEntity]]


def _render_config() -> telegramify_markdown.RenderConfig:
    config = telegramify_markdown.RenderConfig.isolated()
    symbols = config.markdown_symbol
    # Headings stay bold text; emoji prefixes would be words the model never wrote.
    symbols.heading_level_1 = symbols.heading_level_2 = ""
    symbols.heading_level_3 = symbols.heading_level_4 = ""
    symbols.unordered_list_item = "•"
    return config


_RENDER = _render_config()


def telegram_parts(markdown: str, limit: int = MESSAGE_LIMIT) -> list[Part]:
    """``markdown`` as Telegram messages: plain text plus entities, each part at most
    ``limit`` UTF-16 code units, split on line boundaries where one fits."""
    try:
        text, entities = telegramify_markdown.convert(markdown, config=_RENDER)
    except Exception:  # a formatting bug must not lose the reply: send it unformatted
        log.warning("could not convert a reply's Markdown; sending it as plain text")
        text, entities = markdown, []
    parts = telegramify_markdown.split_entities(text, entities, max_utf16_len=limit)
    return [part for part in (_trimmed(t, e) for t, e in parts) if part[0]]


def _trimmed(text: str, entities: list[telegramify_markdown.MessageEntity]) -> Part:
    """Strip the whitespace Telegram would strip, moving the entities with the text."""
    utf16 = telegramify_markdown.utf16_len
    body = text.strip()
    start = utf16(text[: len(text) - len(text.lstrip())])
    end = start + utf16(body)
    kept = []
    for entity in entities:
        lo, hi = max(entity.offset, start), min(entity.offset + entity.length, end)
        if hi > lo:
            kept.append(entity.copy_with(offset=lo - start, length=hi - lo))
    return body, kept


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

    def __init__(self, services: Services, settings: TelegramConfig | None = None) -> None:
        self._services = services
        self._settings = settings or services.config.channels.telegram
        self._app: Application[Any, Any, Any, Any, Any, Any] | None = None
        self._bot_id = 0
        self._username = ""
        # One turn at a time per chat, so history and replies keep the messages' order.
        self._locks = ConversationLocks()

    async def start(self) -> None:
        """Check the token (getMe), then poll for updates in the background."""
        settings = self._settings
        base_url = settings.base_url
        # httpx logs every request URL at INFO, and the URL holds the bot token.
        httpx_log = logging.getLogger("httpx")
        if httpx_log.level == logging.NOTSET:
            httpx_log.setLevel(logging.WARNING)
        app = (
            Application.builder()
            .token(settings.bot_token.get_secret_value())
            .base_url(base_url)
            .base_file_url(_file_url(base_url))
            .concurrent_updates(True)
            .build()
        )
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT, self._on_message))
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
        updater = app.updater
        assert updater is not None  # the builder makes one unless told not to
        try:
            await app.start()
            await updater.start_polling(
                timeout=timedelta(seconds=settings.poll_timeout), allowed_updates=["message"]
            )
        except BaseException:
            await _shut(app)
            raise
        self._app = app
        log.info("telegram channel polling as @%s", self._username)

    async def stop(self) -> None:
        """Stop polling, let turns in flight finish, close the HTTP pool."""
        app, self._app = self._app, None
        if app is not None:
            await _shut(app)
            log.info("telegram channel stopped")

    async def send(
        self,
        thread_id: str,
        text: str,
        *,
        topic_id: str | None = None,
        reply_to: int | None = None,
    ) -> None:
        """Send ``text`` (Markdown) to chat ``thread_id``, in ``topic_id`` if given, split to
        Telegram's limit; the first part replies to message ``reply_to``."""
        app = self._app
        if app is None:
            raise ChannelError("the telegram channel is not running; start it first")
        parts = telegram_parts(text) or [(_EMPTY_REPLY, [])]
        for index, (part, entities) in enumerate(parts):
            reply = (
                ReplyParameters(reply_to, allow_sending_without_reply=True)
                if reply_to is not None and index == 0
                else None
            )
            await self._send_one(
                app,
                chat_id=int(thread_id),
                text=part,
                entities=[_entity(e) for e in entities],
                message_thread_id=int(topic_id) if topic_id else None,
                reply_parameters=reply,
            )

    def to_turn(self, message: Message) -> Turn | None:
        """The ``Turn`` for ``message``, or ``None`` when the bot should not answer it."""
        user = message.from_user
        text = message.text
        if user is None or user.is_bot or not text or not self._addressed(message):
            return None
        group = message.chat.type != ChatType.PRIVATE
        topic = message.message_thread_id if message.is_topic_message else None
        return Turn(
            channel=self.name,
            thread_id=str(message.chat.id),
            user_id=str(user.id),
            text=self._without_mention(text) if group else text,
            received_at=message.date.astimezone(UTC),
            body={},
            chat_type="group" if group else "dm",
            display_name=user.full_name or user.username,
            topic_id=str(topic) if topic is not None else None,
        )

    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        if message is None:
            return
        turn = self.to_turn(message)
        if turn is None:
            return
        await answer_in_order(
            self._services,
            turn,
            lock=self._locks(f"{turn.thread_id}:{turn.topic_id or ''}"),
            history_limit=self._settings.history_messages,
            typing=lambda: self._keep_typing(message),
            deliver=lambda text: self.send(
                turn.thread_id,
                text,
                topic_id=turn.topic_id,
                reply_to=message.message_id if turn.chat_type == "group" else None,
            ),
        )

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        error = context.error
        if isinstance(error, ChannelError):
            log.error("telegram: %s", error)
        else:
            log.error("telegram: handling an update failed", exc_info=error)

    def _addressed(self, message: Message) -> bool:
        """Whether a message is for this bot: always in DMs; in groups by the policy."""
        if message.chat.type == ChatType.PRIVATE:
            return True
        text = message.text or ""
        if text.startswith("/"):
            # "/time@other_bot" is for another bot; a bare "/time" is for every bot.
            _, at, target = text.split(maxsplit=1)[0].partition("@")
            return not at or target.lower() == self._username.lower()
        if self._settings.group_policy == "all":
            return True
        replied = message.reply_to_message
        if replied is not None and replied.from_user is not None:
            # In forum topics every message "replies" to the topic's first message.
            is_topic_root = message.is_topic_message and replied.forum_topic_created
            if replied.from_user.id == self._bot_id and not is_topic_root:
                return True
        for entity, value in message.parse_entities(
            [MessageEntityType.MENTION, MessageEntityType.TEXT_MENTION]
        ).items():
            if entity.type == MessageEntityType.MENTION:
                if value[1:].lower() == self._username.lower():
                    return True
            elif entity.user is not None and entity.user.id == self._bot_id:
                return True
        return False

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

    async def _send_one(
        self, app: Application[Any, Any, Any, Any, Any, Any], **kwargs: Any
    ) -> None:
        for attempt in range(1, _SEND_ATTEMPTS + 1):
            try:
                await app.bot.send_message(**kwargs)
                return
            except RetryAfter as exc:
                if attempt == _SEND_ATTEMPTS:
                    raise ChannelError(
                        f"Telegram kept rate-limiting replies to chat {kwargs['chat_id']}"
                    ) from exc
                await asyncio.sleep(_seconds(exc.retry_after))
            except TelegramError as exc:
                raise ChannelError(
                    f"Telegram refused a reply to chat {kwargs['chat_id']}: {exc}"
                ) from exc


async def _shut(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    # In stages: stop fetching updates, let handlers in flight finish, close the pool.
    if app.updater is not None and app.updater.running:
        await app.updater.stop()
    if app.running:
        await app.stop()
    await app.shutdown()


def _file_url(base_url: str) -> str:
    """The file download root that goes with a Bot API root (``…/bot`` → ``…/file/bot``)."""
    root, sep, _ = base_url.rpartition("/bot")
    return f"{root}/file/bot" if sep else base_url


def _seconds(delay: int | float | timedelta) -> float:
    return delay.total_seconds() if isinstance(delay, timedelta) else float(delay)
