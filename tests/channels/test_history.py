"""Channel conversation history: persona, speaker names, and compaction with hysteresis."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from channels.history import (
    MESSAGE_OVERHEAD,
    HistoryBudget,
    compaction_cut,
    conversation_body,
    load_history,
)
from middleware.clock.temporal import estimate_tokens
from middleware.store import InboundRecord, SqliteStore, Store
from middleware.types import ChatType, Turn
from proxy.services import Services, open_services
from tests.conftest import relay_config

DM = "agent:main:telegram:dm:42"
GROUP = "agent:main:telegram:group:-100"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
# Each of these costs 19 estimated tokens as a message (60 characters + overhead).
TEXT = "x" * 60
COST = estimate_tokens(TEXT) + MESSAGE_OVERHEAD


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "history.db")
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def minutes() -> Iterator[datetime]:
    return (T0 + timedelta(minutes=n) for n in itertools.count())


async def say(
    store: Store,
    key: str,
    text: str,
    at: datetime,
    *,
    user: str = "42",
    name: str | None = "Ana",
    chat_type: ChatType = "dm",
) -> int:
    inbound = await store.record_inbound(
        InboundRecord(
            user_key=f"telegram:{user}",
            channel="telegram",
            platform_user_id=user,
            display_name=name,
            thread_key=key,
            chat_type=chat_type,
            text=text,
            received_at=at,
        )
    )
    return inbound.message_id


def turn(text: str, *, chat_type: ChatType = "dm", thread_id: str = "42", **fields: Any) -> Turn:
    return Turn(
        channel="telegram",
        thread_id=thread_id,
        user_id=fields.pop("user_id", "42"),
        text=text,
        received_at=T0 + timedelta(days=1),
        body={},
        chat_type=chat_type,
        display_name=fields.pop("display_name", "Ana"),
        **fields,
    )


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Services]:
    channels = {"persona": "You are Chrono, a calm assistant.", "history_tokens": 100}
    config = relay_config(tmp_path, "http://127.0.0.1:9/v1", channels=channels)
    async with open_services(config) as opened:
        yield opened


async def test_persona_then_history_then_the_new_message(
    services: Services, minutes: Iterator[datetime]
) -> None:
    store = services.store
    await say(store, DM, "hi", next(minutes))
    await store.record_reply(DM, "hello!", next(minutes))
    new = turn("how are you?")
    body = await conversation_body(services, new, history_limit=40)
    assert body["model"] == "fake-model"
    assert body["messages"] == [
        {"role": "system", "content": "You are Chrono, a calm assistant."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello!"},
        {"role": "user", "content": "how are you?"},
    ]
    assert not new.compacted


async def test_group_user_messages_name_their_speakers(
    services: Services, minutes: Iterator[datetime]
) -> None:
    store = services.store
    group: dict[str, Any] = {"chat_type": "group"}
    await say(store, GROUP, "lunch?", next(minutes), user="43", name="Bo [admin]", **group)
    await say(store, GROUP, "@bot what time is it", next(minutes), name=None, **group)
    await store.record_reply(GROUP, "noon", next(minutes))
    new = turn("thanks", chat_type="group", thread_id="-100", display_name="Ana")
    body = await conversation_body(services, new, history_limit=40)
    assert [m["content"] for m in body["messages"][1:]] == [
        "[Bo admin] lunch?",
        "[42] @bot what time is it",
        "noon",
        "[Ana] thanks",
    ]


async def test_the_body_says_when_it_compacted(
    services: Services, minutes: Iterator[datetime]
) -> None:
    for _ in range(3):
        await say(services.store, DM, TEXT, next(minutes))
        await services.store.record_reply(DM, TEXT, next(minutes))
    new = turn(TEXT)
    body = await conversation_body(services, new, history_limit=40)
    # 100 tokens: six earlier messages and the new one (7 x 19) did not fit.
    assert new.compacted
    kept = body["messages"][1:]
    assert sum(estimate_tokens(m["content"]) + MESSAGE_OVERHEAD for m in kept) <= 50
    assert kept[0]["role"] == "user"


async def test_the_prefix_is_stable_between_compactions(
    store: SqliteStore, minutes: Iterator[datetime]
) -> None:
    budget = HistoryBudget(messages=100, tokens=200)
    previous: list[int] = []
    compactions = 0
    for _ in range(12):
        history = await load_history(store, DM, "dm", COST, budget)
        ids = [m.id for m in history.messages]
        tokens = len(ids) * COST + COST
        if history.compacted:
            compactions += 1
            # About half the budget remains, and it opens with a question.
            assert tokens <= budget.tokens // 2
            assert history.messages[0].role == "user"
            assert await store.history_start(DM) == ids[0]
            assert ids[0] > previous[0]
        else:
            # Append-only: last turn's history is the start of this one.
            assert ids[: len(previous)] == previous
            assert tokens <= budget.tokens
        previous = ids
        await say(store, DM, TEXT, next(minutes))
        await store.record_reply(DM, TEXT, next(minutes))
    # 200 tokens hold 8 earlier messages of 19 with the new one; a compaction keeps 4
    # (half less the new one), so after the fifth exchange every third one compacts.
    assert compactions == 3


async def test_the_message_cap_compacts_too(
    store: SqliteStore, minutes: Iterator[datetime]
) -> None:
    budget = HistoryBudget(messages=6, tokens=100_000)
    for _ in range(3):
        await say(store, DM, "q", next(minutes))
        await store.record_reply(DM, "a", next(minutes))
    assert not (await load_history(store, DM, "dm", COST, budget)).compacted
    await say(store, DM, "q", next(minutes))
    history = await load_history(store, DM, "dm", COST, budget)
    assert history.compacted
    # Half the cap: the last three of seven.
    assert [m.role for m in history.messages] == ["user", "assistant", "user"]
    await store.record_reply(DM, "a", next(minutes))
    # Four now, from the stored start: no compaction, and the start did not move.
    again = await load_history(store, DM, "dm", COST, budget)
    assert not again.compacted
    assert [m.id for m in again.messages[:3]] == [m.id for m in history.messages]


async def test_a_huge_new_message_keeps_no_history(
    store: SqliteStore, minutes: Iterator[datetime]
) -> None:
    budget = HistoryBudget(messages=40, tokens=400)
    await say(store, DM, TEXT, next(minutes))
    last = await store.record_reply(DM, TEXT, next(minutes))
    history = await load_history(store, DM, "dm", 390, budget)
    assert history.compacted and history.messages == []
    assert await store.history_start(DM) == last + 1
    # The next message starts the new history.
    newest = await say(store, DM, "x" * 1200, next(minutes))
    later = await load_history(store, DM, "dm", COST, budget)
    assert [m.id for m in later.messages] == [newest] and not later.compacted


def test_the_cut_never_opens_with_a_reply() -> None:
    roles = ["user", "assistant"] * 3
    # Half of 100 less the new message's 10 leaves 40: the last four fit, from a question.
    assert compaction_cut([10] * 6, roles, 10, HistoryBudget(40, 100)) == 2
    # 30 leaves room for three, which would open with a reply: start at the next question.
    assert compaction_cut([10] * 6, roles, 20, HistoryBudget(40, 100)) == 4
    # Nothing fits: keep nothing.
    assert compaction_cut([10] * 6, roles, 60, HistoryBudget(40, 100)) == 6
    # Groups: several questions in a row are all fine to open with.
    assert compaction_cut([10] * 4, ["user"] * 4, 10, HistoryBudget(4, 100)) == 2
