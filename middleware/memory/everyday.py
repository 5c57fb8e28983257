"""Everyday things said of oneself in passing: pets, habits, likes, diets, birthdays, partners."""

from __future__ import annotations

import re

from middleware.memory.candidate import NOT_A_NAME, MemoryCandidate, made, proper_name
from middleware.memory.voice import third_person

__all__ = [
    "DIET",
    "EVERYDAY_PATTERNS",
    "FREQUENCY",
    "MONTH",
    "PET",
    "RELATION",
    "WEEKDAY",
    "WHEN_DONE",
    "in_passing",
    "names_a_business",
    "names_in",
    "pets_text",
    "points_back",
    "singular_pet",
    "stated_diet",
]


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# The diets a person keeps one of at a time ("I'm vegetarian now, not vegan").
DIET = (
    r"(?:vegetarian|vegan|pescatarian|pescetarian|flexitarian|plant-based|omnivore"
    r"|carnivore)"
)
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# A day of the year as people say it: "June 3rd", "the 3rd of June", "3 June", "June".
# When a change happened, said after it: "we moved to Lisbon last month", "I went vegan
# a year ago", "my dog died yesterday".
WHEN_DONE = (
    r"(?:\s+(?:(?:just\s+)?now|today|yesterday|recently|lately|at\s+last"
    r"|(?:last|this)\s+(?:week|weekend|month|year|spring|summer|autumn|fall|winter)"
    r"|(?:a|one|two|three|a\s+few|a\s+couple\s+of)\s+(?:days?|weeks?|months?|years?)\s+ago"
    rf"|in\s+{MONTH}))?"
)
_DATE = (
    rf"(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}"
    rf"|{MONTH}\.?\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?|{MONTH})\b"
)

