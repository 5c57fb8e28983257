"""Relay API keys and the admin token (``proxy.auth``): who a request's key makes its
caller, what that caller may speak for, and what a refused request is told."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from middleware.errors import AuthError
from proxy.auth import ALL_PERMISSIONS, Authenticator, Caller
from proxy.config import ApiKey, AuthConfig

AGENT_KEY = "agent-key-0123456789"
SHOP_KEY = "shop-key-0123456789"
ADMIN = "admin-token-0123456789"
KEYS = [
    {"name": "agent", "key": AGENT_KEY, "permissions": ["chat", "replay"]},
    {"name": "shop", "key": SHOP_KEY, "users": ["alice"]},
]


def request(authorization: str | None = None) -> web.Request:
    headers = {} if authorization is None else {"Authorization": authorization}
    return make_mocked_request("POST", "/v1/chat/completions", headers=headers)


def authenticator(**auth: Any) -> Authenticator:
    return Authenticator(AuthConfig.model_validate({"keys": KEYS, **auth}))


def refusal(call: Any, *args: Any, **kwargs: Any) -> AuthError:
    with pytest.raises(AuthError) as refused:
        call(*args, **kwargs)
    return refused.value


def key(**fields: Any) -> ApiKey:
    return ApiKey.model_validate({"name": "shop", "key": SHOP_KEY, **fields})


def test_a_key_of_any_channel_user_and_thread_is_limited_by_none() -> None:
    caller = Caller.of_key(key(channels=["*"], permissions=["chat", "commands"]))
    assert caller == Caller("shop", frozenset({"chat", "commands"}), None, None, None)


def test_a_key_of_listed_users_speaks_for_them_its_own_name_and_their_threads() -> None:
    caller = Caller.of_key(key(channels=["api", "telegram"], users=["alice", "bo"]))
    assert caller.channels == {"api", "telegram"}
    assert caller.users == {"alice", "bo", "shop"}
    assert caller.threads == {"alice", "bo", "shop"}


def test_a_key_of_listed_users_reaches_the_threads_it_lists_too() -> None:
    assert Caller.of_key(key(users=[], threads=["team-room"])).threads == {"team-room", "shop"}


def test_a_key_of_listed_users_and_any_thread_reaches_every_thread() -> None:
    caller = Caller.of_key(key(users=["alice"], threads=["*"]))
    assert caller.users == {"alice", "shop"}
    assert caller.threads is None
    caller.check_thread("anyone-at-all")


def test_a_caller_may_do_what_its_key_lists() -> None:
    caller = Caller.of_key(key(channels=["telegram"], users=["alice"], threads=["room"]))
    caller.check_channel("telegram")
    caller.check_user("alice")
    caller.check_user("shop")
    caller.check_thread("room")
    caller.check_thread("alice")


def test_a_caller_limited_by_nothing_may_do_anything() -> None:
    caller = Caller("local", ALL_PERMISSIONS)
    caller.check_channel("discord")
    caller.check_user("anyone")
    caller.check_thread("anything")


def test_a_refused_channel_names_what_the_key_may_speak_for_and_the_fix() -> None:
    caller = Caller.of_key(key(channels=["telegram", "api"]))
    refused = refusal(caller.check_channel, "discord")
    assert refused.status == 403
    assert refused.code == "permission_denied"
    assert str(refused) == (
        "the API key 'shop' may not speak for channel 'discord' (it may for: api, telegram); "
        "add the channel to that key's channels in [auth] keys, or drop X-Chronorelay-Channel"
    )


def test_a_refused_user_names_the_users_the_key_may_speak_for_and_the_fix() -> None:
    refused = refusal(Caller.of_key(key(users=["alice"])).check_user, "victim")
    assert refused.status == 403
    assert str(refused) == (
        "the API key 'shop' may not speak for user 'victim' (it may for: alice, shop); name "
        "one of those in X-Chronorelay-User or the body's user, or add the user to that "
        "key's users in [auth] keys"
    )


def test_a_refused_thread_names_the_threads_the_key_may_use_and_the_fix() -> None:
    refused = refusal(Caller.of_key(key(users=["alice"])).check_thread, "victim")
    assert refused.status == 403
    assert str(refused) == (
        "the API key 'shop' may not use thread 'victim' (it may use: alice, shop); name one "
        "of those in X-Chronorelay-Thread, or add the thread to that key's threads in "
        "[auth] keys"
    )


def test_an_open_relay_trusts_its_loopback_caller_with_everything() -> None:
    auth = Authenticator(AuthConfig())
    assert auth.open
    for sent in (None, "Bearer whatever", "Basic abc"):
        caller = auth.caller(request(sent), needs="replay")
        assert caller.name == "local"
        assert caller.permissions == {"chat", "replay", "commands"}
        assert (caller.channels, caller.users, caller.threads) == (None, None, None)


def test_a_relay_with_keys_is_not_open() -> None:
    assert not authenticator().open


@pytest.mark.parametrize(
    "sent",
    [f"Bearer {SHOP_KEY}", f"bearer {SHOP_KEY}", f"BEARER {SHOP_KEY}", f"Bearer  {SHOP_KEY} "],
)
def test_a_known_bearer_key_is_its_caller(sent: str) -> None:
    caller = authenticator().caller(request(sent))
    assert caller.name == "shop"
    assert caller.users == {"alice", "shop"}


def test_each_key_is_its_own_caller() -> None:
    auth = authenticator()
    assert auth.caller(request(f"Bearer {AGENT_KEY}"), needs="replay").name == "agent"
    assert auth.caller(request(f"Bearer {SHOP_KEY}")).name == "shop"


@pytest.mark.parametrize("sent", [None, "", "Bearer", "Bearer ", "Bearer    "])
def test_no_key_is_told_how_to_send_one(sent: str | None) -> None:
    refused = refusal(authenticator().caller, request(sent))
    assert refused.status == 401
    assert refused.code == "invalid_api_key"
    assert str(refused) == (
        "missing API key: send 'Authorization: Bearer <key>' with a key from [auth] keys"
    )


def test_another_scheme_is_named_and_told_to_use_bearer() -> None:
    refused = refusal(authenticator().caller, request(f"Basic {SHOP_KEY}"))
    assert refused.status == 401
    assert str(refused) == (
        "the Authorization header uses the 'Basic' scheme; send 'Authorization: Bearer <key>' "
        "with a key from [auth] keys"
    )


def test_a_key_sent_without_a_scheme_is_not_repeated() -> None:
    refused = refusal(authenticator().caller, request(SHOP_KEY))
    assert refused.status == 401
    assert str(refused) == (
        "the Authorization header has no scheme; send 'Authorization: Bearer <key>' with a "
        "key from [auth] keys"
    )


@pytest.mark.parametrize(
    "sent", [f"Bearer {SHOP_KEY}x", f"Bearer {SHOP_KEY[:-1]}", f"Bearer {ADMIN}"]
)
def test_an_unknown_key_is_invalid(sent: str) -> None:
    refused = refusal(authenticator(admin_token=ADMIN).caller, request(sent))
    assert refused.status == 401
    assert str(refused) == "invalid API key: it matches none of the keys in [auth] keys"


def test_a_key_without_the_permission_needed_is_refused_naming_it() -> None:
    auth = authenticator()
    refused = refusal(auth.caller, request(f"Bearer {SHOP_KEY}"), needs="replay")
    assert refused.status == 403
    assert str(refused) == (
        "the API key 'shop' lacks the 'replay' permission; add it to that key's permissions "
        "in [auth] keys"
    )
    # What a request needs unless told: chat, which a key lacking it may not do.
    no_chat = Authenticator(
        AuthConfig.model_validate({"keys": [{**KEYS[1], "permissions": ["commands"]}]})
    )
    assert "lacks the 'chat' permission" in str(
        refusal(no_chat.caller, request(f"Bearer {SHOP_KEY}"))
    )


def test_the_admin_api_is_off_without_a_token() -> None:
    refused = refusal(authenticator().check_admin, request(f"Bearer {AGENT_KEY}"))
    assert refused.status == 403
    assert str(refused) == "the admin API is disabled: set [auth] admin_token to enable it"


def test_the_admin_token_opens_the_admin_api() -> None:
    authenticator(admin_token=ADMIN).check_admin(request(f"Bearer {ADMIN}"))
    Authenticator(AuthConfig(admin_token=ADMIN)).check_admin(request(f"bearer  {ADMIN} "))


@pytest.mark.parametrize(
    "sent", [None, f"Bearer {AGENT_KEY}", f"Bearer {ADMIN}x", ADMIN, f"Basic {ADMIN}", "Bearer "]
)
def test_anything_but_the_admin_token_is_refused_by_the_admin_api(sent: str | None) -> None:
    refused = refusal(authenticator(admin_token=ADMIN).check_admin, request(sent))
    assert refused.status == 401
    assert str(refused) == "admin requests need 'Authorization: Bearer <[auth] admin_token>'"
