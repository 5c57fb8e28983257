"""How a new fact relates to the ones remembered (spec 003 §5.4: the correction wins).

When living memory learns a candidate, this decides which remembered card texts it
retires (:func:`supersedes`: the same topic a person has one of, such as where they live
or who they work for, a correction of the same topic, or a stance it contradicts), what
of a retired fact still holds (:func:`still_stands`: the job once only the employer
changes), and which remembered text a "forget that …" names (:func:`is_about`).
"""

from __future__ import annotations

import re

# The job words are the ones detection reads "I'm a <profession>" with, so a job on the
# card is recognised here exactly as it was learned.
from middleware.memory.candidate import MemoryCandidate
from middleware.memory.everyday import (
    DIET,
    FREQUENCY,
    PET,
    RELATION,
    names_in,
    pets_text,
    singular_pet,
)
from middleware.memory.languages import languages_left
from middleware.memory.statements import PROFESSION, PROFESSION_MODIFIER

__all__ = ["is_about", "still_stands", "supersedes"]


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# A job stated with its employer, "Is a software engineer at Acme": it names the employer
# as "Works at Acme" does, and its job stands when only the employer changes.
_JOB_AT = (
    rf"(?P<job>(?:is|works\s+as)\s+(?:now\s+)?an?\s+{PROFESSION_MODIFIER}{PROFESSION})"
    r"\s+(?:at|for)\s+(?!(?:the\s+)?(?:moment|time|now|least|most|heart|hire|fun)\b)\S"
)
_JOB_AT_RE = _re(_JOB_AT)

# Topics a person has one of at a time, by the card text's opening: the latest said wins,
# correction or not ("I live in Lisbon" after "I live in Berlin", "I'm vegan" after "I'm
# vegetarian").
_SINGLE_TOPICS = (
    ("diet", _re(rf"^(?:now\s+)?is\s+(?:(?:now|strictly|fully)\s+)?(?:an?\s+)?{DIET}\b")),
    (
        "residence",
        _re(
            r"^(?:now\s+)?(?:lives|is\s+living|is\s+(?:now\s+)?based)\s+(?:in|near|on|out\s+of)\s"
            r"|^(?:(?:has|just|recently|finally|now)\s+){0,2}(?:moved|relocated)\s+(?:back\s+)?to\s+"
            r"(?!(?:the|a|an|their|this|that|another|other|some)\b)"
        ),
    ),
    (
        "employer",
        _re(
            r"^(?:now\s+)?(?:works|is\s+(?:now\s+)?working"
            r"|(?:(?:has|just|recently)\s+){0,2}(?:started|began)\s+working)\s+(?:at|for)\s"
            r"|^(?:(?:has|just|recently|finally)\s+){0,2}(?:(?:got|landed|started|began)\s+a\s+"
            r"(?:new\s+)?job\s+(?:at|with)|(?:started|began)\s+at)\s"
            rf"|^{_JOB_AT}"
        ),
    ),
    ("birthday", _re(r"^their\s+birthday\s*(?:'\s*s|\s+is)\s")),
    # How they get to work: "Cycles to work" after "Takes the train to work".
    (
        "commute",
        _re(
            r"^(?:(?:usually|always|normally|now)\s+)?(?:takes\s+the\s+[\w-]+|cycles|bikes"
            r"|walks|drives|commutes)\s+to\s+(?:work|the\s+office|school|uni|university"
            r"|college)\b"
        ),
    ),
)
# "Their wife is called Maria": one per relation, as detection words it.
_PARTNER = _re(r"^their\s+(?P<relation>[\w-]+)\s+is\s+called\s")
# "Their office is on the 4th floor": a correction of "their office" replaces it; a plain
# second fact about it ("their kids are …") may be another fact, so both stay.
_ATTRIBUTE = _re(r"^their\s+(?P<what>[\w'-]+(?:\s+[\w'-]+){0,2}?)\s+(?:is|are|was|were)\s")


def _topic(text: str) -> tuple[str, bool] | None:
    """What a card text is about, and whether the person has only one of it."""
    for topic, pattern in _SINGLE_TOPICS:
        if pattern.search(text):
            return topic, True
    match = _PARTNER.search(text)
    if match:
        return f"their {match['relation'].lower()}", True
    match = _ATTRIBUTE.search(text)
    if match:
        return f"their {' '.join(match['what'].lower().split())}", False
    return None