# Everyday things said about oneself in passing, each whole as a sentence (so "I have a
# dog in this fight" or "I love that idea" is not one): a pet ("I have a dog called Rex",
# "my cat is called Miso"), a habit given up ("I quit smoking", "I don't drink coffee any
# more"), and a plain like or dislike ("I love coffee", "I hate mornings").
PET = (
    r"(?:dog|cat|puppy|kitten|rabbit|bunny|hamster|guinea\s+pig|parrot|budgie|tortoise"
    r"|turtle|snake|lizard|gecko|ferret|horse|pony|goldfish)"
)
_HABIT_VERB = r"(?:drink|eat|smoke|vape|take|use)"
# Habits said with no object ("I don't smoke anymore", "I'm a heavy smoker").
_HABIT_ALONE = r"(?:smoke|vape|drink)"
_I_AM = r"i\s*(?:'\s*m|\s+am)"
# What one is allergic to: a few words, not "this", "you" or "work" said in jest.
_ALLERGEN = (
    r"(?!(?:it|that|this|these|those|you|him|her|them|us|work|mondays?|people|everything"
    r"|anything|nothing|myself)\b)[\w'-]+(?:(?:\s*,\s*|\s+(?:and|or)\s+|\s+)[\w'-]+){0,4}"
)
# A habit one may take up again, eating only with what ("eating meat", not just "eating").
_RESUMABLE = (
    r"(?:(?:smoking|vaping|drinking)(?:\s+(?!again\b)[\w'-]+){0,2}?"
    r"|eating(?:\s+(?!again\b)[\w'-]+){1,2}?)\s+again"
)
# A pastime or a routine one may give up: "going to the gym", "running", "playing the piano".
_PASTIME = (
    r"(?:going\s+to\s+(?!(?:it|that|this|them|him|her|bed|sleep)\b)(?:the\s+)?[\w'-]+"
    r"|(?:going\s+)?(?:running|jogging|swimming|cycling|climbing|hiking|dancing|surfing|skiing)"
    r"|meditating|exercising|working\s+out|training|yoga|pilates|(?:the\s+)?gym"
    r"|(?:playing|practi[cs]ing)\s+(?!(?:it|that|this|them|with|for|along)\b)(?:the\s+)?[\w'-]+)"
)
_HABITUAL = r"(?:(?:heavy|light|social|chain|occasional|daily)\s+)?(?:smoker|vaper|drinker)"
# What a person has one of and may sell or move on from ("I sold my car").
_OWNED = r"(?:car|bike|motorbike|motorcycle|scooter|van|truck|boat|house|flat|apartment)"
# A place, written with a capital: "Berlin", "New York".
_PLACE = r"(?-i:[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})"
_LIKED = (
    r"(?!(?:it|that|this|these|those|the|you|your|him|her|them|us|me|myself|everything"
    r"|anything|nothing"
    r"|how|what|when|where|why|who|which|if|to|the\s+(?:idea|way|thought|fact))\b)"
    r"[\w'-]+(?:\s+[\w'-]+){0,3}"
    # A list: "hiking, climbing and chess"; not an aside after a comma ("…, thanks").
    r"(?:\s*,\s*(?!(?:thanks|thank|thx|lol|haha|though|tho|too|btw|honestly|really"
    r"|especially|but|so|because|since|i|you|it|that|this|which)\b)[\w'-]+(?:\s+[\w'-]+){0,5}){0,6}"
)
# How often a routine comes round: "every morning", "each week", "daily", "on weekdays",
# "twice a week".
_PERIOD = rf"(?:day|morning|afternoon|evening|night|week(?:day|end)?|month|{WEEKDAY})"
FREQUENCY = (
    rf"(?:(?:every|each)\s+(?:single\s+|other\s+)?{_PERIOD}|daily|nightly|weekly"
    rf"|on\s+(?:weekdays|weekends|{WEEKDAY}s)|(?:once|twice|[\w-]+\s+times)\s+a\s+(?:day|week|month))"
)
# A meeting, call or appointment on a schedule is the user's calendar, not who they are
# (spec 003 §5.1: events and plans with dates are the chronicle's, not the profile's).
_NOT_AN_EVENT = (
    r"(?!(?:[\w'-]+\s+){0,3}?(?:meetings?|calls?|appointments?|stand-?ups?|syncs?"
    r"|check-?ins?|one-on-ones?|1:1s?|deadlines?|interviews?|reviews?|catch-?ups?|webinars?"
    r"|conferences?)\b)"
)
# A routine of one's own: what one drinks, eats or does, said with how often ("I drink
# coffee every day", "I go running every morning", "I walk the dog every evening"), and
# a commute, which is one by its nature ("I take the train to work").
_ROUTINE = (
    r"(?:(?:usually|always|normally|still|now)\s+)?"
    r"(?:(?:drink|eat|have|take|play|practi[cs]e|read|cook|visit|call|study|do|walk|ride|go"
    rf"|watch|feed)\s+{_NOT_AN_EVENT}[\w'-]+(?:\s+[\w'-]+){{0,4}}?"
    r"|(?:run|jog|swim|cycle|walk|meditate|train|stretch|work\s+out|exercise)"
    r"(?:\s+[\w'-]+){0,4}?)"
    rf"\s+{FREQUENCY}(?:\s+(?:before|after|at|in|on|with)\s+[\w'-]+(?:\s+[\w'-]+)?)?"
)
_COMMUTE = (
    r"(?:(?:usually|always|normally)\s+)?(?:take\s+the\s+(?:train|bus|tube|subway|metro|tram"
    r"|ferry)|cycle|bike|walk|drive|commute)\s+to\s+(?:work|the\s+office|school|uni"
    rf"|university|college)(?:\s+{FREQUENCY})?"
)
_EVERYDAY = _re(
    rf"(?P<pet_name>my\s+{PET}\s*(?:'s\s+name\s+is|is\s+(?:called|named))\s+[\w'-]+)\W*$"
    r"|(?P<stopped>i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|finally|recently)\s+)?"
    r"(?:stopped|quit|gave\s+up|given\s+up)\s+(?:(?:drinking|eating|smoking|vaping|taking"
    r"|using)(?:\s+(?!(?:it|that|this|them|for|with|to|at|in|on|so|because)\b)[\w'-]+){0,2}"
    rf"|{_PASTIME}|coffee|caffeine|alcohol|sugar|meat|dairy|cigarettes))\W*$"
    # A routine given up too: "I no longer drink coffee every morning".
    rf"|(?P<no_more>i\s+(?:don\s*'?\s*t|do\s+not)\s+(?:{_HABIT_VERB}\s+[\w'-]+(?:\s+[\w'-]+)?"
    rf"|{_HABIT_ALONE}|(?:have|own)\s+an?\s+{_OWNED}|{_ROUTINE})\s+any\s?more"
    rf"|i\s+no\s+longer\s+(?:{_HABIT_VERB}s?\s+[\w'-]+(?:\s+[\w'-]+)?|{_HABIT_ALONE}s?"
    rf"|(?:have|own)\s+an?\s+{_OWNED}|{_ROUTINE}))\W*$"
    # A habit taken up again: "I started smoking again", "I'm drinking again".
    r"|(?P<resumed>i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|recently)\s+)?(?:started|began)\s+"
    rf"{_RESUMABLE}|{_I_AM}\s+{_RESUMABLE}|i\s+(?:smoke|drink|vape)\s+again)\W*$"
    # A habit or a thing owned, and moving on from it: "I'm a smoker", "I have a car",
    # "I sold my car", "I moved out of Berlin" (a place, written with a capital).
    rf"|(?P<habit>i\s*(?:'\s*m|\s+am)\s+(?:still\s+)?an?\s+{_HABITUAL})\W*$"
    rf"|(?P<owned>i\s+(?:have|own)\s+an?\s+(?:new\s+)?{_OWNED})\W*$"
    rf"|(?P<sold>i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|finally|recently)\s+)?(?:sold|got\s+rid\s+of)"
    rf"\s+my\s+(?:old\s+)?{_OWNED})\W*$"
    r"|(?P<left>i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|finally|recently)\s+)?moved\s+"
    rf"(?:out\s+of|away\s+from)\s+{_PLACE}"
    rf"|i\s+no\s+longer\s+live\s+(?:in|near)\s+{_PLACE}"
    rf"|i\s+(?:don\s*'?\s*t|do\s+not)\s+live\s+(?:in|near)\s+{_PLACE}\s+any\s?more)\W*$"
    r"|(?P<likes>i\s+(?:really\s+|absolutely\s+)?(?:love|like|adore|enjoy|hate|dislike|detest"
    rf"|can\s*'?\s*t\s+stand|(?:don\s*'?\s*t|do\s+not)\s+(?:really\s+)?like)\s+{_LIKED})\W*$"
    # A birthday on a day of the year ("my birthday is on June 3rd"), not "is tomorrow".
    rf"|(?P<birthday>my\s+birthday\s*(?:'\s*s|\s+is)\s+(?:(?:on|in)\s+)?{_DATE}"
    r"(?:,?\s+\d{4})?)\W*$"
    # An allergy, and one outgrown: "I'm allergic to peanuts", "I'm no longer allergic …".
    rf"|(?P<allergy>{_I_AM}\s+(?:(?:also|very|severely|seriously|mildly|deathly|highly)\s+)?"
    rf"allergic\s+to\s+{_ALLERGEN})\W*$"
    rf"|(?P<not_allergic>{_I_AM}\s+(?:no\s+longer\s+allergic\s+to\s+{_ALLERGEN}"
    rf"|not\s+allergic\s+to\s+{_ALLERGEN}\s+any\s?more))\W*$"
    # A routine, and one given up ("I used to drink coffee every day": not now).
    # "… now", "… these days": the routine as it is now, said so.
    rf"|(?P<routine>i\s+(?:{_COMMUTE}|{_ROUTINE}))(?:\s+(?:now|these\s+days|nowadays))?\W*$"
    rf"|(?P<used_to>i\s+used\s+to\s+(?:{_COMMUTE}|{_ROUTINE}))\W*$"
)
# "My wife is called Maria", "my husband's name is Tom", "my partner is Sam": stored in
# one form per relation. A bare "is" takes only a capitalised name, and not a
# nationality or faith ("my wife is Italian").
RELATION = r"(?:wife|husband|partner|spouse|boyfriend|girlfriend|fianc[eé]e?|fiance|bf|gf)"
_PARTNER = _re(
    rf"my\s+(?:new\s+)?(?P<relation>{RELATION})\s*(?:'\s*s\s+name\s+is|\s+is\s+(?:called|named))"
    r"\s+(?P<name>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*)?)\W*$"
    rf"|my\s+(?:new\s+)?(?P<relation2>{RELATION})\s+is\s+(?-i:(?P<name2>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?))"
    r"\W*$"
)
_NOT_A_PARTNER = frozenset(
    "i away up out off back in over on home here there busy sick ill pregnant"
    " english british scottish welsh irish american canadian australian french german"
    " italian spanish portuguese dutch belgian swiss austrian polish czech russian"
    " ukrainian greek turkish swedish norwegian danish finnish icelandic chinese japanese"
    " korean indian pakistani brazilian mexican argentinian chilean colombian peruvian"
    " nigerian kenyan african asian european latina latino jewish muslim christian"
    " catholic protestant hindu buddhist sikh mormon atheist vegan vegetarian".split()
)
# A business, not a person: "my partner is Acme Corp" is a business partner, whom spec
# 003 leaves to the CRM (§5.1: no entity profiles), not someone the user lives with.
_BUSINESS = frozenset(
    "corp corporation inc incorporated ltd limited llc llp plc gmbh ag sa co company"
    " group holdings partners associates industries enterprises ventures capital labs"
    " solutions consulting".split()
)
_RELATION_IS = _re(
    rf"my\s+{RELATION}\s*(?:'\s*s|\s+is)\s+(?:(?:called|named)\s+)?(?P<name>[\w'. -]+?)\W*$"
)
# One name or several: "Mia", "Mia and Leo", "Mia, Leo and Tom".
_NAMES = r"[\w'-]+(?:(?:\s*,\s*|,?\s+and\s+)[\w'-]+)*"
_CAPITALISED = r"(?!(?:I|Is)\b)[A-Z][a-z'-]+"
_CAPITALISED_NAMES = rf"(?-i:{_CAPITALISED}(?:(?:\s*,\s*|,?\s+and\s+){_CAPITALISED})*)"
_PETS = rf"(?:puppies|bunnies|{PET}s?)"
# "I have two cats called Mia and Leo", "We have two cats, Mia and Leo" (a household's
# pets are theirs too), "I have two cats, they're called Mia and Leo", "I own a dog",
# "we've got a dog".
_HAVE_PETS = _re(
    r"(?:i|we)\s*(?:'\s*ve\s+got|\s+have\s+got|\s+have|\s+own)\s+"
    rf"(?P<count>an?|one|two|three|four|five|\d+)\s+(?P<pet>{_PETS})"
    rf"(?:\s+(?:called|named)\s+(?P<names>{_NAMES})"
    rf"|\s*,\s*(?P<names2>{_CAPITALISED_NAMES})"
    r"|\s*,\s*(?:(?:they|we)\s*(?:'\s*re|\s+are)|(?:he|she|it)\s*(?:'\s*s|\s+is)"
    rf"|(?:their|his|her|its)\s+names?\s+(?:is|are))\s+(?:(?:called|named)\s+)?(?P<names3>{_NAMES}))?"
    r"\W*$"
)
# "… my dog Rex …", "… my cats Mia and Leo …" anywhere in a sentence: they have them.
# A name is written with a capital ("my dog is …", "my cat I adopted" are not names).
_MY_PET = _re(
    rf"\bmy\s+(?:(?:two|three|four|five)\s+)?(?P<pet>{_PETS})\s+"
    rf"(?P<names>{_CAPITALISED_NAMES})\b(?!')"
)
# "My dog Rex died": not a dog they have.
_PET_GONE = _re(r"\b(?:died|dead|passed\s+away|put\s+down|put\s+to\s+sleep|lost|gone|ran\s+away)\b")
# "… my (new) boyfriend Tom …" anywhere in a sentence: their boyfriend is called Tom.
# "My partner Dana" is one too when nothing in the sentence says business (below).
_MY_PARTNER = _re(
    rf"\bmy\s+(?:new\s+)?(?P<relation>{RELATION})\s*,?\s+"
    r"(?-i:(?P<name>[A-Z][a-z'-]+))\b(?!')(?P<after>.*)"
)
# A partner in business, not in life (spec 003 §5.1 leaves those to the CRM): "my partner
# Dana signed the contract", "… my partner Dana at Acme", "my partner Dana Holdings".
_AT_WORK = _re(
    r"\b(?:business|company|companies|firm|clients?|customers?|contracts?|deals?|mergers?"
    r"|investors?|equity|shareholders?|board|offices?|practice|partnership|agency|startup"
    r"|vendors?|suppliers?|invoices?|pitch|proposal|meetings?|work|colleagues?|co-?founders?"
    r"|stakes?|revenue|sales|budget|project|negotiat\w*)\b"
)
_NAMED_AT_WORK = _re(r"^\s*(?:&|\+|(?-i:[A-Z])|,?\s*(?:at|of|from)\s+(?-i:[A-Z]))")
_SOMEONE_GONE = _re(r"\b(?:died|dead|passed\s+away|late|ex|former|broke\s+up|split\s+up)\b")
# A pet that died or was lost: "my dog Rex passed away", "our cat died", "we lost our
# dog". Nothing is learned; the pet remembered goes (``retire_only``).
_PET_DIED = _re(
    r"(?:(?:my|our)\s+(?:(?:old|dear|beloved|sweet|poor|lovely)\s+)?"
    rf"(?P<pet>{PET})(?:\s*,?\s+(?-i:(?P<name>(?!I\b|Is\b)[A-Z][a-z'-]+)),?)?"
    r"\s+(?:(?:has|just|sadly|finally|recently)\s+)*(?:died|passed(?:\s+away|\s+on)?"
    r"|was\s+put\s+(?:down|to\s+sleep)|had\s+to\s+be\s+put\s+(?:down|to\s+sleep))"
    r"|(?:i|we)\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|sadly|recently|finally)\s+)?"
    r"(?:lost|had\s+to\s+put\s+down)\s+(?:my|our)\s+(?:(?:old|dear|beloved)\s+)?"
    rf"(?P<pet2>{PET})(?:\s+(?-i:(?P<name2>[A-Z][a-z'-]+)))?"
    r"|(?:i|we)\s+(?:(?:just|sadly|recently|finally)\s+)?had\s+to\s+put\s+(?:my|our)\s+"
    rf"(?:(?:old|dear|beloved)\s+)?(?P<pet3>{PET})(?:\s+(?-i:(?P<name3>[A-Z][a-z'-]+)))?"
    r"\s+(?:down|to\s+sleep)"
    # "Leo passed away": a name alone, which retires only a pet remembered by that name.
    r"|(?-i:(?P<name4>(?!(?:It|He|She|They|We|You|My|Our|This|That|Everyone|Everybody"
    r"|Nobody|Someone|Something|Everything|Nothing)\b)[A-Z][a-z'-]+))\s+"
    r"(?:(?:has|just|sadly|finally|recently)\s+)*(?:died|passed(?:\s+away|\s+on)?)"
    rf"){WHEN_DONE}\W*$"
)


