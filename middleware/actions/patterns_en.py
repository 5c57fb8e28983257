"""English patterns for the action detectors in :mod:`middleware.actions.detect`.

:data:`ENGLISH` is registered in :data:`~middleware.actions.detect.PATTERNS`. Every rule
matches case-insensitively; intents and status rules at a clause start, durations and
scheduling cues anywhere in a sentence.
"""

from __future__ import annotations

import re

from middleware.actions.language import (
    ActionStatus,
    DurationRule,
    IntentRule,
    LanguagePatterns,
    Needs,
    StatusRule,
)

__all__ = ["ENGLISH"]


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _intent(
    pattern: str,
    label: str,
    status: ActionStatus = "in_progress",
    needs: Needs = "any",
    activity: str | None = None,
    base: bool = False,
) -> IntentRule:
    return IntentRule(_re(pattern), label, status, needs, activity, base)


def _gerund_en(verb: str) -> str:
    word = verb.lower()
    if word.endswith("ie"):
        return word[:-2] + "ying"
    if word.endswith("e") and not word.endswith(("ee", "ye", "oe")) and len(word) > 2:
        return word[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", word):  # get → getting
        return word + word[-1] + "ing"
    return word + "ing"


# -ing forms the rules in _base_en get wrong (a silent e they cannot see, a doubled
# letter that belongs to the verb, a k added to a c).
_IRREGULAR_ING = {
    "lying": "lie", "dying": "die", "tying": "tie", "being": "be", "using": "use",
    "closing": "close", "choosing": "choose", "losing": "lose", "creating": "create",
    "preparing": "prepare", "deciding": "decide", "changing": "change", "arranging": "arrange",
    "panicking": "panic", "picnicking": "picnic", "adding": "add", "focusing": "focus",
    "visiting": "visit", "hosting": "host", "attending": "attend", "leaving": "leave",
}  # fmt: skip


def _base_en(gerund: str) -> str:
    """A verb's base form from its -ing form, the inverse of :func:`_gerund_en`:
    "flying" → "fly", "running" → "run", "taking" → "take", "heading" → "head"."""
    word = gerund.lower()
    if word in _IRREGULAR_ING or not word.endswith("ing") or len(word) < 5:
        return _IRREGULAR_ING.get(word, word)
    stem = word[:-3]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] in "bdgmnprt":
        return stem[:-1]  # running → run, grabbing → grab, shopping → shop
    # A silent e was dropped: one syllable ending consonant-vowel-consonant (taking,
    # making, driving), or a stem ending in v or a soft c (leaving, dancing).
    one_syllable = len(re.findall(r"[aeiouy]+", stem)) == 1
    if (one_syllable and re.search(r"[^aeiou][aeiou][^aeiouwxy]$", stem)) or re.search(
        r"(?:v|[^aeiou]c)$", stem
    ):
        return stem + "e"
    return stem


