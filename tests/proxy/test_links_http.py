"""Identity linking over HTTP: the admin endpoints, and the /link code flow between two
users on different channels."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from middleware.clock.source import FakeClock
from proxy.keys import SERVICES
from proxy.server import RunningServer
from tests.conftest import RelayFactory
from tests.fakes.upstream import FakeUpstream
from tests.proxy.test_admin import ADMIN, call
from tests.proxy.test_clock_http import block
from tests.proxy.test_clock_http import chat as send

TG = {"channel": "telegram", "user": "1"}
DC = {"channel": "discord", "user": "2"}


@pytest.fixture
async def relay(relay_factory: RelayFactory) -> RunningServer:
    return await relay_factory(server={"api_commands": True}, auth={"admin_token": ADMIN})


async def chat(relay: RunningServer, text: str, at: str, who: dict[str, str]) -> str:
    reply = await send(relay, text, at=at, name=f"Ana on {who['channel']}", **who)
    return str(reply["choices"][0]["message"]["content"])


async def two_users(relay: RunningServer) -> None:
    await chat(relay, "hi", "2026-11-21T08:00:00Z", TG)
    await chat(relay, "hi", "2026-11-21T09:00:00Z", DC)


async def test_admin_links_and_unlinks_users(relay: RunningServer) -> None:
    await two_users(relay)
    body: Any = {"user_keys": ["telegram:1", "discord:2"]}
    status, linked = await call(relay, "POST", "/admin/links", body)
    assert status == 200, linked
    assert linked["user_keys"] == ["discord:2", "telegram:1"]
    status, user = await call(relay, "GET", "/admin/users/discord:2")
    assert user["person_id"] == linked["person_id"]
    assert user["last_interaction_any_channel_at"] == "2026-11-21T09:00:00+00:00"

    status, done = await call(relay, "DELETE", "/admin/links/telegram:1")
    assert (status, done) == (200, {"user_key": "telegram:1", "unlinked": True})
    status, user = await call(relay, "GET", "/admin/users/discord:2")
    assert user["person_id"] is None
    status, error = await call(relay, "DELETE", "/admin/links/telegram:1")
    assert status == 404 and "not linked" in error["error"]["message"]


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"user_keys": ["telegram:1"]}, 400, "at least two"),
        ({"user_keys": ["telegram:1", "telegram:1"]}, 400, "at least two"),
        ({"user_keys": "telegram:1"}, 400, "user_keys"),
        ({"user_keys": ["telegram:1", "discord:404"]}, 404, "discord:404"),
    ],
)
async def test_admin_link_errors(relay: RunningServer, body: Any, status: int, says: str) -> None:
    await two_users(relay)
    got, error = await call(relay, "POST", "/admin/links", body)
    assert got == status, error
    assert says in error["error"]["message"]
    _, user = await call(relay, "GET", "/admin/users/telegram:1")
    assert user["person_id"] is None


async def test_users_set_up_before_their_first_message_can_be_linked(
    relay: RunningServer,
) -> None:
    await chat(relay, "hi", "2026-11-21T08:00:00Z", TG)
    body: Any = {"user_keys": ["telegram:1", "discord:2"]}
    status, error = await call(relay, "POST", "/admin/links", body)
    assert status == 404
    assert "PUT /admin/users/<user key>/timezone" in error["error"]["message"]
    status, _ = await call(relay, "PUT", "/admin/users/discord:2/timezone", {"timezone": "UTC"})
    assert status == 201
    status, linked = await call(relay, "POST", "/admin/links", body)
    assert status == 200 and linked["user_keys"] == ["discord:2", "telegram:1"]


async def test_admin_unlink_of_an_unknown_user(relay: RunningServer) -> None:
    status, error = await call(relay, "DELETE", "/admin/links/telegram:404")
    assert status == 404 and "telegram:404" in error["error"]["message"]
    status, _ = await call(relay, "POST", "/admin/links", {"user_keys": []}, token="wrong")
    assert status == 401


async def test_link_code_flow_shares_zone_and_last_contact(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    await two_users(relay)
    offer = await chat(relay, "/link", "2026-11-21T10:00:00Z", TG)
    found = re.search(r"code is ([A-Z0-9]{6})\.", offer)
    assert found, offer
    code = found.group(1)
    assert f"send /link {code} from your other account" in offer

    wrong = await chat(relay, "/link ZZZZZZ", "2026-11-21T10:01:00Z", DC)
    assert "don't know the link code 'ZZZZZZ'" in wrong
    own = await chat(relay, f"/link {code}", "2026-11-21T10:01:00Z", TG)
    assert "this account's own code" in own

    done = await chat(relay, f"/link {code.lower()}", "2026-11-21T10:02:00Z", DC)
    assert "Linked: discord:2 (Ana on discord), this account; telegram:1" in done
    assert "timezone" in done and "last contact" in done and "actions" in done
    assert "what I remember about you" in done  # living memory is the person's too
    again = await chat(relay, f"/link {code}", "2026-11-21T10:03:00Z", DC)
    assert "don't know the link code" in again  # single use

    await chat(relay, "/tz Asia/Tokyo", "2026-11-21T11:00:00Z", TG)
    # A command is no contact (the relay answered it): her words after it are.
    await chat(relay, "just landed in Tokyo", "2026-11-21T11:00:00Z", TG)
    await chat(relay, "what's on today?", "2026-11-21T13:00:00Z", DC)
    text = block(fake_upstream)
    assert "Asia/Tokyo" in text
    assert "Last contact on any channel: 2 hours ago (Telegram)." in text

    who = await chat(relay, "/whoami", "2026-11-21T13:05:00Z", DC)
    assert "You are discord:2 (Ana on discord)." in who
    assert "Linked accounts: telegram:1 (Ana on telegram)" in who
    assert "what I remember about you" in who
    assert "Timezone: Asia/Tokyo." in who

    gone = await chat(relay, "/unlink", "2026-11-21T13:06:00Z", DC)
    assert "no longer linked to telegram:1" in gone
    assert "what I learned about you from it" in gone
    who = await chat(relay, "/whoami", "2026-11-21T13:07:00Z", TG)
    assert "Linked accounts: none." in who
    assert "Timezone: Asia/Tokyo." in who  # both kept the zone
    assert "isn't linked" in await chat(relay, "/unlink", "2026-11-21T13:08:00Z", TG)


async def test_whoami_says_the_zone_of_the_place_the_user_said_they_live_in(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    await chat(relay, "I live in Berlin, by the way", "2026-11-21T10:00:00Z", TG)
    assert "(Europe/Berlin, UTC+01:00; from where the user says they live (Berlin))" in block(
        fake_upstream
    )
    who = await chat(relay, "/whoami", "2026-11-21T10:05:00Z", TG)
    assert who.splitlines()[-1] == (
        "Timezone: not set. You said you live in Berlin (5 minutes ago), so I use its "
        "timezone for now: Europe/Berlin. /tz Berlin keeps it."
    )
    await chat(relay, "/tz Europe/Paris", "2026-11-21T10:06:00Z", TG)
    who = await chat(relay, "/whoami", "2026-11-21T10:07:00Z", TG)
    assert who.splitlines()[-1] == "Timezone: Europe/Paris."


async def test_link_code_expires_after_ten_minutes(relay: RunningServer) -> None:
    await two_users(relay)
    offer = await chat(relay, "/link", "2026-11-21T10:00:00Z", TG)
    found = re.search(r"code is ([A-Z0-9]{6})\.", offer)
    assert found, offer
    late = await chat(relay, f"/link {found.group(1)}", "2026-11-21T10:10:00Z", DC)
    assert "or it has expired" in late
    _, user = await call(relay, "GET", "/admin/users/discord:2")
    assert user["person_id"] is None


async def test_guessing_link_codes_is_refused_after_five_wrong_ones(relay: RunningServer) -> None:
    await two_users(relay)
    for minute in range(1, 6):
        wrong = await chat(relay, "/link ZZZZZ2", f"2026-11-21T10:0{minute}:00Z", DC)
        assert "don't know the link code" in wrong
    offer = await chat(relay, "/link", "2026-11-21T10:06:00Z", TG)
    found = re.search(r"code is ([A-Z0-9]{6})\.", offer)
    assert found, offer
    # Even the right code is not tried (or used up) while the account is refused.
    refused = await chat(relay, f"/link {found.group(1)}", "2026-11-21T10:06:30Z", DC)
    assert "Too many unknown link codes" in refused and "in 5 minutes" in refused
    _, user = await call(relay, "GET", "/admin/users/discord:2")
    assert user["person_id"] is None
    # Other accounts are not affected.
    other = await chat(relay, "/link ZZZZZ2", "2026-11-21T10:06:40Z", TG)
    assert "this account's own code" not in other and "Too many" not in other
    # Once the first wrong code is ten minutes old, one more try is allowed.
    done = await chat(relay, f"/link {found.group(1)}", "2026-11-21T10:11:00Z", DC)
    assert done.startswith("Linked: ")


async def test_chat_admins_link_unlink_and_whois_from_chat(
    relay_factory: RelayFactory,
) -> None:
    relay = await relay_factory(server={"api_commands": True}, auth={"chat_admins": ["telegram:1"]})
    await two_users(relay)
    at = "2026-11-21T10:00:00Z"
    refused = await chat(relay, "/admin link telegram:1 discord:2", at, DC)
    assert "Only relay admins" in refused and "discord:2" in refused

    linked = await chat(relay, "/admin link telegram:1 discord:2", at, TG)
    assert "Linked discord:2, telegram:1" in linked
    whois = await chat(relay, "/admin whois discord:2", at, TG)
    assert "Linked to: telegram:1" in whois
    assert "No user telegram:9" in await chat(relay, "/admin whois telegram:9", at, TG)
    assert "no user 'x:9'" in await chat(relay, "/admin link telegram:1 x:9", at, TG)

    assert "no longer linked" in await chat(relay, "/admin unlink discord:2", at, TG)
    assert "Linked to: nobody" in await chat(relay, "/admin whois discord:2", at, TG)
    assert "I don't understand" in await chat(relay, "/admin", at, TG)


CONFLICT = (
    "Your accounts had different time zones (telegram: Europe/Paris, discord: "
    "America/New_York); kept Europe/Paris — use /tz to change it."
)


async def test_linking_tells_both_accounts_which_timezone_was_kept(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    await two_users(relay)
    await chat(relay, "/tz Europe/Paris", "2026-11-21T09:30:00Z", TG)
    await chat(relay, "/tz America/New_York", "2026-11-21T09:31:00Z", DC)
    offer = await chat(relay, "/link", "2026-11-21T10:00:00Z", TG)
    found = re.search(r"code is ([A-Z0-9]{6})\.", offer)
    assert found, offer
    # The code's owner came first: their zone is kept; the account linking is told so.
    done = await chat(relay, f"/link {found.group(1)}", "2026-11-21T10:01:00Z", DC)
    assert done.endswith("\n" + CONFLICT)
    assert "Timezone: Europe/Paris." in await chat(relay, "/whoami", "2026-11-21T10:02:00Z", DC)
    # The other account hears it with its next message, once.
    await chat(relay, "good morning", "2026-11-21T10:03:00Z", TG)
    assert CONFLICT in block(fake_upstream)
    await chat(relay, "and again", "2026-11-21T10:04:00Z", TG)
    assert CONFLICT not in block(fake_upstream)


async def test_admin_link_reports_the_timezone_kept(relay_factory: RelayFactory) -> None:
    relay = await relay_factory(server={"api_commands": True}, auth={"chat_admins": ["api:root"]})
    await two_users(relay)
    await chat(relay, "/tz Europe/Paris", "2026-11-21T09:30:00Z", TG)
    await chat(relay, "/tz America/New_York", "2026-11-21T09:31:00Z", DC)
    admin = {"channel": "api", "user": "root"}
    linked = await chat(relay, "/admin link telegram:1 discord:2", "2026-11-21T10:00:00Z", admin)
    assert linked.endswith("\n" + CONFLICT)
    same = await chat(relay, "/tz", "2026-11-21T10:01:00Z", DC)
    assert same.startswith("Your timezone is Europe/Paris.")


async def test_no_timezone_note_when_only_one_account_had_one(relay: RunningServer) -> None:
    await two_users(relay)
    await chat(relay, "/tz Asia/Tokyo", "2026-11-21T09:30:00Z", DC)
    offer = await chat(relay, "/link", "2026-11-21T10:00:00Z", TG)
    found = re.search(r"code is ([A-Z0-9]{6})\.", offer)
    assert found, offer
    done = await chat(relay, f"/link {found.group(1)}", "2026-11-21T10:01:00Z", DC)
    assert "different time zones" not in done
    assert "Timezone: Asia/Tokyo." in await chat(relay, "/whoami", "2026-11-21T10:02:00Z", TG)


TEAM = "agent:main:api:team"


async def test_an_export_imported_into_a_new_store_keeps_links_and_group_threads(
    relay_factory: RelayFactory, tmp_path: Path
) -> None:
    clock = FakeClock(datetime(2026, 11, 21, 12, 0, tzinfo=UTC))
    config: dict[str, Any] = {"server": {"api_commands": True}, "auth": {"admin_token": ADMIN}}
    relay = await relay_factory(fake_clock=clock, **config)
    await two_users(relay)
    await chat(relay, "clock it: call the bank", "2026-11-21T09:30:00Z", TG)
    offer = await chat(relay, "/link", "2026-11-21T10:00:00Z", TG)
    found = re.search(r"code is ([A-Z0-9]{6})\.", offer)
    assert found, offer
    assert "Linked: " in await chat(relay, f"/link {found.group(1)}", "2026-11-21T10:01:00Z", DC)
    await chat(relay, "clock it: book the dentist", "2026-11-21T10:30:00Z", DC)
    await chat(relay, "/tz Asia/Tokyo", "2026-11-21T10:31:00Z", TG)
    # A group through the API: only the header says so, not the thread key.
    for user in ("ana", "bo"):
        await send(
            relay, "hi all", at="2026-11-21T10:40:00Z", user=user, thread="team", chat_type="group"
        )
    _, before = await call(relay, "GET", "/admin/users/telegram:1")
    shared = [action["label"] for action in before["latest_actions"]]
    assert len(shared) == 2, before

    status, exported = await call(relay, "GET", "/admin/clock-state")
    assert status == 200
    assert exported["links"] == [{"user_keys": ["discord:2", "telegram:1"]}]
    assert exported["threads"][TEAM]["chat_type"] == "group"

    fresh = await relay_factory(
        fake_clock=clock, store={"path": str(tmp_path / "fresh.sqlite3")}, **config
    )
    status, counts = await call(fresh, "POST", "/admin/clock-state", exported)
    assert status == 200 and counts["links"] == 1, counts
    status, again = await call(fresh, "GET", "/admin/clock-state")
    assert again == exported

    # Linked again: one person, one set of actions (no copy per account), one zone.
    _, tg = await call(fresh, "GET", "/admin/users/telegram:1")
    _, dc = await call(fresh, "GET", "/admin/users/discord:2")
    assert tg["person_id"] is not None and tg["person_id"] == dc["person_id"]
    assert [action["label"] for action in tg["latest_actions"]] == shared
    assert dc["latest_actions"] == tg["latest_actions"]
    who = await chat(fresh, "/whoami", "2026-11-21T11:00:00Z", DC)
    # Names came along too (the file's ``display_name``).
    assert "Linked accounts: telegram:1 (Ana on telegram);" in who
    assert "Timezone: Asia/Tokyo." in who
    # What one account changes, the other sees.
    await chat(fresh, "/tz Europe/Paris", "2026-11-21T11:01:00Z", DC)
    assert "Timezone: Europe/Paris." in await chat(fresh, "/whoami", "2026-11-21T11:02:00Z", TG)

    # Still a group: forgetting one member leaves the thread to the other.
    _, team = await call(fresh, "GET", f"/admin/threads/{TEAM}/clock")
    assert team["chat_type"] == "group" and team["participants"] == ["api:ana", "api:bo"]
    report = await fresh.runner.app[SERVICES].store.forget_user("api:ana", dry_run=True)
    assert report is not None and report.threads == 0 and report.thread_memberships == 1


async def test_admin_api_link_reports_the_timezone_kept_and_tells_every_account(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    """Linked over the admin API, accounts with different zones keep the first one's: the
    answer says which (and which zones were replaced), and each account hears it with its
    next message, as after /link or /admin link."""
    await two_users(relay)
    await chat(relay, "/tz Europe/Paris", "2026-11-21T09:30:00Z", TG)
    await chat(relay, "/tz America/New_York", "2026-11-21T09:31:00Z", DC)
    body: Any = {"user_keys": ["telegram:1", "discord:2"]}
    status, linked = await call(relay, "POST", "/admin/links", body)
    assert status == 200, linked
    assert linked["user_keys"] == ["discord:2", "telegram:1"]
    assert linked["timezone"] == "Europe/Paris"
    assert linked["timezones_replaced"] == {"discord:2": "America/New_York"}
    for who in (TG, DC):
        await chat(relay, "good morning", "2026-11-21T10:03:00Z", who)
        assert CONFLICT in block(fake_upstream)
        await chat(relay, "and again", "2026-11-21T10:04:00Z", who)
        assert CONFLICT not in block(fake_upstream)


async def test_admin_api_link_of_accounts_in_one_zone_replaces_none(
    relay: RunningServer, fake_upstream: FakeUpstream
) -> None:
    await two_users(relay)
    await chat(relay, "/tz Asia/Tokyo", "2026-11-21T09:30:00Z", DC)
    body: Any = {"user_keys": ["telegram:1", "discord:2"]}
    status, linked = await call(relay, "POST", "/admin/links", body)
    assert status == 200, linked
    assert (linked["timezone"], linked["timezones_replaced"]) == ("Asia/Tokyo", {})
    await chat(relay, "good morning", "2026-11-21T10:03:00Z", TG)
    assert "different time zones" not in block(fake_upstream)


async def test_an_account_an_admin_unlinks_is_told_with_its_next_message(
    relay_factory: RelayFactory, fake_upstream: FakeUpstream
) -> None:
    """Its user did not ask (unlike /unlink): over the admin API or /admin unlink, the
    account taken out hears from which accounts, once; the ones left hear nothing."""
    relay = await relay_factory(
        server={"api_commands": True},
        auth={"admin_token": ADMIN, "chat_admins": ["api:root"]},
    )
    await two_users(relay)
    unlinked = (
        "The relay's admin unlinked this account from discord:2: its timezone, actions and "
        "memory are its own from now on."
    )
    body: Any = {"user_keys": ["telegram:1", "discord:2"]}
    assert (await call(relay, "POST", "/admin/links", body))[0] == 200
    status, _ = await call(relay, "DELETE", "/admin/links/telegram:1")
    assert status == 200
    await chat(relay, "morning", "2026-11-21T10:00:00Z", DC)
    assert "unlinked" not in block(fake_upstream)
    await chat(relay, "morning", "2026-11-21T10:01:00Z", TG)
    assert unlinked in block(fake_upstream)
    await chat(relay, "again", "2026-11-21T10:02:00Z", TG)
    assert "unlinked" not in block(fake_upstream)

    assert (await call(relay, "POST", "/admin/links", body))[0] == 200
    admin = {"channel": "api", "user": "root"}
    assert "no longer linked" in await chat(
        relay, "/admin unlink telegram:1", "2026-11-21T10:03:00Z", admin
    )
    await chat(relay, "morning", "2026-11-21T10:04:00Z", TG)
    assert unlinked in block(fake_upstream)