def _ex(n: int) -> str:
    """Who a breakup was with: "my girlfriend", "my girlfriend Ana", or "Sam"."""
    return (
        rf"(?:my\s+(?P<relation{n}>{RELATION})(?:\s+(?-i:(?P<also{n}>[A-Z][\w'-]*)))?"
        rf"|(?-i:(?P<name{n}>(?!I\b|We\b|My\b|They\b|He\b|She\b)[A-Z][\w'-]*)))"
    )


_BROKE = r"(?:(?:just|finally|recently|officially)\s+)?(?:broke|broken|split)\s+up"
# A relationship that ended: "I broke up with Sam", "Sam and I split up", "my girlfriend
# dumped me", "we broke up", "we got divorced". Nothing is learned; the partner
# remembered goes (``retire_only``), any partner for a bare "we".
_BROKE_UP = _re(
    rf"(?:i\s*(?:'\s*ve|\s+have)?\s+{_BROKE}\s+with\s+{_ex(1)}"
    rf"|{_ex(2)}\s+and\s+(?:i|me)\s*(?:'\s*ve|\s+have)?\s+{_BROKE}"
    rf"|me\s+and\s+{_ex(3)}\s*(?:'\s*ve|\s+have)?\s+{_BROKE}"
    rf"|{_ex(4)}\s+(?:(?:just|finally)\s+)?(?:broke\s+up\s+with|dumped|left)\s+me"
    r"|we\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|finally|recently|officially)\s+)?"
    r"(?:broke|broken)\s+up"
    r"|(?:i|we)\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|finally|recently|officially)\s+)?"
    rf"got\s+divorced){WHEN_DONE}\W*$"
)
# The diet they keep: "I'm vegan", "I am vegan now", "I went vegan", "I've gone
# vegetarian", all "Is vegan" or "Is vegetarian", so that saying it again is a repeat.
_DIET_SAID = _re(
    r"i\s*(?:'\s*m|\s+am|'\s*ve\s+been|\s+have\s+been)\s+"
    r"(?:(?P<strictly>strictly)\s+|(?:now|fully)\s+)?(?:an?\s+)?"
    rf"(?P<diet>{DIET})(?:\s+(?:now|these\s+days|nowadays))?\W*$"
    r"|i\s*(?:'\s*ve|\s+have)?\s+(?:(?:just|recently|finally|now)\s+)?(?:went|gone|turned"
    r"|become|became)\s+(?:(?:fully|full)\s+)?(?:an?\s+)?"
    rf"(?P<diet2>{DIET}){WHEN_DONE}\W*$"
)
# A sentence holding a quotation is someone's words, or about words.
_QUOTED = re.compile(r"[\"“”«»]")
# A like or preference whose object points back at something said before ("I hate
# pineapple on it", "I prefer mine with that"): out of the conversation it is not what
# they like, and "Hates pineapple" would say more than they did.
# "That" or "this" before a noun names it ("walks in that park"): only at the end.
_POINTS_BACK = _re(
    r"\b(?:on|in|with|without|about|for|of|at|to|from|into|onto|like|than|over|under)"
    r"\s+(?:it|them)\b|\b(?:it|this|that|these|those|them|there)\W*$"
)

