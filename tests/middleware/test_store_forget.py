"""Forgetting a user in the store: the dry run changes nothing, the real one is exact."""

from __future__ import annotations

from datetime import timedelta

from middleware.store import ClockData, ForgetReport, SqliteStore
from middleware.types import JSON
from tests.middleware.test_store import T0, inbound

TG_DM, GROUP = "agent:main:telegram:dm:42", "agent:main:telegram:group:-5"
TG, OTHER, DC = "telegram:42", "telegram:43", "discord:7"


async def seen(store: SqliteStore) -> None:
    await store.record_inbound(inbound(T0, user="42", thread=TG_DM, chat_type="dm"))
    await store.record_reply(TG_DM, "hello you", T0 + timedelta(seconds=1))
    await store.record_inbound(inbound(T0, user="42", thread=GROUP, chat_type="group"))
    await store.record_reply(GROUP, "hi 42", T0 + timedelta(seconds=2))
    await store.record_inbound(
        inbound(T0 + timedelta(minutes=1), user="43", thread=GROUP, chat_type="group")
    )
    await store.record_reply(GROUP, "hi 43", T0 + timedelta(minutes=1, seconds=1))
    await store.record_inbound(
        inbound(T0, user="7", channel="discord", thread="agent:main:discord:dm:7", chat_type="dm")
    )


async def test_unknown_users_have_nothing_to_forget(store: SqliteStore) -> None:
    assert await store.forget_user("telegram:404") is None
    assert await store.forget_user("telegram:404", dry_run=True) is None


async def linked_with_an_action_each(store: SqliteStore) -> tuple[JSON, JSON]:
    """The accounts of ``seen``, TG and DC linked, each with one action of its own."""
    await seen(store)
    mine: JSON = {"id": "a1", "label": "walk", "user_key": TG}
    theirs: JSON = {"id": "a2", "label": "cook", "user_key": DC}
    await store.update_clock_data(TG, lambda _: ClockData({}, {}, [mine]))
    await store.update_clock_data(DC, lambda _: ClockData({}, {}, [theirs]))
    await store.link_users([TG, DC], now=T0)
    return mine, theirs


async def test_a_dry_run_counts_what_the_deletion_then_deletes(store: SqliteStore) -> None:
    mine, theirs = await linked_with_an_action_each(store)

    preview = await store.forget_user(TG, dry_run=True)
    assert await store.get_user(TG) is not None
    assert len(await store.transcript(TG_DM)) == 2
    report = await store.forget_user(TG)
    assert (
        preview
        == report
        == ForgetReport(
            # DM: message + reply; group: their message and the reply to it.
            messages=4,
            threads=1,
            thread_memberships=2,
            actions=1,
            unlinked_from=(DC,),
        )
    )
    assert await store.get_user(TG) is None
    assert await store.get_thread(TG_DM) is None
    assert [m.text for m in await store.transcript(GROUP)] == ["hello", "hi 43"]
    # The linked account keeps its own action only, and is no longer linked.
    assert await store.linked_users(DC) == []
    data = await store.get_clock_data(DC)
    assert data is not None and data.latest_actions == [theirs]
    assert await store.get_user(OTHER) is not None


async def test_copies_of_their_actions_kept_by_a_once_linked_account_go_too(
    store: SqliteStore,
) -> None:
    mine, theirs = await linked_with_an_action_each(store)
    # Unlinking leaves each account a copy of the shared list, the other's actions included.
    await store.unlink_user(DC)
    copy = await store.get_clock_data(DC)
    assert copy is not None and copy.latest_actions == [mine, theirs]

    report = await store.forget_user(TG)
    assert report is not None and report.actions == 1  # the walk, not the copy of the cook
    data = await store.get_clock_data(DC)
    assert data is not None and data.latest_actions == [theirs]
