"""``/forget``'s account of what it deletes."""

from __future__ import annotations

from middleware.commands.forget_commands import describe
from middleware.store import ForgetReport


def test_the_linked_accounts_that_stay_are_named_in_their_number() -> None:
    one = describe(ForgetReport(messages=2, unlinked_from=("telegram:7",)))
    assert one.endswith("; and the link to telegram:7, which keeps its own data")
    two = describe(ForgetReport(unlinked_from=("api:mia", "telegram:7")))
    assert two.endswith("; and the link to api:mia, telegram:7, which keep their own data")