#: What an everyday sentence matches, for the trigger gate in front of detection.
EVERYDAY_PATTERNS = (
    _EVERYDAY,
    _HAVE_PETS,
    _MY_PET,
    _PARTNER,
    _MY_PARTNER,
    _PET_DIED,
    _BROKE_UP,
    _DIET_SAID,
)


def stated_diet(clause: str) -> MemoryCandidate | None:
    """The diet ``clause`` says the user keeps, in one form however it was said: "I
    went vegan", "I am a vegan now" → "Is vegan" ("I'm strictly vegan" → "Is strictly
    vegan"; "I'm an omnivore" → "Is an omnivore")."""
    match = _DIET_SAID.match(clause)
    if match is None:
        return None
    diet = (match["diet"] or match["diet2"]).lower()
    if diet.endswith("vore"):
        diet = f"{'an' if diet.startswith('o') else 'a'} {diet}"
    strictly = "strictly " if match["strictly"] else ""
    return MemoryCandidate("fact", f"Is {strictly}{diet}")


def points_back(liked: str) -> bool:
    """Whether what ``liked`` names is only something said before ("pineapple on it")."""
    return _POINTS_BACK.search(liked) is not None


def in_passing(sentence: str) -> MemoryCandidate | None:
    """A pet, a habit, a like, a birthday, a partner or an allergy ``sentence`` states
    whole (see ``_EVERYDAY``), as a card text; never from a sentence quoting words."""
    if _QUOTED.search(sentence):
        return None
    ended = _ended(sentence)
    if ended is not None:
        return ended
    match = _HAVE_PETS.match(sentence)
    if match:
        count = _COUNTS.get(match["count"].lower()) or int(match["count"])
        names = names_in(match["names"] or match["names2"] or match["names3"] or "")
        return MemoryCandidate("fact", pets_text(count, match["pet"], names))
    match = _EVERYDAY.match(sentence)
    if match:
        if match["likes"]:
            if points_back(match["likes"]):
                return None
            return made("preference", match["likes"], third_person)
        said = next(
            match[group]
            for group in (
                "pet_name",
                "stopped",
                "no_more",
                "resumed",
                "habit",
                "owned",
                "sold",
                "left",
                "birthday",
                "allergy",
                "not_allergic",
                "routine",
                "used_to",
            )
            if match[group]
        )
        return made("fact", said, third_person)
    partner = _partner(sentence) or _partner_named_in_passing(sentence)
    if partner is not None:
        return partner
    match = _MY_PET.search(sentence)
    if match and not _PET_GONE.search(sentence):
        names = names_in(match["names"])
        if singular_pet(match["pet"]) == match["pet"].lower():
            names = names[:1]  # "my cat Mia and Leo …": Leo need not be a cat
        return MemoryCandidate("fact", pets_text(len(names), match["pet"], names))
    return None


