"""What in a user's message is worth keeping in living memory (spec 003 §7, §8).

Spec 003's heartbeat triage flags memory triggers with regular expressions; here they
become candidates of a :data:`~middleware.continuity.model.MemoryKind`:

- ``name``: "my name is X", "call me X", "I go by X", and "I'm X" after a greeting ("Hi!
  I'm Ana", :mod:`middleware.memory.introductions`) → ``Name: X``, and it replaces the
  name known before (``replaces_kind``);
- ``fact``: "remember that …", "please remember …", "don't forget that …", and "I'm a
  <profession>", "I work as/at/for/in …", "I live in …", "I'm based in …", and a new
  employer ("I got a new job at Globex", "I started at Globex", "I joined Globex as an
  engineer", "I just joined Globex, new job!"); "I left Globex" retires that employer
  when memory holds it, and is not kept;
- ``preference``: "I prefer …", "I like my answers …", "I want your replies …", "I hate it
  when you …" (and a "remember that …" whose content is one);
- ``directive``: an instruction to the assistant that stands: "please always …",
  "never <verb> …", "from now on, …", "going forward, …";
- everyday things said in passing, each a whole sentence
  (:mod:`middleware.memory.everyday`): a pet ("I have a dog called Rex", "my cat is
  called Miso", "… my dog Rex …"), a habit given up ("I quit smoking", "I don't drink
  coffee any more", "I no longer drink coffee every morning") or taken up again ("I
  started smoking again"), a birthday on a day of the year ("my birthday is on June
  3rd"), a partner's name ("my wife is called
  Maria", "my husband's name is Tom", "my partner is Sam") and an allergy ("I'm allergic to
  peanuts", "I'm no longer allergic to cats") are facts, a plain like or dislike ("I love
  coffee", "I hate mornings", not "I love that idea") a preference, and none is read
  from a sentence holding a quotation; a habit given up or a dislike retires the like
  it contradicts (:func:`~middleware.memory.replacement.supersedes`);
- ``correction``: "actually, my … is …", "actually, I live/work/moved …", "no, I meant …",
  "correction: …" ("actually, my name is X" is a ``name``), and a denial ("I'm not vegan
  any more") retires what it denies; both are read in :mod:`middleware.memory.corrections`;
  so is what the user says memory forgot (spec 003 §7's explicit recall-failure triggers:
  "I already told you I'm vegetarian", "no, I said I live in Lisbon", "you forgot that
  …"): a fact there is a ``correction``, a name, preference or directive is that;
- "important: …" (a §7 memory trigger) is kept when what follows states something of
  the user ("Important: I'm allergic to peanuts"), not a note on the work.

Spec 003's "decision:", "we agreed", "the plan is", "note to self" and "remember to …"
are about the work, not the person: continuity captures them
(:mod:`middleware.continuity.extract`).

Texts are stored about the user, not in their voice, because the card is read by the
model, for whom "I" is itself: the first person becomes a subject-less third person
("I prefer short answers" → "Prefers short answers", "I'm a paralegal" → "Is a
paralegal", "my cat is called Miso" → "Their cat is called Miso"), and a directive stays
an imperative with "me" made "the user" ("never call me Bob" → "Never call the user
Bob"). A greeting before a statement ("hi there, I live in Lisbon", "Good morning, I'm a
nurse") is read past, as is a header word over the user's own words ("Note: I'm vegan",
"PS: I moved to Porto"), but not one over a plan or a reply ("Todo: become vegan",
"Re: my vegan friend"). Nothing fires on a question, a conditional or hypothetical ("if I
were a lawyer"), reported speech ("she said I'm …"), recollection ("remember when we …",
"do you remember …"), a refusal ("I prefer not to say"), or a hedged statement ("I live
in Berlin, I think": spec 003 §8 scores only what the user states as sure).

In a group (``in_group``) only what is plainly asked of the assistant is learned: a
"remember that …" whose body is about the speaker ("remember that I'm vegetarian",
"please remember my name is Ann"), and a name asked for ("please call me Annie", "from
now on, call me Annie", "call me Annie from now on"), or, in a message addressed to the
assistant (``addressed``: it mentions or replies to the bot, or came through the API), a
sentence that is only "call me Annie" and a correction the speaker makes of themselves
("actually, I'm vegetarian now", "actually, my birthday is in June"). A plain
self-statement there ("My name is Bob", "I live in Paris", "I prefer short answers", or
"Call me Annie" said to the room) is not:
people joke, quote and role-play in groups, the words may be about the room rather than
the person, and it would rewrite what they told the relay in private. (The clock's
remembered place is read apart from this, by :mod:`middleware.clock.places`.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from middleware.actions.prefilter import Gate
from middleware.memory.candidate import (
    TEXT_MAX,
    TRAILING,
    MemoryCandidate,
    made,
)
from middleware.memory.corrections import (
    CORRECTION,
    DENIAL,
    GAINSAY,
    RECALL_FAILURE,
    corrected,
    denied,
    recalled,
)
from middleware.memory.everyday import (
    EVERYDAY_PATTERNS,
    RELATION,
    names_a_business,
)
from middleware.memory.introductions import introduction
from middleware.memory.languages import LANGUAGES_SAID
from middleware.memory.statements import (
    DIRECTIVE,
    FACT,
    FILLER,
    JOINED,
    LEFT_EMPLOYER,
    LIVING,
    MOVE,
    NAME,
    PREFERENCE,
    WE_LIVE,
    ignoring_case,
    stated_name,
    statement,
)
from middleware.memory.voice import third_person

__all__ = ["detect_forgetting", "detect_memory", "stated_memory"]

_SCAN_LIMIT = 4000


_REJECT = ignoring_case(
    r"^\s*(?:if|unless|suppose|supposing|imagine|what\s+if|when|whenever|were\s+i|even\s+if"
    r"|in\s+case|say)\b|\b(?:said|says|told|tells|asked|asks|according\s+to|claims|claimed"
    r"|thinks|thought)\b|\bremember\s+(?:when|how|the\s+time)\b"
    r"|\b(?:do|don\s*'?\s*t|did|didn\s*'?\s*t)\s+you\s+remember\b"
    r"|\b(?:would|'d)\s+prefer\b|\bprefer\s+(?:not\s+to|to\s+not)\b"
    # A choice made now ("I prefer the second option", "I like both"), not a standing one.
    r"|\b(?:prefer|like|love)\s+(?:the\s+)?(?:first|second|third|last|former|latter|other"
    r"|options?|versions?|ones?|drafts?|both|neither|either)\b"
    # Hedged ("I live in Berlin, I think", "I'm a nurse, probably"): spec 003 §8 scores a
    # statement 0.95, as sure as the user is, and has no rung for one they are unsure of.
    r"|(?:,\s*|\s+)(?:i\s+(?:think|guess|believe|suppose|reckon)|not\s+(?:sure|certain)"
    r"|i\s*(?:'\s*m|\s+am)\s+not\s+(?:sure|certain)|iirc|or\s+something"
    r"|if\s+i\s+(?:remember|recall)\s+(?:right|rightly|correctly))(?=\s*(?:[,.;:!)—–-]|$))"
    r"|,\s*(?:probably|maybe|perhaps|possibly)(?=\s*(?:[,.;:!)—–-]|$))"
)
# In a message addressed to the assistant, a sentence that is only "(just) call me X".
_CALL_ME_ONLY = ignoring_case(
    r"(?:you\s+can\s+|just\s+)?call\s+me\s+[^\W\d_][\w'.-]*(?:\s+[^\W\d_][\w'.-]*)?\W*$"
)
# Someone in the speaker's life, whom a correction in a group is about, not the speaker
# ("actually, my sister is vegan" is said for the room's plans, not of themselves).
_SOMEONE_ELSES = ignoring_case(
    r"my\s+(?:(?:best|new|old|little|big|older|younger|eldest|oldest|youngest|twin|ex)[\s-]+)?"
    rf"(?:{RELATION}|sister|brother|sibling|mum|mom|mother|dad|father|parent|son|daughter"
    r"|kid|child|children|baby|friend|boss|manager|colleague|co-?worker|neighbou?r|roommate"
    r"|flatmate|housemate|cousin|aunt|uncle|niece|nephew|grand(?:ma|pa|mother|father)|nan"
    r"|team|student|client|landlord|landlady)s?\b"
)
# A "remember that …" body about the speaker ("I'm …", "my …", "call me …").
_ABOUT_SPEAKER = ignoring_case(r"(?:i|my|call\s+me)\b")
# A name asked of the assistant, not only said: "please call me Annie", "from now on,
# call me Annie", "call me Annie from now on" (a plain "call me Annie" may be to anyone).
_NAME_ASKED = ignoring_case(
    r"(?:(?:from\s+now\s+on|going\s+forward|henceforth)\s*[,:]?\s*)?(?:please\s+)?"
    r"(?P<ask>call\s+me\s+.+?)[\s,]*\b(?:from\s+now\s+on|going\s+forward|please)\W*$"
    r"|(?:from\s+now\s+on|going\s+forward|henceforth)\s*[,:]?\s*(?:please\s+)?"
    r"(?P<ask2>call\s+me\s+.+)"
    r"|please\s+(?P<ask3>call\s+me\s+.+)"
)
_REMEMBER = ignoring_case(
    r"(?:please\s+)?(?:remember|keep\s+in\s+mind|(?:don\s*'?\s*t|do\s+not|never)\s+forget)"
    r"(?!\s+(?:to|when|how|what|who|where|why|the\s+time|me|us|it|this)\b)"
    r"(?:\s+(?:that|this)\b)?\s*[:,—–-]?\s*(?P<body>.+)"
    r"|(?:please\s+)?remember\s+this\s*[:—–-]\s*(?P<body2>.+)"
    r"|for\s+future\s+reference\s*[:,—–-]\s*(?P<body3>.+)"
)
# Spec 003 §7's memory trigger "important:": what follows is kept when it states
# something of the user ("Important: I'm allergic to peanuts"); the work's notes
# ("Important: the deadline is Friday") are not theirs.
_IMPORTANT = ignoring_case(r"(?:very\s+|really\s+|super\s+)?important\s*[:—–-]\s*(?P<body>.+)")
# A sentence of their own, which may go on to another: "I …", "actually, I …".
_OF_THEMSELVES = ignoring_case(rf"(?:{GAINSAY})?i\b")

# "Please forget that I'm vegetarian", "forget I'm vegan", "forget about me being vegan":
# the body names a remembered fact to drop. "About" only what is theirs: "forget about it"
# or "… the meeting" asks nothing of memory.
_FORGET = ignoring_case(
    r"(?:please\s+|you\s+can\s+|just\s+)?(?:forget|stop\s+remembering)\s+"
    r"(?:that\s+|about\s+(?=(?:i|me|my)\b)|(?=i\b))(?P<body>.+)"
)
# "Me being vegan", "my having two cats", "me living in Berlin": said as a statement.
_GERUND = ignoring_case(r"(?:me|my)\s+(?:(?P<being>being)|(?P<having>having)|(?P<doing>\w+ing))\b")
_FORGET_GATE = Gate(_FORGET)

# A sentence yields a candidate only through one of these patterns (see _candidate and
# ``statements.statement``), matched on a span of the text with straight apostrophes:
# where none can match, as in most messages, there is nothing to remember.
_TRIGGERS = Gate(
    NAME,
    _REMEMBER,
    _IMPORTANT,
    RECALL_FAILURE,
    CORRECTION,
    DIRECTIVE,
    PREFERENCE,
    FACT,
    JOINED,
    LEFT_EMPLOYER,
    LIVING,
    MOVE,
    WE_LIVE,
    DENIAL,
    LANGUAGES_SAID,
    *EVERYDAY_PATTERNS,
)
# A sentence ends at a full stop, a line break, or an emoticon or emoji between two
# ("Leo passed away :( Mia misses him").
_SENTENCE = re.compile(
    r"(?<=[.!?])\s+|\n+|\s*(?:[:;]-?[()DPp/]|[\U0001F300-\U0001FAFF\u2600-\u27BF])+\s+"
)
# Where a statement of their own goes on to another: "I live in Berlin, and I love it
# there", "I'm a nurse but my husband is a chef".
# "I'm not vegan, I'm vegetarian", "I live in Berlin and I love it", "I prefer short
# answers, and please always …".
_NEXT_CLAUSE = ignoring_case(
    r"(?:,\s*|\s+)(?:and|but|so)\s+(?=(?:i|my|please)\b)|\s*[,;—–]\s*(?=i\b(?!\s+(?:think|guess|mean)\b))"
)


def detect_memory(
    text: str, *, in_group: bool = False, addressed: bool = False
) -> list[MemoryCandidate]:
    """Living-memory candidates stated in one user message, in order, without repeats.

    At most one per sentence; see the module docstring for the triggers, kinds and the
    form of ``text``, and for what is learned from a message in a group (``in_group``),
    more of it when the message is ``addressed`` to the assistant.
    """
    introduced = None if in_group else introduction(text)
    if introduced is not None:
        name, rest = introduced
        return [name, *(said for said in _detect(rest) if said.kind != "name")]
    if not _TRIGGERS.may_match(text):
        return []
    return _detect(text, in_group, addressed)


def detect_forgetting(text: str) -> list[MemoryCandidate]:
    """What one user message asks to be forgotten, in order: each "(please) forget (that)
    …" or "forget about me …" body read as a "remember that …" body is ("forget that I'm
    vegetarian", "forget about me being vegetarian" → the fact "Is vegetarian"), so that
    :func:`~middleware.memory.replacement.is_about` can find the remembered fact it
    names."""
    if not _FORGET_GATE.may_match(text):
        return []
    found: list[MemoryCandidate] = []
    for sentence in _sentences(text):
        sentence = FILLER.sub("", sentence, count=1)
        match = _FORGET.match(sentence)
        if match is None or _REJECT.search(sentence):
            continue
        candidate = statement(_as_stated(match["body"]), default="fact")
        if candidate is not None and candidate not in found:
            found.append(candidate)
    return found


def _as_stated(body: str) -> str:
    """A gerund body of "forget about …" as the statement it stands for: "me being vegan"
    → "I'm vegan", "my having two cats" → "I have two cats", "me living in Berlin" →
    "I'm living in Berlin"; any other body as it is."""
    match = _GERUND.match(body)
    if match is None:
        return body
    rest = body[match.end() :]
    if match["being"]:
        return f"I'm{rest}"
    if match["having"]:
        return f"I have{rest}"
    return f"I'm {match['doing']}{rest}"


def stated_memory(text: str) -> MemoryCandidate:
    """What ``/memory add TEXT`` keeps, committed: ``text`` read as the body of "remember
    that …", so it is stored about the user like a learned fact ("I prefer short answers" →
    preference "Prefers short answers", "call me Ana" → ``Name: Ana``). A text too short
    to rewrite ("vegan") is kept as written, cut to ``TEXT_MAX``."""
    clause = " ".join(_straight(text).split())
    # Asked for in so many words: kept even when it points back ("I'm allergic to it").
    candidate = statement(clause, default="fact") or made("fact", clause, third_person)
    if candidate is not None:
        return replace(candidate, committed=True)
    as_written = TRAILING.sub("", clause)[:TEXT_MAX] or clause[:TEXT_MAX]
    return MemoryCandidate("fact", as_written, committed=True)


def _kept(candidate: MemoryCandidate | None) -> MemoryCandidate | None:
    """``candidate`` as the user asked for it to be kept ("remember that …"): committed."""
    return None if candidate is None else replace(candidate, committed=True)


def _straight(text: str) -> str:
    return text.replace("’", "'").replace("‘", "'")


def _detect(text: str, in_group: bool = False, addressed: bool = False) -> list[MemoryCandidate]:
    found: list[MemoryCandidate] = []
    seen: set[tuple[str, str]] = set()
    for sentence in _sentences(text):
        said = _asked_in_group(sentence, addressed) if in_group else _clauses(sentence)
        for candidate in said:
            if candidate is None or (key := (candidate.kind, candidate.text.lower())) in seen:
                continue
            seen.add(key)
            found.append(candidate)
    return found


def _clauses(sentence: str) -> list[MemoryCandidate | None]:
    """What ``sentence`` states, one candidate for each statement it joins with "and",
    "but" or "so" ("I live in Berlin, and I love it there": "Lives in Berlin", and a like
    of nothing) when it opens with one of their own; else what the whole says ("My
    girlfriend Ana and I split up"), or failing that what its parts say ("My sister lives
    in Rome and I live in Berlin": "Lives in Berlin", and nothing of the sister's; "I'm
    from Brazil and I live in Berlin"). Nothing from a sentence that as a whole is
    hypothetical or reported speech ("if I lived in Lisbon and I had a dog")."""
    whole = FILLER.sub("", sentence, count=1)
    told = RECALL_FAILURE.match(whole)
    if told is not None and _NEXT_CLAUSE.search(told["told"]):
        # "I already told you I live in Berlin and I love it there": each is what they told.
        return [
            _told(f"{whole[: told.start('told')]}{part}")
            for part in _NEXT_CLAUSE.split(told["told"])
        ]
    asked = _REMEMBER.match(whole)
    if asked is not None and not _REJECT.search(whole):
        return _remembered(asked["body"] or asked["body2"] or asked["body3"])
    opening = _OF_THEMSELVES.match(whole)
    if opening is None:
        said = _candidate(sentence)
        if said is not None:
            return [said]
        parts = _NEXT_CLAUSE.split(whole)
        if len(parts) == 1 or _REJECT.search(whole):
            return [None]
        return [_candidate(part) for part in parts]
    # Split after the opening: "actually, I'm not vegan, I'm vegetarian" is two, not three.
    parts = _NEXT_CLAUSE.split(whole[opening.end() :])
    parts[0] = whole[: opening.end()] + parts[0]
    if len(parts) == 1 or _REJECT.search(whole):
        return [_candidate(sentence)]
    first = _candidate(parts[0])
    if first is None and (said := _candidate(sentence)) is not None:
        return [said]
    return [first, *(_candidate(part) for part in parts[1:])]


def _remembered(body: str) -> list[MemoryCandidate | None]:
    """What a "remember that …" ``body`` asks to keep: each statement it joins with "and",
    "but" or "so" apart when each is one ("I'm vegan and my wife is called Maria": "Is
    vegan", "Their wife is called Maria"), as said plainly; else the whole body as one
    fact ("my wife and I live in Berlin"), or failing that what its parts say ("I live in
    Berlin and I love it there": "Lives in Berlin", and nothing of what "it" was)."""
    parts = _NEXT_CLAUSE.split(body)
    said = [statement(part, default=None) for part in parts]
    if len(parts) > 1 and all(candidate is not None for candidate in said):
        return [_kept(candidate) for candidate in said]
    whole = statement(body, default="fact")
    if whole is not None or len(parts) == 1:
        return [_kept(whole)]
    return [_kept(statement(parts[0], default="fact")), *(_kept(c) for c in said[1:])]


def _sentences(text: str) -> Iterator[str]:
    for sentence in _SENTENCE.split(_straight(text[:_SCAN_LIMIT])):
        sentence = " ".join(sentence.split())
        if sentence and not sentence.endswith("?"):
            yield sentence


def _candidate(sentence: str) -> MemoryCandidate | None:
    sentence = FILLER.sub("", sentence, count=1)
    if RECALL_FAILURE.match(sentence):
        return _told(sentence)
    if not sentence or _REJECT.search(sentence):
        return None
    match = _IMPORTANT.match(sentence)
    if match:
        return statement(match["body"], default=None)
    match = _REMEMBER.match(sentence)
    if match:
        body = match["body"] or match["body2"] or match["body3"]
        return _kept(statement(body, default="fact"))
    match = CORRECTION.match(sentence)
    if match:
        if match["fix"] and names_a_business(match["fix"]):
            return None
        if match["fix"]:
            return corrected(match["fix"], statement)
        return made("correction", match["body"] or match["meant"], third_person)
    return statement(sentence, default=None) or denied(sentence, statement)


def _told(sentence: str) -> MemoryCandidate | None:
    """What a sentence saying memory failed them ("I already told you I'm vegetarian",
    ``RECALL_FAILURE``) says they had told: "told" there is their own word, not reported
    speech, so only what they told is read for a conditional or a hedge."""
    told = RECALL_FAILURE.match(sentence)
    if told is None or _REJECT.search(told["told"]):
        return None
    return recalled(told["told"], statement)


def _asked_in_group(sentence: str, addressed: bool) -> list[MemoryCandidate | None]:
    """What a group message plainly asks the assistant to keep about the speaker (see the
    module docstring): nothing else said in a group is theirs to keep."""
    sentence = FILLER.sub("", sentence, count=1)
    told = RECALL_FAILURE.match(sentence)
    if told is not None:
        # "@bot I already told you I'm vegetarian": memory failed them, in their own
        # words; not what they told about someone else ("… my sister is vegan").
        addressed = addressed and not _SOMEONE_ELSES.match(told["told"])
        return [_told(sentence) if addressed else None]
    if not sentence or _REJECT.search(sentence):
        return []
    match = _REMEMBER.match(sentence)
    if match:
        body = FILLER.sub("", (match["body"] or match["body2"] or match["body3"]).strip())
        if not _ABOUT_SPEAKER.match(body):
            return []
        # "Remember that I'm vegan and my sister is Ana": only what is of the speaker.
        parts = _NEXT_CLAUSE.split(body)
        if all(_ABOUT_SPEAKER.match(part) for part in parts):
            return _remembered(body)
        return [_kept(statement(body, default="fact"))]
    match = _NAME_ASKED.match(sentence)
    if match:
        return [stated_name(match["ask"] or match["ask2"] or match["ask3"])]
    if not addressed:
        return []
    if _CALL_ME_ONLY.match(sentence):
        return [stated_name(sentence)]  # "@bot call me Annie": asked of the assistant
    # "@bot actually I'm vegetarian now": a correction the speaker makes of themselves
    # (spec 003 §2: the correction wins), not one about the work ("correction: the …").
    match = CORRECTION.match(sentence)
    if (
        match
        and match["fix"]
        and not names_a_business(match["fix"])
        and not _SOMEONE_ELSES.match(match["fix"])
    ):
        return [corrected(match["fix"], statement)]
    return []
