"""The OpenAI-compatible endpoint: ``POST /v1/chat/completions`` and ``GET /v1/models``.

Bodies are forwarded as-is except for the relay's injection; who is speaking comes from
the ``X-Chronorelay-*`` headers (DESIGN.md "Public contract").
"""

from __future__ import annotations

import hashlib
import json
import re
from contextlib import aclosing
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from aiohttp import web
from multidict import CIMultiDictProxy
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from middleware.clock.source import CLOCK_SKEW
from middleware.errors import (
    AuthError,
    NotFoundError,
    RequestError,
    ShuttingDown,
    UpstreamError,
    UpstreamStatusError,
)
from middleware.locales import accept_language_locale
from middleware.types import IMPACTFUL_TOOL_CALLS, JSON, Reply, ReplyStream, Turn
from proxy.auth import Caller
from proxy.completions import completion_body, completion_stream
from proxy.config import PLATFORM_ID
from proxy.errors import error_body, read_json, response_for
from proxy.keys import SERVICES
from proxy.server import SHUTDOWN_DEADLINE

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# Roles of the agent's own instructions, which may come after the user's message.
_INSTRUCTION_ROLES = frozenset({"system", "developer"})


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[Any] | None = None


class _ChatRequest(BaseModel):
    """Validates the parts the relay relies on; the original dict is what is forwarded."""

    model_config = ConfigDict(extra="allow")
    messages: list[_Message] = Field(min_length=1)
    stream: StrictBool | None = None
    model: str | None = None
    user: str | None = None


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """Every answer, the relay's own refusals included, is counted by channel and status."""
    metrics = request.app[SERVICES].metrics
    channel = request.headers.get("X-Chronorelay-Channel", "api")
    try:
        response = await _chat_completions(request)
    except Exception as exc:
        response = response_for(request, exc)
    metrics.count_request(channel, str(response.status))
    return response


async def _chat_completions(request: web.Request) -> web.StreamResponse:
    services = request.app[SERVICES]
    caller = services.auth.caller(request, "chat")
    body = await _read_body(request)
    turn = _turn_from_request(request, body, caller, services.clock.now())
    turn.commands_allowed = services.config.server.api_commands and "commands" in caller.permissions
    try:
        async with request.app[SHUTDOWN_DEADLINE].scope():
            reply = await services.pipeline(turn)
    except UpstreamStatusError as exc:
        services.metrics.count_error("upstream_status")
        return web.Response(status=exc.status, body=exc.body, headers=exc.headers)
    except UpstreamError:
        services.metrics.count_error("upstream")
        raise
    services.metrics.injected_tokens.inc(turn.context.tokens)
    headers = {
        "X-Chronorelay-Thread-Key": turn.thread_key,
        "X-Chronorelay-Injected-Tokens": str(turn.context.tokens),
    }
    if IMPACTFUL_TOOL_CALLS in reply.meta:
        headers["X-Chronorelay-Impactful-Tool-Calls"] = reply.meta[IMPACTFUL_TOOL_CALLS]
    if reply.stream is not None:
        return await _stream_out(request, reply.stream, headers)
    if reply.body is not None:
        return web.Response(
            body=reply.body, headers={**headers, "Content-Type": reply.content_type}
        )
    return await _relay_made(request, turn, reply, headers)


