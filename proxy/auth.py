"""Relay API keys (``Authorization: Bearer``) and the admin token."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from aiohttp import web

from middleware.errors import AuthError
from proxy.config import ANY_CHANNEL, ANY_THREAD, ANY_USER, ApiKey, AuthConfig, Permission

ALL_PERMISSIONS: frozenset[Permission] = frozenset({"chat", "replay", "commands"})


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: the key's name, what it may do, and the channels, user ids and
    thread ids it may speak for (None: any)."""

    name: str
    permissions: frozenset[Permission]
    channels: frozenset[str] | None = None
    users: frozenset[str] | None = None
    threads: frozenset[str] | None = None

    @classmethod
    def of_key(cls, key: ApiKey) -> Caller:
        channels = None if ANY_CHANNEL in key.channels else frozenset(key.channels)
        # A key always speaks as its own name: that is who a request naming no one is.
        users = None if ANY_USER in key.users else frozenset({*key.users, key.name})
        # A user's own thread has their id, so a key reaches its users' threads too.
        threads = None
        if users is not None and ANY_THREAD not in key.threads:
            threads = frozenset({*key.threads, *users})
        return cls(key.name, frozenset(key.permissions), channels, users, threads)

    def check_channel(self, channel: str) -> None:
        """Raises ``AuthError`` (403) unless the caller may speak for ``channel``."""
        self._refuse_unless(
            self.channels,
            f"speak for channel '{channel}'",
            channel,
            may="for",
            fix="add the channel to that key's channels in [auth] keys, or drop "
            "X-Chronorelay-Channel",
        )

    def check_user(self, user_id: str) -> None:
        """Raises ``AuthError`` (403) unless the caller may speak for the user ``user_id``
        (X-Chronorelay-User, the body's ``user``, or the key's own name)."""
        self._refuse_unless(
            self.users,
            f"speak for user '{user_id}'",
            user_id,
            may="for",
            fix="name one of those in X-Chronorelay-User or the body's user, or add the "
            "user to that key's users in [auth] keys",
        )

    def check_thread(self, thread_id: str) -> None:
        """Raises ``AuthError`` (403) unless the caller may use the thread ``thread_id``
        (X-Chronorelay-Thread, else the user's own)."""
        self._refuse_unless(
            self.threads,
            f"use thread '{thread_id}'",
            thread_id,
            may="use",
            fix="name one of those in X-Chronorelay-Thread, or add the thread to that "
            "key's threads in [auth] keys",
        )

    def _refuse_unless(
        self, allowed: frozenset[str] | None, doing: str, value: str, *, may: str, fix: str
    ) -> None:
        """403 unless ``value`` is ``allowed`` (None: anything), naming what the key may
        not do, what it may, and how to change either."""
        if allowed is not None and value not in allowed:
            raise AuthError(
                f"the API key '{self.name}' may not {doing} (it may {may}: "
                f"{', '.join(sorted(allowed))}); {fix}",
                status=403,
            )


# Who calls an open relay (no keys configured): loopback only, so trusted with everything.
# Frozen, so one instance serves every request.
_LOCAL = Caller("local", ALL_PERMISSIONS)


class Authenticator:
    """Checks bearer keys against ``[auth] keys``.

    With no keys configured the relay is open, and ``serve`` binds only to loopback; the
    caller is then ``local`` with every permission.
    """

    def __init__(self, config: AuthConfig) -> None:
        self._keys = [(k.key.encode(), Caller.of_key(k)) for k in config.keys]
        self._admin = config.admin_token.encode()

    @property
    def open(self) -> bool:
        return not self._keys

    def caller(self, request: web.Request, needs: Permission = "chat") -> Caller:
        if self.open:
            return _LOCAL
        token = _bearer(request)
        if token is None:
            raise AuthError(_missing_key(request))
        for key, caller in self._keys:
            if hmac.compare_digest(key, token):
                if needs not in caller.permissions:
                    raise AuthError(
                        f"the API key '{caller.name}' lacks the '{needs}' permission; "
                        "add it to that key's permissions in [auth] keys",
                        status=403,
                    )
                return caller
        raise AuthError("invalid API key: it matches none of the keys in [auth] keys")

    def check_admin(self, request: web.Request) -> None:
        if not self._admin:
            raise AuthError(
                "the admin API is disabled: set [auth] admin_token to enable it", status=403
            )
        token = _bearer(request)
        if token is None or not hmac.compare_digest(self._admin, token):
            raise AuthError("admin requests need 'Authorization: Bearer <[auth] admin_token>'")


def _missing_key(request: web.Request) -> str:
    scheme, space, _ = request.headers.get("Authorization", "").strip().partition(" ")
    if not scheme or scheme.lower() == "bearer":
        # "Bearer" alone: a client that sent an empty key (an unset variable, say).
        return "missing API key: send 'Authorization: Bearer <key>' with a key from [auth] keys"
    if not space:
        # A bare credential (a key sent without "Bearer "): not a scheme to name, and a
        # secret the answer must not repeat.
        return (
            "the Authorization header has no scheme; send 'Authorization: Bearer <key>' "
            "with a key from [auth] keys"
        )
    return (
        f"the Authorization header uses the '{scheme}' scheme; send "
        "'Authorization: Bearer <key>' with a key from [auth] keys"
    )


def _bearer(request: web.Request) -> bytes | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip().encode()
