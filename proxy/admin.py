"""The admin API: ``/admin/*`` with ``Authorization: Bearer <[auth] admin_token>``.

See and set a user's clock, link and unlink users, see a thread's clock, preview the exact
block a message would get (without calling the upstream or writing anything), and
export/import the spec 000 §10.2 clock state. JSON in and out; errors are OpenAI-shaped
like the rest of the relay. The living-memory routes are in ``proxy.admin_memory``.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime
from typing import Literal

from aiohttp import web
from aiohttp.typedefs import Handler

from middleware.actions.model import load_actions
from middleware.awareness.group import group_plans
from middleware.awareness.stage import awareness_sections
from middleware.awareness.view import awareness_view
from middleware.clock.parsing import ParseResult
from middleware.clock.policy import PolicyOverrides
from middleware.clock.resolution import TimezoneResolution
from middleware.clock.stage import clock_view
from middleware.clock.state_file import (
    exportable,
    iso_utc,
    parse_instant,
    read_clock_state,
    write_clock_state,
)
from middleware.clock.temporal import estimate_tokens
from middleware.clock.zones import agent_timezone, get_zone
from middleware.commands.admin_commands import unlink_and_tell
from middleware.commands.link_commands import link_and_report
from middleware.continuity.stage import preview_cards
from middleware.errors import NotFoundError, RequestError
from middleware.identity import split_user_key, thread_channel
from middleware.injection import trim_sections, wrap
from middleware.store import ClockData, ImportCounts, Store, ThreadState, UserState
from middleware.types import JSON, Turn
from proxy import admin_memory
from proxy.admin_http import (
    AdminBody,
    admin_services,
    known_user,
    new_user_problem,
    no_user,
    validated,
)
from proxy.assembly import awareness_settings, clock_settings
from proxy.config import Config
from proxy.errors import read_json
from proxy.keys import SERVICES
from proxy.services import Services

log = logging.getLogger(__name__)

# Set on ``GET /admin/clock-state`` when the export left something out: how many warnings
# the relay's log holds for it (each naming its user or thread).
EXPORT_WARNINGS_HEADER = "X-Chronorelay-Export-Warnings"


# The route label of an admin request that matched no route (a mistyped path).
UNMATCHED_ROUTE = "unmatched"


_COUNTED_METHODS = frozenset({"GET", "PUT", "POST", "DELETE"})


@web.middleware
async def count_admin_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Count every ``/admin/*`` answer, refusals included, by method, route template and
    status. Outside the error middleware, so it sees the error responses it makes; a
    request whose client went away before an answer is not counted."""
    if not request.path.startswith("/admin/"):
        return await handler(request)
    try:
        response = await handler(request)
    except web.HTTPException as exc:  # a redirect, which the error middleware re-raises
        _count_admin(request, exc.status)
        raise
    _count_admin(request, response.status)
    return response


def _count_admin(request: web.Request, status: int) -> None:
    # Labels from closed sets only: a client's path or made-up method is no new series.
    resource = request.match_info.route.resource
    route = resource.canonical if resource is not None else UNMATCHED_ROUTE
    method = request.method if request.method in _COUNTED_METHODS else "other"
    request.app[SERVICES].metrics.count_admin_request(method, route, status)


def add_routes(app: web.Application) -> None:
    """Register every admin route on ``app``."""
    # ``.+``: a platform id may contain '/', and keys are matched up to the fixed suffix.
    app.router.add_get("/admin/users/{user_key:.+}/timezone", _method_not_allowed)
    app.router.add_put("/admin/users/{user_key:.+}/timezone", put_user_timezone)
    app.router.add_get("/admin/users/{user_key:.+}/policy", _method_not_allowed)
    app.router.add_put("/admin/users/{user_key:.+}/policy", put_user_policy)
    admin_memory.add_routes(app)
    app.router.add_get("/admin/users/{user_key:.+}", get_user)
    app.router.add_get("/admin/threads/{thread_key:.+}/clock", get_thread_clock)
    app.router.add_post("/admin/threads/{thread_key:.+}/preview", preview)
    app.router.add_post("/admin/threads/{thread_key:.+}/capture", capture_thread)
    app.router.add_post("/admin/jobs/{name}/run", run_job)
    app.router.add_post("/admin/links", post_links)
    app.router.add_delete("/admin/links/{user_key:.+}", delete_link)
    app.router.add_get("/admin/clock-state", export_clock_state)
    app.router.add_post("/admin/clock-state", import_clock_state)


