"""Turning exceptions into OpenAI-shaped JSON errors at the HTTP edge. Never a traceback."""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from middleware import json_codec
from middleware.errors import (
    ChronorelayError,
    RequestError,
    ShuttingDown,
    StoreError,
    UpstreamError,
)
from middleware.types import JSON
from proxy.keys import SERVICES

log = logging.getLogger(__name__)

# A body nested past the JSON reader's recursion limit (about a thousand levels).
NESTED_TOO_DEEPLY = "the request body is nested too deeply to read; flatten it"


async def read_json(request: web.Request) -> Any:
    """The request body parsed as JSON (``json_codec.load``: exactly as ``json`` reads
    it); ``RequestError`` saying why when it is not."""
    raw = await request.read()
    if not raw.strip():
        raise RequestError("the request body is empty: send a JSON object")
    try:
        return json_codec.load(raw)
    except UnicodeDecodeError as exc:
        raise RequestError(
            f"the request body is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start}): send JSON encoded as UTF-8"
        ) from exc
    except ValueError as exc:
        raise RequestError(
            f"the request body is not valid JSON ({exc}): send one JSON object"
        ) from exc
    except RecursionError as exc:
        raise RequestError(NESTED_TOO_DEEPLY) from exc


def error_body(message: str, code: str, kind: str | None = None, param: str | None = None) -> JSON:
    return {"error": {"message": message, "type": kind or code, "param": param, "code": code}}


def error_response(
    status: int,
    message: str,
    code: str,
    headers: dict[str, str] | None = None,
    param: str | None = None,
) -> web.Response:
    body = error_body(message, code, param=param)
    return web.json_response(body, status=status, headers=headers)


@web.middleware
async def errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except Exception as exc:
        return response_for(request, exc)


def response_for(request: web.Request, exc: Exception) -> web.Response:
    """The error response for ``exc``; re-raises what is not an error (a redirect, a
    connection the client already dropped)."""
    if isinstance(exc, RequestError):
        return error_response(exc.status, str(exc), exc.code, param=exc.param)
    if isinstance(exc, UpstreamError):
        log.warning("upstream error on %s: %s", request.path, exc)
        return error_response(exc.status, str(exc), exc.code)
    if isinstance(exc, ShuttingDown):
        return error_response(exc.status, str(exc), exc.code)
    if isinstance(exc, StoreError):
        log.error("store error on %s: %s", request.path, exc)
        return error_response(503, f"the relay's store is unavailable: {exc}", "store_error")
    if isinstance(exc, ChronorelayError):
        log.error("error on %s: %s", request.path, exc)
        return error_response(500, str(exc), "relay_error")
    if isinstance(exc, web.HTTPException):
        if exc.status < 400:
            raise exc
        return _framework_error(request, exc)
    if isinstance(exc, ConnectionResetError):
        raise exc
    log.error("unexpected error on %s", request.path, exc_info=exc)
    return error_response(
        500, "internal relay error; the details are in the relay's log", "internal_error"
    )


def _framework_error(request: web.Request, exc: web.HTTPException) -> web.Response:
    """aiohttp's own refusals (no route, wrong method, body too large), said plainly."""
    headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
    if isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(exc.allowed_methods)) or "none"
        message = f"{request.method} is not allowed on {request.path}; use {allowed}"
        return error_response(405, message, "method_not_allowed", headers)
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        limit = request.app[SERVICES].config.server.max_body_bytes
        message = (
            f"the request body is larger than the relay accepts ({limit} bytes); "
            "send less, or raise [server] max_body_bytes"
        )
        return error_response(413, message, "request_too_large")
    if isinstance(exc, web.HTTPNotFound):
        return error_response(
            404, f"no such endpoint: {request.method} {request.path}", "not_found"
        )
    return error_response(exc.status, exc.reason, "http_error", headers)
