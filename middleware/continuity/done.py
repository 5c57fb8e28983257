"""Whether a sentence reports an open item done in a form of the item's own verb.

"pull the Christensen data" is done when the user says "the Christensen data is pulled
now", "I pulled the Christensen data" or "Christensen data done": the verb's past forms
come from a rule (regular -ed, -ied and a doubled final consonant) and a table of common
irregular verbs ("written", "sent", "built", "run", "taken", "made", "set up"), so any
item's verb is matched by its base form, not by a fixed list of participles.

A past form counts only where it reports the item: right after the item's object ("the
data is pulled", "got the data pulled") or right before it ("pulled the data"), and not
after a wish, plan, modal, condition or negation ("I need to get the data pulled", "once
the data is pulled", "the data isn't pulled"). "Pulled an all-nighter" is not about the
data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = ["past_forms", "reports_done", "reports_named_done"]

_IRREGULAR: dict[str, tuple[str, ...]] = {
    "begin": ("began", "begun"),
    "break": ("broke", "broken"),
    "bring": ("brought",),
    "build": ("built",),
    "buy": ("bought",),
    "catch": ("caught",),
    "choose": ("chose", "chosen"),
    "cut": ("cut",),
    "do": ("did", "done"),
    "draw": ("drew", "drawn"),
    "drive": ("drove", "driven"),
    "eat": ("ate", "eaten"),
    "feed": ("fed",),
    "find": ("found",),
    "fly": ("flew", "flown"),
    "freeze": ("froze", "frozen"),
    "get": ("got", "gotten"),
    "give": ("gave", "given"),
    "go": ("went", "gone"),
    "grow": ("grew", "grown"),
    "hang": ("hung",),
    "hide": ("hid", "hidden"),
    "hold": ("held",),
    "keep": ("kept",),
    "know": ("knew", "known"),
    "lay": ("laid",),
    "lead": ("led",),
    "leave": ("left",),
    "lend": ("lent",),
    "let": ("let",),
    "lose": ("lost",),
    "make": ("made",),
    "meet": ("met",),
    "pay": ("paid",),
    "put": ("put",),
    "quit": ("quit",),
    "read": ("read",),
    "ride": ("rode", "ridden"),
    "ring": ("rang", "rung"),
    "run": ("ran", "run"),
    "say": ("said",),
    "see": ("saw", "seen"),
    "sell": ("sold",),
    "send": ("sent",),
    "set": ("set",),
    "shake": ("shook", "shaken"),
    "show": ("showed", "shown"),
    "shut": ("shut",),
    "sing": ("sang", "sung"),
    "sit": ("sat",),
    "sleep": ("slept",),
    "speak": ("spoke", "spoken"),
    "spend": ("spent",),
    "split": ("split",),
    "spread": ("spread",),
    "stand": ("stood",),
    "steal": ("stole", "stolen"),
    "stick": ("stuck",),
    "strike": ("struck",),
    "swim": ("swam", "swum"),
    "take": ("took", "taken"),
    "teach": ("taught",),
    "tear": ("tore", "torn"),
    "tell": ("told",),
    "think": ("thought",),
    "throw": ("threw", "thrown"),
    "understand": ("understood",),
    "wake": ("woke", "woken"),
    "wear": ("wore", "worn"),
    "win": ("won",),
    "write": ("wrote", "written"),
}
# Prefixed verbs inflect as their stem: "rewrite" → "rewritten", "rerun" → "rerun".
_PREFIXES = ("re", "un", "over", "under", "out", "up", "pre", "mis")
# Says the item is finished whatever its verb: "Christensen data done".
_FINISHED = frozenset({"done", "finished", "complete", "completed"})
# May stand between the item's object and its past form: "the data is now all pulled".
_BETWEEN = frozenset(
    "is are was were has have had been got get gotten s now all finally just already "
    "officially successfully fully".split()
)
# May stand between a past form and the item's object: "pulled all the data".
_DETERMINERS = frozenset("the a an my our their his her its this that these those all both".split())
# Said before the past form, these make it a plan, a wish or a condition, not a report.
_NOT_YET = re.compile(
    r"\b(?:not|never|no|nor|yet\s+to|need|needs|needed|want|wants|wanted|have\s+to|has\s+to"
    r"|had\s+to|got\s+to|gotta|going\s+to|gonna|will|shall|should|must|can|could|would"
    r"|might|may|hope|hoping|plan|planning|try|trying|let's|let\s+us|once|when|whenever"
    r"|if|unless|until|till|before|after|as\s+soon\s+as|to\s+get|to\s+have|to\s+be)\b"
    r"|n't\b|'ll\b|'d\b",
    re.IGNORECASE,
)
_AUXILIARY = re.compile(
    r"(?:\b(?:is|are|was|were|been|got|have|has|had|just|already)|'s|'re|'ve)\s+$"
)
# What may follow a past form that ends its clause: "data pulled now, on to the model".
_CLAUSE_END = re.compile(
    r"(?:\s+(?:now|today|yesterday|finally|already|too|at\s+last|this\s+(?:morning|afternoon)"
    r"|up|out|off|back))*\s*(?:[,.;:!…—–-]|$|\s+(?:and|so|but)\b)"
)
# Say a piece of work named as a noun came to its end, whatever the item's verb: "the
# load test passed", "the migration is finished", "the invoice bug got fixed".
_OUTCOMES = frozenset(
    "passed done finished complete completed shipped fixed sorted succeeded merged deployed".split()
)
# Before the work they end: "finished the load test", "passed the load test"; "done" and
# "through" take "with" ("done with the load test").
_ENDS_WORK = frozenset("finished completed shipped passed fixed sorted".split())
_ENDS_WITH = frozenset({"done", "finished", "through"})
# A name of a piece of work is a few words: more, and the sentence says something else.
_NAME_WORDS = 6
# What may follow the name of the work it ends: "done with the load test now, and …".
_AFTER_NAME = frozenset("now today yesterday finally already too and so but then".split())
_TOKEN = re.compile(r"[a-z0-9][a-z0-9-]*")
_IN_CLAUSE = re.compile(r"[\s'-]*")
_CONSONANT_Y = re.compile(r"[^aeiou]y$")
_DOUBLES = re.compile(r"[^aeiou][aeiou][bdgklmnprtv]$")


def past_forms(verb: str) -> frozenset[str]:
    """The past tense and past participle of ``verb`` (its base form, lower case):
    "pull" → pulled, "copy" → copied, "ship" → shipped, "write" → wrote, written."""
    verb = verb.lower()
    if verb in _IRREGULAR:
        return frozenset(_IRREGULAR[verb])
    for prefix in _PREFIXES:
        stem = verb.removeprefix(prefix)
        if stem != verb and stem in _IRREGULAR:
            return frozenset(prefix + form for form in _IRREGULAR[stem])
    if verb.endswith("e"):
        return frozenset({verb + "d"})
    if _CONSONANT_Y.search(verb):
        return frozenset({verb[:-1] + "ied"})
    forms = {verb + "ed"}
    if _DOUBLES.search(verb):
        forms.add(verb + verb[-1] + "ed")  # "ship" → "shipped"; "commit" → "committed"
    return frozenset(forms)


def reports_done(sentence: str, verb: str, is_item_word: Callable[[str], bool]) -> bool:
    """Whether ``sentence`` reports done the item whose verb is ``verb`` (base form) and
    whose other words ``is_item_word`` recognises: "the data is pulled", "got the data
    pulled", "pulled the data", "data done". Not a question, and not after a negation,
    wish, plan, modal or condition earlier in the sentence."""
    if sentence.rstrip().endswith("?"):
        return False
    text = sentence.lower().replace("’", "'")
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
    forms = past_forms(verb)
    for index, (token, at) in enumerate(tokens):
        # A past form that is also the base ("run", "set") is one only after an
        # auxiliary: "the CI is set up", "I've run the tests", not "run the tests".
        reported = token in forms and (token != verb or _AUXILIARY.search(text[:at]) is not None)
        if not (reported or token in _FINISHED) or _NOT_YET.search(text[:at]):
            continue
        before, linked = _object_before(tokens, index)
        # "the data is pulled", "got the data pulled", "data done"; not "Sam sent me
        # the invoice", where the word before is who did it.
        ends = _CLAUSE_END.match(text, at + len(token)) is not None
        if before is not None and is_item_word(before) and (linked or ends):
            return True
        after = _object_after(tokens, index)
        if reported and after is not None and is_item_word(after):
            return True
    return False


def _object_before(tokens: list[tuple[str, int]], index: int) -> tuple[str | None, bool]:
    """The word before the past form that is not an auxiliary or adverb, and whether
    one stood between them."""
    for back, (token, _) in enumerate(reversed(tokens[:index])):
        if token not in _BETWEEN:
            return token, back > 0
    return None, False


def _object_after(tokens: list[tuple[str, int]], index: int) -> str | None:
    for token, _ in tokens[index + 1 :]:
        if token not in _DETERMINERS and token not in ("up", "out", "off", "in", "back"):
            return token
    return None


def reports_named_done(
    sentence: str, verb_phrase: Sequence[str], is_name: Callable[[Sequence[str]], bool]
) -> bool:
    """Whether ``sentence`` reports done a piece of work it names by words ``is_name``
    accepts: "the load test passed", "done with the load test", "finished the load test",
    or, in the item's own verb phrase ``verb_phrase`` ("load", "test"), "the invoice
    endpoint is load tested". Not a question, and not after a negation, wish, plan,
    modal or condition ("the load test didn't pass", "once the load test is done"); a
    mention ("the load test is scheduled") reports nothing."""
    if sentence.rstrip().endswith("?"):
        return False
    text = sentence.lower().replace("’", "'")
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    words = [token for token, _, _ in tokens]
    for index, (token, at, _) in enumerate(tokens):
        if _NOT_YET.search(text[:at]):
            return False  # every later word comes after it too
        start = _outcome_start(words, index, verb_phrase)
        if start is not None:
            name = _name_before(text, tokens, start)
            if name and is_name(name):
                return True
        follows = index + 1
        if token in _ENDS_WITH and words[follows : follows + 1] == ["with"]:
            follows += 1
        elif token not in _ENDS_WORK:
            continue
        name = _name_after(text, tokens, follows)
        if name and is_name(name):
            return True
    return False


def _outcome_start(words: list[str], index: int, verb_phrase: Sequence[str]) -> int | None:
    """Where an outcome ending at ``index`` begins: "passed" on its own, or "load tested"
    for the verb phrase "load test"."""
    if words[index] in _OUTCOMES:
        return index
    if len(verb_phrase) < 2 or words[index] not in past_forms(verb_phrase[-1]):
        return None
    start = index - len(verb_phrase) + 1
    return start if start >= 0 and words[start:index] == list(verb_phrase[:-1]) else None


def _name_before(text: str, tokens: list[tuple[str, int, int]], index: int) -> list[str]:
    """The words naming the work before ``tokens[index]``, past "is", "has been" and the
    like: back to a determiner, a clause break or the sentence start ("load", "test" of
    "ok, the load test has now passed")."""
    back = index
    while back > 0 and tokens[back - 1][0] in _BETWEEN and _joined(text, tokens, back - 1):
        back -= 1
    name: list[str] = []
    while back > 0 and _joined(text, tokens, back - 1):
        token = tokens[back - 1][0]
        if token in _DETERMINERS:
            break
        name.insert(0, token)
        back -= 1
        if len(name) > _NAME_WORDS:
            return []
    return name


def _name_after(text: str, tokens: list[tuple[str, int, int]], index: int) -> list[str]:
    """The words naming the work from ``tokens[index]`` to the clause's end, determiners
    skipped ("load", "test" of "done with the load test, now the retry policy")."""
    while index < len(tokens) and tokens[index][0] in _DETERMINERS:
        index += 1
    name: list[str] = []
    while index < len(tokens) and tokens[index][0] not in _AFTER_NAME:
        name.append(tokens[index][0])
        if len(name) > _NAME_WORDS:
            return []
        if not _joined(text, tokens, index):
            break
        index += 1
    return name


def _joined(text: str, tokens: list[tuple[str, int, int]], index: int) -> bool:
    """Whether ``tokens[index]`` and the next one are in one clause (only spaces, an
    apostrophe or a hyphen between them)."""
    if index + 1 >= len(tokens):
        return False
    between = text[tokens[index][2] : tokens[index + 1][1]]
    return _IN_CLAUSE.fullmatch(between) is not None
