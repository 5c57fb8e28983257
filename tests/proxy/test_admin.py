"""The admin API over HTTP: auth, users, threads, preview, clock-state export/import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from proxy.keys import SERVICES
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream

ADMIN = "admin-token-0123456789"
KEY = "relay-key-0123456789abcdef"
AUTH: dict[str, Any] = {
    "admin_token": ADMIN,
    "keys": [{"name": "t", "key": KEY, "permissions": ["chat", "replay"]}],
}
CLOCK: dict[str, Any] = {"agent_timezone": "Europe/Berlin"}
THREAD = "agent:main:api:plan"


async def call(
    relay: RunningServer,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = ADMIN,
) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as http:
        async with http.request(method, f"{relay.url}{path}", json=body, headers=headers) as r:
            return r.status, await r.json()


async def chat(
    relay: RunningServer, text: str, *, at: str, user: str = "ana", thread: str = "plan"
) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {KEY}",
        "X-Chronorelay-User": user,
        "X-Chronorelay-Thread": thread,
        "X-Chronorelay-Received-At": at,
    }
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{relay.url}/v1/chat/completions", json=body, headers=headers
        ) as response:
            assert response.status == 200, await response.text()
            return dict(response.headers)


def forwarded_block(upstream: FakeUpstream, text: str) -> str:
    content = upstream.last.body["messages"][-1]["content"]
    assert isinstance(content, str) and content.startswith(f"{text}\n\n")
    return content[len(text) + 2 :]


@pytest.fixture
async def relay(relay_factory: RelayFactory) -> RunningServer:
    return await relay_factory(auth=AUTH, clock=CLOCK)


async def test_admin_api_is_off_without_a_token(relay_factory: RelayFactory) -> None:
    relay = await relay_factory()
    status, body = await call(relay, "GET", "/admin/clock-state")
    assert status == 403
    assert body["error"]["code"] == "permission_denied"
    assert "admin_token" in body["error"]["message"]


@pytest.mark.parametrize("token", [None, "wrong-token-0123456789", KEY])
async def test_admin_needs_the_admin_token(relay: RunningServer, token: str | None) -> None:
    for method, path in [
        ("GET", "/admin/users/api:ana"),
        ("PUT", "/admin/users/api:ana/timezone"),
        ("GET", f"/admin/threads/{THREAD}/clock"),
        ("POST", f"/admin/threads/{THREAD}/preview"),
        ("GET", "/admin/clock-state"),
        ("POST", "/admin/clock-state"),
    ]:
        status, body = await call(relay, method, path, {}, token=token)
        assert status == 401, (method, path)
        assert body["error"]["code"] == "invalid_api_key"


async def test_get_user(relay: RunningServer) -> None:
    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00")
    status, user = await call(relay, "GET", "/admin/users/api:ana")
    assert status == 200
    assert user == {
        "user_key": "api:ana",
        "channel": "api",
        "platform_user_id": "ana",
        "display_name": None,
        "person_id": None,
        "default_tz": None,
        "effective_tz": None,
        "locale": None,
        "app_locale": None,
        "effective_locale": None,
        "last_interaction_any_channel_at": "2026-02-09T01:00:00+00:00",
        "last_channel": "api",
        "policy_overrides": {},
        "calibration": {},
        "latest_actions": [],
    }
    status, body = await call(relay, "GET", "/admin/users/api:ana/timezone")
    assert status == 405 and body["error"]["code"] == "method_not_allowed"
    status, body = await call(relay, "GET", "/admin/users/api:nobody")
    assert status == 404
    assert body["error"]["code"] == "not_found"
    assert "no user 'api:nobody'" in body["error"]["message"]


async def test_set_timezone_applies_to_the_next_forwarded_block(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00")
    status, body = await call(relay, "PUT", "/admin/users/api:ana/timezone", {"timezone": "EST"})
    assert status == 400 and "abbreviation" in body["error"]["message"]
    status, body = await call(relay, "PUT", "/admin/users/api:ana/timezone", {"tz": "UTC"})
    assert status == 400 and "timezone" in body["error"]["message"]
    status, user = await call(
        relay, "PUT", "/admin/users/api:ana/timezone", {"timezone": "Asia/Tokyo"}
    )
    assert status == 200 and user["default_tz"] == user["effective_tz"] == "Asia/Tokyo"
    await chat(relay, "what now?", at="2026-02-09T11:00:00+09:00")
    assert "Asia/Tokyo" in forwarded_block(fake_upstream, "what now?")

    status, user = await call(relay, "PUT", "/admin/users/api:ana/timezone", {"timezone": None})
    assert status == 200 and user["default_tz"] is None
    await chat(relay, "and now?", at="2026-02-09T12:00:00+09:00")
    assert "Asia/Tokyo" not in forwarded_block(fake_upstream, "and now?")


async def test_timezone_of_a_user_not_seen_yet_is_set_for_their_first_message(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    path = "/admin/users/api:kenji/timezone"
    status, user = await call(relay, "PUT", path, {"timezone": "Asia/Tokyo"})
    assert status == 201
    assert (user["user_key"], user["channel"], user["platform_user_id"]) == (
        "api:kenji",
        "api",
        "kenji",
    )
    assert user["default_tz"] == user["effective_tz"] == "Asia/Tokyo"
    assert user["last_interaction_any_channel_at"] is None and user["last_channel"] is None
    status, shown = await call(relay, "GET", "/admin/users/api:kenji")
    assert status == 200 and shown == user
    status, _ = await call(relay, "GET", "/admin/threads/agent:main:api:k/clock")
    assert status == 404  # a user record, no thread

    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00", user="kenji", thread="k")
    assert "Asia/Tokyo" in forwarded_block(fake_upstream, "hello")
    status, thread = await call(relay, "GET", "/admin/threads/agent:main:api:k/clock")
    assert status == 200 and thread["participants"] == ["api:kenji"]
    status, user = await call(relay, "GET", "/admin/users/api:kenji")
    assert user["last_interaction_any_channel_at"] == "2026-02-09T01:00:00+00:00"
    assert user["default_tz"] == "Asia/Tokyo"
    # Set again, the user now known: 200.
    status, _ = await call(relay, "PUT", path, {"timezone": "Asia/Seoul"})
    assert status == 200


async def test_policy_of_a_user_not_seen_yet_is_kept_for_their_first_message(
    relay: RunningServer,
) -> None:
    path = "/admin/users/api:kenji/policy"
    status, user = await call(relay, "PUT", path, {"mode": "off"})
    assert status == 201
    assert (user["user_key"], user["policy_overrides"]) == ("api:kenji", {"mode": "off"})
    assert user["default_tz"] is None and user["last_channel"] is None

    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00", user="kenji", thread="k")
    status, user = await call(relay, "GET", "/admin/users/api:kenji")
    assert user["last_channel"] == "api" and user["policy_overrides"] == {"mode": "off"}
    # Set again, the user now known: 200.
    status, user = await call(relay, "PUT", path, {"mode": None})
    assert status == 200 and user["policy_overrides"] == {}


async def test_policy_for_a_key_no_message_could_come_from_creates_nothing(
    relay: RunningServer,
) -> None:
    status, body = await call(relay, "PUT", "/admin/users/slack:u1/policy", {"mode": "off"})
    assert status == 400
    assert "cannot create user 'slack:u1'" in body["error"]["message"]
    status, _ = await call(relay, "GET", "/admin/users/slack:u1")
    assert status == 404


@pytest.mark.parametrize(
    ("key", "status", "words"),
    [
        ("slack:u1", 400, "add the channel to an API key's channels"),
        ("telegram:@ana", 400, "telegram user ids are numbers"),
        ("discord:ana", 400, "discord user ids are numbers"),
        ("ana", 400, "user keys look like '<channel>:<platform user id>'"),
        ("telegram:%20", 400, "is not a user key"),
    ],
)
async def test_a_user_not_seen_yet_needs_a_key_messages_can_come_from(
    relay: RunningServer, key: str, status: int, words: str
) -> None:
    got, body = await call(relay, "PUT", f"/admin/users/{key}/timezone", {"timezone": "UTC"})
    assert got == status and words in body["error"]["message"]
    assert f"cannot create user {key.replace('%20', ' ')!r}" in body["error"]["message"]
    status, _ = await call(relay, "GET", f"/admin/users/{key}")
    assert status == 404


async def test_a_channel_an_api_key_speaks_for_can_have_users_provisioned(
    relay_factory: RelayFactory,
) -> None:
    keys = [{"name": "s", "key": KEY, "channels": ["slack"]}]
    relay = await relay_factory(auth={"admin_token": ADMIN, "keys": keys})
    got, user = await call(relay, "PUT", "/admin/users/slack:u1/timezone", {"timezone": "UTC"})
    assert got == 201 and user["channel"] == "slack"
    got, user = await call(relay, "PUT", "/admin/users/telegram:42/timezone", {"timezone": "UTC"})
    assert got == 201 and user["platform_user_id"] == "42"


async def test_clearing_the_timezone_of_a_user_not_seen_yet_creates_nothing(
    relay: RunningServer,
) -> None:
    status, body = await call(relay, "PUT", "/admin/users/api:ghost/timezone", {"timezone": None})
    assert status == 404 and "no timezone to clear" in body["error"]["message"]
    status, _ = await call(relay, "GET", "/admin/users/api:ghost")
    assert status == 404


async def test_thread_clock(relay: RunningServer) -> None:
    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00")
    status, thread = await call(relay, "GET", f"/admin/threads/{THREAD}/clock")
    assert status == 200
    assert thread["thread_key"] == THREAD
    assert (thread["channel"], thread["chat_type"], thread["kind"]) == ("api", "dm", "conversation")
    assert thread["session_tz"] is None
    assert thread["last_user_message_at"] == "2026-02-09T01:00:00+00:00"
    assert thread["last_agent_message_at"] >= thread["last_user_message_at"]
    assert thread["last_interaction_at"] == thread["last_agent_message_at"]
    assert thread["participants"] == ["api:ana"]
    assert thread["last_user_message_by_user"] == {"api:ana": "2026-02-09T01:00:00+00:00"}
    status, body = await call(relay, "GET", "/admin/threads/agent:main:api:nope/clock")
    assert status == 404 and "no thread" in body["error"]["message"]


async def test_preview_is_what_the_upstream_then_receives(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00")
    await call(relay, "PUT", "/admin/users/api:ana/timezone", {"timezone": "Asia/Kathmandu"})
    store = relay.runner.app[SERVICES].store
    before = await store.transcript(THREAD)
    text = "can we talk tomorrow at 9am?"
    at = "2026-02-11T08:30:00+09:00"

    status, preview = await call(
        relay,
        "POST",
        f"/admin/threads/{THREAD}/preview",
        {"text": text, "user_key": "api:ana", "received_at": at},
    )
    assert status == 200
    assert await store.transcript(THREAD) == before  # nothing written
    assert preview["thread_known"] is True
    assert preview["received_at"] == "2026-02-10T23:30:00+00:00"
    assert preview["session_timezone"]["zone"] == "Asia/Kathmandu"
    assert preview["session_timezone"]["source"] == "user"
    assert preview["session_timezone"]["fallback"] is False
    [when] = preview["times"]
    assert (when["text"], when["zone"]) == ("tomorrow at 9am", "Asia/Kathmandu")
    assert when["start"] == "2026-02-12T03:15:00+00:00"  # 09:00 at +05:45

    headers = await chat(relay, text, at=at)
    assert forwarded_block(fake_upstream, text) == preview["block"]
    assert headers["X-Chronorelay-Injected-Tokens"] == str(preview["tokens"])


async def test_preview_of_a_new_thread_and_bad_input(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    path = "/admin/threads/agent:main:api:fresh/preview"
    status, preview = await call(relay, "POST", path, {"text": "hi", "user_key": "api:bo"})
    assert status == 200 and preview["thread_known"] is False
    assert preview["session_timezone"]["fallback"] is True
    assert preview["block"].startswith("<relay_context>\n")
    assert fake_upstream.requests == []
    assert await relay.runner.app[SERVICES].store.get_user("api:bo") is None

    for body, expected in [
        ({"user_key": "api:bo"}, "text: Field required"),
        ({"text": "hi", "user_key": "bo"}, "not a user key"),
        ({"text": 5, "user_key": "api:bo"}, "text: Input should be a valid string"),
        ({"text": "hi", "user_key": "api:bo", "received_at": "noon"}, "not an ISO 8601"),
        ({"text": "hi", "user_key": "api:bo", "chat_type": "crowd"}, "chat_type"),
        # Past what Python's datetime holds once in UTC, or whose "tomorrow" is.
        (
            {"text": "hi", "user_key": "api:bo", "received_at": "9999-12-31T23:59:59-01:00"},
            "out of range once in UTC",
        ),
        (
            {"text": "at 9am", "user_key": "api:bo", "received_at": "9999-12-31T23:59:59Z"},
            "too close to the end of the calendar",
        ),
        (
            {"text": "clock it: gym", "user_key": "api:bo", "received_at": "9999-12-31T12:00Z"},
            "too close to the end of the calendar",
        ),
    ]:
        status, error = await call(relay, "POST", path, body)
        assert status == 400, body
        assert expected in error["error"]["message"]
    status, error = await call(
        relay, "POST", "/admin/threads/plan/preview", {"text": "hi", "user_key": "api:bo"}
    )
    assert status == 400 and "not a thread key" in error["error"]["message"]


async def test_clock_state_round_trip(
    relay_factory: RelayFactory, relay: RunningServer, tmp_path: Path
) -> None:
    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00")
    await chat(relay, "hey", at="2026-02-09T11:00:00+09:00", user="bo", thread="team")
    await call(relay, "PUT", "/admin/users/api:ana/timezone", {"timezone": "Asia/Kathmandu"})
    incoming = {
        "version": 3,
        "threads": {
            "agent:main:telegram:group:-1001": {
                "thread_kind": "project",
                "session_tz": "Asia/Kathmandu",
                "participants": ["telegram:7", "api:ana"],
                "last_interaction_iso": "2026-02-08T09:00:00+05:45",
                "last_user_message_iso_by_user": {"telegram:7": "2026-02-08T09:00:00+05:45"},
            }
        },
    }
    status, counts = await call(relay, "POST", "/admin/clock-state", incoming)
    assert status == 200
    assert counts == {
        "users_created": 1,
        "users_merged": 1,
        "threads_created": 1,
        "threads_merged": 0,
        "links": 0,
    }

    status, exported = await call(relay, "GET", "/admin/clock-state")
    assert status == 200 and exported["version"] == 3
    assert set(exported["users"]) == {"api:ana", "api:bo", "telegram:7"}
    assert exported["users"]["api:ana"]["default_tz"] == "Asia/Kathmandu"
    group = exported["threads"]["agent:main:telegram:group:-1001"]
    assert group["agent_tz"] == "Europe/Berlin"
    assert group["delta_hours"] % 1 == 0.75  # +05:45 against Berlin's whole hours
    assert group["last_user_message_iso_by_user"] == {"telegram:7": "2026-02-08T03:15:00+00:00"}

    other = await relay_factory(
        auth=AUTH, clock=CLOCK, store={"path": str(tmp_path / "other.sqlite3")}
    )
    status, counts = await call(other, "POST", "/admin/clock-state", exported)
    assert status == 200 and counts["users_created"] == 3 and counts["threads_created"] == 3
    status, again = await call(other, "GET", "/admin/clock-state")
    assert again == exported


async def test_clock_state_export_of_a_refused_zone_imports_again(
    relay_factory: RelayFactory, relay: RunningServer, tmp_path: Path
) -> None:
    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00")
    # An older version's /tz stored it; the relay now refuses it.
    await relay.runner.app[SERVICES].store.set_user_timezone("api:ana", "Etc/GMT+2")
    async with aiohttp.ClientSession() as http:
        async with http.get(
            f"{relay.url}/admin/clock-state", headers={"Authorization": f"Bearer {ADMIN}"}
        ) as response:
            assert response.status == 200
            assert response.headers["X-Chronorelay-Export-Warnings"] == "1"
            exported = await response.json()
    assert exported["users"]["api:ana"]["default_tz"] is None

    other = await relay_factory(
        auth=AUTH, clock=CLOCK, store={"path": str(tmp_path / "other.sqlite3")}
    )
    status, counts = await call(other, "POST", "/admin/clock-state", exported)
    assert status == 200 and counts["users_created"] == 1


async def test_an_action_the_relay_cannot_use_is_refused_and_the_user_keeps_working(
    relay: RunningServer,
) -> None:
    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00")
    broken = {"id": "a1", "label": "gym", "recorded_iso": "9999-12-31T23:30:00+00:00"}
    document = {"version": 3, "users": {"api:ana": {"latest_actions": [broken]}}}
    status, body = await call(relay, "POST", "/admin/clock-state", document)
    assert status == 400
    assert 'users["api:ana"].latest_actions[0]' in body["error"]["message"]
    # Had it been stored, every turn and admin read of the user would answer 500.
    await chat(relay, "still here", at="2026-02-09T11:00:00+09:00")
    status, user = await call(relay, "GET", "/admin/users/api:ana")
    assert status == 200 and user["latest_actions"] == []


async def test_clock_state_import_rejects_bad_documents(relay: RunningServer) -> None:
    status, body = await call(
        relay,
        "POST",
        "/admin/clock-state",
        {
            "version": 3,
            "users": {"api:x": {"last_interaction_any_channel_iso": "9999-12-31T23:00:00-02:00"}},
        },
    )
    assert status == 400
    assert (
        "users[\"api:x\"].last_interaction_any_channel_iso: '9999-12-31T23:00:00-02:00' is out "
        "of range once in UTC"
    ) in body["error"]["message"]
    status, body = await call(relay, "POST", "/admin/clock-state", {"version": 2})
    assert status == 400 and "reads version 3" in body["error"]["message"]
    # Ahead of the relay's clock (the fixture's, 2026): refused, nothing stored.
    future = {
        "version": 3,
        "threads": {"agent:main:api:t": {"last_interaction_iso": "2099-01-01T00:00Z"}},
    }
    status, body = await call(relay, "POST", "/admin/clock-state", future)
    assert status == 400
    assert 'threads["agent:main:api:t"].last_interaction_iso' in body["error"]["message"]
    assert "is in the future" in body["error"]["message"]
    status, _ = await call(relay, "GET", "/admin/threads/agent:main:api:t/clock")
    assert status == 404
    status, body = await call(
        relay, "POST", "/admin/clock-state", {"version": 3, "users": {"api:x": {"default_tz": 9}}}
    )
    assert status == 400
    assert 'users["api:x"].default_tz: Input should be a valid string' in body["error"]["message"]
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{relay.url}/admin/clock-state",
            data=b"{nope",
            headers={"Authorization": f"Bearer {ADMIN}"},
        ) as response:
            assert response.status == 400
            assert "not valid JSON" in (await response.json())["error"]["message"]


@pytest.mark.parametrize(
    ("method", "path", "body", "keys"),
    [
        ("PUT", "/admin/users/api:ana/timezone", ["Asia/Tokyo"], "'timezone', not a list"),
        ("PUT", "/admin/users/api:ana/policy", "normal", "'mode', 'auto_clock_temporal_actions'"),
        ("POST", "/admin/links", True, "'user_keys', not true or false"),
        ("POST", f"/admin/threads/{THREAD}/preview", 5, "'text', 'user_key'"),
    ],
)
async def test_a_body_that_is_not_an_object_is_told_which_keys_to_send(
    relay_factory: RelayFactory, method: str, path: str, body: Any, keys: str
) -> None:
    relay = await relay_factory(auth=AUTH, clock=CLOCK)
    await chat(relay, "hi", at="2026-02-09T10:00:00+09:00")
    status, answer = await call(relay, method, path, body)
    assert status == 400
    message = answer["error"]["message"]
    assert message.startswith("the request body must be a JSON object with the keys ")
    assert keys in message and "_" + "Body" not in message


async def test_policy_booleans_and_modes_must_be_json_types(relay: RunningServer) -> None:
    await chat(relay, "hi", at="2026-02-09T10:00:00+09:00")
    path = "/admin/users/api:ana/policy"
    for body, expected in [
        ({"auto_clock_temporal_actions": "yes"}, "auto_clock_temporal_actions: Input should be"),
        ({"auto_clock_temporal_actions": 1}, "auto_clock_temporal_actions: Input should be"),
        ({"mode": 1}, "mode: Input should be"),
    ]:
        status, error = await call(relay, "PUT", path, body)
        assert status == 400, body
        assert expected in error["error"]["message"]
        assert "bool" in error["error"]["message"] or "'off'" in error["error"]["message"]
    status, user = await call(relay, "GET", "/admin/users/api:ana")
    assert user["policy_overrides"] == {}
    status, user = await call(relay, "PUT", path, {"auto_clock_temporal_actions": False})
    assert status == 200 and user["policy_overrides"] == {"auto_clock_temporal_actions": False}


@pytest.mark.parametrize(
    ("refused", "expected"),
    [
        (
            {"threads": {"agent:main:api:t": {"thread_kind": "x"}}},
            "threads[\"agent:main:api:t\"].thread_kind: Input should be 'project', "
            "'conversation', 'scheduling' or 'operations'",
        ),
        (
            {"users": {"api:bo": {"calibration": {"activity_overrides": {"gym": {}}}}}},
            'users["api:bo"].calibration.activity_overrides.gym.typical_minutes: Field required',
        ),
        (
            {
                "users": {
                    "api:bo": {
                        "calibration": {
                            "activity_overrides": {
                                "gym": {
                                    "typical_minutes": "90",
                                    "max_minutes": 120,
                                    "updated_iso": "2026-02-01T12:00:00Z",
                                }
                            }
                        }
                    }
                }
            },
            "gym.typical_minutes: Input should be a valid integer",
        ),
    ],
)
async def test_an_import_with_one_bad_record_imports_nothing(
    relay: RunningServer, refused: dict[str, Any], expected: str
) -> None:
    good = {
        "users": {"api:cy": {"default_tz": "Asia/Tokyo"}},
        "threads": {"agent:main:api:fine": {"thread_kind": "project"}},
    }
    document: dict[str, Any] = {"version": 3}
    for part in ("users", "threads"):
        document[part] = {**good[part], **refused.get(part, {})}
    status, body = await call(relay, "POST", "/admin/clock-state", document)
    assert status == 400
    assert body["error"]["message"].startswith("invalid clock-state file: ")
    assert expected in body["error"]["message"]
    status, exported = await call(relay, "GET", "/admin/clock-state")
    assert exported["users"] == {} and exported["threads"] == {}


async def test_admin_requests_are_counted_by_route_template_and_status(
    relay: RunningServer,
) -> None:
    await chat(relay, "hi", at="2026-02-09T10:00:00+09:00")
    await call(relay, "GET", "/admin/users/api:ana")
    await call(relay, "GET", "/admin/users/api:ana")
    await call(relay, "GET", "/admin/users/api:nobody")
    await call(relay, "PUT", "/admin/users/api:ana/timezone", {"timezone": "Mars/Base"})
    await call(relay, "GET", "/admin/clock-state", token=None)
    await call(relay, "GET", "/admin/no-such-route/api:secret")
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{relay.url}/metrics") as response:
            text = await response.text()
    series = 'chronorelay_admin_requests_total{method="%s",route="%s",status="%s"}'
    assert series % ("GET", "/admin/users/{user_key}", 200) + " 2.0" in text
    assert series % ("GET", "/admin/users/{user_key}", 404) + " 1.0" in text
    assert series % ("PUT", "/admin/users/{user_key}/timezone", 400) + " 1.0" in text
    assert series % ("GET", "/admin/clock-state", 401) + " 1.0" in text
    assert series % ("GET", "unmatched", 404) + " 1.0" in text
    # User keys (and other made-up paths) never become label values.
    assert "api:ana" not in text and "api:nobody" not in text and "secret" not in text
    # The chat endpoint's counter is its own.
    assert 'chronorelay_requests_total{channel="api",status="200"} 1.0' in text


async def test_an_operator_reads_writes_and_deletes_a_users_memory(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    await chat(relay, "remember that I am vegetarian", at="2026-02-09T10:00:00+09:00")
    status, memory = await call(relay, "GET", "/admin/users/api:ana/memory")
    assert status == 200 and memory["user_key"] == "api:ana"
    [said] = memory["facts"]
    assert (said["source"], said["confidence"]) == ("user", 0.95)
    assert said["created_at"] == "2026-02-09T01:00:00+00:00"

    status, added = await call(
        relay, "POST", "/admin/users/api:ana/memory", {"kind": "preference", "text": " Tea "}
    )
    assert status == 201 and added["added"] is True
    fact = added["fact"]
    assert (fact["kind"], fact["text"], fact["source"], fact["confidence"]) == (
        "preference",
        "Tea",
        "admin",
        1.0,
    )
    status, again = await call(
        relay, "POST", "/admin/users/api:ana/memory", {"kind": "preference", "text": "tea"}
    )
    assert status == 200 and again["added"] is False
    status, memory = await call(relay, "GET", "/admin/users/api:ana/memory")
    assert [f["text"] for f in memory["facts"]] == [said["text"], "Tea"]

    path = f"/admin/users/api:ana/memory/{fact['fact_id']}"
    status, deleted = await call(relay, "DELETE", path)
    assert status == 200 and deleted["deleted"] is True
    for gone in (path, "/admin/users/api:ana/memory/99999999999999999999999"):
        status, error = await call(relay, "DELETE", gone)
        assert status == 404 and "GET /admin/users/api:ana/memory" in error["error"]["message"]
    status, memory = await call(relay, "GET", "/admin/users/api:ana/memory")
    assert [f["text"] for f in memory["facts"]] == [said["text"]]


async def test_memory_writes_are_validated_strictly(relay: RunningServer) -> None:
    await chat(relay, "hi", at="2026-02-09T10:00:00+09:00")
    path = "/admin/users/api:ana/memory"
    for body, expected in [
        ({"kind": "opinion", "text": "x"}, "kind: Input should be 'name', 'fact'"),
        ({"kind": "fact", "text": "   "}, "text: String should have at least 1 character"),
        ({"kind": "fact", "text": 5}, "text: Input should be a valid string"),
        ({"kind": "fact"}, "text: Field required"),
        ({"kind": "fact", "text": "x", "confidence": 0.2}, "confidence: Extra inputs"),
    ]:
        status, error = await call(relay, "POST", path, body)
        assert status == 400, body
        assert expected in error["error"]["message"]
    status, memory = await call(relay, "GET", path)
    assert memory["facts"] == []
    for method in ("GET", "POST"):
        status, error = await call(relay, method, "/admin/users/api:nobody/memory", {})
        assert status == 404 and "no user 'api:nobody'" in error["error"]["message"]


# Spec 000 §10.2's version 3 schema, field by field: every name the spec gives a user, a
# channel entry, a latest action, a calibration entry and a thread.
SPEC_USER_FIELDS = {
    "default_tz",
    "policy_overrides",
    "last_interaction_any_channel_iso",
    "channels",
    "latest_actions",
    "calibration",
}
SPEC_ACTION_FIELDS = {
    "id",
    "label",
    "type",
    "status",
    "recorded_iso",
    "expected_typical_minutes",
    "expected_max_minutes",
    "expires_iso",
    "thread_key",
    "source",
}
SPEC_THREAD_FIELDS = {
    "thread_kind",
    "session_tz",
    "agent_tz",
    "delta_hours",
    "participants",
    "last_interaction_iso",
    "last_user_message_iso_by_user",
}


async def test_clock_state_export_has_every_field_of_the_spec_schema(
    relay: RunningServer,
) -> None:
    """What the relay itself recorded exports under the spec's names, with its values."""
    await chat(relay, "clock it: heading to the gym", at="2026-02-09T18:10:00+09:00")
    await chat(relay, "the gym took 3 hours", at="2026-02-09T21:30:00+09:00")
    await call(relay, "PUT", "/admin/users/api:ana/timezone", {"timezone": "Asia/Tokyo"})

    status, exported = await call(relay, "GET", "/admin/clock-state")
    assert status == 200 and exported["version"] == 3
    user = exported["users"]["api:ana"]
    assert SPEC_USER_FIELDS <= set(user)
    assert user["default_tz"] == "Asia/Tokyo"
    assert user["last_interaction_any_channel_iso"].startswith("2026-02-09T12:30:")
    assert set(user["channels"]) == {THREAD}  # a channel entry per thread the user wrote in
    channel = user["channels"][THREAD]
    assert channel["last_user_message_iso"] == "2026-02-09T12:30:00+00:00"
    assert channel["last_agent_message_iso"].startswith("2026-02-09T12:30:")

    [gym] = user["latest_actions"]
    assert SPEC_ACTION_FIELDS <= set(gym)
    assert gym["id"].startswith("act_") and gym["label"] == "Go to the gym"
    assert (gym["type"], gym["source"], gym["thread_key"]) == (
        "temporal_action",
        "clock_it",
        THREAD,
    )
    assert gym["status"] in {"planned", "in_progress", "likely_done", "done", "canceled", "expired"}
    assert gym["recorded_iso"] == "2026-02-09T09:10:00+00:00"
    assert gym["expires_iso"] == "2026-02-10T09:10:00+00:00"  # §6.4: 24h
    assert 0 < gym["expected_typical_minutes"] <= gym["expected_max_minutes"]
    calibrated = user["calibration"]["activity_overrides"]["gym"]
    assert set(calibrated) >= {"typical_minutes", "max_minutes", "updated_iso"}
    assert calibrated["typical_minutes"] == 180
    assert calibrated["updated_iso"] == "2026-02-09T12:30:00+00:00"

    thread = exported["threads"][THREAD]
    assert SPEC_THREAD_FIELDS <= set(thread)
    assert thread["thread_kind"] in {"project", "conversation", "scheduling", "operations"}
    assert (thread["agent_tz"], thread["participants"]) == ("Europe/Berlin", ["api:ana"])
    assert thread["last_interaction_iso"].startswith("2026-02-09T12:30:")
    assert thread["last_user_message_iso_by_user"] == {"api:ana": "2026-02-09T12:30:00+00:00"}


@pytest.mark.parametrize("tracking", [True, False])
async def test_cross_channel_tracking_decides_whether_the_users_last_contact_is_recorded(
    relay_factory: RelayFactory, tracking: bool
) -> None:
    """Spec 000 §4.1/§4.5: last_interaction_any_channel_iso (user) only with
    cross_channel_tracking; the thread's own times always."""
    relay = await relay_factory(auth=AUTH, clock={**CLOCK, "cross_channel_tracking": tracking})
    await chat(relay, "hello", at="2026-02-09T10:00:00+09:00")
    status, exported = await call(relay, "GET", "/admin/clock-state")
    assert status == 200
    user = exported["users"]["api:ana"]
    expected = "2026-02-09T01:00:00+00:00" if tracking else None
    assert user["last_interaction_any_channel_iso"] == expected
    assert user["channels"][THREAD]["last_user_message_iso"] == "2026-02-09T01:00:00+00:00"
    assert exported["threads"][THREAD]["last_interaction_iso"] is not None