_I = r"(?:i\s*'?\s*m|i\s+am|we\s*'?\s*re|we\s+are)"
_PLAN = (
    rf"(?:{_I}\s+(?:(?:going|planning)\s+to|gonna|planning\s+on)|gonna|gotta"
    r"|i\s*'?\s*ll|i\s+will|we\s*'?\s*ll|we\s+will|i\s+plan\s+to)"
)
# An obligation ("I need to…", "I have to…", "I must…", "I should…") is a plan once it has
# a day: "I need to book the dentist tomorrow" is as much a plan as "I'll call the bank
# tomorrow at 9", "I need to sleep" is not one.
_MUST = (
    r"(?:i|we)\s+(?:(?:really|still|also)\s+)?(?:(?:need|have|got)\s+to|must|gotta"
    r"|should(?!\s+(?:probably|maybe|perhaps|prob)\b))|(?:i|we)\s*'?\s*ve\s+got\s+to"
)
# A deadline gives the day as well: "by Friday", "before Friday", "no later than Friday",
# "by the end of the week", "by EOD", "before 5pm".
_DUE = r"(?:by|before|(?:no|not)\s+later\s+than)\s+"
_LATER_DAY = (
    r"\b(?:tomorrow|next\s+(?:week|month|year)|this\s+weekend"
    rf"|(?:on\s+|this\s+|next\s+|{_DUE})(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|in\s+\d+\s+(?:days?|weeks?|months?|years?)"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+at\s+the\s+latest"
    r"|end\s+of\s+(?:the\s+|this\s+|next\s+)?(?:(?:business|work|working)\s+)?(?:day|week)"
    rf"|eod|{_DUE}(?:\d{{1,2}}(?::\d\d)?\s*[ap]\.?m\b\.?|noon|midnight|tonight))\b"
)
_JUST = r"(?:just\s+|now\s+|finally\s+)?"
_SUBJ = rf"(?:{_I}\s+)?{_JUST}"
_END = r"(?=\s*(?:[,.!;:—–)]|$))"
_ACT = r"(?P<act>[^,.!;?]+?)"
_OMW = r"(?:on\s+my\s+way|omw)"
_BRB = (
    r"(?:brb|be\s+right\s+back|(?:i\s*'?\s*ll\s+be\s+)?back\s+in\s+(?:a\s+(?:sec|second|bit"
    r"|minute|min|few)|\d{1,3}\s*(?:m|mins?|minutes?|secs?)?))\b"
)
_SLEEP = (
    rf"{_SUBJ}(?:(?:going|gonna|off|heading|headed)\s+(?:to\s+)?|about\s+to\s+|time\s+(?:for"
    r"|to)\s+)(?:go\s+to\s+)?(?:sleep|bed)\b(?!\s+on\s+it)"
    rf"|{_SUBJ}(?:hitting|gonna\s+hit)\s+the\s+(?:hay|sack)\b"
)
# The present progressive as the near future ("I'm flying to Tokyo on Friday"): a
# going-away verb with where to ("flying to", "hopping in the shower") is under way or
# planned by itself; a verb of stepping away ("grabbing lunch", "taking the dog out",
# "I'm making dinner") when it names a known activity or a later time; a verb of what
# people arrange ("I'm meeting Sam at 5", "we're seeing the dentist tomorrow") only with
# a later time or day. Closed lists rather than any -ing verb: "I'm working on the API",
# "I'm thinking about it", "I'm running late" are about now, not an action to ask about
# later, and an open verb would leave the prefilter nothing but "ing" to look for.
_AWAY = (
    r"(?:(?:flying|driving|walking|cycling|biking|riding|running|dashing|rushing|nipping"
    r"|popping|stepping|travell?ing|sailing|taking\s+(?:a|the)\s+(?:train|bus|plane|ferry"
    r"|tube|subway|car|bike))\s+(?:out\s+|over\s+|back\s+|down\s+|up\s+|off\s+)?(?:to|into)"
    r"|(?:nipping|popping|stepping)\s+out(?!\s+of)|(?:hopping|jumping)\s+(?:in|into|on|onto))\b"
)
_STEP_AWAY = (
    r"(?:grabbing|getting|taking|making|cooking|having|eating|feeding|walking|hitting"
    r"|catching|doing|picking\s+up)\b"
    # "taking the dog out is boring" talks about it; "…, then taking the dog out" does it.
    r"(?![^,.!;?]*\b(?:is|was|are|were|isn'?t|wasn'?t|sucks|makes|feels|seems|gets|can|will"
    r"|would|should)\b)"
)
_ARRANGED = (
    r"(?:meeting|seeing|visiting|having|flying|driving|leaving|going|coming|taking|catching"
    r"|getting|playing|watching|cooking|doing|starting|moving|calling|hosting|attending"
    r"|travell?ing|heading|working|picking\s+up|dropping\s+off)\b(?!\s+to\b)"
)
# What is on the user's calendar, said as had ("I have a doctor appointment at 3", "got
# the dentist at 4") or as it stands ("my flight is at 6am"): a plan when it names a known
# activity and a later time, not when it is over ("had", "… yesterday").
_HAVE = (
    r"(?:(?:i|we)\s+(?:(?:also|still)\s+)?have(?:\s+got)?|(?:i|we)\s*'?\s*ve\s+got|got|have)\s+"
    r"(?:a|an|the|my|our)\s+"
)
_NOT_PAST = r"(?![^,.!;?]*\b(?:yesterday|ago|last\s+(?:night|week|month|time))\b)"
_MINE_IS = (
    r"(?:my|our)\s+(?P<act>[^,.!;?]+?)\s*(?:'s|\s+is)\s+(?=at\s+\d|tomorrow|tonight|later"
    r"|this\s+(?:morning|afternoon|evening)|on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|in\s+(?:an?|\d+)\s)"
)
# Out doing it ("on the school run", "I'm on a call"): a closed list, as "on the fence",
# "on the bank holiday" or "on the weekend" are no activities.
_ON = (
    rf"{_SUBJ}on\s+(?:a|the|my|our)\s+(?P<act>school\s+run|(?:phone\s+|video\s+|zoom\s+)?call"
    r"|train|bus|plane|flight|ferry|tube|subway|walk|ride|drive|commute)(?=\s*(?:[,.!;:—–)]|$))"
)
_ERRAND = (
    r"(?:grab|get|see|pick\s+up|make|do|buy|meet|visit|catch|walk|feed|take|have|eat|cook"
    r"|fetch|collect|watch|play)\b"
)
_PLACES = (
    r"(?:the|a|an|my|some|work|school|class|church|practice|town|lunch|dinner|breakfast"
    r"|brunch|drinks)\b"
)
_FAMILY = (
    r"mom|mum|dad|mother|father|parents|sister|brother|wife|husband|partner|girlfriend"
    r"|boyfriend|gf|bf|grandma|grandpa|family|kids|son|daughter|friends?|boss|aunt|uncle"
    r"|cousin|roommate|doctor|dentist|team"
)
_NUMBERS = "one two three four five six seven eight nine ten eleven twelve"
_N = rf"(?P<n>\d+(?:[.,]\d+)?|an?|{_NUMBERS.replace(' ', '|')}|half\s+an?)"
_DUR = (
    r"(?:about\s+|around\s+|like\s+|almost\s+|nearly\s+|over\s+|roughly\s+|just\s+|only\s+"
    rf"|barely\s+)?{_N}\s*(?P<unit>hours?|hrs?|h|minutes?|mins?|m)(?![a-z])"
    r"(?P<half>\s+and\s+a\s+half)?(?:\s*(?:and\s+)?(?P<extra>\d+)\s*(?:minutes?|mins?|m)\b)?"
)
_TOOK = (
    r"(?<![\w'])(?P<act>(?:[\w:'-]+\s+){0,3}?[\w:'-]+)\s+(?:took|lasted|ran|went\s+on)"
    rf"\s+(?:me\s+|us\s+)?(?:for\s+)?{_DUR}"
)
_DIDNT_GO = (
    r"(?:i\s+|we\s+)?(?:didn'?t|did\s+not|never)\s+(?:end\s+up\s+)?(?:go(?:ing)?|went"
    rf"|make\s+it)(?:\s+(?:to|for)\s+{_ACT})?(?:\s+after\s+all)?{_END}"
)
_SKIPPED = (
    rf"{_SUBJ}(?:skipped|skipping|gonna\s+skip|going\s+to\s+skip|bailed\s+on|ditched)\s+"
    rf"{_ACT}{_END}"
)
# What a completion names, when it names something ("the bank call", "called the bank"):
# never a bare pronoun, which says nothing about which action it was ("well done" is praise).
_NAMED = r"(?!(?:it|that|this|everything|all|well)\b)(?P<act>[^,.!;?]+?)"
_FINISHED = r"(?:done|finished|sorted|complete|completed|taken\s+care\s+of)"
_PAST = (
    r"(?:[a-z]+ed|sent|wrote|paid|did|took|bought|made|got|ran|met|gave|spoke|told|ate"
    r"|read|rang|fed|brought|built|drew|drove|fought|found|hung|kept|left|lent|sold|swept"
    r"|taught|threw|won)"
)
_CANT = (
    rf"(?:i\s+|we\s+)?{_JUST}(?:still\s+)?(?:can'?t|cannot|can\s+not|couldn'?t|could\s+not)\s+"
    # "can't wait to go to the gym" is the opposite; "can't stop thinking about …" no news.
    r"(?!(?:wait|believe|stop|help|remember|tell|decide|say|think|figure|imagine|even|stand"
    r"|afford|miss|be)\b)"
    rf"(?:get\s+(?:to\s+)?|fall\s+a(?=sleep\b))?{_ACT}{_END}"
)
_NOT_ANYMORE = rf"{_SUBJ}not\s+going\s+(?:to\s+{_ACT}\s+)?(?:anymore|any\s+more|after\s+all){_END}"
# "I can't call the bank until Monday", "won't be able to send it before Friday": the
# action is put off, not called off. What follows "until" is when it can happen at the
# earliest (a day, or words: "till the freeze ends").
_POSTPONED = (
    rf"(?:i\s+|we\s+)?{_JUST}(?:still\s+)?(?:can'?t|cannot|can\s+not|couldn'?t|could\s+not"
    r"|won'?t\s+be\s+able\s+to|will\s+not\s+be\s+able\s+to|(?:am|'m|are|'re)\s+not\s+able\s+to"
    r"|not\s+able\s+to)\s+(?!(?:wait|believe|stop|help|remember|tell|decide|say|think|figure"
    r"|imagine|even|stand|afford|be|sleep|relax|rest)\b)(?:get\s+(?:to\s+)?)?"
    r"(?P<act>[^,.!;?]+?)\s+(?:until|till|til|before)\s+(?P<until>[^,.!;?]+?)"
    r"(?:\s+at\s+the\s+earliest)?(?=\s*(?:[,.!;:—–)]|$))"
)
# Putting a plan off by moving it, said of the plan ("we postponed the report until
# Wednesday", "let's push the report to next week", "moving the dentist to Friday", "the
# standup is delayed by an hour"). "to" moves things elsewhere too ("moving the couch to
# the bedroom"), so after "to" only a time will do; "until" takes any words ("till the
# freeze ends"). No new time, no postponement: "we might postpone the report".
_MOVE = (
    r"(?:postpon(?:e|ed|es|ing)|put(?:s|ting)?\s+off|push(?:ed|es|ing)?(?:\s+back)?"
    r"|mov(?:e|ed|es|ing)|reschedul(?:e|ed|es|ing)|bump(?:ed|s|ing)?(?:\s+back)?"
    r"|shift(?:ed|s|ing)?|delay(?:ed|s|ing)?)"
)
_DAY_NAME = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_NEW_TIME = (
    rf"(?=(?:(?:next|this|on|the)\s+)?{_DAY_NAME}|tomorrow|tonight|later"
    r"|next\s+(?:week|month|year|weekend)"
    r"|the\s+(?:weekend|morning|afternoon|evening|end\s+of)|the\s+\d|\d{1,2}(?::\d\d)?\s*[ap]\.?m\b"
    r"|\d{1,2}:\d\d|noon|midday|midnight"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d)"
)
_NEW_WHEN = (
    r"(?:(?:until|till|til)\s+(?P<until>[^,.!;?]+?)(?:\s+at\s+the\s+earliest)?"
    rf"|to\s+{_NEW_TIME}(?P<to>[^,.!;?]+?)|by\s+{_DUR})(?=\s*(?:[,.!;:—–)]|$))"
)
_PUT_OFF = (
    r"(?:(?:i|we)\s*'?\s*(?:ve|have)\s+|(?:i|we)\s+|let\s*'?\s*s\s+|let\s+us\s+"
    rf"|{_I}\s+(?:going\s+to\s+|gonna\s+)?|(?:i|we)\s*'?\s*ll\s+|(?:i|we)\s+will\s+|gonna\s+)?"
    rf"{_JUST}(?:(?:have|had|need)\s+to\s+|gotta\s+)?{_MOVE}\s+(?P<act>[^,.!;?]+?)\s+{_NEW_WHEN}"
)
_BEEN_PUT_OFF = (
    r"(?P<act>[^,.!;?]+?)\s*(?:'s|\s+is|\s+was|\s+are|\s+were|\s+got|\s+gets)"
    rf"(?:\s+(?:been|being|now|just|already))*\s+{_MOVE}\s+{_NEW_WHEN}"
)
# "never mind the bank call", "no need to call the bank anymore": called off by its words.
_NEVER_MIND = rf"never\s*mind\s+(?:about\s+)?{_NAMED}(?:\s+(?:anymore|any\s+more))?{_END}"
_NO_NEED = (
    r"(?:there\s*'?\s*s\s+|there\s+is\s+)?(?:no\s+need|(?:i|we)\s+(?:don'?t|do\s+not"
    r"|no\s+longer)\s+need)\s+(?:to\s+|for\s+)?"
    rf"{_NAMED}(?:\s+(?:anymore|any\s+more|after\s+all))?{_END}"
)

