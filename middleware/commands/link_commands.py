"""``/link``, ``/unlink``, ``/whoami``: link your accounts on several channels (spec 000 §7.0).

Identities are per channel until the user links them: ``/link`` on one account makes a
one-time code (in a DM only: in a group any member could send it back first),
``/link CODE`` sent from the other account confirms it. Linked accounts
share one timezone, one "last contact on any channel", their clock data (actions,
calibration, policy overrides) and their living memory. ``/unlink`` undoes it for the
account it is sent from, ``/unlink <account>`` for another of the person's accounts.
Whoever holds a code can link to its owner, so every account already linked is told
(by a notice) which accounts joined it, and how to take one out. In a group ``/whoami``
counts the linked accounts without naming them.

Codes are six characters from 31, so guessing one is hopeless only while guesses are
few: an account that sends ``MAX_WRONG_CODES`` unknown codes within ``CODE_TTL`` is
refused further tries until the first of them is ``CODE_TTL`` old. The count is the
store's (``Store.redeem_link_code``), so a restart does not reset it and every relay
process on the same store shares it; only ``/link <code>`` reads it.

When the accounts had different default timezones, the store's rule decides (the first
known wins: an already linked person's, else the account whose code it was, or the first
listed in ``/admin link`` or ``POST /admin/links``), and every account is told which one
was kept and that /tz changes it — the one linking in the reply, the others by a notice
(``middleware.notices``).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from middleware.clock.stage import stated_location
from middleware.commands import Command, CommandHandler
from middleware.commands.time_commands import stated_zone_in_use
from middleware.errors import StoreError
from middleware.notices import Holds, Notices
from middleware.store import Store
from middleware.types import Turn

CODE_TTL = timedelta(minutes=10)
CODE_LENGTH = 6
# No 0/O, 1/I/L: codes are read off one screen and typed into another.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
# Unknown or expired codes one account may send within CODE_TTL.
MAX_WRONG_CODES = 5
SHARED = (
    "they share one timezone, one 'last contact on any channel', your clocked actions "
    "and settings, and what I remember about you (/memory)"
)

# A link code shown in a group could be sent back by any member, linking their account
# to this one (and so seeing its memory and actions): codes are made only in DMs.
CODE_NOT_IN_GROUPS = (
    "Everyone here would see the link code, and whoever sent it back first would be "
    "linked to you, so I make codes only in a direct chat with me: send /link there."
)


def new_code() -> str:
    """A random one-time link code."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


@dataclass(frozen=True, slots=True)
class LinkReport:
    """What linking accounts did to their timezone (``link_and_report``)."""

    person_id: str
    # The zone the linked accounts share now (``None`` when none had one).
    timezone: str | None
    # The accounts whose zone was a different one, with that zone, in the order given.
    replaced: dict[str, str]
    # The sentence telling the user which zone was kept; "" when none was replaced.
    said: str


async def link_and_report(
    store: Store,
    user_keys: Sequence[str],
    *,
    now: datetime,
    notices: Notices | None,
    me: str | None,
) -> LinkReport:
    """Link ``user_keys`` (``Store.link_users``; the first one's settings win) and say
    which timezone was kept when theirs differed — in the report, and as a notice for each
    linked account other than ``me``, the one being answered (every account when ``me`` is
    ``None``: an operator linking them over the admin API)."""
    before = {key: (await store.peek_prior("", key)).user_tz for key in user_keys}
    person = await store.link_users(user_keys, now=now)
    kept = (await store.peek_prior("", user_keys[0])).user_tz
    zones = {zone for zone in before.values() if zone}
    if len(zones) < 2:
        return LinkReport(person, kept, {}, "")
    replaced = {key: zone for key, zone in before.items() if zone and zone != kept}
    channels = [key.partition(":")[0] for key in before]
    named = [
        f"{key.partition(':')[0] if channels.count(key.partition(':')[0]) == 1 else key}: {zone}"
        for key, zone in before.items()
        if zone
    ]
    said = (
        f"Your accounts had different time zones ({', '.join(named)}); kept {kept} — use /tz "
        "to change it."
    )
    if notices is not None:
        for key in await store.linked_users(user_keys[0]):
            if key != me:
                other = user_keys[0] if key != user_keys[0] else user_keys[1]
                notices.add(key, said, holds=still_linked(store, key, other))
    return LinkReport(person, kept, replaced, said)


