"""What one clause says of the speaker, for living memory (spec 003 §7): their name, a
standing instruction to the assistant, a preference, or a fact (a profession, where they
work or live, a move), each rewritten about the user rather than in their voice.
:mod:`middleware.memory.triggers` finds the clauses in a message and decides which to read.
"""

from __future__ import annotations

import re

from middleware.clock.places import find_place_mentions
from middleware.continuity.model import MemoryKind
from middleware.memory.candidate import NOT_A_NAME, MemoryCandidate, made, plain, proper_name
from middleware.memory.everyday import (
    MONTH,
    WEEKDAY,
    WHEN_DONE,
    in_passing,
    points_back,
    stated_diet,
)
from middleware.memory.languages import spoken_languages
from middleware.memory.voice import imperative, third_person


def ignoring_case(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled to match in any case, as every trigger does."""
    return re.compile(pattern, re.IGNORECASE)


# Words that open a sentence without changing what it says: a greeting ("hi there",
# "good morning"), a leading "@bot" typed to address the assistant (the API brings
# the text as the user wrote it), and a header word over the user's own words ("Note: I'm
# vegan", "PS: I moved to Porto", "Update: …", as middleware.quoting reads them). A bare
# "morning" or "evening" greets only when set off by punctuation: "Morning runs are my
# thing", "Evening classes start soon" say nothing; "Note" and "Update" head only with a
# colon ("Note that …" is no header). A header over a plan or another's words ("Todo:
# become vegan", "Reminder: …", "Re: my vegan friend") is not read past.
FILLER = ignoring_case(
    r"^(?:(?:(?:ok(?:ay)?|alright|so|well|also|and|oh|honestly|btw|by\s+the\s+way|fyi|just|quick\s+note"
    r"|one\s+more\s+thing|for\s+the\s+record|(?:hey|hi|hello)(?:\s+(?:there|again))?|hiya|howdy|these\s+days|nowadays"
    r"|good\s+(?:morning|afternoon|evening|day)|n\.?b|p\.?p\.?s|p\.?s)\b\.?|@\w[\w.]*"
    r"|(?:notes?|edit|updated?|important|fwiw)(?=\s*:)"
    r"|(?:morning|afternoon|evening)(?=\s*[,!.:;—–-]))[\s,!.:;—–-]*)+"
)
_NAME_STOP = frozenset(
    "and but from by please now instead though btw not or because since so thanks thank"
    " if when then too here lol ok okay actually instead".split()
)
NAME = ignoring_case(
    r"(?:my\s+name\s*(?:'\s*s|\s+is)|(?:you\s+can\s+|please\s+|just\s+)?call\s+me"
    r"|i\s+go\s+by|i\s*'?\s*m\s+called|(?:every(?:one|body)|people|friends)\s+calls?\s+me)"
    r"\s+(?P<name>[^\W\d_][\w'.-]*(?:\s+[^\W\d_][\w'.-]*){0,2})"
)
# Verbs that start a standing instruction to the assistant ("always answer in French").
_DIRECTIVE_VERBS = (
    r"(?:answer|reply|respond|write|use|say|call|give|include|add|start|end|keep|put|show"
    r"|explain|mention|suggest|recommend|ask|assume|format|cite|quote|translate|summari[sz]e"
    r"|round|spell|address|refer|sign|apologi[sz]e|hedge|lecture|moralize|repeat|sugarcoat"
    r"|check|confirm|double-check|remind|tell|be|list|number|bold|switch|talk|speak|send"
    r"|offer|sugar-coat|end|open|close|try|make|give|let)"
)
DIRECTIVE = ignoring_case(
    rf"(?:please\s+)?(?P<adv>always|never|don\s*'?\s*t\s+ever|do\s+not\s+ever)\s+(?:please\s+)?"
    rf"(?P<body>{_DIRECTIVE_VERBS}\b.+)"
    r"|(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|henceforth)\s*[,:]?\s*"
    r"(?!\s*(?:i|we)\b)(?:please\s+)?(?P<standing>.+)"
)
PREFERENCE = ignoring_case(
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
FACT = ignoring_case(
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
# An organisation, written with capitals ("Stripe", "Goldman Sachs"): not a day or month.
_ORG = (
    rf"(?P<org>(?!(?:{MONTH}|{WEEKDAY}|i)\b)(?-i:[A-Z])[\w&.-]*"
    r"(?:\s+(?-i:[A-Z])[\w&.-]*){0,2})"
)
_I_HAVE_JUST = r"i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|recently|finally|officially)\s+)?"
# A new employer joined, said with what makes it a job: "I joined Stripe as an engineer",
# "I just joined Stripe, new job!", "I joined Stripe's payments team". Joining alone is
# not ("I joined Twitter", "… a gym", "… the call"), nor a team's call or a new job
# looked for ("I joined LinkedIn, new job hunt").
JOINED = ignoring_case(
    rf"{_I_HAVE_JUST}joined\s+{_ORG}(?:\s+as\s+(?P<job>an?\s+{PROFESSION_MODIFIER}{PROFESSION})\b"
    r"|'s\s+(?:[\w-]+\s+){0,2}team\b(?!\s+(?:call|meeting|chat|channel|plan|account|server"
    r"|workspace|standup|event|lunch|dinner|drinks)\b)"
    r"|\s*[,;:—–-]+\s*(?:(?:my|a)\s+)?new\s+(?:job|role|position)\b"
    r"(?!\s+(?:hunt|search|board|offers?|listings?|ads?|applications?|interviews?)))"
)
# An employer left, with no more than when: "I left Google (last month)". Stored only
# as what it retires (see replacement.py), so "I left Berlin" or "I left Acme" when
# memory holds no such employer keeps nothing, and "I left Google Maps open" is no match.
LEFT_EMPLOYER = ignoring_case(rf"{_I_HAVE_JUST}left\s+{_ORG}{WHEN_DONE}\W*$")
# "I moved to Berlin", "we've just relocated to Lisbon last month": a fact only when the
# words after "to" name a place (the clock's place index, which reads it as their new
# home), so "I moved to Postgres" or "I moved to the next chapter" is not a change of
# address. Said with no more than when, it is where they live now: "Lives in Lisbon".
MOVE = ignoring_case(
    r"(?:i|(?P<we>we))\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|recently|finally|now)\s+)?"
    r"(?:moved|relocated)\s+(?:back\s+)?to\s+.+"
)
_ONLY_WHEN = ignoring_case(rf"{WHEN_DONE}\W*")
# "We live in Madrid", "we're based in Lisbon": the user is one of "we", so where "we"
# live is where they live, stored as "I live in Madrid" is ("Lives in Madrid") when what
# follows names a place and no more than when ("we live in a small flat" says nothing
# that "I live in …" would store about them alone).
WE_LIVE = ignoring_case(
    r"we\s*(?:'\s*re|\s+are|'\s*ve\s+been|\s+have\s+been)?\s+(?:now\s+|currently\s+|still\s+)?"
    r"(?:live|living|based)\s+in\s+"
)
# "I'm living in Berlin" is where they live, stored as "I live in Berlin" would be.
LIVING = ignoring_case(
    r"i\s*(?:'\s*m|\s+am|'\s*ve\s+been|\s+have\s+been)\s+(?:now\s+|currently\s+)?living"
    r"(?=\s+(?:in|on|near)\b)"
)


def statement(clause: str, default: MemoryKind | None) -> MemoryCandidate | None:
    """A name, directive, preference or fact stated in ``clause``, an everyday one
    (:func:`~middleware.memory.everyday.in_passing`) in the form it has when said plainly;
    ``default`` is the kind of anything else (a "remember that …" body is a fact whatever
    it says)."""
    clause = FILLER.sub("", clause.strip(), count=1)
    name = stated_name(clause)
    if name is not None:
        return name
    match = DIRECTIVE.match(clause)
    if match:
        body = match["body"] or match["standing"]
        if match["adv"]:
            body = f"{match['adv']} {body}"
        return made("directive", body, imperative)
    match = PREFERENCE.match(clause)
    if match:
        if points_back(plain(match["pref"])):
            return None
        return made("preference", match["pref"], third_person)
    # A fact is kept as said plainly: "I live in Lisbon now" is "Lives in Lisbon".
    clause = LIVING.sub("I live", plain(clause), count=1)
    diet = stated_diet(clause) or spoken_languages(clause)
    if diet is not None:
        return diet
    match = FACT.match(clause)
    if match:
        if points_back(match["fact"]):
            return None  # "I work for them", "I'm a nurse there": where, out of the chat?
        return made("fact", _places_capitalised(match["fact"]), third_person)
    employer = _employer_joined_or_left(clause)
    if employer is not None:
        return employer
    match = MOVE.match(clause)
    if match:
        home = _new_home(clause)
        if home is not None:
            return home
        if not match["we"] and _names_a_new_home(clause):
            return made("fact", clause, third_person)  # "Moved to Lisbon for the summer"
    match = WE_LIVE.match(clause)
    if match and (home := _new_home(f"we live in {clause[match.end() :]}")) is not None:
        return home
    # "Remember that I have two cats, Mia and Leo" is kept as said plainly ("Has two cats
    # called Mia and Leo"), so that "Leo passed away" later finds it.
    passing = in_passing(clause)
    if passing is not None or default is None:
        return passing
    if points_back(clause):
        return None  # "remember that I hate pineapple on it": nothing out of the chat
    return made(default, clause, third_person)


def _employer_joined_or_left(clause: str) -> MemoryCandidate | None:
    """ "Is an engineer at Stripe" or "Works at Stripe" for an employer joined (which
    retires the one before), "Left Google" (``retire_only``) for one left."""
    match = JOINED.match(clause)
    if match:
        org = match["org"].removesuffix("'s")
        return MemoryCandidate(
            "fact", f"Is {match['job']} at {org}" if match["job"] else f"Works at {org}"
        )
    match = LEFT_EMPLOYER.match(clause)
    if match:
        return MemoryCandidate("fact", f"Left {match['org']}", retire_only=True)
    return None


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


def stated_name(clause: str) -> MemoryCandidate | None:
    """``Name: X`` for a clause that gives the speaker's name ("my name is X", "call me X",
    "I go by X"): it replaces the name known before."""
    match = NAME.match(clause)
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
