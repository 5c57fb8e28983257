"""Living memory in a Telegram group over a week: what one member says of another, or
quotes, is nobody's memory, and forgetting takes exactly the right member's facts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import aiohttp

from tests.channels.group_members import ADMIN_AUTH, ADMIN_TOKEN, AIKO, BRUNO, CARA, Fortnight
from tests.conftest import RelayFactory

DAY = timedelta(days=1)


async def card(group: Fortnight, user: int) -> list[str]:
    answer = await group.admin("GET", f"/admin/users/telegram:{user}/memory")
    return [fact["text"] for fact in answer["facts"]]


async def test_what_members_say_of_each_other_is_nobodys_memory(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    await group.start(relay_factory, auth=ADMIN_AUTH)
    # -- Monday: each asks the bot to keep something of their own -------------------------
    await group.asks("remember that I'm vegetarian", AIKO)
    await group.asks("please call me Bru", BRUNO)
    await group.asks("remember that I'm allergic to nuts", CARA)

    # -- Tuesday to Friday: of each other, quoted, about someone else in their life -------
    said_of_others = [
        (AIKO, "Sam lives in Rome"),
        (BRUNO, "she's vegan"),
        (CARA, "he said 'I live in Oslo'"),
        (CARA, 'Bruno wrote: "I work at Google"'),
        (CARA, "remember that Bruno is vegan"),
        (BRUNO, "please remember that she lives in Rome"),
        (AIKO, "remember that Cara is allergic to nuts"),
        (AIKO, "actually, Cara's vegan now"),
        (AIKO, "actually, my sister is vegan"),
        (CARA, "from now on, call him Bru"),
        (AIKO, "remember that I hate pineapple on it"),
    ]
    for user, text in said_of_others:
        group.clock.advance(DAY / 3)
        await group.asks(text, user)
    await group.chats("I live in Lisbon", CARA)  # to the room, not to the bot

    assert await card(group, AIKO) == ["Is vegetarian"]
    assert await card(group, BRUNO) == ["Name: Bru"]
    assert await card(group, CARA) == ["Is allergic to nuts"]

    # -- Sunday: the operator deletes one of Cara's facts under Aiko's key: not found ------
    group.clock.advance(2 * DAY)
    cara = await group.admin("GET", f"/admin/users/telegram:{CARA}/memory")
    fact_id = cara["facts"][0]["fact_id"]
    status, answer = await delete(group, f"/admin/users/telegram:{AIKO}/memory/{fact_id}")
    assert status == 404 and f"GET /admin/users/telegram:{AIKO}/memory" in answer
    assert await card(group, CARA) == ["Is allergic to nuts"]
    status, _ = await delete(group, f"/admin/users/telegram:{CARA}/memory/{fact_id}")
    assert status == 200
    assert await card(group, CARA) == []

    # Bruno forgets everything, from his DM: the others' cards stay as they were.
    assert "/forget confirm" in await group.command("/forget", BRUNO, dm=True)
    assert "Done." in await group.command("/forget confirm", BRUNO, dm=True)
    assert await card(group, AIKO) == ["Is vegetarian"]


async def delete(group: Fortnight, path: str) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    async with aiohttp.ClientSession() as http:
        async with http.delete(f"{group.relay.url}{path}", headers=headers) as response:
            return response.status, await response.text()