_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_COUNT_WORDS = {n: word for word, n in _COUNTS.items() if word not in ("a", "an")}
_PLURAL = {"puppy": "puppies", "bunny": "bunnies", "goldfish": "goldfish"}
_SINGULAR = {plural: one for one, plural in _PLURAL.items()}


def singular_pet(word: str) -> str:
    """One animal's word: "cats" → "cat", "puppies" → "puppy", "guinea pigs" →
    "guinea pig"."""
    word = " ".join(word.lower().split())
    return _SINGULAR.get(word, word.removesuffix("s"))


def names_in(said: str) -> list[str]:
    """The names in "Mia", "Mia and Leo", "Mia, Leo and Tom", as the card shows them."""
    parts = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", said.strip())
    return [proper_name([part]) for part in parts if part]


def pets_text(count: int, pet: str, names: list[str]) -> str:
    """The card text for the pets a person has, in one form however it was said: "Has a
    cat called Mia", "Has two cats called Mia and Leo", "Has two cats"."""
    one, count = singular_pet(pet), max(count, len(names))
    if count == 1:
        head = f"Has {'an' if one[0] in 'aeiou' else 'a'} {one}"
    else:
        head = f"Has {_COUNT_WORDS.get(count, str(count))} {_PLURAL.get(one, one + 's')}"
    if not names:
        return head
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{head} called {listed}"


