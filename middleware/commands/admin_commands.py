"""``/admin link|unlink|whois``: identity administration from chat, for the user keys listed
in ``[auth] chat_admins`` (the HTTP admin API does the same with the admin token)."""

from __future__ import annotations

from collections.abc import Collection

from middleware.commands import Command, CommandHandler
from middleware.commands.link_commands import link_and_report
from middleware.errors import NotFoundError
from middleware.notices import Notices
from middleware.store import Store
from middleware.types import Turn

USAGE = (
    "Use /admin link <user key> <user key>…, /admin unlink <user key> or "
    "/admin whois <user key> (user keys look like telegram:123456)."
)


def admin_commands(
    store: Store, admins: Collection[str], notices: Notices | None = None
) -> dict[str, CommandHandler]:
    """The handler, keyed by command name; it answers only the listed admins. ``notices``
    tells linked users which timezone was kept when theirs differed."""

    async def admin(turn: Turn, command: Command) -> str:
        if turn.user_key not in admins:
            return (
                "Only relay admins can use /admin; their user keys are listed in the relay's "
                f"[auth] chat_admins (yours is {turn.user_key})."
            )
        parts = command.args.split()
        verb, keys = (parts[0].lower(), parts[1:]) if parts else ("", [])
        if verb == "link" and len(set(keys)) >= 2:
            try:
                linking = await link_and_report(
                    store, keys, now=turn.received_at, notices=notices, me=turn.user_key
                )
            except NotFoundError as exc:
                return str(exc)
            linked = ", ".join(await store.linked_users(keys[0]))
            return f"Linked {linked} as person {linking.person_id}." + (
                f"\n{linking.said}" if linking.said else ""
            )
        if verb == "unlink" and len(keys) == 1:
            if await unlink_and_tell(store, keys[0], notices):
                return f"{keys[0]} is no longer linked; it keeps a copy of the shared data."
            return f"{keys[0]} is unknown or not linked to anyone."
        if verb == "whois" and len(keys) == 1:
            return await _whois(store, keys[0])
        return f"I don't understand '/admin {command.args}'. {USAGE}"

    return {"admin": admin}


async def unlink_and_tell(store: Store, user_key: str, notices: Notices | None) -> bool:
    """Unlink ``user_key`` for an admin (``Store.unlink_user``) and leave it a notice
    saying from which accounts: unlike ``/unlink``, its user did not ask. ``False`` when
    the user is unknown or not linked."""
    others = [key for key in await store.linked_users(user_key) if key != user_key]
    if not await store.unlink_user(user_key):
        return False
    if notices is not None:
        notices.add(
            user_key,
            f"The relay's admin unlinked this account from {', '.join(others)}: its "
            "timezone, actions and memory are its own from now on.",
        )
    return True


async def _whois(store: Store, user_key: str) -> str:
    user = await store.get_user(user_key)
    if user is None:
        return f"No user {user_key}: the relay has never seen a message from them."
    prior = await store.peek_prior("", user_key)
    linked = [key for key in await store.linked_users(user_key) if key != user_key]
    seen = user.last_interaction_any_channel_at
    return "\n".join(
        [
            f"{user_key}" + (f" ({user.display_name})" if user.display_name else ""),
            f"Linked to: {', '.join(linked) if linked else 'nobody'}",
            f"Timezone: {prior.user_tz or 'not set'}",
            f"Last contact: {seen.isoformat(timespec='minutes') if seen else 'never'}"
            + (f" ({user.last_channel})" if user.last_channel else ""),
        ]
    )