# Where a card text stands on something: for it ("Likes coffee", "Drinks coffee",
# "Smokes", "Is a smoker", "Has a car"), against it ("Hates coffee"), or having given it
# up ("Quit smoking", "Doesn't drink coffee any more", "Sold their car"); the rest of the
# text says what it is.
_STANCES = (
    # An allergy is its own stance: outgrowing one ends only it, and giving up coffee
    # does not end an allergy to coffee.
    (
        "not_allergic",
        _re(
            r"^is\s+(?:no\s+longer\s+allergic\s+to\s+(?P<what>.+)"
            r"|not\s+allergic\s+to\s+(?P<what2>.+?)\s+any\s?more)$"
        ),
    ),
    ("allergic", _re(r"^is\s+(?:[\w-]+\s+)?allergic\s+to\s+(?P<what>.+)$")),
    # A habit taken up again: "Started smoking again", "Is smoking again", "Smokes again".
    (
        "resumed",
        _re(
            r"^(?:has\s+)?(?:(?:just|recently)\s+)?(?:started|began)\s+(?P<what>.+?)\s+again$"
            r"|^is\s+(?P<what2>(?:smoking|drinking|vaping|eating)\b.*?)\s+again$"
            r"|^(?P<what3>(?:smokes|drinks|vapes|eats)\b.*?)\s+again$"
        ),
    ),
    (
        "stopped",
        _re(
            r"^(?:has\s+)?(?:(?:just|finally|recently)\s+)?(?:stopped|quit|gave\s+up"
            r"|given\s+up|sold|got\s+rid\s+of|used\s+to)\s+(?P<what>.+)"
        ),
    ),
    (
        "stopped",
        _re(
            r"^(?:doesn\s*'?\s*t|does\s+not)\s+(?P<what>(?!(?:really\s+)?like\b).+?)"
            r"\s+any\s?more$|^no\s+longer\s+(?P<what2>.+)"
        ),
    ),
    (
        "against",
        _re(
            r"^(?:really\s+)?(?:hates|dislikes|detests|can\s*'?\s*t\s+stand"
            r"|(?:doesn\s*'?\s*t|does\s+not)\s+(?:really\s+)?like)\s+(?P<what>.+)"
        ),
    ),
    ("for", _re(r"^(?:really\s+|absolutely\s+)?(?:likes|loves|adores|enjoys)\s+(?P<what>.+)")),
    # A practice, now: "Drinks coffee", "Goes running every morning".
    ("does", _re(r"^(?:(?:still|now)\s+)?(?P<what>(?:drinks|eats|smokes|vapes)\b.*)")),
    (
        "does",
        _re(
            r"^(?:(?:usually|always|normally|still|now)\s+)?(?P<what>[a-z]+s\b.*?)"
            rf"\s+{FREQUENCY}\b.*$"
        ),
    ),
    (
        "for",
        _re(
            r"^is\s+(?:still\s+)?an?\s+(?P<what>(?:[\w-]+\s+)?(?:smoker|vaper|drinker))$"
            r"|^(?:still\s+)?(?:has|owns)\s+an?\s+(?P<what2>(?:new\s+)?[\w-]+)$"
        ),
    ),
)
# Words that say nothing of what a stance is about: "drinking coffee" is about coffee.
_HABIT_WORDS = frozenset(
    "a an the and of in on at for with their my any more anymore so much very really lot"
    " too every day daily drink eat tak us hav ha own old new heavy light social chain"
    " occasional regular big moderate go going morn even night week weekday weekend month"
    " each to".split()
)
# Which earlier stance a new one retires: giving up a thing, or coming to dislike it,
# ends liking and doing it; coming to like it ends disliking it; doing it again ends
# having given it up.
_RETIRES = {
    "stopped": ("for", "does", "resumed"),
    "resumed": ("stopped",),
    "does": ("against", "stopped"),
    "against": ("for", "does"),
    "for": ("against",),
    "not_allergic": ("allergic",),
    "allergic": ("not_allergic",),
}


def _stance(text: str) -> tuple[str, frozenset[str]] | None:
    for stance, pattern in _STANCES:
        match = pattern.match(text)
        if match:
            what = next((said for said in match.groups() if said), "")
            stems = [_stem(w) for w in re.findall(r"[\w-]+", what.lower())]
            words = frozenset(stems) - _HABIT_WORDS
            if not words and "drink" in stems:
                # "Doesn't drink any more", "Drinks", "Is a social drinker": alcohol, where
                # "Is a coffee drinker" is about coffee.
                words = frozenset({"alcohol"})
            elif words & _ALCOHOLIC:
                words |= {"alcohol"}  # "Drinks wine" ends with "Doesn't drink any more"
            return stance, words
    return None


