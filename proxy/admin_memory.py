"""The admin routes for a person's living memory (spec 003): list, remember and forget
facts under ``/admin/users/{user_key}/memory``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from aiohttp import web
from pydantic import StringConstraints

from middleware.clock.state_file import iso_utc
from middleware.continuity.model import MemoryFact, MemoryKind
from middleware.errors import NotFoundError
from middleware.memory.confidence import confidence_now
from middleware.memory.learn import enforce_limit
from middleware.types import JSON
from proxy.admin_http import AdminBody, admin_services, known_user, validated
from proxy.errors import read_json


def add_routes(app: web.Application) -> None:
    """Register the memory routes on ``app``; before ``GET /admin/users/{user_key}``,
    whose pattern would match their paths too."""
    app.router.add_get("/admin/users/{user_key:.+}/memory", get_user_memory)
    app.router.add_post("/admin/users/{user_key:.+}/memory", post_user_memory)
    app.router.add_delete(r"/admin/users/{user_key:.+}/memory/{fact_id:\d+}", delete_user_memory)


class _MemoryBody(AdminBody):
    kind: MemoryKind
    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]


async def get_user_memory(request: web.Request) -> web.Response:
    """``GET /admin/users/{user_key}/memory``: the person's remembered facts (spec 003,
    living memory), oldest first, each with how sure memory is of it now and whether the
    user asked for it to be kept (``committed``: never forgotten for its age or the limit)."""
    services = admin_services(request)
    key = request.match_info["user_key"]
    await known_user(services.store, key)
    facts = await services.store.memory_facts(key)
    now = services.clock.now()
    return web.json_response({"user_key": key, "facts": [_fact_json(f, now) for f in facts]})


async def post_user_memory(request: web.Request) -> web.Response:
    """``POST /admin/users/{user_key}/memory`` ``{"kind": "fact", "text": "..."}``: remember
    a fact for the person as the operator's (confidence 1.0, never aged out; spec 003 §8).
    201 with the fact; 200 with ``"added": false`` when the person already has that text
    (it then counts as mentioned again)."""
    services = admin_services(request)
    key = request.match_info["user_key"]
    await known_user(services.store, key)
    body = validated(_MemoryBody, await read_json(request))
    now = services.clock.now()
    fact = await services.store.add_memory_fact(key, body.kind, body.text, source="admin", at=now)
    if fact is None:
        return web.json_response({"user_key": key, "added": False, "text": body.text})
    await enforce_limit(services.store, key, services.config.memory.max_facts, now=now)
    return web.json_response(
        {"user_key": key, "added": True, "fact": _fact_json(fact, now)}, status=201
    )


_MAX_FACT_ID = 2**63 - 1


async def delete_user_memory(request: web.Request) -> web.Response:
    """``DELETE /admin/users/{user_key}/memory/{fact_id}``: forget one of the person's facts."""
    services = admin_services(request)
    key = request.match_info["user_key"]
    fact_id = int(request.match_info["fact_id"])
    await known_user(services.store, key)
    # Past SQLite's integers no fact can have the id (and the driver would overflow).
    if fact_id > _MAX_FACT_ID or not await services.store.delete_memory_fact(key, fact_id):
        raise NotFoundError(
            f"user {key!r} has no remembered fact {fact_id}; GET /admin/users/{key}/memory "
            "lists their facts with their ids"
        )
    return web.json_response({"user_key": key, "fact_id": fact_id, "deleted": True})


def _fact_json(fact: MemoryFact, now: datetime) -> JSON:
    return {
        "fact_id": fact.fact_id,
        "user_key": fact.user_key,
        "kind": fact.kind,
        "text": fact.text,
        "source": fact.source,
        "created_at": iso_utc(fact.created_at),
        "last_mentioned_at": iso_utc(fact.last_mentioned_at),
        "confidence": fact.confidence,
        "confidence_now": round(confidence_now(fact, now), 2),
        "source_entry_id": fact.source_entry_id,
        "committed": fact.committed,
    }
