"""``/forget``: delete everything stored about the user, after a confirmation step.

``/forget`` says what would be deleted and asks for ``/forget confirm`` in the same chat
within ``CONFIRM_WINDOW``; ``/forget confirm`` then deletes it all in one transaction
(``Store.forget_user``) and says what went. In a group both answers say it in general
terms: the counts (of private messages, memory, linked accounts) are the user's, not the
group's; a private chat shows them.

The pending request is the ``/forget`` message itself, which the recording stage has
already stored: the confirmation looks for it in the chat's transcript. So a request
survives a restart and works whichever relay replica gets the confirmation, with no
state of its own to keep or to forget. Neither reply is recorded (``UNRECORDED``), and
the two messages are the user's, so they go with everything else.
"""

from __future__ import annotations

from datetime import timedelta

from middleware.commands import Command, CommandHandler, match_command
from middleware.injection import InjectionMemory
from middleware.notices import Notices
from middleware.store import ForgetReport, Store
from middleware.types import UNRECORDED, Reply, Turn

CONFIRM_WINDOW = timedelta(minutes=10)
# How far back in the chat the confirmation looks for the user's /forget.
_LOOKBACK_MESSAGES = 200

# ForgetReport field → (singular, plural), in the order the reply lists them.
_KINDS: tuple[tuple[str, str, str], ...] = (
    ("messages", "message", "messages"),
    ("threads", "private conversation (whole)", "private conversations (whole)"),
    ("thread_memberships", "chat membership", "chat memberships"),
    ("actions", "clocked action", "clocked actions"),
    ("memory_facts", "remembered fact", "remembered facts"),
    ("work_contexts", "work context", "work contexts"),
    ("sessions", "session", "sessions"),
    ("continuity_entries", "continuity note", "continuity notes"),
    ("rollup_segments", "activity summary", "activity summaries"),
    ("injections", "injected context block", "injected context blocks"),
    ("held_tool_calls", "held tool call", "held tool calls"),
    ("link_codes", "link code", "link codes"),
    ("job_marks", "background job mark", "background job marks"),
)


def describe(report: ForgetReport) -> str:
    """'3 messages, 1 clocked action and your profile (…)'."""
    items = []
    for field, one, many in _KINDS:
        count = getattr(report, field)
        if count:
            items.append(f"{count} {one if count == 1 else many}")
    items.append("your profile (timezone, last contact, settings)")
    listed = items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
    if report.unlinked_from:
        keeps = "which keeps its" if len(report.unlinked_from) == 1 else "which keep their"
        listed += f"; and the link to {', '.join(report.unlinked_from)}, {keeps} own data"
    if report.link_code_misses_kept:
        listed += (
            ". Only the count of wrong link codes you tried lately stays, until its window "
            "ends, so that /forget cannot reset the limit on guessing codes"
        )
    return listed


def forget_commands(
    store: Store, injections: InjectionMemory, notices: Notices | None = None
) -> dict[str, CommandHandler]:
    """The handler, keyed by command name. ``injections`` is the injection stage's memory,
    which must stop replaying the blocks the store deletes; ``notices`` holds news for the
    user (an account unlinked from theirs) that must not reach whoever writes next as
    them, from scratch."""

    async def requested(turn: Turn) -> bool:
        """Whether the user sent a bare /forget here within the window before this turn."""
        since = turn.received_at - CONFIRM_WINDOW
        this_message = await turn.inbound_id if turn.inbound_id is not None else None
        for message in reversed(await store.transcript(turn.thread_key, _LOOKBACK_MESSAGES)):
            if message.id == this_message or message.user_key != turn.user_key:
                continue
            if message.at < since:
                return False
            command = match_command(message.text)
            if command is not None and command.name == "forget":
                return not command.args
        return False

    async def forget(turn: Turn, command: Command) -> Reply:
        minutes = int(CONFIRM_WINDOW.total_seconds() // 60)
        verb = command.args.lower()
        if verb not in ("", "confirm"):
            # "/forget that I live in Paris": the user wants one item gone, which is
            # /memory's; this command only ever deletes everything.
            text = (
                "/forget deletes everything I store about you at once and takes no other "
                "words. To forget one thing I remember about you, send /memory in a direct "
                "chat with me to list it, then /memory forget N. To delete everything, send "
                "/forget to see what would be deleted, then /forget confirm."
            )
        elif verb == "" and turn.chat_type == "group":
            text = (
                f"This deletes everything I store about you: your messages here and "
                f"elsewhere, our private conversations, what I remember about you and your "
                f"settings. I don't list it in a group: send /forget in a private chat with "
                f"me to see the details. It cannot be undone. To go ahead, send /forget "
                f"confirm here within {minutes} minutes; otherwise nothing is deleted."
            )
        elif verb == "":
            report = await store.forget_user(turn.user_key, dry_run=True)
            what = describe(report) if report else "nothing yet"
            text = (
                f"This deletes everything I store about you ({turn.user_key}): {what}. "
                f"It cannot be undone. To go ahead, send /forget confirm here within "
                f"{minutes} minutes; otherwise nothing is deleted."
            )
        elif not await requested(turn):
            text = (
                f"Send /forget first to see what would be deleted, then /forget confirm here "
                f"within {minutes} minutes."
            )
        else:
            report = await store.forget_user(turn.user_key)
            injections.drop_all()
            if notices is not None:
                notices.drop(turn.user_key)
            if turn.chat_type == "group":
                # What went is theirs to know, not the group's.
                return Reply(
                    text="Done. I deleted everything I stored about you. If you write to me "
                    "again, I start from scratch.",
                    meta={UNRECORDED: "1"},
                )
            text = (
                f"Done. I deleted everything I stored about you ({turn.user_key}): "
                f"{describe(report) if report else 'there was nothing'}. If you write to me "
                "again, I start from scratch."
            )
        return Reply(text=text, meta={UNRECORDED: "1"})

    return {"forget": forget}