def _stem(word: str) -> str:
    """A crude stem, enough to match "smoking", "smokes", "smoke" and "smoker"."""
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
        if word[-1] == word[-2] and word[-1] not in "aeiousl":
            word = word[:-1]  # "running", "swimming": who runs, swims
    elif word.endswith("er") and len(word) > 4:
        word = word[:-2]  # "smoker", "drinker": who smokes, drinks
    return word.removesuffix("s").removesuffix("e")


_ALCOHOLIC = frozenset(
    _stem(word)
    for word in (
        "alcohol booze wine beer lager ale cider spirits whisky whiskey vodka gin rum"
        " tequila bourbon brandy cocktails champagne prosecco sake"
    ).split()
)


def _contradicts(candidate: MemoryCandidate, earlier: str) -> bool:
    """Whether ``candidate`` takes the other side on what ``earlier`` is for or against:
    "Stopped drinking coffee" (or "Hates coffee") against "Likes coffee"."""
    new, old = _stance(candidate.text), _stance(earlier)
    if new is None or old is None or not new[1] or old[0] not in _RETIRES[new[0]]:
        return False
    # Giving up coffee ends drinking it every morning; disliking it ends liking it; taking
    # up smoking cigarettes again ends having quit smoking.
    if new[0] == "stopped":
        return new[1] <= old[1]
    if new[0] in ("resumed", "does"):
        return new[1] <= old[1] or old[1] <= new[1]
    return new[1] == old[1]


# A like of several things, listed with a comma: "Loves hiking, climbing and chess".
_LIKES_LIST = _re(
    r"^(?P<verb>(?:really\s+|absolutely\s+)?(?:likes|loves|adores|enjoys))\s+(?P<what>.+,.+)$"
)
_AND_LAST = _re(r",?\s+and\s+")


def _likes_left(candidate: MemoryCandidate, earlier: str) -> str | None:
    """What of ``earlier``, a list of likes, stands once ``candidate`` contradicts some of
    them ("Loves hiking and climbing" once they hate chess; "" for none); None when it
    is no such list or ``candidate`` contradicts none of its items."""
    match = _LIKES_LIST.match(earlier)
    if match is None:
        return None
    verb, items = match["verb"], _items(match["what"])
    left = [item for item in items if not _contradicts(candidate, f"{verb} {item}")]
    if len(left) == len(items):
        return None
    if not left:
        return ""
    said = left[0] if len(left) == 1 else f"{', '.join(left[:-1])} and {left[-1]}"
    return f"{verb} {said}"


def _listed_likes(candidate: MemoryCandidate) -> list[MemoryCandidate]:
    """Each like of ``candidate`` when it is a list of them, as if said alone."""
    match = _LIKES_LIST.match(candidate.text)
    if match is None:
        return []
    verb = match["verb"]
    return [MemoryCandidate(candidate.kind, f"{verb} {item}") for item in _items(match["what"])]


def _items(listed: str) -> list[str]:
    """ "hiking, climbing and chess" → "hiking", "climbing", "chess"."""
    *before, last = [item.strip() for item in listed.split(",")]
    return [item for item in [*before, *_AND_LAST.split(last)] if item]


# "Moved out of Berlin", "No longer lives in Berlin": where they no longer live.
_LEFT = _re(
    r"^(?:(?:has\s+)?(?:(?:just|finally|recently)\s+)?moved\s+(?:out\s+of|away\s+from)"
    r"|no\s+longer\s+lives\s+(?:in|near)|(?:doesn\s*'?\s*t|does\s+not)\s+live\s+(?:in|near))\s+"
    r"(?P<place>.+?)(?:\s+any\s?more)?$"
)


def _left_home(candidate: MemoryCandidate, earlier: str) -> bool:
    """Whether one of ``candidate`` and ``earlier`` says they left the place the other
    says they live in: "Moved out of Berlin" retires "Lives in Berlin", and "Lives in
    Berlin" (back again) retires "No longer lives in Berlin"."""
    for left, home in ((candidate.text, earlier), (earlier, candidate.text)):
        match = _LEFT.match(left)
        topic = _topic(home)
        if match is not None and topic is not None and topic[0] == "residence":
            place = rf"\b{re.escape(match['place'])}\b"
            return re.search(place, home, re.IGNORECASE) is not None
    return False


