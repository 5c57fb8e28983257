"""``/link <code>``: guessing codes is refused by the store's count, shared by every relay
process on the same store and kept across restarts."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from middleware.commands import CommandHandler, match_command
from middleware.commands.link_commands import link_commands
from middleware.notices import Notices
from middleware.store import SqliteStore
from middleware.types import Turn
from tests.middleware.test_store import T0, inbound

DC, DC_DM = "discord:7", "agent:main:discord:dm:7"


async def link(store: SqliteStore, text: str, minute: int) -> str:
    """``text`` (a /link command) from the Discord account, ``minute`` minutes after T0,
    answered by a freshly started relay's handlers on ``store``."""
    at = T0 + timedelta(minutes=minute)
    turn = Turn("discord", "7", "7", text, at, {}, user_key=DC, thread_key=DC_DM)
    command = match_command(text)
    assert command is not None
    answer = await link_commands(store)["link"](turn, command)
    assert isinstance(answer, str)
    return answer


async def test_wrong_codes_count_across_processes_and_restarts(
    store: SqliteStore, db_path: Path
) -> None:
    await store.record_inbound(inbound(T0, user="7", channel="discord", thread=DC_DM))
    other = SqliteStore(db_path)  # a second relay process on the same file
    await other.open()
    try:
        for minute in range(5):
            wrong = await link(store if minute % 2 else other, "/link ZZZZZ2", minute)
            assert wrong.startswith("I don't know the link code 'ZZZZZ2'")
        for relay in (store, other):
            refused = await link(relay, "/link ZZZZZ3", 6)
            assert refused == (
                "Too many unknown link codes from this account; try again in 4 minutes. "
                "Copy the code exactly as /link shows it on your other account."
            )
    finally:
        await other.close()
    await store.close()
    restarted = SqliteStore(db_path)
    await restarted.open()
    try:
        assert "try again in 1 minute." in await link(restarted, "/link ZZZZZ3", 9)
        # Once the first wrong code is ten minutes old, codes are tried again.
        assert "don't know" in await link(restarted, "/link ZZZZZ3", 10)
    finally:
        await restarted.close()


async def test_a_link_code_is_never_shown_in_a_group(store: SqliteStore) -> None:
    """Any member could send a code shown in a group back first, and be linked to the
    account (its memory and actions): codes are made in DMs, and a group's /whoami does
    not name the linked accounts."""
    group = "agent:main:discord:group:9"
    await store.record_inbound(inbound(T0, user="7", channel="discord", thread=group))
    handlers = link_commands(store)
    turn = Turn("discord", "9", "7", "/link", T0, {}, "group", user_key=DC, thread_key=group)
    refused = await handlers["link"](turn, match_command("/link"))  # type: ignore[arg-type]
    assert "direct chat" in str(refused) and "link code is" not in str(refused)

    await store.record_inbound(inbound(T0, user="1", channel="telegram", thread="t"))
    await store.link_users([DC, "telegram:1"], now=T0)
    turn.text = "/whoami"
    shown = str(await handlers["whoami"](turn, match_command("/whoami")))  # type: ignore[arg-type]
    assert "telegram:1" not in shown and "Linked accounts: 1" in shown


async def test_a_code_redeemed_in_a_group_does_not_name_the_linked_accounts(
    store: SqliteStore,
) -> None:
    """``/link CODE`` works anywhere (it uses the code up), but in a group the answer
    counts the accounts now linked instead of naming them to the room."""
    await store.record_inbound(inbound(T0, user="1", channel="telegram", thread="t"))
    handlers = link_commands(store)
    dm = Turn("telegram", "t", "1", "/link", T0, {}, "dm", user_key="telegram:1", thread_key="t")
    made = str(await handlers["link"](dm, match_command("/link")))  # type: ignore[arg-type]
    code = made.split("Your link code is ")[1][:6]

    group = "agent:main:discord:group:9"
    await store.record_inbound(inbound(T0, user="7", channel="discord", thread=group))
    text = f"/link {code}"
    turn = Turn("discord", "9", "7", text, T0, {}, "group", user_key=DC, thread_key=group)
    done = str(await handlers["link"](turn, match_command(text)))  # type: ignore[arg-type]
    assert done.startswith("Linked: this account and 1 other.")
    assert "telegram:1" not in done and DC not in done
    assert sorted(await store.linked_users(DC)) == sorted([DC, "telegram:1"])

    made = str(await handlers["link"](dm, match_command("/link")))  # type: ignore[arg-type]
    text = f"/link {made.split('Your link code is ')[1][:6]}"
    turn.text = text
    again = str(await handlers["link"](turn, match_command(text)))  # type: ignore[arg-type]
    assert again == "These accounts are already linked: this account and 1 other."


