"""Turning exceptions into OpenAI-shaped JSON errors at the HTTP edge. Never a traceback."""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.typedefs import Handler

from middleware.errors import ChronorelayError, RequestError, StoreError, UpstreamError
from middleware.types import JSON

log = logging.getLogger(__name__)


def error_body(message: str, code: str, kind: str | None = None) -> JSON:
    return {"error": {"message": message, "type": kind or code, "param": None, "code": code}}


def error_response(status: int, message: str, code: str) -> web.Response:
    return web.json_response(error_body(message, code), status=status)


@web.middleware
async def errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except RequestError as exc:
        return error_response(exc.status, str(exc), exc.code)
    except UpstreamError as exc:
        log.warning("upstream error on %s: %s", request.path, exc)
        return error_response(exc.status, str(exc), exc.code)
    except StoreError as exc:
        log.error("store error on %s: %s", request.path, exc)
        return error_response(503, f"the relay's store is unavailable: {exc}", "store_error")
    except ChronorelayError as exc:
        log.error("error on %s: %s", request.path, exc)
        return error_response(500, str(exc), "relay_error")
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return error_response(exc.status, exc.reason, _code_for(exc.status))
    except (ConnectionResetError, web.HTTPClientError):
        raise
    except Exception:
        log.exception("unexpected error on %s", request.path)
        return error_response(
            500, "internal relay error; the details are in the relay's log", "internal_error"
        )


def _code_for(status: int) -> str:
    return {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}.get(
        status, "http_error"
    )
