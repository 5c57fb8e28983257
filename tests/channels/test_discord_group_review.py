"""A Discord server channel as its members meet it, through the real relay and the fake
gateway: what the model is told when one member talks about another, replies to them,
or goes by a server nickname."""

from __future__ import annotations

from tests.channels.group_members import BRUNO, CHANNEL, DEV, SERVER, Fortnight
from tests.conftest import RelayFactory
from tests.fakes.discord_api import user_payload


def member(user: int, name: str) -> dict[str, object]:
    return user_payload(100 + user, name)


async def test_a_place_said_of_a_mentioned_member_is_nobodys(
    group: Fortnight, relay_factory: RelayFactory
) -> None:
    """Bruno writes that Dev (mentioned, ``<@104>``) is in Tokyo: the place is Dev's, said
    by someone else, so it is learned neither for Bruno nor for Dev."""
    await group.start(relay_factory)
    await group.discord.push_guild(SERVER, [], channels=(CHANNEL,))
    await group.discord.push_message(
        f"<@{100 + DEV}> currently in Tokyo, so mornings are hard for him",
        channel_id=CHANNEL,
        user_id=100 + BRUNO,
        author=member(BRUNO, "bruno"),
        guild_id=SERVER,
        mentions=[member(DEV, "dev")],
        at=group.clock.now(),
    )
    await group.on_discord("so when do we meet?", BRUNO)
    assert group.said()[-2] == "[Bruno] @Dev currently in Tokyo, so mornings are hard for him"
    assert group.local_times() == {"Bruno": "timezone unknown"}
    assert "the user's timezone is unknown" in group.block()
    await group.on_discord("hi all", DEV)
    assert group.local_times() == {"Bruno": "timezone unknown", "Dev": "timezone unknown"}