def names_a_business(clause: str) -> bool:
    """Whether ``clause`` gives a business as the user's partner ("my partner is Acme
    Corp"): not a fact about them, nor a correction of the partner remembered."""
    match = _RELATION_IS.match(clause)
    return match is not None and any(
        word.lower().rstrip(".") in _BUSINESS for word in match["name"].split()
    )


def _ended(sentence: str) -> MemoryCandidate | None:
    """A pet that died ("Their dog Rex died") or a relationship that ended ("Broke up with
    Sam", "Broke up with their girlfriend", "Broke up with their partner" for a bare "we
    broke up"): what to retire, not to keep (see :mod:`middleware.memory.replacement`)."""
    match = _PET_DIED.match(sentence)
    if match:
        pet = (match["pet"] or match["pet2"] or match["pet3"] or "").lower()
        name = match["name"] or match["name2"] or match["name3"] or match["name4"]
        if not pet:
            return MemoryCandidate("fact", f"{name} died", retire_only=True)
        text = f"Their {pet} {name} died" if name else f"Their {pet} died"
        return MemoryCandidate("fact", " ".join(text.split()), retire_only=True)
    match = _BROKE_UP.match(sentence)
    if match is None:
        return None
    groups = range(1, 5)
    name = next(
        (
            match[f"name{n}"] or match[f"also{n}"]
            for n in groups
            if match[f"name{n}"] or match[f"also{n}"]
        ),
        None,
    )
    relation = next((match[f"relation{n}"] for n in groups if match[f"relation{n}"]), None)
    if name is not None and name.lower() in NOT_A_NAME:
        return None
    if name is not None:
        who = name
    elif relation is not None:
        who = "their " + {"bf": "boyfriend", "gf": "girlfriend"}.get(
            relation.lower(), relation.lower()
        )
    else:
        who = "their partner"
    return MemoryCandidate("fact", f"Broke up with {who}", retire_only=True)


