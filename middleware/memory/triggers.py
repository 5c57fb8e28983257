"""What in a user's message is worth keeping in living memory (spec 003 §7, §8).

Spec 003's heartbeat triage flags memory triggers with regular expressions; here they
become candidates of a :data:`~middleware.continuity.model.MemoryKind`:

- ``name``: "my name is X", "call me X", "I go by X", and "I'm X" after a greeting ("Hi!
  I'm Ana", :mod:`middleware.memory.introductions`) → ``Name: X``, and it replaces the
  name known before (``replaces_kind``);
- ``fact``: "remember that …", "please remember …", "don't forget that …", and "I'm a
  <profession>", "I work as/at/for/in …", "I live in …", "I'm based in …", and a new
  employer ("I got a new job at Globex", "I started at Globex");
- ``preference``: "I prefer …", "I like my answers …", "I want your replies …", "I hate it
  when you …" (and a "remember that …" whose content is one);
- ``directive``: an instruction to the assistant that stands: "please always …",
  "never <verb> …", "from now on, …", "going forward, …";
- everyday things said in passing, each a whole sentence
  (:mod:`middleware.memory.everyday`): a pet ("I have a dog called Rex", "my cat is
  called Miso", "… my dog Rex …"), a habit given up ("I quit smoking", "I don't drink
  coffee any more") or taken up again ("I started smoking again"), a birthday on a day
  of the year ("my birthday is on June 3rd"), a partner's name ("my wife is called
  Maria", "my husband's name is Tom", "my partner is Sam") and an allergy ("I'm allergic to
  peanuts", "I'm no longer allergic to cats") are facts, a plain like or dislike ("I love
  coffee", "I hate mornings", not "I love that idea") a preference, and none is read
  from a sentence holding a quotation; a habit given up or a dislike retires the like
  it contradicts (:func:`~middleware.memory.replacement.supersedes`);
- ``correction``: "actually, my … is …", "actually, I live/work/moved …", "no, I meant …",
  "correction: …" ("actually, my name is X" is a ``name``), and a denial ("I'm not vegan
  any more") retires what it denies; both are read in :mod:`middleware.memory.corrections`.

Spec 003's "decision:", "we agreed", "the plan is", "note to self" and "remember to …"
are about the work, not the person: continuity captures them
(:mod:`middleware.continuity.extract`).

Texts are stored about the user, not in their voice, because the card is read by the
model, for whom "I" is itself: the first person becomes a subject-less third person
("I prefer short answers" → "Prefers short answers", "I'm a paralegal" → "Is a
paralegal", "my cat is called Miso" → "Their cat is called Miso"), and a directive stays
an imperative with "me" made "the user" ("never call me Bob" → "Never call the user
Bob"). A greeting before a statement ("hi there, I live in Lisbon", "Good morning, I'm a
nurse") is read past. Nothing fires on a question, a conditional or hypothetical ("if I
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

from middleware.actions.prefilter import Gate
from middleware.clock.places import find_place_mentions
from middleware.continuity.model import MemoryKind
from middleware.memory.candidate import (
    NOT_A_NAME,
    TEXT_MAX,
    TRAILING,
    MemoryCandidate,
    made,
    plain,
    proper_name,
)
from middleware.memory.corrections import CORRECTION, DENIAL, GAINSAY, corrected, denied
from middleware.memory.everyday import (
    EVERYDAY_PATTERNS,
    MONTH,
    RELATION,
    WEEKDAY,
    WHEN_DONE,
    in_passing,
    names_a_business,
    points_back,
    stated_diet,
)
from middleware.memory.introductions import introduction
from middleware.memory.languages import LANGUAGES_SAID, spoken_languages
from middleware.memory.voice import imperative, third_person

__all__ = ["detect_forgetting", "detect_memory", "stated_memory"]

_SCAN_LIMIT = 4000


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Words that open a sentence without changing what it says: a greeting ("hi there",
# "good morning"), and a leading "@bot" typed to address the assistant (the API brings
# the text as the user wrote it). A bare "morning" or "evening" greets only when set off
# by punctuation: "Morning runs are my thing", "Evening classes start soon" say nothing.
_FILLER = _re(
    r"^(?:(?:(?:ok(?:ay)?|alright|so|well|also|and|oh|honestly|btw|by\s+the\s+way|fyi|just|quick\s+note"
    r"|one\s+more\s+thing|for\s+the\s+record|(?:hey|hi|hello)(?:\s+(?:there|again))?|hiya|howdy|these\s+days|nowadays"
    r"|good\s+(?:morning|afternoon|evening|day))\b|@\w[\w.]*"
    r"|(?:morning|afternoon|evening)(?=\s*[,!.:;—–-]))[\s,!.:;—–-]*)+"
)
_REJECT = _re(
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
_NAME_STOP = frozenset(
    "and but from by please now instead though btw not or because since so thanks thank"
    " if when then too here lol ok okay actually instead".split()
)
_NAME = _re(
    r"(?:my\s+name\s*(?:'\s*s|\s+is)|(?:you\s+can\s+|please\s+|just\s+)?call\s+me"
    r"|i\s+go\s+by|i\s*'?\s*m\s+called|(?:every(?:one|body)|people|friends)\s+calls?\s+me)"
    r"\s+(?P<name>[^\W\d_][\w'.-]*(?:\s+[^\W\d_][\w'.-]*){0,2})"
)
# In a message addressed to the assistant, a sentence that is only "(just) call me X".
_CALL_ME_ONLY = _re(
    r"(?:you\s+can\s+|just\s+)?call\s+me\s+[^\W\d_][\w'.-]*(?:\s+[^\W\d_][\w'.-]*)?\W*$"
)
# Someone in the speaker's life, whom a correction in a group is about, not the speaker
# ("actually, my sister is vegan" is said for the room's plans, not of themselves).
_SOMEONE_ELSES = _re(
    r"my\s+(?:(?:best|new|old|little|big|older|younger|eldest|oldest|youngest|twin|ex)[\s-]+)?"
    rf"(?:{RELATION}|sister|brother|sibling|mum|mom|mother|dad|father|parent|son|daughter"
    r"|kid|child|children|baby|friend|boss|manager|colleague|co-?worker|neighbou?r|roommate"
    r"|flatmate|housemate|cousin|aunt|uncle|niece|nephew|grand(?:ma|pa|mother|father)|nan"
    r"|team|student|client|landlord|landlady)s?\b"
)
# A "remember that …" body about the speaker ("I'm …", "my …", "call me …").
_ABOUT_SPEAKER = _re(r"(?:i|my|call\s+me)\b")
# A name asked of the assistant, not only said: "please call me Annie", "from now on,
# call me Annie", "call me Annie from now on" (a plain "call me Annie" may be to anyone).
_NAME_ASKED = _re(
    r"(?:(?:from\s+now\s+on|going\s+forward|henceforth)\s*[,:]?\s*)?(?:please\s+)?"
    r"(?P<ask>call\s+me\s+.+?)[\s,]*\b(?:from\s+now\s+on|going\s+forward|please)\W*$"
    r"|(?:from\s+now\s+on|going\s+forward|henceforth)\s*[,:]?\s*(?:please\s+)?"
    r"(?P<ask2>call\s+me\s+.+)"
    r"|please\s+(?P<ask3>call\s+me\s+.+)"
)
_REMEMBER = _re(
    r"(?:please\s+)?(?:remember|keep\s+in\s+mind|(?:don\s*'?\s*t|do\s+not|never)\s+forget)"
    r"(?!\s+(?:to|when|how|what|who|where|why|the\s+time|me|us|it|this)\b)"
    r"(?:\s+(?:that|this)\b)?\s*[:,—–-]?\s*(?P<body>.+)"
    r"|(?:please\s+)?remember\s+this\s*[:—–-]\s*(?P<body2>.+)"
    r"|for\s+future\s+reference\s*[:,—–-]\s*(?P<body3>.+)"
)
# Verbs that start a standing instruction to the assistant ("always answer in French").
_DIRECTIVE_VERBS = (
    r"(?:answer|reply|respond|write|use|say|call|give|include|add|start|end|keep|put|show"
    r"|explain|mention|suggest|recommend|ask|assume|format|cite|quote|translate|summari[sz]e"
    r"|round|spell|address|refer|sign|apologi[sz]e|hedge|lecture|moralize|repeat|sugarcoat"
    r"|check|confirm|double-check|remind|tell|be|list|number|bold|switch|talk|speak|send"
    r"|offer|sugar-coat|end|open|close|try|make|give|let)"
)
_DIRECTIVE = _re(
    rf"(?:please\s+)?(?P<adv>always|never|don\s*'?\s*t\s+ever|do\s+not\s+ever)\s+(?:please\s+)?"
    rf"(?P<body>{_DIRECTIVE_VERBS}\b.+)"
    r"|(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|henceforth)\s*[,:]?\s*"
    r"(?!\s*(?:i|we)\b)(?:please\s+)?(?P<standing>.+)"
)
_PREFERENCE = _re(
    r"(?P<pref>i\s+(?:really\s+|much\s+|generally\s+|usually\s+|strongly\s+|always\s+)?prefer"
    r"\s+.+"
    r"|i\s+(?:like|want|love|need)\s+(?:my|your|the)\s+(?:answers?|responses?|replies"
    r"|explanations?|summaries|code|messages?|feedback|emails?|drafts?)\b.+"
    r"|i\s+(?:like|love|appreciate|hate|dislike|can\s*'?\s*t\s+stand|don\s*'?\s*t\s+like)"
    r"\s+(?:it\s+)?when\s+you\b.+)"
)
PROFESSION_MODIFIER = (
    r"(?:(?:senior|junior|lead|head|chief|principal|staff|freelance|self-employed|professional"
    r"|retired|full-time|part-time|practicing|practising|licensed|certified|trainee|student"
    r"|graduate|phd|software|data|civil|criminal|corporate|family|tax|patent|music|session"
    r"|high\s+school|primary\s+school|school|registered|medical|research|product|ux|web"
    r"|backend|frontend|front-end|back-end|mechanical|electrical|sound|recording|studio"
    r"|litigation|immigration|defense|defence|real\s+estate)\s+){0,3}"
)
PROFESSION = (
    r"(?:lawyer|attorney|solicitor|barrister|paralegal|judge|clerk|notary|developer|engineer"
    r"|programmer|scientist|analyst|designer|architect|teacher|professor|lecturer|tutor|nurse"
    r"|doctor|physician|surgeon|dentist|pharmacist|therapist|psychologist|student|researcher"
    r"|writer|author|journalist|editor|musician|guitarist|drummer|bassist|pianist|singer"
    r"|songwriter|composer|producer|dj|accountant|consultant|manager|founder|ceo|cto|cfo"
    r"|chef|cook|baker|farmer|electrician|plumber|carpenter|mechanic|pilot|driver|artist"
    r"|photographer|translator|librarian|veterinarian|vet|paramedic|firefighter|officer"
    r"|entrepreneur|investor|economist|statistician|mathematician|physicist|chemist"
    r"|biologist|marketer|recruiter|administrator|sysadmin|technician|contractor"
    r"|freelancer|intern|parent|mom|mum|dad|teacher|coach|trainer|owner|partner|associate"
    r"|counsel|advocate|mediator|arbitrator|auditor|banker|broker|agent|realtor)"
)
# What one "lives in" that is no place: a state of mind ("I live in fear of deadlines",
# "I live in hope"), a time ("in the moment"), or clothes worn all the time.
_NOT_LIVED_IN = (
    r"(?:(?:constant|perpetual|permanent|mortal|daily|blissful|total)\s+)?"
    r"(?:fear|hope|dread|terror|denial|anticipation|ignorance|shame|sin|misery|poverty"
    r"|luxury|squalor|harmony|peace|chaos|limbo|the\s+(?:moment|present|past|future|now"
    r"|shadows?)|a\s+(?:bubble|dream(?:\s*world)?|fantasy(?:\s+world)?)|dreamland"
    r"|my\s+(?:own\s+)?(?:head|world|bubble|pyjamas|pajamas|sweatpants|joggers|hoodies?"
    r"|jeans|trainers|sneakers|slippers))\b"
)
_FACT = _re(
    rf"(?P<fact>i\s*'?\s*m\s+an?\s+{PROFESSION_MODIFIER}{PROFESSION}s?\b.*"
    rf"|i\s+am\s+an?\s+{PROFESSION_MODIFIER}{PROFESSION}s?\b.*"
    r"|i\s+(?:now\s+)?work\s+(?:as|at|for|in|from)\s+"
    r"(?!\d|(?:the\s+)?(?:morning|evening|night|weekend)s?\b).+"
    rf"|i\s+(?:now\s+)?live\s+(?:in|on|near)\s+(?!{_NOT_LIVED_IN}).+|i\s*'?\s*m\s+based\s+(?:in|out\s+of)\s+.+"
    r"|i\s+am\s+based\s+(?:in|out\s+of)\s+.+"
    # A new employer ("I'm now working for Globex", "I started working at Globex"); not
    # where they are at the moment ("I'm working at home today").
    r"|i\s*(?:'\s*m|\s+am)\s+(?:now\s+)?working\s+(?:at|for)\s+"
    r"(?!\d|(?:home|the|a|an|my|this|that|night|weekends?|mornings?|evenings?)\b).+"
    r"|i\s*(?:'\s*m|\s+am)\s+(?:now\s+|currently\s+)?working\s+as\s+.+"
    r"|i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|recently)\s+)?(?:started|began)\s+working"
    r"\s+(?:at|for)\s+.+"
    # "I got a new job at Globex", "I started at Globex": an employer, written with a
    # capital after a bare "started at" ("I started at 9", "… at the bottom" are not).
    r"|i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|recently|finally)\s+)?(?:got|landed|started"
    r"|began)\s+a\s+(?:new\s+)?job\s+(?:at|with)\s+.+"
    r"|i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|recently)\s+)?(?:started|began)\s+at\s+"
    rf"(?!(?:{MONTH}|{WEEKDAY}|christmas|easter|i)\b)(?-i:[A-Z]).+)"
)
# "I moved to Berlin", "we've just relocated to Lisbon last month": a fact only when the
# words after "to" name a place (the clock's place index, which reads it as their new
# home), so "I moved to Postgres" or "I moved to the next chapter" is not a change of
# address. Said with no more than when, it is where they live now: "Lives in Lisbon".
_MOVE = _re(
    r"(?:i|(?P<we>we))\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|recently|finally|now)\s+)?"
    r"(?:moved|relocated)\s+(?:back\s+)?to\s+.+"
)
_ONLY_WHEN = _re(rf"{WHEN_DONE}\W*")
# "We live in Madrid", "we're based in Lisbon": the user is one of "we", so where "we"
# live is where they live, stored as "I live in Madrid" is ("Lives in Madrid") when what
# follows names a place and no more than when ("we live in a small flat" says nothing
# that "I live in …" would store about them alone).
_WE_LIVE = _re(
    r"we\s*(?:'\s*re|\s+are|'\s*ve\s+been|\s+have\s+been)?\s+(?:now\s+|currently\s+|still\s+)?"
    r"(?:live|living|based)\s+in\s+"
)
# "I'm living in Berlin" is where they live, stored as "I live in Berlin" would be.
_LIVING = _re(
    r"i\s*(?:'\s*m|\s+am|'\s*ve\s+been|\s+have\s+been)\s+(?:now\s+|currently\s+)?living"
    r"(?=\s+(?:in|on|near)\b)"
)
# A sentence of their own, which may go on to another: "I …", "actually, I …".
_OF_THEMSELVES = _re(rf"(?:{GAINSAY})?i\b")

# "Please forget that I'm vegetarian": the body names a remembered fact to drop.
_FORGET = _re(
    r"(?:please\s+|you\s+can\s+|just\s+)?(?:forget|stop\s+remembering)\s+(?:that|about)\s+"
    r"(?P<body>.+)"
)
_FORGET_GATE = Gate(_FORGET)

# A sentence yields a candidate only through one of these patterns (see _candidate and
# _statement), matched on a span of the text with straight apostrophes: where none can
# match, as in most messages, there is nothing to remember.
_TRIGGERS = Gate(
    _NAME,
    _REMEMBER,
    CORRECTION,
    _DIRECTIVE,
    _PREFERENCE,
    _FACT,
    _LIVING,
    _MOVE,
    _WE_LIVE,
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
_NEXT_CLAUSE = _re(
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
    """What one user message asks to be forgotten, in order: each "(please) forget that
    …" body read as a "remember that …" body is ("forget that I'm vegetarian" → the fact
    "Is vegetarian"), so that :func:`~middleware.memory.replacement.is_about` can find the
    remembered fact it names."""
    if not _FORGET_GATE.may_match(text):
        return []
    found: list[MemoryCandidate] = []
    for sentence in _sentences(text):
        sentence = _FILLER.sub("", sentence, count=1)
        match = _FORGET.match(sentence)
        if match is None or _REJECT.search(sentence):
            continue
        candidate = _statement(match["body"], default="fact")
        if candidate is not None and candidate not in found:
            found.append(candidate)
    return found


def stated_memory(text: str) -> MemoryCandidate:
    """What ``/memory add TEXT`` keeps: ``text`` read as the body of "remember that …",
    so it is stored about the user like a learned fact ("I prefer short answers" →
    preference "Prefers short answers", "call me Ana" → ``Name: Ana``). A text too short
    to rewrite ("vegan") is kept as written, cut to ``TEXT_MAX``."""
    clause = " ".join(_straight(text).split())
    # Asked for in so many words: kept even when it points back ("I'm allergic to it").
    candidate = _statement(clause, default="fact") or made("fact", clause, third_person)
    if candidate is not None:
        return candidate
    return MemoryCandidate("fact", TRAILING.sub("", clause)[:TEXT_MAX] or clause[:TEXT_MAX])


def _straight(text: str) -> str:
    return text.replace("’", "'").replace("‘", "'")


def _detect(text: str, in_group: bool = False, addressed: bool = False) -> list[MemoryCandidate]:
    found: list[MemoryCandidate] = []
    seen: set[tuple[str, str]] = set()
    for sentence in _sentences(text):
        said = [_asked_in_group(sentence, addressed)] if in_group else _clauses(sentence)
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
    whole = _FILLER.sub("", sentence, count=1)
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


def _sentences(text: str) -> Iterator[str]:
    for sentence in _SENTENCE.split(_straight(text[:_SCAN_LIMIT])):
        sentence = " ".join(sentence.split())
        if sentence and not sentence.endswith("?"):
            yield sentence


def _candidate(sentence: str) -> MemoryCandidate | None:
    sentence = _FILLER.sub("", sentence, count=1)
    if not sentence or _REJECT.search(sentence):
        return None
    match = _REMEMBER.match(sentence)
    if match:
        body = match["body"] or match["body2"] or match["body3"]
        return _statement(body, default="fact")
    match = CORRECTION.match(sentence)
    if match:
        if match["fix"] and names_a_business(match["fix"]):
            return None
        if match["fix"]:
            return corrected(match["fix"], _statement)
        return made("correction", match["body"] or match["meant"], third_person)
    return _statement(sentence, default=None) or denied(sentence, _statement)


def _asked_in_group(sentence: str, addressed: bool) -> MemoryCandidate | None:
    """What a group message plainly asks the assistant to keep about the speaker (see the
    module docstring): nothing else said in a group is theirs to keep."""
    sentence = _FILLER.sub("", sentence, count=1)
    if not sentence or _REJECT.search(sentence):
        return None
    match = _REMEMBER.match(sentence)
    if match:
        body = _FILLER.sub("", (match["body"] or match["body2"] or match["body3"]).strip())
        return _statement(body, default="fact") if _ABOUT_SPEAKER.match(body) else None
    match = _NAME_ASKED.match(sentence)
    if match:
        return _name(match["ask"] or match["ask2"] or match["ask3"])
    if not addressed:
        return None
    if _CALL_ME_ONLY.match(sentence):
        return _name(sentence)  # "@bot call me Annie": asked of the assistant
    # "@bot actually I'm vegetarian now": a correction the speaker makes of themselves
    # (spec 003 §2: the correction wins), not one about the work ("correction: the …").
    match = CORRECTION.match(sentence)
    if (
        match
        and match["fix"]
        and not names_a_business(match["fix"])
        and not _SOMEONE_ELSES.match(match["fix"])
    ):
        return corrected(match["fix"], _statement)
    return None


def _statement(clause: str, default: MemoryKind | None) -> MemoryCandidate | None:
    """A name, directive, preference or fact stated in ``clause``; ``default`` is the kind
    of anything else (a "remember that …" body is a fact whatever it says)."""
    clause = _FILLER.sub("", clause.strip(), count=1)
    name = _name(clause)
    if name is not None:
        return name
    match = _DIRECTIVE.match(clause)
    if match:
        body = match["body"] or match["standing"]
        if match["adv"]:
            body = f"{match['adv']} {body}"
        return made("directive", body, imperative)
    match = _PREFERENCE.match(clause)
    if match:
        if points_back(plain(match["pref"])):
            return None
        return made("preference", match["pref"], third_person)
    # A fact is kept as said plainly: "I live in Lisbon now" is "Lives in Lisbon".
    clause = _LIVING.sub("I live", plain(clause), count=1)
    diet = stated_diet(clause) or spoken_languages(clause)
    if diet is not None:
        return diet
    match = _FACT.match(clause)
    if match:
        if points_back(match["fact"]):
            return None  # "I work for them", "I'm a nurse there": where, out of the chat?
        return made("fact", _places_capitalised(match["fact"]), third_person)
    match = _MOVE.match(clause)
    if match:
        home = _new_home(clause)
        if home is not None:
            return home
        if not match["we"] and _names_a_new_home(clause):
            return made("fact", clause, third_person)  # "Moved to Lisbon for the summer"
    match = _WE_LIVE.match(clause)
    if match and (home := _new_home(f"we live in {clause[match.end() :]}")) is not None:
        return home
    if default is None:
        return in_passing(clause)
    if points_back(clause):
        return None  # "remember that I hate pineapple on it": nothing out of the chat
    return made(default, clause, third_person)


def _new_home(clause: str) -> MemoryCandidate | None:
    """ "Lives in Lisbon" for a move said with no more than when it was ("we moved to
    Lisbon last month"): where they live, in the words a later "I live in Lisbon" is
    stored with, so that saying it again is a repeat (spec 003 §8)."""
    for mention in find_place_mentions(clause):
        if mention.kind == "home" and _ONLY_WHEN.fullmatch(clause[mention.end :]):
            place = proper_name(clause[mention.start : mention.end].split())
            return MemoryCandidate("fact", f"Lives in {place}")
    return None


def _places_capitalised(clause: str) -> str:
    """``clause`` with the places it names written with capitals, as texted in lowercase
    ("i live in new york" → "i live in New York")."""
    for mention in reversed(find_place_mentions(clause)):
        place = clause[mention.start : mention.end]
        if place.islower():
            clause = clause[: mention.start] + proper_name(place.split()) + clause[mention.end :]
    return clause


def _names_a_new_home(clause: str) -> bool:
    return any(mention.kind == "home" for mention in find_place_mentions(clause))


def _name(clause: str) -> MemoryCandidate | None:
    match = _NAME.match(clause)
    if match is None:
        return None
    words: list[str] = []
    for raw in match["name"].split():
        word = raw.rstrip(".,!'")
        if not word or word.lower() in _NAME_STOP:
            break
        words.append(word)
    if not words or words[0].lower() in NOT_A_NAME:
        return None
    return MemoryCandidate("name", f"Name: {proper_name(words)}", replaces_kind=True)