# What is gone: "Their dog Rex died", "Leo died", "Broke up with Sam" (``retire_only``).
_PET_DIED = _re(
    rf"^(?:their\s+(?P<pet>{PET})(?:\s+(?P<name>[\w'-]+))?|(?P<name_only>[\w'-]+))\s+died$"
)
# The pets a card text names: "Has a dog called Rex", "Has two cats called Mia and Leo".
_HAS_PET = _re(
    r"^(?:(?:still\s+)?(?:has|owns)\s+(?P<count>an?|one|two|three|four|five|\d+)\s+"
    rf"(?P<pet>puppies|bunnies|{PET}s?)(?:\s+(?:called|named)\s+(?P<names>.+))?"
    rf"|their\s+(?P<pet2>{PET})\s*(?:'\s*s\s+name\s+is|\s+is\s+(?:called|named))"
    r"\s+(?P<name2>[\w'-]+))$"
)
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
# One word for each animal, so "our puppy died" ends "Has a dog called Rex".
_SAME_PET = {"puppy": "dog", "kitten": "cat", "bunny": "rabbit", "pony": "horse"}
_BROKE_UP = _re(r"^broke\s+up\s+with\s+(?:their\s+(?P<relation>[\w-]+)|(?P<name>.+))$")
_HAS_PARTNER = _re(rf"^their\s+(?P<relation>{RELATION})\s+is\s+called\s+(?P<name>.+)$")


# "Left Google": the employer they left (``retire_only``, statements.LEFT_EMPLOYER).
_LEFT_EMPLOYER = _re(r"^left\s+(?P<org>.+)$")


def _left_employer(candidate: MemoryCandidate, earlier: str) -> bool:
    """Whether ``candidate`` says they left the employer ``earlier`` names: "Left Google"
    retires "Works at Google" and "Is a software engineer at Google", not "Lives in
    Berlin" for "Left Berlin", nor "Works at Google" for "Left Google Maps"."""
    left = _LEFT_EMPLOYER.match(candidate.text)
    topic = _topic(earlier)
    if left is None or topic is None or topic[0] != "employer":
        return False
    employer = rf"\b(?:at|for|with)\s+{re.escape(left['org'])}(?:\W|$)"
    return re.search(employer, earlier, re.IGNORECASE) is not None


def _gone(candidate: MemoryCandidate, earlier: str) -> bool:
    """Whether ``candidate`` says the pet or partner ``earlier`` names is gone: "Their dog
    Rex died" retires "Has a dog called Rex" (any one dog, for "Their dog died"), "Broke
    up with Sam" retires "Their girlfriend is called Sam", "Broke up with their partner"
    any partner, "Left Google" the employer Google (:func:`_left_employer`). A fact
    naming another, or two pets at once, stays."""
    if _left_employer(candidate, earlier):
        return True
    if _PET_DIED.match(candidate.text) and _HAS_PET.match(earlier):
        return _pets_left(candidate.text, earlier) is not None
    ended, partner = _BROKE_UP.match(candidate.text), _HAS_PARTNER.match(earlier)
    if ended is None or partner is None:
        return False
    if ended["name"]:
        return ended["name"].lower() == partner["name"].split()[0].lower()
    return ended["relation"].lower() in ("partner", partner["relation"].lower())


def _pets_left(died_text: str, earlier: str) -> list[str] | None:
    """The card texts left of the pets ``earlier`` names once the one ``died_text`` names
    died ("Leo died" of "Has two cats called Mia and Leo" leaves "Has a cat called Mia";
    of "Has a dog called Rex" nothing), or None when it names none of them: another name,
    another animal, or one of several pets not named ("Their cat died" of two cats)."""
    died, has = _PET_DIED.match(died_text), _HAS_PET.match(earlier)
    if died is None or has is None:
        return None
    had = singular_pet(has["pet"] or has["pet2"])
    if died["pet"] and _SAME_PET.get(died["pet"].lower(), died["pet"].lower()) != _SAME_PET.get(
        had, had
    ):
        return None
    names = names_in(has["names"] or has["name2"] or "")
    count = max(len(names), _COUNT.get((has["count"] or "a").lower()) or int(has["count"]))
    name = died["name"] or died["name_only"]
    if name is None:
        return [] if count == 1 else None
    if names:
        if name.lower() not in (n.lower() for n in names):
            return None
        names = [n for n in names if n.lower() != name.lower()]
    elif not died["pet"]:
        return None  # "Leo died", and no pet remembered by a name
    if count == 1:
        return []
    return [pets_text(count - 1, had, names)]


