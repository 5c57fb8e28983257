"""The one exception tree of Chronorelay.

Every error the relay raises on purpose derives from ``ChronorelayError``; library errors
are translated at the boundary with ``raise ... from exc``. Each carries a message that
says what was wrong and what to do about it, fit to show to whoever caused it.

    ChronorelayError
    ├── ConfigError                 bad or missing configuration (operator)
    ├── StoreError                  the store cannot be opened or written
    ├── ChannelError                a chat platform cannot be reached or refused the bot
    │   └── ReplyNotDelivered       nothing of a reply reached the user
    ├── ShuttingDown                the relay stopped before it could answer (HTTP 503)
    ├── RequestError                a client sent something we cannot use (HTTP 400)
    │   ├── AuthError               missing or wrong relay API key (HTTP 401/403)
    │   └── NotFoundError           the user or thread named is not in the store (HTTP 404)
    └── UpstreamError               the upstream LLM did not give a usable answer
        ├── UpstreamStatusError     it answered with a 4xx/5xx we pass through
        ├── UpstreamUnavailable     it could not be reached or broke off (HTTP 502)
        └── UpstreamTimeout         it did not answer in time (HTTP 504)
"""

from __future__ import annotations


class ChronorelayError(Exception):
    """Base of every error the relay raises on purpose."""


class ConfigError(ChronorelayError):
    """The configuration is invalid; the message names the key, line and fix."""


class StoreError(ChronorelayError):
    """The store could not be opened, migrated or written."""


class ChannelError(ChronorelayError):
    """A chat platform (Telegram, Discord…) could not be reached or refused a request."""


class ReplyNotDelivered(ChannelError):
    """Nothing of a reply reached the user: the platform refused its first part, or could
    not be reached however often it was sent (a reply cut off later was partly read)."""


class ShuttingDown(ChronorelayError):
    """A graceful stop's deadline came before the answer was complete."""

    status = 503
    code = "relay_shutting_down"


class RequestError(ChronorelayError):
    """A client request is malformed; ``status`` is the HTTP status to answer with, and
    ``param`` the body field at fault, when there is one ("messages[0].content")."""

    status = 400
    code = "invalid_request_error"

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class AuthError(RequestError):
    """A request lacks valid relay credentials or the permission it needs."""

    def __init__(self, message: str, *, status: int = 401) -> None:
        super().__init__(message)
        self.status = status
        self.code = "invalid_api_key" if status == 401 else "permission_denied"


class NotFoundError(RequestError):
    """What the request names (a user, a thread) is not in the store."""

    status = 404
    code = "not_found"


class UpstreamError(ChronorelayError):
    """The upstream did not produce a usable answer."""

    status = 502
    code = "upstream_error"


class UpstreamStatusError(UpstreamError):
    """The upstream answered with an error status; its body is passed through as-is, with
    the headers a client acts on (``headers``: its type, ``Retry-After``, rate limits, the
    request id)."""

    def __init__(
        self, status: int, body: bytes, headers: dict[str, str], retry_after: float | None
    ):
        super().__init__(f"upstream answered HTTP {status}")
        self.status = status
        self.body = body
        self.headers = headers
        self.retry_after = retry_after


class UpstreamUnavailable(UpstreamError):
    """The upstream could not be reached, or dropped the connection before answering."""

    status = 502
    code = "upstream_unavailable"


class UpstreamTimeout(UpstreamError):
    """The upstream did not answer within the configured timeout."""

    status = 504
    code = "upstream_timeout"
