"""The recording stage: a message sent again is not recorded twice; other turns are."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from middleware.clock.source import FakeClock
from middleware.errors import StoreError
from middleware.injection import fingerprint
from middleware.pipeline import Stage
from middleware.recording import LatestMessages, recording_stage
from middleware.store import InboundRecord, QueuedInbound, SqliteStore
from middleware.types import COMMAND, JSON, UNRECORDED, Reply, Turn

T0 = datetime(2026, 11, 21, 10, tzinfo=UTC)
THREAD = "agent:main:telegram:7"
HISTORY: list[JSON] = [{"role": "user", "content": "ok"}]


def turn(minutes: int, *, resendable: bool) -> Turn:
    return Turn(
        channel="telegram",
        thread_id="7",
        user_id="7",
        text="ok",
        received_at=T0 + timedelta(minutes=minutes),
        body={"messages": list(HISTORY)},
        resendable=resendable,
        user_key="telegram:7",
        thread_key=THREAD,
    )


async def answer(forwarded: Turn) -> Reply:
    return Reply(text="fine")


def stage(store: SqliteStore) -> Stage:
    return recording_stage(store, FakeClock(T0), cross_channel=True)


async def user_texts(store: SqliteStore) -> list[str]:
    return [m.text for m in await store.transcript(THREAD) if m.role == "user"]


async def test_a_channel_message_like_the_last_one_is_recorded_again(store: SqliteStore) -> None:
    """A chat channel's turns are each a new message, even with the same words and history."""
    record = stage(store)
    await record(turn(0, resendable=False), answer)
    again = turn(1, resendable=False)
    await record(again, answer)
    assert not again.continuation and not again.resent
    assert await user_texts(store) == ["ok", "ok"]


async def test_a_resent_message_is_a_continuation_and_not_recorded(store: SqliteStore) -> None:
    record = stage(store)
    await record(turn(0, resendable=True), answer)
    again = turn(1, resendable=True)
    await record(again, answer)
    assert again.continuation and again.resent and again.inbound_id is None
    assert await user_texts(store) == ["ok"]
    thread = await store.get_thread(THREAD)
    assert thread is not None and thread.last_user_message_at == T0