def still_linked(store: Store, user_key: str, other: str) -> Holds:
    """Whether ``user_key`` is still linked to ``other``, asked when a notice about
    their link is delivered."""

    async def holds() -> bool:
        return other in await store.linked_users(user_key)

    return holds


def link_commands(store: Store, notices: Notices | None = None) -> dict[str, CommandHandler]:
    """The handlers, keyed by command name; ``notices`` tells the other accounts."""

    async def describe(user_keys: list[str], me: str, chat_type: str = "dm") -> str:
        if chat_type == "group":
            # Everyone here reads the reply: which accounts are one person is the user's.
            others = len(user_keys) - (me in user_keys)
            return f"this account and {others} other{'s' if others != 1 else ''}"
        named = []
        for key in user_keys:
            user = await store.get_user(key)
            name = f"{key} ({user.display_name})" if user and user.display_name else key
            named.append(f"{name}, this account" if key == me else name)
        return "; ".join(named)

    async def joined_notice(joined: list[str]) -> str:
        named = await describe(joined, "")
        one = len(joined) == 1
        return (
            f"{'An account was' if one else 'Accounts were'} linked to the user's with a "
            f"link code: {named}. Linked accounts share one timezone, clocked actions and "
            f"what the relay remembers about the user. If {'it is' if one else 'one is'} "
            f"not theirs, /unlink {joined[0]} sent here takes it out."
        )

    async def make_code(turn: Turn) -> str:
        expires_at = turn.received_at + CODE_TTL
        for attempt in range(3):
            code = new_code()
            try:
                await store.create_link_code(turn.user_key, code, expires_at)
                break
            except StoreError:
                # Almost surely another user's live code: draw again.
                if attempt == 2:
                    raise
        minutes = int(CODE_TTL.total_seconds() // 60)
        return (
            f"Your link code is {code}. Within {minutes} minutes, send /link {code} from your "
            "other account (on any channel) to link the two accounts. Linked accounts share "
            "your timezone, last contact, actions and what I remember about you; /unlink "
            "undoes it. Whoever sends this code links their account to yours: share it "
            "with nobody."
        )

    async def redeem(turn: Turn, code: str) -> str:
        me, now = turn.user_key, turn.received_at
        tried = await store.redeem_link_code(
            code, me, now, max_misses=MAX_WRONG_CODES, window=CODE_TTL
        )
        if tried.refused_until is not None:
            minutes = max(1, -(-int((tried.refused_until - now).total_seconds()) // 60))
            return (
                f"Too many unknown link codes from this account; try again in {minutes} "
                f"minute{'s' if minutes > 1 else ''}. Copy the code exactly as /link shows "
                "it on your other account."
            )
        owner = tried.owner
        if owner is None:
            if tried.own_code:
                return (
                    f"{code.upper()} is this account's own code. Send /link {code.upper()} "
                    "from the other account you want to link."
                )
            return (
                f"I don't know the link code '{code}', or it has expired (codes last "
                f"{int(CODE_TTL.total_seconds() // 60)} minutes and work once). Send /link "
                "on your other account for a new code, then /link <code> here."
            )
        if owner in await store.linked_users(me):
            listed = await describe(await store.linked_users(me), me, turn.chat_type)
            return f"These accounts are already linked: {listed}."
        owners = await store.linked_users(owner) or [owner]
        mine = await store.linked_users(me) or [me]
        # The code's owner first: their timezone wins when both have one.
        linking = await link_and_report(store, [owner, me], now=now, notices=notices, me=me)
        if notices is not None:
            # Whoever holds a code can link to its owner: every account already linked
            # hears which accounts joined it, and how to take one back out.
            for key in [*owners, *mine]:
                if key != me:
                    joined = [k for k in (mine if key in owners else owners) if k != key]
                    notices.add(
                        key, await joined_notice(joined), holds=still_linked(store, key, joined[0])
                    )
        listed = await describe(await store.linked_users(me), me, turn.chat_type)
        return (
            f"Linked: {listed}. From now on {SHARED}, so a message on one counts as contact "
            "on all of them. Send /unlink from any of them to undo it."
            + (f"\n{linking.said}" if linking.said else "")
        )

    async def link(turn: Turn, command: Command) -> str:
        if not command.args:
            if turn.chat_type == "group":
                # Whoever sent the code first would join this account's person.
                return CODE_NOT_IN_GROUPS
            return await make_code(turn)
        code = command.args.split()[0]
        return await redeem(turn, code)

    async def unlink(turn: Turn, command: Command) -> str:
        me = turn.user_key
        linked = await store.linked_users(me)
        named = command.args.split()[0] if command.args else me
        if named != me:
            return await unlink_other(turn, named, linked)
        others = [key for key in linked if key != me]
        if not await store.unlink_user(me):
            return "This account isn't linked to any other. Use /link to link one."
        return (
            f"This account ({me}) is no longer linked to {', '.join(others)}. It "
            "keeps the timezone and actions it had, and what I learned about you from it; "
            "from now on they are its own."
        )

    async def unlink_other(turn: Turn, named: str, linked: list[str]) -> str:
        """``/unlink <account>``: take one of this person's other accounts out (one
        linked by someone who got hold of a code, say)."""
        if named not in linked:
            mine = [key for key in linked if key != turn.user_key]
            if not mine:
                listed = "this account isn't linked to any other"
            elif turn.chat_type == "group":
                listed = "send /whoami in a direct chat with me to see yours"
            else:
                listed = f"yours are {', '.join(mine)}"
            return (
                f"{named} isn't one of your linked accounts ({listed}). Send /unlink "
                "<account> with one of them to take it out, or /unlink alone to unlink "
                "this account."
            )
        await store.unlink_user(named)
        if notices is not None:
            notices.add(
                named,
                f"This account was unlinked from {turn.user_key}: its timezone, actions and "
                "memory are its own from now on.",
            )
        return (
            f"{named} is no longer linked to your accounts. It keeps a copy of the timezone "
            "and actions it had, and what I learned about you from it; nothing it does "
            "from now on reaches this account."
        )

    async def whoami(turn: Turn, command: Command) -> str:
        me = turn.user_key
        user = await store.get_user(me)
        name = turn.display_name or (user.display_name if user else None)
        lines = [f"You are {me}" + (f" ({name})." if name else ".")]
        others = [key for key in await store.linked_users(me) if key != me]
        if others and turn.chat_type == "group":
            lines.append(
                f"Linked accounts: {len(others)} (everyone here would read which; send "
                "/whoami in a direct chat with me to see them)."
            )
        elif others:
            lines.append(f"Linked accounts: {await describe(others, me)}; {SHARED}.")
        else:
            lines.append("Linked accounts: none. Use /link to link an account on another channel.")
        prior = await store.peek_prior(turn.thread_key, me)
        stated = stated_location(prior, turn.received_at)
        if prior.user_tz:
            lines.append(f"Timezone: {prior.user_tz}.")
        elif stated is not None:
            # The zone every turn uses meanwhile: "not set" alone would say it is UTC.
            said = stated_zone_in_use(stated, turn.received_at, stated.zone)
            lines.append(f"Timezone: not set. {said}")
        else:
            lines.append("Timezone: not set (set it with /tz <zone or city>).")
        return "\n".join(lines)

    return {"link": link, "unlink": unlink, "whoami": whoami}
