"""Configuration: a TOML file loaded into pydantic models.

Every key has a default (documented in ``config.example.toml``); unknown keys are errors.
String values may reference environment variables as ``${NAME}`` so secrets stay out of
the file (``$${`` is a literal ``${``). Errors name the key, the line it is on and what to do.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails
from yarl import URL

from middleware.clock.policy import CheckinsPolicy, InferencePolicy, Mode, StorePolicy
from middleware.continuity.settings import CardsConfig, ContinuityConfig, MemoryConfig
from middleware.errors import ConfigError
from proxy.toml_source import TomlSource

CONFIG_ENV = "CHRONORELAY_CONFIG"
# "$${" is a literal "${"; "${NAME}" reads the variable NAME; any other "${" is a mistake.
_ENV_TOKEN = re.compile(
    r"(?P<literal>\$\$\{)|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<malformed>\$\{[^}]{0,40}\}?)"
)
_WEBHOOK_SECRET = re.compile(r"^[A-Za-z0-9_-]{16,256}$")


class _Section(BaseModel):
    # strict: TOML has real booleans and numbers, so port = true or shutdown_timeout = "30"
    # is a mistake to report, not a value to convert (an int still fills a float).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ServerConfig(_Section):
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8790
    agent_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] = "main"
    shutdown_timeout: Annotated[float, Field(gt=0)] = 30.0
    max_body_bytes: Annotated[int, Field(gt=0)] = 8 * 1024 * 1024
    # Answer chat commands (/tz, /time…) on the API channel; the key also needs "commands".
    api_commands: bool = False


def _url(value: str, *, schemes: tuple[str, ...], example: str) -> str:
    """``value`` if it is an absolute URL with one of ``schemes`` and a host; else a
    ValueError saying what to write. The one URL check of the config."""
    wanted = " or ".join(f"{scheme}://" for scheme in schemes)
    problem = f"must be an {wanted} URL with a host, e.g. {example}, not {value!r}"
    try:
        url = URL(value)
    except ValueError as exc:
        raise ValueError(f"{problem} ({exc})") from exc
    if url.scheme not in schemes or not url.host or any(char.isspace() for char in value):
        raise ValueError(problem)
    return value


def _upstream_url(value: str) -> str:
    # Stripped: the client appends "/chat/completions" and "/models".
    return _url(value, schemes=("http", "https"), example="https://api.openai.com/v1").rstrip("/")


UpstreamUrl = Annotated[str, AfterValidator(_upstream_url)]


def _one_credential(api_key: str, info: ValidationInfo) -> str:
    """``api_key``, unless ``base_url`` carries a user and password too: aiohttp sends one
    Authorization header, and refuses every request that asks for both."""
    base_url = info.data.get("base_url")
    if api_key and isinstance(base_url, str) and URL(base_url).user is not None:
        raise ValueError(
            "base_url has a user and password and api_key is set too, but an upstream "
            "gets one Authorization header: keep the password in base_url (basic auth) "
            "or api_key (Bearer), not both"
        )
    return api_key


UpstreamKey = Annotated[str, AfterValidator(_one_credential)]


class FallbackUpstream(_Section):
    base_url: UpstreamUrl
    api_key: UpstreamKey = ""
    model: str = ""


class UpstreamConfig(_Section):
    # "inspect" answers with the exact messages that would have been forwarded, so the
    # relay can be tried without any LLM; "forward" calls base_url.
    mode: Literal["inspect", "forward"] = "inspect"
    base_url: UpstreamUrl = "https://api.openai.com/v1"
    api_key: UpstreamKey = ""
    model: str = "gpt-4o-mini"
    connect_timeout: Annotated[float, Field(gt=0)] = 10.0
    read_timeout: Annotated[float, Field(gt=0)] = 120.0
    retries: Annotated[int, Field(ge=0, le=10)] = 2
    backoff_initial: Annotated[float, Field(ge=0)] = 0.5
    backoff_max: Annotated[float, Field(ge=0)] = 8.0
    max_connections: Annotated[int, Field(gt=0)] = 100
    fallbacks: list[FallbackUpstream] = Field(default_factory=list)


class StoreConfig(_Section):
    path: str = "chronorelay.sqlite3"
    commit_delay_ms: Annotated[float, Field(ge=0, le=1000)] = 10.0


Permission = Literal["chat", "replay", "commands"]


ANY_CHANNEL = "*"
ANY_USER = "*"
ANY_THREAD = "*"
# A platform user or thread id as a request names it (X-Chronorelay-User, -Thread).
PLATFORM_ID = re.compile(r"^[^\s:]{1,256}$")


class ApiKey(_Section):
    name: Annotated[str, Field(min_length=1)]
    key: Annotated[str, Field(min_length=16)]
    permissions: list[Permission] = Field(default_factory=lambda: list[Permission](["chat"]))
    # The channels the key may speak for (X-Chronorelay-Channel); "*" is any. Speaking for
    # "telegram" means naming Telegram users, whose memory and data the relay then serves.
    channels: list[Annotated[str, Field(pattern=r"^([A-Za-z0-9_.-]{1,64}|\*)$")]] = Field(
        default_factory=lambda: ["api"], min_length=1
    )
    # The user ids the key may name on those channels (X-Chronorelay-User, the body's
    # "user"); "*" is any. It may always speak as its own name (the user when a request
    # names none), so [] confines it to that one user.
    users: list[str] = Field(default_factory=lambda: [ANY_USER])

    @field_validator("users", mode="before")
    @classmethod
    def _a_list(cls, users: object) -> object:
        if isinstance(users, str):
            raise ValueError(
                f'must be a list in brackets: users = ["{users}"], or ["*"] for any user'
            )
        return users

    @field_validator("users")
    @classmethod
    def _user_ids(cls, users: list[str], info: ValidationInfo) -> list[str]:
        entry = f"the key '{info.data['name']}'" if "name" in info.data else "this key"
        for user in users:
            if user == ANY_USER or PLATFORM_ID.match(user):
                continue
            if ":" in user and PLATFORM_ID.match(user.partition(":")[2]):
                raise ValueError(
                    f"{entry} lists {user!r}, a user key, but users lists user ids: write "
                    f"{user.partition(':')[2]!r} (the key's channels say where it speaks)"
                )
            raise ValueError(
                f"{entry} lists {user!r}, which is not a user id (1-256 characters without "
                "spaces or ':'); list a body \"user\" such as 'bo smith' as the relay keys "
                "it, percent-encoded ('bo%20smith'), or \"*\" for any user"
            )
        return users

    # The thread ids the key may name (X-Chronorelay-Thread) besides its users' own: a
    # user's own thread (their DMs) has their id, so a key may always use those. "*" is
    # any. Unset: any for a key of any user, else [] (its users' own threads only), so
    # listing users never leaves other users' threads open.
    threads: list[str] = Field(default=None, validate_default=True)

    @field_validator("threads", mode="before")
    @classmethod
    def _threads_default(cls, threads: object, info: ValidationInfo) -> object:
        if threads is None:
            return [ANY_THREAD] if ANY_USER in info.data.get("users", [ANY_USER]) else []
        if isinstance(threads, str):
            raise ValueError(
                f'must be a list in brackets: threads = ["{threads}"], or ["*"] for any thread'
            )
        return threads

    @field_validator("threads")
    @classmethod
    def _thread_ids(cls, threads: list[str], info: ValidationInfo) -> list[str]:
        entry = f"the key '{info.data['name']}'" if "name" in info.data else "this key"
        for thread in threads:
            if thread == ANY_THREAD or PLATFORM_ID.match(thread):
                continue
            thread_id = thread.rpartition(":")[2]
            if ":" in thread and PLATFORM_ID.match(thread_id):
                raise ValueError(
                    f"{entry} lists {thread!r}, a thread key, but threads lists thread ids "
                    f"as X-Chronorelay-Thread names them: write {thread_id!r}"
                )
            raise ValueError(
                f"{entry} lists {thread!r}, which is not a thread id (1-256 characters "
                "without spaces or ':'); list thread ids as X-Chronorelay-Thread names them, "
                'or "*" for any thread'
            )
        if ANY_THREAD not in threads and ANY_USER in info.data.get("users", []):
            raise ValueError(
                f'{entry} may speak for any user (users = ["*"]), and a user\'s own thread '
                "has their id, so its threads cannot limit which threads it reaches: list "
                "its users too, or leave threads out"
            )
        return threads


class AuthConfig(_Section):
    keys: list[ApiKey] = Field(default_factory=list)
    admin_token: str = ""
    # User keys (e.g. "telegram:123456") allowed to use /admin link|unlink|whois in chat.
    chat_admins: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+:.+$")]] = Field(
        default_factory=list
    )

    @field_validator("admin_token")
    @classmethod
    def _long_enough(cls, value: str) -> str:
        if value and len(value) < 16:
            raise ValueError("must be at least 16 characters (or empty to disable admin)")
        return value


class ClockConfig(_Section):
    """The spec 000 §0 policy block (same names and defaults), plus the relay's own keys."""

    enabled: bool = True
    mode: Mode = "light"
    cross_channel_tracking: bool = True
    store: StorePolicy = Field(default_factory=StorePolicy)
    checkins: CheckinsPolicy = Field(default_factory=CheckinsPolicy)
    inference: InferencePolicy = Field(default_factory=InferencePolicy)
    # Relative phrases ("tonight", "tomorrow") are flagged as ambiguous in groups whose
    # members' clocks differ by at least this many hours.
    ambiguity_threshold_hours: Annotated[float, Field(ge=0, le=26)] = 4
    # Host zone override; empty means read it from the OS (spec 000 §4.2 "Agent TZ").
    agent_timezone: str = ""
    # Where the injected block goes: appended to the newest user message ("user"), or
    # as a system message just before it ("system"). Either keeps the prompt cache valid.
    placement: Literal["user", "system"] = "user"
    # Hard ceiling on the injected block, in estimated tokens.
    max_block_tokens: Annotated[int, Field(ge=50, le=4000)] = 400

    @field_validator("agent_timezone")
    @classmethod
    def _iana(cls, value: str) -> str:
        if value:
            from middleware.clock.zones import get_zone

            get_zone(value)
        return value