class _TimezoneBody(AdminBody):
    timezone: str | None


class _LinksBody(AdminBody):
    user_keys: list[str]


class _PreviewBody(AdminBody):
    text: str
    user_key: str
    received_at: str | None = None
    display_name: str | None = None
    chat_type: Literal["dm", "group"] | None = None


async def get_user(request: web.Request) -> web.Response:
    """``GET /admin/users/{user_key}``: the user and their clock fields."""
    services = admin_services(request)
    key = request.match_info["user_key"]
    user = await known_user(services.store, key)
    return web.json_response(await _user_json(services.store, user, services.clock.now()))


async def put_user_timezone(request: web.Request) -> web.Response:
    """``PUT /admin/users/{user_key}/timezone`` ``{"timezone": "Asia/Tokyo" | null}``.

    A user the relay has not seen yet is created (201) with the zone, so that their first
    message already uses it: an operator may provision users before they speak. The key's
    channel must be one a message can come from (``new_user_problem``).
    """
    services = admin_services(request)
    key = request.match_info["user_key"]
    body = validated(_TimezoneBody, await read_json(request))
    if body.timezone is not None:
        try:
            get_zone(body.timezone)
        except ValueError as exc:
            raise RequestError(f"invalid timezone: {exc}") from exc
    elif await services.store.get_user(key) is None:
        raise NotFoundError(
            f"no user {key!r}: the relay has never seen a message from them, so there "
            "is no timezone to clear"
        )
    now = services.clock.now()
    create_at = await _creation_time(services, key, now)
    if not await services.store.set_user_timezone(key, body.timezone, create_at=create_at):
        raise no_user(key)  # forgotten since the look-up
    return await _user_response(services, key, now, created=create_at is not None)


async def put_user_policy(request: web.Request) -> web.Response:
    """``PUT /admin/users/{user_key}/policy`` ``{"mode": "normal", ...}``: the user's
    policy overrides (spec 000 §10.2). Keys given replace the stored ones; ``null`` clears
    one (back to the configured default); keys left out stay as they are."""
    services = admin_services(request)
    key = request.match_info["user_key"]
    body = validated(PolicyOverrides, await read_json(request))
    given = {name: getattr(body, name) for name in body.model_fields_set}

    def change(data: ClockData) -> ClockData:
        overrides = {k: v for k, v in data.policy_overrides.items() if k not in given}
        overrides.update({k: v for k, v in given.items() if v is not None})
        return dataclasses.replace(data, policy_overrides=overrides)

    now = services.clock.now()
    create_at = await _creation_time(services, key, now)
    if await services.store.update_clock_data(key, change, create_at=create_at) is None:
        raise no_user(key)  # forgotten since the look-up
    return await _user_response(services, key, now, created=create_at is not None)


async def _creation_time(services: Services, key: str, now: datetime) -> datetime | None:
    """``now`` when ``key`` is a user the relay has not seen yet and may create (an
    operator provisioning them before their first message), ``None`` for a known user;
    a 400 naming what is wrong with a key no message could come from."""
    if await services.store.get_user(key) is not None:
        return None
    problem = new_user_problem(services.config, key)
    if problem:
        raise RequestError(f"cannot create user {key!r}: {problem}")
    return now


async def _user_response(
    services: Services, key: str, now: datetime, *, created: bool
) -> web.Response:
    """The user as ``GET /admin/users/{key}`` shows them: 201 when just created."""
    user = await known_user(services.store, key)
    body = await _user_json(services.store, user, now)
    return web.json_response(body, status=201 if created else 200)


