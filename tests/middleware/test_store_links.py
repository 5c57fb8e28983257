"""Identity linking in the store: merging onto a person, unlinking, one-time link codes."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from middleware.errors import NotFoundError
from middleware.store import (
    ClockData,
    ClockDataChange,
    LinkCodeTry,
    SqliteStore,
    StatedLocation,
)
from tests.middleware.test_store import T0, inbound

TG_DM = "agent:main:telegram:dm:42"
DC_DM = "agent:main:discord:dm:7"
SIG_DM = "agent:main:signal:dm:9"
TG, DC, SIG = "telegram:42", "discord:7", "signal:9"
NOW = T0 + timedelta(days=1)
MIN = timedelta(minutes=1)


def put(data: ClockData) -> ClockDataChange:
    return lambda _: data


def action(action_id: str, label: str) -> dict[str, str]:
    return {"id": action_id, "label": label}


def activity(minutes: int, updated: str) -> dict[str, object]:
    return {"typical_minutes": minutes, "max_minutes": minutes * 2, "updated_iso": updated}


async def seen(store: SqliteStore) -> None:
    """Telegram at T0, Discord two hours later, Signal an hour after that."""
    await store.record_inbound(inbound(T0, user="42", thread=TG_DM, chat_type="dm"))
    await store.record_inbound(
        inbound(T0 + timedelta(hours=2), user="7", channel="discord", thread=DC_DM, chat_type="dm")
    )
    await store.record_inbound(
        inbound(T0 + timedelta(hours=3), user="9", channel="signal", thread=SIG_DM, chat_type="dm")
    )


async def test_linking_shares_zone_last_contact_and_clock_data(store: SqliteStore) -> None:
    await seen(store)
    await store.set_user_timezone(TG, "Europe/Berlin")
    await store.set_user_timezone(DC, "Asia/Tokyo")
    await store.update_clock_data(
        TG,
        put(
            ClockData(
                {"mode": "quiet", "checkins": "off"},
                {"activity_overrides": {"nap": activity(20, "2025-03-01T08:00:00+00:00")}},
                [action("a1", "telegram one"), action("shared", "telegram copy")],
            )
        ),
    )
    await store.update_clock_data(
        DC,
        put(
            ClockData(
                {"mode": "normal", "verbosity": "low"},
                {
                    "activity_overrides": {
                        "nap": activity(40, "2025-03-01T10:00:00+00:00"),
                        "gym": activity(60, "2025-02-01T10:00:00+00:00"),
                    }
                },
                [action("shared", "discord copy"), action("d1", "discord one")],
            )
        ),
    )

    person = await store.link_users([TG, DC], now=NOW)

    assert await store.linked_users(TG) == [DC, TG]
    assert await store.linked_users(DC) == [DC, TG]
    for user_key, thread in ((TG, TG_DM), (DC, DC_DM)):
        prior = await store.peek_prior(thread, user_key)
        assert prior.person_id == person
        # The first zone known wins (the keys' order); the latest contact with its channel.
        assert prior.user_tz == "Europe/Berlin"
        assert prior.any_channel_at == T0 + timedelta(hours=2)
        assert prior.any_channel == "discord"
        data = prior.clock_data
        assert data.policy_overrides == {"mode": "quiet", "checkins": "off", "verbosity": "low"}
        overrides = data.calibration["activity_overrides"]
        assert overrides["nap"]["typical_minutes"] == 40  # the newer calibration
        assert overrides["gym"]["typical_minutes"] == 60
        assert [a["id"] for a in data.latest_actions] == ["a1", "shared", "d1"]
    # The users' own zone is kept as it was; their own clock data now lives on the person.
    discord = await store.get_user(DC)
    assert discord is not None and discord.default_tz == "Asia/Tokyo"
    assert discord.person_id == person


async def test_a_message_on_one_channel_counts_for_the_other(store: SqliteStore) -> None:
    await seen(store)
    await store.link_users([TG, DC], now=NOW)
    await store.record_inbound(inbound(NOW, user="42", thread=TG_DM, chat_type="dm"))
    prior = await store.peek_prior(DC_DM, DC)
    assert (prior.any_channel_at, prior.any_channel) == (NOW, "telegram")
    # A zone set from either account is the person's.
    await store.set_user_timezone(DC, "America/Chicago")
    assert (await store.peek_prior(TG_DM, TG)).user_tz == "America/Chicago"


async def test_a_zone_the_person_cleared_is_cleared_for_every_account(
    store: SqliteStore,
) -> None:
    await seen(store)
    await store.set_user_timezone(TG, "Europe/Berlin")
    await store.set_user_timezone(DC, "Asia/Tokyo")
    await store.link_users([TG, DC], now=NOW)
    await store.set_user_timezone(TG, None)
    # Not the zone either account had before the link, long out of date.
    assert (await store.peek_prior(TG_DM, TG)).user_tz is None
    assert (await store.peek_prior(DC_DM, DC)).user_tz is None
    assert [m.default_tz for m in await store.group_participants(TG_DM, T0, 8)] == [None]


async def test_linking_a_third_account_and_merging_two_persons(store: SqliteStore) -> None:
    await seen(store)
    first = await store.link_users([TG, DC], now=NOW)
    assert await store.link_users([SIG, DC], now=NOW) == first
    assert await store.linked_users(SIG) == [DC, SIG, TG]
    assert (await store.peek_prior(TG_DM, TG)).any_channel == "signal"

    await store.unlink_user(SIG)
    await store.record_inbound(
        inbound(T0, user="5", channel="slack", thread="agent:main:slack:dm:5", chat_type="dm")
    )
    other = await store.link_users(["slack:5", SIG], now=NOW)
    assert other != first
    await store.update_clock_data(SIG, put(ClockData(latest_actions=[action("s", "slack")])))
    # Linking users of two persons merges the persons (and all their users) into one.
    merged = await store.link_users([TG, SIG], now=NOW)
    assert merged == first
    assert await store.linked_users("slack:5") == [DC, SIG, "slack:5", TG]
    data = await store.get_clock_data("slack:5")
    assert data is not None and [a["id"] for a in data.latest_actions] == ["s"]


async def test_linking_rejects_unknown_users_and_changes_nothing(store: SqliteStore) -> None:
    await seen(store)
    with pytest.raises(NotFoundError, match="discord:404"):
        await store.link_users([TG, "discord:404"], now=NOW)
    assert await store.linked_users(TG) == []
    assert (await store.peek_prior(TG_DM, TG)).person_id is None
    with pytest.raises(ValueError, match="two"):
        await store.link_users([TG, TG], now=NOW)


async def test_unlinking_keeps_what_the_person_held(store: SqliteStore) -> None:
    await seen(store)
    await store.link_users([TG, DC, SIG], now=NOW)
    await store.set_user_timezone(TG, "Asia/Kathmandu")
    await store.update_clock_data(
        DC, put(ClockData({"mode": "quiet"}, {}, [action("x", "write report")]))
    )

    assert await store.unlink_user(DC)
    assert not await store.unlink_user(DC)
    assert not await store.unlink_user("discord:404")
    assert await store.linked_users(TG) == [SIG, TG]
    prior = await store.peek_prior(DC_DM, DC)
    assert prior.person_id is None
    assert prior.user_tz == "Asia/Kathmandu"
    assert prior.clock_data.policy_overrides == {"mode": "quiet"}
    assert [a["id"] for a in prior.clock_data.latest_actions] == ["x"]
    # Their own last contact is theirs again.
    assert (prior.any_channel_at, prior.any_channel) == (T0 + timedelta(hours=2), "discord")

    # The last pair breaks up: the person goes, both keep a copy.
    assert await store.unlink_user(SIG)
    assert await store.linked_users(TG) == []
    for user_key, thread in ((TG, TG_DM), (SIG, SIG_DM)):
        prior = await store.peek_prior(thread, user_key)
        assert prior.person_id is None and prior.user_tz == "Asia/Kathmandu"
        assert [a["id"] for a in prior.clock_data.latest_actions] == ["x"]
    # A zone set now is the user's own again.
    await store.set_user_timezone(TG, "UTC")
    assert (await store.peek_prior(SIG_DM, SIG)).user_tz == "Asia/Kathmandu"


async def test_the_accounts_left_linked_forget_the_unlinked_ones_last_contact(
    store: SqliteStore,
) -> None:
    await seen(store)
    await store.link_users([TG, DC, SIG], now=NOW)
    # Discord speaks last (its /unlink counts as contact too), then leaves.
    await store.record_inbound(
        inbound(NOW + MIN, user="7", channel="discord", thread=DC_DM, chat_type="dm")
    )
    assert (await store.peek_prior(TG_DM, TG)).any_channel == "discord"
    assert await store.unlink_user(DC)
    # Telegram and Signal stay one person, whose last contact is their own latest: Signal's.
    for user_key, thread in ((TG, TG_DM), (SIG, SIG_DM)):
        prior = await store.peek_prior(thread, user_key)
        assert (prior.any_channel_at, prior.any_channel) == (T0 + timedelta(hours=3), "signal")
    prior = await store.peek_prior(DC_DM, DC)
    assert (prior.any_channel_at, prior.any_channel) == (NOW + MIN, "discord")


WINDOW = timedelta(minutes=10)


async def redeem(store: SqliteStore, code: str, user_key: str, now: datetime) -> LinkCodeTry:
    return await store.redeem_link_code(code, user_key, now, max_misses=5, window=WINDOW)


async def test_link_codes_are_single_use_and_expire(store: SqliteStore) -> None:
    await seen(store)
    await store.create_link_code(TG, "ab12cd", NOW + timedelta(minutes=10))
    assert await store.link_code_owner("AB12CD", NOW) == TG
    # Your own code does nothing and stays valid.
    assert await redeem(store, "AB12CD", TG, NOW) == LinkCodeTry(own_code=True)
    assert await redeem(store, " ab12cd ", DC, NOW + timedelta(minutes=9)) == LinkCodeTry(TG)
    assert await redeem(store, "AB12CD", SIG, NOW) == LinkCodeTry()  # used up
    assert await store.link_code_owner("AB12CD", NOW) is None

    await store.create_link_code(TG, "OLD111", NOW + timedelta(minutes=10))
    await store.create_link_code(TG, "NEW222", NOW + timedelta(minutes=10))
    assert await redeem(store, "OLD111", DC, NOW) == LinkCodeTry()  # replaced
    assert await redeem(store, "NEW222", DC, NOW + timedelta(minutes=10)) == LinkCodeTry()
    assert await store.link_code_owner("NEW222", NOW) is None  # expired, and deleted

    with pytest.raises(NotFoundError):
        await store.create_link_code("discord:404", "ZZZ999", NOW)


async def test_the_place_said_last_is_the_persons_and_unlinking_keeps_a_copy(
    store: SqliteStore,
) -> None:
    await seen(store)
    lisbon = StatedLocation("Europe/Lisbon", "Lisbon", "current", T0 + timedelta(hours=5))
    berlin = StatedLocation("Europe/Berlin", "Berlin", "home", T0 + timedelta(hours=1))
    await store.update_clock_data(TG, put(ClockData(located=berlin)))
    await store.update_clock_data(DC, put(ClockData(located=lisbon)))

    await store.link_users([TG, DC], now=NOW)
    # Said later, so where they are now: both accounts read it from the person.
    for user_key, thread in ((TG, TG_DM), (DC, DC_DM)):
        assert (await store.peek_prior(thread, user_key)).clock_data.located == lisbon

    assert await store.unlink_user(DC)
    assert (await store.peek_prior(TG_DM, TG)).clock_data.located == lisbon
    assert (await store.peek_prior(DC_DM, DC)).clock_data.located == lisbon


async def test_unknown_codes_are_counted_in_the_file_for_every_process(
    store: SqliteStore, db_path: Path
) -> None:
    await seen(store)
    await store.create_link_code(TG, "RIGHT2", NOW + timedelta(hours=1))
    other = SqliteStore(db_path)  # a second relay process on the same file
    await other.open()
    try:
        # Own and right codes are no misses; unknown ones count, whichever process saw them.
        assert (await redeem(other, "RIGHT2", TG, NOW)).own_code
        for minute in range(5):
            tried = await redeem(store if minute % 2 else other, "WRONG2", DC, NOW + minute * MIN)
            assert tried == LinkCodeTry()
        # The sixth is refused in both, until the first miss is WINDOW old; the right code
        # is not even looked at (nor used up), and other accounts are not affected.
        until = NOW + WINDOW
        assert await redeem(store, "RIGHT2", DC, NOW + 6 * MIN) == LinkCodeTry(refused_until=until)
        assert await redeem(other, "RIGHT2", DC, NOW + 9 * MIN) == LinkCodeTry(refused_until=until)
        assert await redeem(other, "WRONG2", SIG, NOW + 9 * MIN) == LinkCodeTry()
        assert await redeem(other, "RIGHT2", DC, NOW + WINDOW) == LinkCodeTry(TG)
    finally:
        await other.close()
    # A restart keeps the count too.
    await store.close()
    again = SqliteStore(db_path)
    await again.open()
    try:
        for _ in range(4):
            await redeem(again, "WRONG2", SIG, NOW + 10 * MIN)
        until = NOW + 9 * MIN + WINDOW
        assert await redeem(again, "X", SIG, NOW + 11 * MIN) == LinkCodeTry(refused_until=until)
    finally:
        await again.close()