class TelegramConfig(_Section):
    """``[channels.telegram]``: the Telegram bot adapter (``channels/telegram.py``)."""

    enabled: bool = False
    # From @BotFather; put "${TELEGRAM_BOT_TOKEN}" here rather than the token itself.
    bot_token: SecretStr = SecretStr("")
    # The Bot API root the token is appended to; tests point it at a fake server.
    base_url: str = "https://api.telegram.org/bot"
    # In groups: answer only when mentioned, replied to or commanded ("mention"), or
    # every message ("all").
    group_policy: Literal["mention", "all"] = "mention"
    # "polling": getUpdates long polling. "webhook": Telegram POSTs updates to the relay's
    # own HTTP server at webhook_url + a path derived from webhook_secret.
    mode: Literal["polling", "webhook"] = "polling"
    # Long-polling timeout in seconds for getUpdates.
    poll_timeout: Annotated[int, Field(ge=0, le=50)] = 30
    # The relay's public base URL (https) Telegram can reach, for mode = "webhook".
    webhook_url: str = ""
    # Telegram sends it back in X-Telegram-Bot-Api-Secret-Token; "${TELEGRAM_WEBHOOK_SECRET}".
    webhook_secret: SecretStr = SecretStr("")
    # Show the reply while it is written, by editing one message (at most once a second).
    stream_edits: bool = False
    # Telegram user ids the bot answers (empty: everyone), and group chat ids it answers
    # in (empty: every group); DMs are governed by allowed_user_ids alone. Anything else
    # is ignored: neither answered nor recorded.
    allowed_user_ids: list[int] = Field(default_factory=list)
    allowed_chat_ids: list[int] = Field(default_factory=list)
    # Telegram user ids that are relay chat admins (as "telegram:<id>" in [auth] chat_admins).
    admin_user_ids: list[int] = Field(default_factory=list)
    # Earlier messages of the chat forwarded with each new one (from the transcript).
    history_messages: Annotated[int, Field(ge=0, le=500)] = 40

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return _url(value, schemes=("http", "https"), example="https://api.telegram.org/bot")

    @field_validator("webhook_url")
    @classmethod
    def _public_url(cls, value: str) -> str:
        # Telegram posts updates to https URLs only.
        if value:
            _url(value, schemes=("https",), example="https://relay.example.com")
        return value.rstrip("/")

    @field_validator("webhook_secret")
    @classmethod
    def _telegram_secret(cls, value: SecretStr) -> SecretStr:
        # Telegram's rule for secret_token; the value itself is never echoed.
        if value.get_secret_value() and not _WEBHOOK_SECRET.match(value.get_secret_value()):
            raise ValueError("must be 16-256 characters of A-Z, a-z, 0-9, _ and -")
        return value

    @model_validator(mode="after")
    def _token_when_enabled(self) -> TelegramConfig:
        if self.enabled and not self.bot_token.get_secret_value():
            raise ValueError(
                "bot_token is required when the channel is enabled; "
                'set bot_token = "${TELEGRAM_BOT_TOKEN}" and export the token'
            )
        if self.enabled and self.mode == "webhook":
            if not self.webhook_url:
                raise ValueError(
                    'webhook_url is required with mode = "webhook": the public https URL '
                    "of this relay (e.g. https://relay.example.com)"
                )
            if not self.webhook_secret.get_secret_value():
                raise ValueError(
                    'webhook_secret is required with mode = "webhook"; set webhook_secret = '
                    '"${TELEGRAM_WEBHOOK_SECRET}" and export 16+ random letters and digits'
                )
        return self