async def list_models(request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": _models(request)})


async def get_model(request: web.Request) -> web.Response:
    """``GET /v1/models/{model}``: one of the listed models (the SDK's ``models.retrieve``)."""
    wanted = request.match_info["model"]
    for model in _models(request):
        if model["id"] == wanted:
            return web.json_response(model)
    raise NotFoundError(
        f"the relay serves no model '{wanted}'; GET /v1/models lists the ones it serves"
    )


def _models(request: web.Request) -> list[JSON]:
    services = request.app[SERVICES]
    services.auth.caller(request, "chat")
    upstream = services.config.upstream
    names = dict.fromkeys([upstream.model, *(f.model for f in upstream.fallbacks if f.model)])
    created = int(services.clock.now().timestamp())
    return [
        {"id": name, "object": "model", "created": created, "owned_by": "chronorelay"}
        for name in names
    ]


async def _read_body(request: web.Request) -> JSON:
    body = await read_json(request)
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object with a 'messages' list")
    if _plainly_valid(body):
        return body
    try:
        _ChatRequest.model_validate(body)
    except ValidationError as exc:
        fields = list(dict.fromkeys(_field(error["loc"]) for error in exc.errors()))
        problems = "; ".join(f"{named} must be {_EXPECTED[kind]}" for named, kind in fields)
        raise RequestError(
            f"invalid chat completion request: {problems}", param=fields[0][0]
        ) from exc
    return body


# What each field the relay checks must be, said once however pydantic words it (a
# content of the wrong type fails both branches of its union).
_EXPECTED = {
    "messages": 'a non-empty list of messages, oldest first: [{"role": "user", "content": "hi"}]',
    "message": 'an object with a "role", such as {"role": "user", "content": "hi"}',
    "role": 'a string: "system", "developer", "user", "assistant" or "tool"',
    "content": "a string, a list of content parts, or null",
    "stream": "true, false or null",
    "model": "a string naming the model",
    "user": "a string",
}


def _field(loc: tuple[int | str, ...]) -> tuple[str, str]:
    """The field a validation error is about, as OpenAI names it ("messages[0].role"),
    and its kind in ``_EXPECTED``."""
    named, kind = "", "messages"
    for step in loc:
        if isinstance(step, int):
            named += f"[{step}]"
            kind = "message"
        elif step in _EXPECTED:
            named += f".{step}" if named else step
            kind = step
        else:  # a union's branch ("str", "list[any]"): the field itself is at fault
            break
    return named, kind


def _plainly_valid(body: JSON) -> bool:
    """A strict subset of what ``_ChatRequest`` accepts, checked without building a model
    per message (a long conversation has hundreds). Anything else goes to pydantic, which
    accepts it or says exactly what is wrong."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return False
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return False
        content = message.get("content")
        if content is not None and not isinstance(content, str | list):
            return False
    return (
        isinstance(body.get("stream"), bool | None)
        and isinstance(body.get("model", ""), str | None)
        and isinstance(body.get("user", ""), str | None)
    )


def _turn_from_request(request: web.Request, body: JSON, caller: Caller, now: datetime) -> Turn:
    headers = request.headers
    channel = headers.get("X-Chronorelay-Channel", "api")
    if not _NAME.match(channel):
        raise RequestError("X-Chronorelay-Channel must be 1-64 letters, digits, '_', '.' or '-'")
    caller.check_channel(channel)
    user_id = _header(headers, "X-Chronorelay-User")
    if user_id is None:
        user_id = _body_user_id(body.get("user")) or caller.name
    elif not PLATFORM_ID.match(user_id):
        raise RequestError("X-Chronorelay-User must be 1-256 characters without spaces or ':'")
    caller.check_user(user_id)
    # A blank one is refused, as X-Chronorelay-User's is: a header sent empty is a
    # client's bug (an unset variable), not a request for the default thread.
    thread_id = _header(headers, "X-Chronorelay-Thread")
    if thread_id is None:
        thread_id = user_id
    elif not PLATFORM_ID.match(thread_id):
        raise RequestError("X-Chronorelay-Thread must be 1-256 characters without spaces or ':'")
    caller.check_thread(thread_id)
    chat_type = headers.get("X-Chronorelay-Chat-Type", "dm").lower()
    if chat_type not in ("dm", "group"):
        raise RequestError("X-Chronorelay-Chat-Type must be 'dm' or 'group'")
    received_at = now
    replay = headers.get("X-Chronorelay-Received-At")
    if replay is not None:
        received_at = _replay_instant(replay, caller, now)
    return Turn(
        channel=channel,
        thread_id=thread_id,
        user_id=user_id,
        text=last_user_text(body["messages"]),
        continuation=_newest_role(body["messages"]) != "user",
        resendable=True,
        received_at=received_at,
        body=body,
        chat_type="group" if chat_type == "group" else "dm",
        display_name=_header(headers, "X-Chronorelay-User-Name"),
        # The standard header, as a browser or an app sends it ("fr-FR,fr;q=0.9"); one
        # nothing can be read from is ignored, as HTTP allows.
        locale=accept_language_locale(headers.get("Accept-Language")),
    )


def _header(headers: CIMultiDictProxy[str], name: str) -> str | None:
    """The value of the identity header ``name``, or None; a 400 naming it when its bytes
    are not UTF-8 (aiohttp keeps those as surrogates, which no store or reply can hold)."""
    value = headers.get(name)
    if value is not None:
        try:
            value.encode()
        except UnicodeEncodeError as exc:
            raise RequestError(
                f"{name} is not valid UTF-8: send its value encoded as UTF-8"
            ) from exc
    return value


def _body_user_id(user: object) -> str | None:
    """The body's ``user`` as a platform user id. OpenAI takes any string there, so one
    that is not an id as it stands ("bob smith", "org:123", one holding a lone surrogate
    JSON escaped) is percent-encoded, and a longer one stands as its hash: the same
    ``user`` is always the same person."""
    if not isinstance(user, str) or not user:
        return None
    if PLATFORM_ID.match(user) and _is_text(user):
        return user
    # A lone surrogate is no text (strict UTF-8 cannot hold it): it is encoded as such.
    utf8 = user.encode("utf-8", "surrogatepass")
    quoted = quote(utf8, safe="")
    if len(quoted) <= 256:
        return quoted
    return "sha256-" + hashlib.sha256(utf8).hexdigest()


def _is_text(value: str) -> bool:
    """Whether ``value`` holds no lone surrogate."""
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _replay_instant(value: str, caller: Caller, now: datetime) -> datetime:
    if "replay" not in caller.permissions:
        raise AuthError(
            f"the API key '{caller.name}' may not set X-Chronorelay-Received-At; "
            "grant it the 'replay' permission or drop the header",
            status=403,
        )
    try:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise RequestError(
            f"X-Chronorelay-Received-At is not an ISO 8601 instant: {value!r}"
        ) from exc
    if instant.tzinfo is None:
        raise RequestError(
            "X-Chronorelay-Received-At needs an offset (e.g. 2026-11-21T16:40:00+01:00 or …Z)"
        )
    try:
        instant = instant.astimezone(UTC)
    except OverflowError as exc:
        raise RequestError(
            f"X-Chronorelay-Received-At is out of range once in UTC: {value!r}"
        ) from exc
    if instant > now + CLOCK_SKEW:
        raise RequestError(
            f"X-Chronorelay-Received-At is in the future ({value}; the relay's clock says "
            f"{now.isoformat(timespec='seconds')}): replay messages that were already sent"
        )
    return instant


def _newest_role(messages: list[Any]) -> str | None:
    """The role of the newest message that is not an instruction: one an agent appends
    after the user's message (a reminder, a format rule) leaves the turn the user's."""
    for message in reversed(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _INSTRUCTION_ROLES:
            return role
    return None


def last_user_text(messages: list[Any]) -> str:
    """The text of the newest user message, or ''. Content parts are joined one a line,
    a part that is not text as a short placeholder ("[image]", "[file report.pdf]"): the
    transcript, /recap and capture then know the turn carried it, never its data."""
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(
                text for text in (_part_text(part) for part in content) if text is not None
            )
        return ""
    return ""


# The placeholder of each OpenAI content part type that is not text.
_PART_PLACEHOLDERS = {"image_url": "image", "input_audio": "audio", "file": "file"}
_FILENAME_CHARS = 60


def _part_text(part: Any) -> str | None:
    """A content part as the transcript keeps it; None for one that is not a part."""
    if not isinstance(part, dict):
        return None
    if isinstance(part.get("text"), str):
        return str(part["text"])
    kind = part.get("type")
    if not isinstance(kind, str):
        return None
    label = _PART_PLACEHOLDERS.get(kind, "attachment")
    details = part.get(kind)
    name = details.get("filename") if isinstance(details, dict) else None
    if kind == "file" and isinstance(name, str) and name.strip():
        return f"[{label} {' '.join(name.split())[:_FILENAME_CHARS]}]"
    return f"[{label}]"


class _EventStream(web.StreamResponse):
    """An SSE response whose headers leave with its first chunk, in one write.

    A ``StreamResponse`` sends its headers on ``prepare()``, for handlers that may wait
    before their first byte. An upstream stream reaches the edge with its first chunk
    already read, so waiting costs no time and saves a send per streamed request
    (``web.Response`` buffers the same way; the flag is aiohttp's own, not public API).
    """

    _send_headers_immediately = False


async def _stream_out(
    request: web.Request, stream: ReplyStream, headers: dict[str, str]
) -> web.StreamResponse:
    response = _EventStream(
        headers={**headers, "Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    # aclosing: if the client goes away mid-write, the upstream connection is closed too.
    async with aclosing(stream.__aiter__()) as chunks:
        try:
            async with request.app[SHUTDOWN_DEADLINE].scope():
                async for chunk in chunks:
                    await response.write(chunk)
        except (UpstreamError, ShuttingDown) as exc:
            # Counted apart: the request's status says 200, yet the client got half an answer.
            kind = (
                "upstream_mid_stream" if isinstance(exc, UpstreamError) else "shutdown_mid_stream"
            )
            request.app[SERVICES].metrics.count_error(kind)
            # Too late for a status code: tell the client in-band, as OpenAI does.
            event = json.dumps(error_body(str(exc), exc.code))
            await response.write(f"data: {event}\n\n".encode())
    await response.write_eof()
    return response


async def _relay_made(
    request: web.Request, turn: Turn, reply: Reply, headers: dict[str, str]
) -> web.StreamResponse:
    """A reply the relay wrote itself (e.g. a chat command), shaped like a completion, and
    streamed when the client asked for a stream. Its ``created`` is the relay's clock, as
    the ``inspect`` upstream's and ``/v1/models``' are."""
    created = int(request.app[SERVICES].clock.now().timestamp())
    envelope = {
        "id": f"chatcmpl-relay-{created}",
        "created": created,
        "model": str(turn.body.get("model") or "chronorelay"),
    }
    if turn.body.get("stream"):
        stream = completion_stream(envelope, reply.text, turn.body)
        return await _stream_out(request, stream, headers)
    return web.Response(
        body=completion_body(envelope, reply.text),
        headers={**headers, "Content-Type": "application/json"},
    )