async def test_a_message_that_could_not_be_stored_is_recorded_when_sent_again(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = stage(store)
    queue = store.queue_inbound

    async def full_disk(inbound: InboundRecord) -> QueuedInbound:
        raise StoreError("database or disk is full")

    monkeypatch.setattr(store, "queue_inbound", full_disk)
    with pytest.raises(StoreError):
        await record(turn(0, resendable=True), answer)
    monkeypatch.setattr(store, "queue_inbound", queue)
    retried = turn(1, resendable=True)
    await record(retried, answer)
    assert not retried.resent
    assert await user_texts(store) == ["ok"]


class _NotCommitted:
    async def committed(self) -> None:
        raise AssertionError("a message whose write failed has no commit to wait for")


async def test_a_message_whose_queued_write_fails_after_its_turn_is_recorded_when_sent_again(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upstream failed first, so the turn was over before its message's write failed:
    the message is forgotten as the pair's newest, and the client's retry is a new
    message, recorded, not a resend of one the store never took."""
    record = stage(store)
    queue = store.queue_inbound
    writes: list[asyncio.Future[int]] = []

    async def write_pending(inbound: InboundRecord) -> QueuedInbound:
        prior = await store.peek_prior(inbound.thread_key, inbound.user_key)
        writes.append(asyncio.get_running_loop().create_future())
        return QueuedInbound(prior, writes[-1], _NotCommitted())

    async def upstream_down(forwarded: Turn) -> Reply:
        raise ConnectionError("upstream unreachable")

    monkeypatch.setattr(store, "queue_inbound", write_pending)
    with pytest.raises(ConnectionError):
        await record(turn(0, resendable=True), upstream_down)
    writes[0].set_exception(StoreError("database or disk is full"))
    await asyncio.sleep(0)  # its done callbacks run
    monkeypatch.setattr(store, "queue_inbound", queue)

    retried = turn(1, resendable=True)
    await record(retried, answer)
    assert not retried.resent and retried.inbound_id is not None
    assert await user_texts(store) == ["ok"]


def count_store_reads(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the resend lookups the store is asked, in order."""
    asked: list[str] = []
    for name in ("newest_message_place", "newest_message_injected_at"):
        lookup = getattr(store, name)

        async def counted(*args: object, _name: str = name, _lookup: Any = lookup) -> Any:
            asked.append(_name)
            return await _lookup(*args)

        monkeypatch.setattr(store, name, counted)
    return asked


async def test_after_a_restart_the_store_is_asked_once_a_pair(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process does not know the pair's newest message: its first turn asks the
    store (where the message sat in its request, stored with it), later turns only memory."""
    await stage(store)(turn(0, resendable=True), answer)
    asked = count_store_reads(store, monkeypatch)
    restarted = stage(store)
    again = turn(1, resendable=True)
    await restarted(again, answer)
    assert again.resent and asked == ["newest_message_place"]
    await restarted(turn(2, resendable=True), answer)
    assert asked == ["newest_message_place"]
    assert await user_texts(store) == ["ok"]


async def test_a_message_stored_without_its_place_is_known_by_its_saved_block(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message stored before schema version 16 has no place: the block saved at its
    time names it."""
    await stage(store)(turn(0, resendable=True), answer)
    await store._writer.execute(  # type: ignore[attr-defined]
        "UPDATE messages SET place_fingerprint = NULL, place_index = NULL"
    )
    await store.save_injection(THREAD, fingerprint(HISTORY[0]), 0, "<block>", T0)
    asked = count_store_reads(store, monkeypatch)
    again = turn(1, resendable=True)
    await stage(store)(again, answer)
    assert again.resent and asked == ["newest_message_place", "newest_message_injected_at"]
    assert await user_texts(store) == ["ok"]


async def test_a_message_stored_without_its_place_or_a_block_is_recorded_again(
    store: SqliteStore,
) -> None:
    await stage(store)(turn(0, resendable=True), answer)
    await store._writer.execute(  # type: ignore[attr-defined]
        "UPDATE messages SET place_fingerprint = NULL, place_index = NULL"
    )
    again = turn(1, resendable=True)
    await stage(store)(again, answer)
    assert not again.resent
    assert await user_texts(store) == ["ok", "ok"]


async def test_a_message_the_relay_answered_itself_is_marked_a_command(
    store: SqliteStore,
) -> None:
    """Sessions count it as no turn (spec 001 §5.2), even when its answer is not kept."""
    record = stage(store)

    async def relay_answers(forwarded: Turn) -> Reply:
        return Reply(text="It is 10:00.", meta={COMMAND: "time"})

    async def unrecorded(forwarded: Turn) -> Reply:
        return Reply(text="Would delete …", meta={COMMAND: "forget", UNRECORDED: "1"})

    await record(turn(0, resendable=False), answer)
    await record(turn(1, resendable=False), relay_answers)
    await record(turn(2, resendable=False), unrecorded)
    await record(turn(3, resendable=False), answer)
    marks = [(m.role, m.command) for m in await store.transcript(THREAD)]
    assert marks == [
        ("user", False),
        ("assistant", False),
        ("user", True),
        ("assistant", False),
        ("user", True),
        ("user", False),
        ("assistant", False),
    ]


async def test_the_apps_locale_is_kept_only_when_it_changes(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new locale is written once and read by its own turn; an ordinary turn, bringing
    the one stored, writes nothing (the hot path)."""
    written: list[str | None] = []
    keep = store.set_app_locale

    async def counted(user_key: str, locale: str | None) -> None:
        written.append(locale)
        await keep(user_key, locale)

    monkeypatch.setattr(store, "set_app_locale", counted)
    record = stage(store)
    seen: list[str | None] = []

    async def reads(forwarded: Turn) -> Reply:
        assert forwarded.prior is not None
        seen.append(forwarded.prior.reader_locale)
        return Reply(text="fine")

    for minutes, locale in enumerate(["de", "de", None, "de", "pt_BR"]):
        said = turn(minutes, resendable=False)
        said.locale = locale
        await record(said, reads)
    assert written == ["de", "pt_BR"]
    # A message without one (an app that says none) keeps the one known.
    assert seen == ["de", "de", "de", "de", "pt_BR"]
    user = await store.get_user("telegram:7")
    assert user is not None and user.app_locale == "pt_BR" and user.locale is None


async def test_the_locale_the_user_chose_wins_over_their_apps(store: SqliteStore) -> None:
    record = stage(store)
    await record(turn(0, resendable=False), answer)
    assert await store.set_user_locale("telegram:7", "fr")
    seen: list[str | None] = []

    async def reads(forwarded: Turn) -> Reply:
        assert forwarded.prior is not None
        seen.append(forwarded.prior.reader_locale)
        return Reply(text="fine")

    said = turn(1, resendable=False)
    said.locale = "de"
    await record(said, reads)
    await store.set_user_locale("telegram:7", None)
    await record(turn(2, resendable=False), reads)
    assert seen == ["fr", "de"]


async def test_a_resend_of_a_stored_message_is_known_without_asking_the_store(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once its write has landed, the message stays its pair's newest in memory."""
    record = stage(store)
    await record(turn(0, resendable=True), answer)
    asked = count_store_reads(store, monkeypatch)
    again = turn(1, resendable=True)
    await record(again, answer)
    assert again.resent and asked == []


async def test_a_bare_message_is_a_resend_only_within_fifteen_minutes(store: SqliteStore) -> None:
    """Nothing before it in the request: the same words a quarter of an hour later are new."""
    record = stage(store)
    await record(turn(0, resendable=True), answer)
    within = turn(15, resendable=True)
    await record(within, answer)
    later = turn(16, resendable=True)
    await record(later, answer)
    assert within.resent and not later.resent
    assert await user_texts(store) == ["ok", "ok"]


async def test_a_message_with_conversation_before_it_is_a_resend_at_any_time(
    store: SqliteStore,
) -> None:
    """A regenerated answer brings the same history up to the message, hours later too."""
    history: list[JSON] = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "ok"},
    ]
    record = stage(store)
    first = turn(0, resendable=True)
    first.body = {"messages": list(history)}
    await record(first, answer)
    regenerated = turn(24 * 60, resendable=True)
    regenerated.body = {"messages": list(history)}
    await record(regenerated, answer)
    assert regenerated.resent
    assert await user_texts(store) == ["ok"]


def test_only_the_most_recently_active_pairs_are_remembered() -> None:
    latest = LatestMessages(max_pairs=2)
    for n in range(3):
        latest.remember((THREAD, f"telegram:{n}"), ("fingerprint", 0), T0)
    remembered = [latest.knows((THREAD, f"telegram:{n}")) for n in range(3)]
    assert remembered == [False, True, True]