class DiscordConfig(_Section):
    """``[channels.discord]``: the Discord bot adapter (``channels/discord.py``)."""

    enabled: bool = False
    # From the Developer Portal; put "${DISCORD_BOT_TOKEN}" here rather than the token.
    bot_token: SecretStr = SecretStr("")
    # In servers: answer only when mentioned, replied to or commanded ("mention"), or
    # every message ("all").
    group_policy: Literal["mention", "all"] = "mention"
    # Earlier messages of the channel forwarded with each new one (from the transcript).
    history_messages: Annotated[int, Field(ge=0, le=500)] = 40
    # Discord user ids the bot answers (empty: everyone).
    allowed_user_ids: list[int] = Field(default_factory=list)
    # Server channel ids the bot answers in, a thread counting as its parent channel
    # (empty: every channel). DMs are governed by allowed_user_ids alone.
    allowed_channel_ids: list[int] = Field(default_factory=list)
    # Discord user ids who are relay chat admins (/admin), as "discord:<id>" in
    # [auth] chat_admins.
    admin_user_ids: list[int] = Field(default_factory=list)
    # Ask Discord for the Server Members intent, so a member who leaves a server drops
    # out of its channels' local-times lists and /time. Privileged: turn on "Server
    # Members Intent" for the bot in the Developer Portal first, or the bot cannot start.
    member_events: bool = False

    @model_validator(mode="after")
    def _token_when_enabled(self) -> DiscordConfig:
        if self.enabled and not self.bot_token.get_secret_value():
            raise ValueError(
                "bot_token is required when the channel is enabled; "
                'set bot_token = "${DISCORD_BOT_TOKEN}" and export the token'
            )
        return self


