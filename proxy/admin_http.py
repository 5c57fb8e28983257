"""What every admin route module shares: the admin check, reading and validating a JSON
body, finding the user a path names, and checking the key of a user to create."""

from __future__ import annotations

from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ConfigDict, ValidationError

from channels.base import REGISTRY
from middleware.clock.state_file import describe_validation_error
from middleware.errors import NotFoundError, RequestError
from middleware.identity import API_CHANNEL, split_user_key
from middleware.store import Store, UserState
from proxy.config import ANY_CHANNEL, Config
from proxy.keys import SERVICES
from proxy.services import Services

M = TypeVar("M", bound=BaseModel)


class AdminBody(BaseModel):
    """An admin request body: strict types, no keys beyond the model's."""

    model_config = ConfigDict(strict=True, extra="forbid")


def admin_services(request: web.Request) -> Services:
    """The app's services, once the request has shown the admin token."""
    services = request.app[SERVICES]
    services.auth.check_admin(request)
    return services


def validated(model: type[M], data: Any) -> M:
    """``data`` as a ``model``; ``RequestError`` naming every problem when it is not one."""
    if not isinstance(data, dict):
        # pydantic would name the model class, which means nothing to the caller.
        keys = ", ".join(repr(name) for name in model.model_fields)
        raise RequestError(
            f"the request body must be a JSON object with the keys {keys}, not {_kind(data)}"
        )
    try:
        # Strict whatever the model's own config: a JSON body has typed booleans and
        # numbers, so "yes" for a boolean or "5" for a number is a mistake to report.
        return model.model_validate(data, strict=True)
    except ValidationError as exc:
        raise RequestError(f"invalid request body: {describe_validation_error(exc)}") from exc


def _kind(data: Any) -> str:
    kinds = {list: "a list", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(data), "a number")


async def known_user(store: Store, key: str) -> UserState:
    """The stored user ``key``; ``NotFoundError`` when the relay has none."""
    user = await store.get_user(key)
    if user is None:
        raise no_user(key)
    return user


def no_user(key: str) -> NotFoundError:
    """The 404 for a user key the relay has no record of."""
    return NotFoundError(
        f"no user {key!r}: the relay has never seen a message from them. User keys look "
        "like '<channel>:<platform user id>', e.g. 'telegram:123456'; to set up a user "
        "before their first message, PUT their timezone or policy"
    )


# Channels whose platform user ids are numbers (Telegram's user id, Discord's snowflake):
# a name or an @handle there is a mistake that would never match a message.
_NUMERIC_ID_CHANNELS = frozenset({"telegram", "discord"})


def new_user_problem(config: Config, key: str) -> str | None:
    """What is wrong with ``key`` as the key of a user the relay is asked to create
    before their first message, or ``None``: it must be a user key whose channel messages
    can come from (``api``, a chat channel adapter, or a channel an ``[auth] keys`` entry
    may speak for), with the platform's kind of user id."""
    try:
        channel, user_id = split_user_key(key)
    except ValueError as exc:
        return str(exc)
    if channel in _NUMERIC_ID_CHANNELS and not user_id.isdecimal():
        return (
            f"{channel} user ids are numbers (e.g. '{channel}:123456'), not {user_id!r}; "
            "the user's /whoami in chat shows their key"
        )
    reachable = _reachable_channels(config)
    if reachable is not None and channel not in reachable:
        return (
            f"no message can come from channel {channel!r}; the channels are "
            f"{', '.join(sorted(reachable))}. Fix the key's channel, or add the channel to "
            "an API key's channels in [auth] keys"
        )
    return None


def _reachable_channels(config: Config) -> frozenset[str] | None:
    # An open relay (no keys) or a key for "*" accepts any X-Chronorelay-Channel.
    keys = config.auth.keys
    if not keys or any(ANY_CHANNEL in key.channels for key in keys):
        return None
    named = {channel for key in keys for channel in key.channels}
    return frozenset({API_CHANNEL, *REGISTRY, *named})