async def post_links(request: web.Request) -> web.Response:
    """``POST /admin/links`` ``{"user_keys": ["telegram:1", "discord:2"]}``: link the users
    to one person (merging any persons they were linked to); answer the person, every user
    now linked to it, the timezone they share (the first known: an already linked person's,
    else the first key's) and the zones it replaced, by user. When their zones differed,
    each linked user is told which was kept with their next message, as after ``/link``.
    400 for fewer than two distinct keys, 404 for an unknown user."""
    services = admin_services(request)
    body = validated(_LinksBody, await read_json(request))
    keys = list(dict.fromkeys(body.user_keys))
    for key in keys:
        try:
            split_user_key(key)
        except ValueError as exc:
            raise RequestError(str(exc)) from exc
    if len(keys) < 2:
        raise RequestError(
            "linking needs at least two different user keys, e.g. "
            '{"user_keys": ["telegram:1", "discord:2"]}'
        )
    try:
        # No user is being answered here: every linked one hears of a replaced zone.
        linking = await link_and_report(
            services.store, keys, now=services.clock.now(), notices=services.notices, me=None
        )
    except NotFoundError as exc:
        raise NotFoundError(
            f"{exc}; to link users before their first message, first PUT "
            "/admin/users/<user key>/timezone for each of them"
        ) from exc
    linked = await services.store.linked_users(keys[0])
    return web.json_response(
        {
            "person_id": linking.person_id,
            "user_keys": linked,
            "timezone": linking.timezone,
            "timezones_replaced": linking.replaced,
        }
    )


async def delete_link(request: web.Request) -> web.Response:
    """``DELETE /admin/links/{user_key}``: unlink the user from their person (they keep a
    copy of its timezone and clock data); the user is told with their next message.
    404 when the user is unknown or not linked."""
    services = admin_services(request)
    key = request.match_info["user_key"]
    if not await unlink_and_tell(services.store, key, services.notices):
        if await services.store.get_user(key) is None:
            raise no_user(key)
        raise NotFoundError(f"user {key!r} is not linked to anyone; there is nothing to unlink")
    return web.json_response({"user_key": key, "unlinked": True})


async def get_thread_clock(request: web.Request) -> web.Response:
    """``GET /admin/threads/{thread_key}/clock``: the thread's clock state."""
    services = admin_services(request)
    key = request.match_info["thread_key"]
    thread = await services.store.get_thread(key)
    if thread is None:
        raise NotFoundError(
            f"no thread {key!r}: the relay has no message in it. Thread keys look like "
            "'agent:<agent id>:<channel>:<dm|group>:<id>' or 'agent:<agent id>:api:<id>'"
        )
    return web.json_response(_thread_json(thread))