def dm_turn(channel: str, user: str, text: str) -> Turn:
    thread = f"agent:main:{channel}:dm:{user}"
    return Turn(
        channel, user, user, text, T0, {}, "dm", user_key=f"{channel}:{user}", thread_key=thread
    )


async def answer(handlers: dict[str, CommandHandler], turn: Turn) -> str:
    command = match_command(turn.text)
    assert command is not None
    return str(await handlers[command.name](turn, command))


async def test_whoever_redeems_a_code_is_announced_to_the_accounts_already_linked(
    store: SqliteStore,
) -> None:
    """A code works for whoever sends it: Mia's accounts are told who joined them."""
    for channel, user, name in (
        ("telegram", "1", "Mia"),
        ("api", "mia", None),
        ("telegram", "8", "Noor"),
    ):
        await store.record_inbound(
            inbound(
                T0, user=user, channel=channel, thread=f"agent:main:{channel}:dm:{user}", name=name
            )
        )
    notices = Notices()
    handlers = link_commands(store, notices)
    await store.link_users(["telegram:1", "api:mia"], now=T0)
    made = await answer(handlers, dm_turn("telegram", "1", "/link"))
    code = made.split("Your link code is ")[1][:6]
    assert "share it with nobody" in made and "what I remember about you" in made

    assert (await answer(handlers, dm_turn("telegram", "8", f"/link {code}"))).startswith(
        "Linked: "
    )
    for mine in ("telegram:1", "api:mia"):
        [told] = await notices.take(mine)
        assert "linked to the user's with a link code: telegram:8 (Noor)." in told
        assert told.endswith("/unlink telegram:8 sent here takes it out.")
    assert await notices.take("telegram:8") == []  # the reply told the one linking


async def test_unlink_with_an_account_takes_that_account_out(store: SqliteStore) -> None:
    for channel, user in (("telegram", "1"), ("api", "mia"), ("telegram", "8")):
        await store.record_inbound(
            inbound(T0, user=user, channel=channel, thread=f"agent:main:{channel}:dm:{user}")
        )
    notices = Notices()
    handlers = link_commands(store, notices)
    await store.link_users(["telegram:1", "api:mia", "telegram:8"], now=T0)

    gone = await answer(handlers, dm_turn("telegram", "1", "/unlink telegram:8"))
    assert gone.startswith("telegram:8 is no longer linked to your accounts.")
    assert await store.linked_users("telegram:1") == ["api:mia", "telegram:1"]
    assert await store.linked_users("telegram:8") == []
    assert await notices.take("telegram:8") == [
        "This account was unlinked from telegram:1: its timezone, actions and memory are its "
        "own from now on."
    ]

    wrong = await answer(handlers, dm_turn("telegram", "1", "/unlink discord:5"))
    assert wrong == (
        "discord:5 isn't one of your linked accounts (yours are api:mia). Send /unlink "
        "<account> with one of them to take it out, or /unlink alone to unlink this account."
    )
    assert await store.linked_users("telegram:1") == ["api:mia", "telegram:1"]
    self_named = await answer(handlers, dm_turn("telegram", "1", "/unlink telegram:1"))
    assert self_named.startswith("This account (telegram:1) is no longer linked to api:mia.")


async def test_news_of_an_account_joining_is_dropped_once_it_is_unlinked_again(
    store: SqliteStore,
) -> None:
    """Mia's Discord account, silent for a week, is not told days later to /unlink Noor's
    account: Telegram took it out already."""
    for channel, user in (("telegram", "1"), ("discord", "5"), ("telegram", "8")):
        thread = f"agent:main:{channel}:dm:{user}"
        await store.record_inbound(inbound(T0, user=user, channel=channel, thread=thread))
    notices = Notices()
    handlers = link_commands(store, notices)
    await store.link_users(["telegram:1", "discord:5"], now=T0)
    code = (await answer(handlers, dm_turn("telegram", "1", "/link"))).split("code is ")[1][:6]
    await answer(handlers, dm_turn("telegram", "8", f"/link {code}"))
    await answer(handlers, dm_turn("telegram", "1", "/unlink telegram:8"))
    assert await notices.take("discord:5") == []
    assert await notices.take("telegram:1") == []
