"""Relay API keys (``Authorization: Bearer``) and the admin token."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from aiohttp import web

from middleware.errors import AuthError
from proxy.config import AuthConfig, Permission

ALL_PERMISSIONS: frozenset[Permission] = frozenset({"chat", "replay", "commands"})


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: the key's name and what it may do."""

    name: str
    permissions: frozenset[Permission]


# Who calls an open relay (no keys configured). Frozen, so one instance serves every request.
_LOCAL = Caller("local", ALL_PERMISSIONS)


class Authenticator:
    """Checks bearer keys against ``[auth] keys``.

    With no keys configured the relay is open, and ``serve`` binds only to loopback; the
    caller is then ``local`` with every permission.
    """

    def __init__(self, config: AuthConfig) -> None:
        self._keys = [
            (k.key.encode(), Caller(k.name, frozenset(k.permissions))) for k in config.keys
        ]
        self._admin = config.admin_token.encode()

    @property
    def open(self) -> bool:
        return not self._keys

    def caller(self, request: web.Request, needs: Permission = "chat") -> Caller:
        if self.open:
            return _LOCAL
        token = _bearer(request)
        if token is None:
            raise AuthError(
                "missing API key: send 'Authorization: Bearer <key>' with a key from [auth] keys"
            )
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


def _bearer(request: web.Request) -> bytes | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip().encode()