def _partner_named_in_passing(sentence: str) -> MemoryCandidate | None:
    """ "… my new boyfriend Tom …" as "Their boyfriend is called Tom"; not when the
    sentence says they are gone ("my husband Tom passed away", "my ex …")."""
    match = _MY_PARTNER.search(sentence)
    if match is None or _SOMEONE_GONE.search(sentence):
        return None
    if match["relation"].lower() == "partner" and (
        _AT_WORK.search(sentence) or _NAMED_AT_WORK.match(match["after"])
    ):
        return None
    name = match["name"]
    if name.lower() in _NOT_A_PARTNER or name.lower() in NOT_A_NAME or name.lower() in _BUSINESS:
        return None
    relation = match["relation"].lower()
    relation = {"bf": "boyfriend", "gf": "girlfriend"}.get(relation, relation)
    return MemoryCandidate("fact", f"Their {relation} is called {name}")


def _partner(sentence: str) -> MemoryCandidate | None:
    """ "My wife is called Maria", "my husband's name is Tom", "my partner is Sam" as
    "Their wife is called Maria": one text per relation, however it was said."""
    match = _PARTNER.match(sentence)
    if match is None:
        return None
    relation = (match["relation"] or match["relation2"]).lower()
    words = (match["name"] or match["name2"]).split()
    said = [word.lower().rstrip(".") for word in words]
    if any(word in _NOT_A_PARTNER or word in NOT_A_NAME or word in _BUSINESS for word in said):
        return None
    name = proper_name(words)
    relation = {"bf": "boyfriend", "gf": "girlfriend"}.get(relation, relation)
    return MemoryCandidate("fact", f"Their {relation} is called {name}")