ENGLISH = LanguagePatterns(
    reject=_re(
        r"^\s*(?:if|unless|whether|maybe|perhaps|probably|might|should|would|could|do|does"
        r"|did|are|is|was|were|can(?!'t)|will|shall|wanna|idk|not\s+sure)\b"
        r"|\b(?:said|says|told|asks?|asked|texted|wrote|claims?)\b"
        r"|\bi\s+(?:wish|hope|wonder|might|may|could|would|doubt)\b"
        # "I should" is a hedge unless it names the day it is for (an obligation, _MUST).
        rf"|\bi\s+should\b(?!.*{_LATER_DAY})"
    ),
    filler=_re(
        r"^(?:(?:ok(?:ay)?|alright|all\s+right|right|so|well|anyways?|welp|k+|cool|yeah|yep"
        r"|yup|lol|hey|guys|ugh|hmm+|and|also|now|i\s+think|i\s+guess|actually|sorry"
        r"|@[\w.-]+)\b"
        r"[\s,!.]*)+"
    ),
    # Not "well": "well done" is praise, not a completion.
    status_filler=_re(
        r"^(?:(?:ok(?:ay)?|alright|so|and|yeah|yep|yup|phew|anyways?|actually|nah|sorry|ugh"
        r"|hmm+|@[\w.-]+)\b[\s,!.]*)+"
    ),
    intents=(
        _intent(_BRB, "Be right back", activity="brb"),
        _intent(_SLEEP, "Sleep", activity="sleep"),
        _intent(
            rf"{_SUBJ}(?:heading|headed|going|off|{_OMW})\s+(?:back\s+)?home\b",
            "Head home",
            activity="commute",
        ),
        _intent(
            rf"(?:after|once)\s+(?P<cond>[^,]+?),?\s+{_PLAN}\s+(?P<act>.+)", "{act}", "planned"
        ),
        _intent(
            rf"{_SUBJ}(?:leaving|about\s+to\s+leave)\s+(?:now\s+)?for\s+(?P<act>.+)",
            "Leave for {act}",
        ),
        _intent(rf"{_SUBJ}about\s+to\s+(?P<act>.+)", "{act}"),
        # "off to grab lunch" grabs lunch: the verb after "to" is the action.
        _intent(rf"{_SUBJ}(?:heading|headed|off)\s+(?:out\s+)?to\s+(?P<act>{_ERRAND}.+)", "{act}"),
        _intent(
            rf"{_SUBJ}(?:heading|headed|off)\s+(?:out\s+|over\s+)?(?P<prep>to|for|into)\s+"
            r"(?P<act>.+)",
            "Go {prep} {act}",
        ),
        _intent(rf"{_SUBJ}(?P<act>{_AWAY}.*)", "{act}", base=True),
        _intent(rf"{_SUBJ}{_OMW}\s+(?:over\s+)?to\s+(?P<act>.+)", "Go to {act}"),
        _intent(rf"{_SUBJ}(?:heading|headed)\s+out\b(?!\s+(?:to|for)\b)", "Head out"),
        _intent(rf"{_SUBJ}{_OMW}\b(?!\s+(?:over\s+)?to\b)", "On the way", activity="commute"),
        _intent(rf"{_SUBJ}going\s+(?P<prep>to|for)\s+(?P<act>{_PLACES}.*)", "Go {prep} {act}"),
        _intent(r"(?:it\s*'?\s*s\s+)?time\s+for\s+(?P<act>.+)", "Time for {act}", needs="activity"),
        _intent(r"(?:it\s*'?\s*s\s+)?time\s+to\s+(?P<act>.+)", "{act}", needs="activity"),
        _intent(rf"{_PLAN}\s+(?P<act>.+)", "{act}", "planned", "activity_or_later"),
        _intent(rf"(?:{_MUST})\s+(?P<act>.+)", "{act}", "planned", "day"),
        # With what is stepped away for: a clocked "cooking" keeps its word.
        _intent(
            rf"{_SUBJ}(?P<act>{_STEP_AWAY}\s.+)", "{act}", needs="activity_or_later", base=True
        ),
        _intent(rf"{_I}\s+{_JUST}(?P<act>{_ARRANGED}.*)", "{act}", needs="later", base=True),
        _intent(rf"{_HAVE}{_NOT_PAST}(?P<act>.+)", "{act}", "planned", "activity_and_later"),
        _intent(_MINE_IS, "{act}", "planned", "activity_and_later"),
        _intent(_ON, "{act}", needs="activity"),
    ),
    act_break=_re(
        r"\s*(?:[,;:!?()—–]|\s-\s|\.(?:\s|$)|\b(?:and\s+then|then|but|because|cause|cuz|coz"
        r"|since|so\s+that|when|while|until|till|lol|haha\w*|lmao|see\s+(?:ya|you)|wish\s+me"
        r"\s+luck|if|unless)\b).*$"
    ),
    after_clause=_re(r"\s+(?:after|once)\s+(?P<cond>.+)$"),
    blocked_act=_re(
        r"(?:not|never|skip\w*|miss\w*|cancel\w*|avoid\w*|stop\w*|quit\w*|pass\s+on|bail\w*"
        r"|be|lose|die|cry|scream|explode|snap|freak\w*|faint|throw\s+up|pass\s+out|give\s+up"
        r"|go\s+(?:crazy|insane|nuts)|say|tell|ask|think|need|have\s+to)\b"
        r"|.*\b(?:you|it|that|this|them)\b"
    ),
    now_marker=_re(r"\b(?:right\s+now|now|rn|asap|real\s+quick|right\s+away)\b"),
    later_marker=_re(
        r"\b(?:later|tonight|soon|in\s+a\s+(?:bit|while|few|minute|min|sec|second|couple)"
        r"|in\s+\d+|this\s+(?:morning|afternoon|evening)|after"
        r"|at\s+\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\.?)?)\b"
    ),
    far_marker=_re(r"\b(?:next\s+time|some\s*day|eventually|one\s+day|at\s+some\s+point)\b"),
    later_day=_re(_LATER_DAY),
    trailing_time=_re(
        r"\s+(?:right\s+now|now|rn|asap|soon|later(?:\s+(?:today|on|tonight))?|tonight|today"
        r"|real\s+quick|right\s+away|quickly|first|in\s+a\s+(?:bit|while|sec|second|minute"
        r"|min|few(?:\s+\w+)?|couple(?:\s+of)?\s+\w+)|in\s+\d+\s*\w*|for\s+a\s+(?:bit|while"
        r"|few|sec)|this\s+(?:morning|afternoon|evening)"
        r"|(?:at|around)\s+\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\.?)?)\s*$"
    ),
    clocked_tail=_re(r"\s+(?:(?:right\s+)?now|due)\s*$"),
    pronouns=(
        (_re(rf"\b(?:my|our)\s+(?=(?:{_FAMILY})\b)"), ""),
        (_re(r"\b(?:my|our)\b"), "the"),
        (_re(r"\b(?:myself|ourselves|me)\b"), ""),
    ),
    cond_subject=_re(r"(?:i|we)\s+(?:'?ll\s+|will\s+|just\s+)?(?=\w)"),
    gerund=_gerund_en,
    base_form=_base_en,
    after_word="after",
    subject=_re(r"^\s*(?:i\s*'?\s*ve\s+|i\s+have\s+|i\s+(?:just\s+)?|we\s+(?:just\s+)?|just\s+)"),
    statement=_re(
        r"\b(?:\w{2,}ed|went|ate|paid|did|had|made|got|took|sent|slept|ran|bought|sold|met"
        r"|left|found|wrote|saw|told|gave|spent|won|lost|done|is|are|was|were)\b"
    ),
    done=(
        StatusRule(_re(rf"{_SUBJ}(?:all\s+)?(?:done|finished)(?:\s+with\s+{_ACT})?{_END}"), "done"),
        StatusRule(_re(rf"(?:i\s+)?{_JUST}(?:finished|completed)\s+{_ACT}{_END}"), "done"),
        StatusRule(_re(rf"{_SUBJ}(?:back|home)(?:\s+(?:now|again|home))?{_END}"), "done"),
        StatusRule(_re(rf"{_SUBJ}(?:got\s+)?back\s+from\s+{_ACT}{_END}"), "done"),
        StatusRule(_re(rf"(?:i\s+)?{_JUST}got\s+(?:back|home)(?:\s+now)?{_END}"), "done"),
        StatusRule(
            _re(rf"(?:i\s+|we\s+)?{_JUST}made\s+it(?:\s+(?:home|back|to\s+{_ACT}))?{_END}"), "done"
        ),
        StatusRule(_re(r"(?:i\s+)?(?:just\s+|finally\s+)?(?:woke|woken)\s+up\b"), "done", "sleep"),
        StatusRule(
            _re(rf"(?:i\s+|we\s+)?{_JUST}(?:went|did)\s+(?:to\s+|for\s+)?{_ACT}{_END}"), "done"
        ),
        StatusRule(
            _re(
                rf"{_NAMED}(?:\s*'s|\s+is|\s+was|\s+are)?\s+(?:all\s+|finally\s+)?"
                rf"{_FINISHED}{_END}"
            ),
            "done",
            named=True,
        ),
        StatusRule(
            _re(
                r"(?:i\s*'?\s*ve\s+|i\s+have\s+|we\s*'?\s*ve\s+|i\s+|we\s+)?"
                rf"{_JUST}(?:already\s+)?(?P<act>{_PAST}\s+[^,.!;?]+?){_END}"
            ),
            "done",
            named=True,
        ),
    ),
    # A completion that names the action is only believed when nothing in its sentence
    # says it is not over ("called the bank but no answer", "not done with it yet").
    unfinished=_re(
        r"\b(?:but|though|although|not|never|no|yet|still|tried|trying|try|almost|nearly"
        r"|half|partly|later|tomorrow|again|until|till)\b|n't\b"
    ),
    stopwords=frozenset(
        "the a an my our your his her their this that these those to for with of at on in"
        " about up out off and or it its me i we you all some just now finally already"
        " today tonight ok okay so".split()
    ),
    base_forms={
        "sent": "send",
        "wrote": "write",
        "written": "write",
        "paid": "pay",
        "did": "do",
        "took": "take",
        "taken": "take",
        "bought": "buy",
        "made": "make",
        "got": "get",
        "ran": "run",
        "met": "meet",
        "gave": "give",
        "given": "give",
        "spoke": "speak",
        "told": "tell",
        "ate": "eat",
        "eaten": "eat",
        "rang": "ring",
        "fed": "feed",
        "went": "go",
        "brought": "bring",
        "built": "build",
        "drew": "draw",
        "drove": "drive",
        "fought": "fight",
        "found": "find",
        "hung": "hang",
        "kept": "keep",
        "left": "leave",
        "lent": "lend",
        "sold": "sell",
        "swept": "sweep",
        "taught": "teach",
        "threw": "throw",
        "won": "win",
    },  # fmt: skip
    canceled=(
        StatusRule(_re(_DIDNT_GO), "canceled"),
        StatusRule(_re(r"(?:cancel|scratch)\s+(?:that|it)\b"), "canceled"),
        StatusRule(_re(_NOT_ANYMORE), "canceled"),
        StatusRule(
            _re(rf"{_SUBJ}not\s+going\s+(?:to\s+)?{_ACT}(?:\s+(?:today|tonight))?{_END}"),
            "canceled",
        ),
        StatusRule(
            _re(r"(?:i\s+)?(?:(?:have\s+)?changed\s+my\s+mind|change\s+of\s+plans?)\b"), "canceled"
        ),
        StatusRule(_re(_SKIPPED), "canceled"),
        # Not happening, as far as the message goes: "can't sleep, ugh" at 3am answers "did
        # you end up getting some sleep?" before it is asked.
        StatusRule(_re(_CANT), "canceled"),
        StatusRule(_re(_NEVER_MIND), "canceled", named=True),
        StatusRule(_re(_NO_NEED), "canceled", named=True),
    ),
    postponed=(
        StatusRule(_re(_POSTPONED), "postponed"),
        StatusRule(_re(_PUT_OFF), "postponed", object=True),
        StatusRule(_re(_BEEN_PUT_OFF), "postponed", object=True),
    ),
    durations=(
        DurationRule(_re(_TOOK)),
        DurationRule(_re(rf"\bslept\s+(?:for\s+)?{_DUR}"), "sleep"),
        DurationRule(_re(rf"\bnapped\s+(?:for\s+)?{_DUR}"), "nap"),
        DurationRule(_re(rf"\bspent\s+{_DUR}\s+(?:at|on|in|doing)\s+(?P<act>[^,.!;?]+)")),
    ),
    stated_duration=_re(rf"\s+for\s+{_DUR}"),
    number_words={
        **{word: float(n) for n, word in enumerate(_NUMBERS.split(), 1)},
        **{"a": 1.0, "an": 1.0, "half a": 0.5, "half an": 0.5},
    },
    hour_unit=_re(r"h"),
    scheduling_strong=_re(
        r"\b(?:(?:re)?schedul(?:e|ed|es|ing)|appointments?|remind\s+me|set\s+(?:a|up\s+a)\s+"
        r"(?:reminder|meeting|call)|calendar|book\s+(?:a|an|the)\s+(?:table|meeting|call|slot"
        r"|room|appointment|flight|session|time)|(?:move|push|postpone|bump)\s+(?:the|our|my"
        r"|this)\s+(?:meeting|call|appointment|standup)|let'?s\s+meet|(?:can|could|shall)\s+we\s+meet"
        r"|(?:set\s+up|find)\s+a\s+time)\b"
    ),
    scheduling_medium=_re(
        r"\b(?:(?:meeting|call|standup)\s+(?:at|on)|deadlines?|due\s+(?:by|on|date)"
        r"|what\s+time|when\s+(?:should|can|could|shall|do|would|will)\s+we|availab(?:le"
        r"|ility)|are\s+you\s+free|free\s+(?:at|on|this|next|tomorrow)|time\s+slots?"
        r"|reminder)\b"
    ),
)