async def preview(request: web.Request) -> web.Response:
    """``POST /admin/threads/{thread_key}/preview``: the block the relay would inject.

    Body: ``{"text", "user_key", "received_at"?, "display_name"?, "chat_type"?}``. The
    state read is the one ``record_inbound`` would read now, so the answer equals what the
    upstream would receive for that message at that instant, until the thread moves.
    """
    services = admin_services(request)
    thread_key = request.match_info["thread_key"]
    body = validated(_PreviewBody, await read_json(request))
    try:
        _, key_chat_type = thread_channel(thread_key)
        channel, user_id = split_user_key(body.user_key)
        at = services.clock.now() if body.received_at is None else parse_instant(body.received_at)
    except ValueError as exc:
        raise RequestError(str(exc)) from exc
    store = services.store
    thread = await store.get_thread(thread_key)
    display_name = body.display_name
    if display_name is None:
        known = await store.get_user(body.user_key)
        display_name = known.display_name if known else None
    turn = Turn(
        channel=channel,
        thread_id=thread_key,
        user_id=user_id,
        text=body.text,
        received_at=at,
        body={"messages": [{"role": "user", "content": body.text}]},
        chat_type=body.chat_type or (thread.chat_type if thread else key_chat_type),
        display_name=display_name,
    )
    turn.user_key, turn.thread_key = body.user_key, thread_key
    turn.prior = await store.peek_prior(thread_key, body.user_key)
    settings = clock_settings(services.config)
    try:
        view = await clock_view(store, turn, settings)
        turn.time_expressions = view.expressions
        aware_settings = awareness_settings(services.config)
        group = await group_plans(store, turn)
        aware = awareness_view(turn, aware_settings, group=group)
    except OverflowError as exc:
        # A message can only arrive near now; a preview may ask about any instant, and
        # dates reached from one at the calendar's end ("tomorrow", an expiry) overflow.
        raise RequestError(
            f"received_at {body.received_at!r} is too close to the end of the calendar to "
            "work out the times around it; use an instant before the year 9999"
        ) from exc
    # As the stages add them and the injection stage renders them: the clock's section
    # first (never dropped), then awareness, as on a channel where the relay doesn't
    # answer directives itself (the API); ``relay_reply`` is the answer where it does.
    sections = trim_sections(
        [view.block, *awareness_sections(aware, relay_answers=False)],
        services.config.clock.max_block_tokens,
        view.droppable,
    )
    sections = (sections if settings.enabled else []) + await preview_cards(
        services.continuity, turn
    )
    block = wrap("\n".join(sections)) if sections else None
    return web.json_response(
        {
            "thread_key": thread_key,
            "thread_known": thread is not None,
            "user_key": body.user_key,
            "received_at": iso_utc(at),
            "block": block,
            "tokens": estimate_tokens(block) if block else 0,
            "session_timezone": _zone_json(view.resolution),
            "times": [_time_json(found) for found in view.expressions],
            "mode": aware.mode,
            "thread_kind": aware.thread_kind,
            "checkins_fired": list(aware.fired),
            "relay_reply": aware.reply,
        }
    )


async def capture_thread(request: web.Request) -> web.Response:
    """``POST /admin/threads/{thread_key}/capture``: capture the thread's current session
    now (spec 001 §5.2 "manual_request"); answers what was captured."""
    services = admin_services(request)
    thread_key = request.match_info["thread_key"]
    if await services.store.get_thread(thread_key) is None:
        raise NotFoundError(f"no thread {thread_key!r} has been seen")
    if not services.config.continuity.enabled:
        raise RequestError('continuity is off ([continuity] mode = "off"): nothing is captured')
    outcome = await services.continuity.capture_thread(thread_key, "manual_request")
    if outcome is None:
        return web.json_response({"thread_key": thread_key, "captured": False})
    return web.json_response(
        {"thread_key": thread_key, "captured": True, **dataclasses.asdict(outcome)}
    )


JOBS = ("nightly", "scheduler")


async def run_job(request: web.Request) -> web.Response:
    """``POST /admin/jobs/{name}/run``: run a background job now. ``nightly`` runs the
    nightly job for every active user (whatever their local time); ``scheduler`` runs one
    pass of the capture scheduler."""
    services = admin_services(request)
    name = request.match_info["name"]
    if name == "nightly":
        report = await services.continuity.run_nightly()
        return web.json_response({"job": name, **dataclasses.asdict(report)})
    if name == "scheduler":
        tick = await services.continuity.tick()
        return web.json_response(
            {
                "job": name,
                "captures": [dataclasses.asdict(c) for c in tick.captures],
                "nightly": dataclasses.asdict(tick.nightly) if tick.nightly else None,
                "housekeeping": tick.housekeeping,
            }
        )
    raise NotFoundError(f"no job {name!r}; the jobs are: {', '.join(JOBS)}")


async def export_clock_state(request: web.Request) -> web.Response:
    """``GET /admin/clock-state``: the spec 000 §10.2 v3 document."""
    services = admin_services(request)
    document, warnings = await export_document(
        services.store, services.config, services.clock.now()
    )
    for warning in warnings:
        log.warning("clock-state export: %s", warning)
    headers = {EXPORT_WARNINGS_HEADER: str(len(warnings))} if warnings else None
    return web.json_response(document, headers=headers)