class ChannelsConfig(_Section):
    """``[channels]``: what every chat channel shares, then one table per channel."""

    # The system prompt sent first in every channel conversation ("" sends none).
    persona: str = ""
    # Estimated tokens of history plus the new message forwarded per turn. Past it the
    # oldest messages are dropped until about half remains, so the forwarded prefix stays
    # the same (and cached upstream) between those compactions.
    history_tokens: Annotated[int, Field(ge=100, le=1_000_000)] = 3000
    telegram: TelegramConfig = Field(default_factory=TelegramConfig)
    discord: DiscordConfig = Field(default_factory=DiscordConfig)


class Config(_Section):
    server: ServerConfig = Field(default_factory=ServerConfig)
    upstream: UpstreamConfig = Field(default_factory=UpstreamConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    auth: AuthConfig = Field(default_factory=AuthConfig)
    clock: ClockConfig = Field(default_factory=ClockConfig)
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
    continuity: ContinuityConfig = Field(default_factory=ContinuityConfig)
    cards: CardsConfig = Field(default_factory=CardsConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)


def config_path(explicit: str | None) -> Path | None:
    """The config file to use: ``--config``, else ``$CHRONORELAY_CONFIG``, else none."""
    chosen = explicit or os.environ.get(CONFIG_ENV)
    return Path(chosen) if chosen else None


def load_config(
    path: Path | None, env: dict[str, str] | None = None, *, named_by: str = ""
) -> Config:
    """Load and validate ``path`` (or the defaults when ``None``); ``named_by`` says
    where the path came from (``--config``, ``$CHRONORELAY_CONFIG``) for the messages.

    Raises ``ConfigError`` listing every problem, each with its key and line number.
    """
    if path is None:
        return Config()
    try:
        data = path.read_bytes()
    except OSError as exc:
        origin = f" (named by {named_by})" if named_by else ""
        raise ConfigError(
            f"cannot read config file {path}{origin}: {exc.strerror}; {_unreadable_hint(exc)}"
        ) from exc
    try:
        # utf-8-sig: a byte-order mark some editors write is skipped, not parsed as TOML.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: {_not_utf8(data, exc)}") from exc
    return parse_config(text, source=str(path), env=os.environ if env is None else env)


def _unreadable_hint(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "check the path, or copy config.example.toml there and edit it"
    if isinstance(exc, IsADirectoryError):
        return "name the TOML file, not its folder"
    if isinstance(exc, PermissionError):
        return "let the user running chronorelay read it"
    return "check the path"


def _not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    # The decoder counts from after a byte-order mark; the operator counts from the start.
    offset = exc.start + len(data) - len(exc.object)
    line = data[:offset].count(b"\n") + 1
    return (
        f"not UTF-8 (line {line}, byte {offset + 1} is {data[offset]:#04x}); save the file as UTF-8"
    )


def parse_config(text: str, *, source: str = "<config>", env: Any = None) -> Config:
    """Validate TOML ``text``; ``env`` supplies ``${NAME}`` references."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from exc
    where = TomlSource(text, raw)
    # Per value: what is wrong with its ${NAME} references.
    env_problems: dict[tuple[str, ...], list[str]] = {}
    expanded = _expand_env(raw, env if env is not None else os.environ, (), env_problems)
    problems = [
        f"{_line(where.line(loc))}: {where.name(loc)} {problem}"
        for loc, found in env_problems.items()
        for problem in found
    ]
    try:
        config = Config.model_validate(expanded)
    except ValidationError as exc:
        for error in _of_the_given_shape(exc.errors()):
            loc = tuple(str(part) for part in error["loc"])
            # A value whose reference failed is not what the file meant: what pydantic
            # makes of it ("at least 16 characters" for an unset key) would only mislead.
            if not any(loc[: len(bad)] == bad for bad in env_problems):
                problems.append(_describe(error["type"], error["msg"], loc, where, error["input"]))
        config = None
    if problems:
        listing = "\n".join(f"  - {source}:{p}" for p in problems)
        raise ConfigError(f"{len(problems)} problem(s) in the configuration:\n{listing}")
    assert config is not None
    return config


def _of_the_given_shape(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """``errors`` without those of a union branch of the other shape than the value given.

    ``thread_kind = "hobby"`` fails both ``ThreadKind`` and ``list[ThreadKind]``;
    "Input should be a valid list" for the one, or "should be 'project', …" about a whole
    list for the other, describes a value the operator did not write.
    """

    def branch(error: ErrorDetails) -> tuple[tuple[Any, ...], bool] | None:
        # pydantic names the union member in the location: "literal[...]", "list[...]".
        for index, part in enumerate(error["loc"]):
            if isinstance(part, str) and "[" in part:
                return error["loc"][:index], part.startswith("list[")
        return None

    given_a_list: dict[tuple[Any, ...], bool] = {}
    for error in errors:
        found = branch(error)
        if found is not None and len(error["loc"]) == len(found[0]) + 1:
            union, of_lists = found
            if of_lists and error["type"] == "list_type":
                given_a_list[union] = False
            elif not of_lists and isinstance(error["input"], list):
                given_a_list[union] = True
    kept = []
    for error in errors:
        found = branch(error)
        if found is None or given_a_list.get(found[0], found[1]) == found[1]:
            kept.append(error)
    return kept


def _expand_env(
    value: Any, env: Any, loc: tuple[str, ...], problems: dict[tuple[str, ...], list[str]]
) -> Any:
    if isinstance(value, dict):
        return {k: _expand_env(v, env, (*loc, k), problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_env(v, env, (*loc, str(i)), problems) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value
    found: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        if match.group("literal"):
            return "${"
        name = match.group("name")
        if name is None:
            # Used as it stands, a literal "${OPENAI_API_KEY" would be sent as the key.
            found.append(
                f"has a malformed reference {match.group('malformed')!r}; write ${{NAME}}, NAME "
                "being letters, digits and _ (not starting with a digit), closed by }; for a "
                "literal ${ write $${"
            )
            return ""
        if name not in env:
            found.append(
                f"refers to ${{{name}}}, which is not set; export {name} or put the value in "
                "the file"
            )
            return ""
        return str(env[name])

    expanded = _ENV_TOKEN.sub(substitute, value)
    if found:
        problems[loc] = found
    return expanded


def _describe(kind: str, message: str, loc: tuple[str, ...], where: TomlSource, given: Any) -> str:
    if kind == "extra_forbidden":
        parent = where.name(loc[:-1]) or "the top level"
        known = _known_keys(loc[:-1])
        hint = f" (known keys: {', '.join(known)})" if known else ""
        return (
            f"{_line(where.line(loc))}: unknown key '{loc[-1]}' in {parent}{hint}; "
            "remove it or fix the name"
        )
    message = message.removeprefix("Value error, ") + _TYPE_HINTS.get(kind, "")
    if kind == "list_type" and isinstance(given, dict) and _table_model(loc) is not None:
        # [table] where [[table]] was meant: one table, not a list of them.
        message += f"; write [[{where.name(loc)}]], one such table per entry"
    line = where.line(loc)
    if kind == "value_error":
        # A check across keys of one table (e.g. "living_memory_max_tokens must not
        # exceed max_tokens") is reported on the table; the line of the first key it
        # names that the file sets is where the fix goes.
        named = [
            (found.start(), key_line)
            for key in _known_keys(loc)
            if (found := re.search(rf"(?<![\w.]){re.escape(key)}\b", message))
            and (key_line := where.key_line((*loc, key))) is not None
        ]
        line = min(named)[1] if named else line
    return f"{_line(line)}: {where.name(loc) or 'the top level'}: {message}"


# Strict types (see _Section): what to write instead of a quoted number and the like.
_TYPE_HINTS = {
    "bool_type": "; write true or false, without quotes",
    "int_type": "; write a whole number, without quotes",
    "float_type": "; write a number, without quotes",
    "string_type": "; put the text in double quotes",
}


def _line(number: int | None) -> str:
    return f"line {number}" if number is not None else "line ?"


def _known_keys(loc: tuple[str, ...]) -> list[str]:
    model = _table_model(loc)
    return sorted(model.model_fields) if model is not None else []


def _table_model(loc: tuple[str, ...]) -> type[BaseModel] | None:
    """The model of the table at ``loc``, or of each table of a list at ``loc``; None
    where ``loc`` holds no table."""
    model: Any = Config
    for part in loc:
        if part.isdigit():
            continue
        field = model.model_fields.get(part)
        if field is None:
            return None
        annotation = field.annotation
        args = getattr(annotation, "__args__", None)
        model = args[0] if args else annotation
        if not isinstance(model, type) or not issubclass(model, BaseModel):
            return None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None