def supersedes(candidate: MemoryCandidate, earlier: str) -> bool:
    """Whether storing ``candidate`` retires the fact whose card text is ``earlier``:
    both are about the same topic, and it is one a person has one of (where they live,
    who they work for: "Works at Acme", "Got a new job at Globex", or "Is a software
    engineer at Acme"; their birthday; their wife, husband or partner) or the
    candidate is a correction ("actually, I moved to Lisbon" retires "Lives in Berlin").
    A job stated with its employer also retires the same job stated alone, and a stance
    retires the one it contradicts: a habit given up or a dislike ends a like ("Quit
    smoking" retires "Smokes" and "Is a smoker", "Sold their car" retires "Has a car",
    "Hates coffee" retires "Likes coffee"; giving up drink ends drinking alcohol, not
    coffee), a habit taken up again ends having given it up ("Started smoking again"
    retires "Quit smoking"), and moving out of a place ends living there
    ("Moved out of Berlin", "No longer lives in Berlin" retire "Lives in Berlin", and
    back again the other way), an allergy outgrown ends that allergy alone ("Is no
    longer allergic to cats"), and a pet that died or a partner broken up with ends
    the fact naming them ("Their dog Rex died", "Broke up with Sam"), as leaving an
    employer ends working there ("Left Google"). The same text is
    not superseded, only kept. A denial ("I'm not vegan", "that's wrong, I don't live in
    Berlin") retires the fact it denies, and a list of languages spoken retires the one
    it names again, a list of likes the one whose like contradicts one of them ("Hates
    chess" against "Loves hiking, climbing and chess"; what it does not name stands,
    :func:`still_stands`)."""
    if candidate.denies:
        return _denied(candidate.text, earlier)
    if _contradicts(candidate, earlier) or _left_home(candidate, earlier):
        return True
    if languages_left(candidate, earlier) is not None or _likes_left(candidate, earlier):
        return True
    if any(_contradicts(like, earlier) for like in _listed_likes(candidate)):
        return True  # "Loves hiking, climbing and chess" retires "Hates chess"
    if candidate.retire_only:
        return _gone(candidate, earlier)
    if candidate.kind not in ("fact", "correction"):
        return False
    job_at = _JOB_AT_RE.match(candidate.text)
    if job_at and _folded(job_at["job"]) == _folded(earlier):
        return True  # "Is a software engineer at Globex" says "Is a software engineer"
    new = _topic(candidate.text)
    if new is None or _folded(earlier) == _folded(candidate.text):
        return False
    topic, single = new
    old = _topic(earlier)
    return old is not None and old[0] == topic and (single or candidate.kind == "correction")


def still_stands(candidate: MemoryCandidate, earlier: str) -> str | None:
    """What of ``earlier``, a fact ``candidate`` supersedes, still holds, as a card text:
    the job of "Is a software engineer at Acme" once they say they work at Globex or
    left Acme ("Is a software engineer"), unless ``candidate`` states a job of its own."""
    if candidate.retire_only and not _LEFT_EMPLOYER.match(candidate.text):
        left = _pets_left(candidate.text, earlier)
        return left[0] if left else None
    languages = languages_left(candidate, earlier)
    if languages is not None:
        return languages or None
    likes = _likes_left(candidate, earlier)
    if likes is not None:
        return likes or None
    match = _JOB_AT_RE.match(earlier)
    if match is None or _JOB_AT_RE.match(candidate.text):
        return None
    job = match["job"]
    return job[:1].upper() + job[1:]


# Where they live or work, and what: "Lives in Berlin", "Works at Acme".
_PLACE_OF = _re(
    r"^(?:(?:now\s+)?(?:lives|works|is\s+(?:now\s+)?(?:based|living|working))"
    r"|(?:has\s+)?(?:(?:just|recently|finally)\s+)?moved)"
    r"\s+(?:in|near|on|at|for|out\s+of|to)\s+(?P<what>.+)$"
)


def _denied(denied: str, earlier: str) -> bool:
    """Whether ``earlier`` is the fact ``denied`` says is not true of them: the same text
    ("Is vegan"), or where they live or work said another way ("Lives in Berlin" denies
    "Is based in Berlin" and "Moved to Berlin")."""
    if _folded(denied) == _folded(earlier):
        return True
    new, old = _topic(denied), _topic(earlier)
    if new is None or old is None or new[0] != old[0]:
        return False
    what, had = _PLACE_OF.match(denied), _PLACE_OF.match(earlier)
    return what is not None and had is not None and _folded(what["what"]) == _folded(had["what"])


def _folded(text: str) -> str:
    return " ".join(text.lower().split())


def is_about(candidate: MemoryCandidate, earlier: str) -> bool:
    """Whether the remembered card text ``earlier`` is what ``candidate`` names: the same
    text, or the same topic ("forget that I live in Paris" names "Moved to Paris")."""
    if _folded(earlier) == _folded(candidate.text):
        return True
    new, old = _topic(candidate.text), _topic(earlier)
    return new is not None and old is not None and new[0] == old[0]