async def import_clock_state(request: web.Request) -> web.Response:
    """``POST /admin/clock-state`` (a v3 document): merge it; answer what was created."""
    services = admin_services(request)
    counts = await import_document(services.store, await read_json(request), services.clock.now())
    return web.json_response(dataclasses.asdict(counts))


async def export_document(
    store: Store, config: Config, now: datetime
) -> tuple[JSON, tuple[str, ...]]:
    """The store's clock state as a v3 document (``delta_hours`` as of ``now``), and a
    warning for each stored value left out so that the document imports again (a zone the
    relay no longer accepts is exported as unset)."""
    snapshot, warnings = exportable(await store.export_clock_state())
    return write_clock_state(snapshot, agent_tz=agent_zone(config), at=now), warnings


async def import_document(store: Store, document: object, now: datetime) -> ImportCounts:
    """Validate a parsed v3 document and merge it into the store in one transaction.

    Raises ``RequestError`` naming every problem when the document is not valid v3.
    """
    return await store.import_clock_state(read_clock_state(document, now=now), now=now)


def agent_zone(config: Config) -> str:
    """The agent's IANA zone: ``[clock] agent_timezone``, else the host's, else UTC."""
    return config.clock.agent_timezone or agent_timezone()


async def _method_not_allowed(request: web.Request) -> web.Response:
    admin_services(request)
    raise web.HTTPMethodNotAllowed(request.method, ["PUT"])


async def _user_json(store: Store, user: UserState, now: datetime) -> JSON:
    # A linked user's zone is the person's; show the one the clock uses next to the own.
    prior = await store.peek_prior("", user.user_key)
    data = prior.clock_data
    actions = [
        {**action.to_json(), "status_now": action.status_at(now)}
        for action in load_actions(data.latest_actions)
    ]
    return {
        "user_key": user.user_key,
        "channel": user.channel,
        "platform_user_id": user.platform_user_id,
        "display_name": user.display_name,
        "person_id": user.person_id,
        "default_tz": user.default_tz,
        "effective_tz": prior.user_tz,
        "locale": user.locale,
        # The app's, and the one dates are written in (the chosen one, else the app's).
        "app_locale": user.app_locale,
        "effective_locale": prior.reader_locale,
        "last_interaction_any_channel_at": _iso(user.last_interaction_any_channel_at),
        "last_channel": user.last_channel,
        "policy_overrides": data.policy_overrides,
        "calibration": data.calibration,
        "latest_actions": actions,
    }


def _thread_json(thread: ThreadState) -> JSON:
    return {
        "thread_key": thread.thread_key,
        "channel": thread.channel,
        "chat_type": thread.chat_type,
        "kind": thread.kind,
        "session_tz": thread.session_tz,
        "last_interaction_at": _iso(thread.last_interaction_at),
        "last_user_message_at": _iso(thread.last_user_message_at),
        "last_agent_message_at": _iso(thread.last_agent_message_at),
        "participants": list(thread.participants),
        "last_user_message_by_user": {
            user: iso_utc(at) for user, at in sorted(thread.last_user_message_by_user.items())
        },
    }


def _zone_json(resolution: TimezoneResolution) -> JSON:
    return {
        "zone": resolution.zone,
        "source": resolution.source,
        "fallback": resolution.fallback,
        "offset_minutes": resolution.offset_minutes,
        "questions": list(resolution.questions),
        "notes": list(resolution.notes),
    }


def _time_json(found: ParseResult) -> JSON:
    return {
        "text": found.matched_text,
        "kind": found.kind,
        "start": _iso(found.start_instant),
        "end": _iso(found.end_instant),
        "zone": found.zone,
        "needs_clarification": found.needs_clarification,
        "question": found.clarification_question,
    }


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else iso_utc(instant)
