"""Phrases of ordinary chat that look like times but name none to resolve.

dateparser finds a weekday, a short duration or a number pair in a message; most of the
time that is a time, but not in these uses, which ``finding.find_time_expressions`` drops:

* a weekday said as what day it is, or as a greeting ("it's friday!", "thank god it's
  monday", "is it friday yet?", "happy friday", "what a monday"): it names the current
  day (the block says which day it is already), not a plan; with a clock time beside it
  ("it's friday at 3pm", about an event) or a preposition ("it's on friday") it is one;
* a weekday inside a name ("deals for Black Friday", "before Good Friday", "Super Bowl
  Sunday"): a capitalised word right before a capitalised weekday, mid-sentence; or,
  anywhere and in any case, one of the words that make a holiday, a sale or a hashtag day
  of a weekday ("Good Friday is a holiday", "black friday deals", "Cyber Monday", "Taco
  Tuesday", "Throwback Thursday", "man Friday"); "Good, Friday then" is still a day;
* a weekday in an idiom, told by the word after it ("Monday blues", "that friday
  feeling", "sunday best", "Sunday school", "Saturday Night Live"): "Friday works" and
  "Monday I'm off" are still days;
* a clock time said as the hour it is ("its 2am why am i awake", "it's 5pm, tea time"):
  the block says the time already; "it's 3pm in Tokyo" or "it's at 3pm" is one to read;
* a day of the month that ranks something ("the 3rd option", "the 2nd time"): "the 3rd"
  is a date only when nothing follows it but a clause's end or a small word ("on the 3rd
  I'm off", "the 21st works");
* "last night" as the final night of something ("the last night of the tour", "our last
  night in Rome", "last night of the festival was wild"): after a word that makes
  "last" "final" (the, our, my, ...) or before "of"; or as a title ("Last Night in Soho");
  "last night was rough" is a time;
* a texting "tomorrow" used as a name ("I got the tmrw app", "the Tmrw newsletter"):
  right after "the", "a", "my" and such, where a day word does not stand ("cant tmrw
  sorry" is a day);
* a weekly schedule ("Mon-Fri 9am-5pm", "9-5 Mon, Wed & Fri"): weekdays joined by a
  range or a list, and a range of hours, in either order; a phrase overlapping it on its
  line names no time;
* a weekly window ("I'm free Mon-Fri after 5pm", "weekdays before 9am"): a range of
  weekdays (the schedule's) or a plural that recurs ("weekdays", "weeknights",
  "weekends"), with the hours said right beside it; a phrase lying within it names no
  time, a time outside it in the same message still does;
* "in a minute", "in a sec", "in a second", "in a moment": "shortly", not a minute from now
  ("in 1 minute", "in an hour" stay times);
* a duration or a number pair that measures something ("in 5 minutes of reading", "3/4 of
  the team");
* two numbers with a slash and no year ("24/7", "rate it 7/10", "1/2 cup") that nothing
  marks as a date: a date written so is read only after a word that introduces one ("on
  3/4", "due 4/15", "goes out 21/11", "from 3/4 to 3/9"), beside a clock time or a
  weekday ("3/4 at 2pm", "Fri 3/4"), or as the whole message ("4/15?").

Each rule looks only at the phrase and the words right around it, in its own sentence.
"""

from __future__ import annotations

import re

__all__ = ["names_no_time"]

# With the texting abbreviations the parser reads ("it's fri!", "happy fri").
_WEEKDAY = r"(?:(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)day|thurs?|fri|weds|tues)"
_LONE_WEEKDAY = re.compile(rf"(?:the\s+|(?P<some>an?\s+))?{_WEEKDAY}", re.IGNORECASE)
# What makes the weekday right after it the day it is, or a greeting: "it's", "it is",
# "its", "'tis", "today is", "today's", "is it", "happy", "TGI", "a", "another", "what a",
# with an adverb between or not ("it's only tuesday", "it's finally friday").
_SAYS_THE_DAY = re.compile(
    r"(?:\bit\s*['’]?\s*s|\bit\s+is|['’]tis|\btoday\s*['’]?\s*s|\btoday\s+is|\bis\s+it"
    r"|\bhappy|\btgi|\ban?|\banother|\bsuch\s+an?|\bwhat\s+an?)"
    r"(?:\s+(?:only|finally|already|just|still|almost|nearly|officially|really|so))?\s+$",
    re.IGNORECASE,
)
# A capitalised word after another word (so not the first of a sentence) right before a
# capitalised weekday: the two are a name ("Black Friday", "Ash Wednesday").
_NAME_BEFORE = re.compile(r"\w[,:]?[^\S\n]+(?!I\s)[A-Z][a-z'’]*[^\S\n]+$")
_CAPITALISED = re.compile(r"[A-Z]")
# Words that make a name of the weekday right after them, at a sentence's start too, where
# a capital says nothing ("Good Friday is a holiday", "Cyber Monday sales").
_NAMING_WORD = re.compile(
    r"\b(?:black|cyber|giving|super|fat|shrove|ash|maundy|holy|easter|palm|whit|bloody|taco"
    r"|throwback|flashback|meatless|manic|casual|freaky|wine|wellness|motivation"
    r"|transformation|selfie|super\s+bowl|small\s+business)[^\S\n]+$"
    # "good" only first or after a word that leads to a day: "sounds good friday works"
    # (texting, no comma) is a plan.
    r"|(?:^|\b(?:on|before|after|for|till|until|since|this|next|last|happy|a|the)[^\S\n]+)"
    r"[^\S\n]*good[^\S\n]+$",
    re.IGNORECASE,
)
# "man Friday", "girl Friday": the capital is what tells it from "man friday was rough".
_SERVANT = re.compile(r"\b(?:man|girl)[^\S\n]+$", re.IGNORECASE)
# The weekday (and "night") of an idiom or a title, told by the word after it.
_IDIOM_WEEKDAY = re.compile(rf"(?:the\s+)?{_WEEKDAY}(?:\s+night)?", re.IGNORECASE)
_IDIOM_AFTER = re.compile(
    r"[^\S\n]+(?:blues|feeling|vibes?|mood|motivation|best|school|driver|scaries"
    r"|night\s+(?:live|football|fever)|live|football|fever)\b",
    re.IGNORECASE,
)
# "it's", "its", "it is", with an adverb or not, right before a clock time.
_SAYS_THE_HOUR = re.compile(
    r"\bit\s*['’]?\s*s(?:\s+(?:already|only|almost|nearly|like|just|now|past))?\s+$"
    r"|\bit\s+is(?:\s+(?:already|only|almost|nearly|now|past))?\s+$",
    re.IGNORECASE,
)
_CLOCK_PHRASE = re.compile(r"\d{1,2}(?::\d\d)?\s*[ap]\.?m\.?|\d{1,2}:\d\d", re.IGNORECASE)
# What after a clock time says it is somewhere else or some other day, so a time to read.
_ELSEWHERE_AFTER = re.compile(
    r"[^\S\n]+(?:in|there|at|on|for|where|tomorrow|today|tonight|your|their|his|her"
    r"|(?:back|over|out)\s+(?:in|there|home))\b"
    r"|[^\S\n]+(?-i:[A-Z]{2,5})\b",  # a zone abbreviation: "it's 3pm PST"
    re.IGNORECASE,
)
_DAY_OF_MONTH = re.compile(
    r"(?:(?:on|by|until|till|before|after|from|due)\s+)?the\s+\d{1,2}(?:st|nd|rd|th)",
    re.IGNORECASE,
)
# What may follow a day of the month: a clause's end, or a word that is not a noun.
_DATE_FOLLOWS = re.compile(
    r"\s*(?:$|[.,!?;:)\n]|(?:at|i|i['’]m|we|we['’]re|you|then|works?|ok|okay|is|and|or|please"
    r"|pls|if|so|for|instead|of|from|to|through|till|until|next|this|morning|afternoon"
    r"|evening|night)\b)",
    re.IGNORECASE,
)
_IDIOM_DURATION = re.compile(
    r"(?:in\s+)?(?:a|one|just\s+a)\s+(?:sec|second|min|minute|moment|jiffy|tick)s?",
    re.IGNORECASE,
)
_MEASURE = re.compile(
    r"(?:in\s+)?(?:\d+(?:\.\d+)?|an?|one|two|three|four|five|ten)\s*"
    r"(?:sec|second|min|minute|hour|hr|day|week|fortnight|month|year)s?"
    r"|\d{1,2}[/.]\d{1,2}",
    re.IGNORECASE,
)
# "of" right after a phrase: "3/4 of the team", "the last night of the tour".
_OF_AFTER = re.compile(r"\s+of\b", re.IGNORECASE)
_OF_AT_END = re.compile(r"\s+of$", re.IGNORECASE)
_NUMBER_PAIR = re.compile(r"(?:(?:on|by|at|until|till)\s+|the\s+)?(\d{1,2})[/.](\d{1,2})")
# Words after which a number pair is a date ("on 3/4", "due 4/15", "from 3/4 to 3/9").
_DATE_LEAD = re.compile(
    r"\b(?:on|for|by|due|until|till|til|from|before|after|since|starting|through|thru|to"
    r"|between|and|or|next|this|the|out|ends|starts|begins|expires|closes|opens|deadline"
    r"|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*)\.?,?\s+$",
    re.IGNORECASE,
)
_LAST_NIGHT = re.compile(r"\blast\s+night\b", re.IGNORECASE)
# Words that make the "last" right after them "final": "the last night", "our last night".
_DETERMINER_BEFORE = re.compile(
    r"\b(?:the|a|an|my|your|our|their|his|her|its|this|that)\s+$", re.IGNORECASE
)
# A weekly schedule (see the module docstring): weekdays joined by a range or a list, and
# a range of hours, in either order.
_SCHEDULE_DAY = (
    r"(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?"
    r"|sat(?:urday)?|sun(?:day)?)\.?"
)
# A range of weekdays: "Mon-Fri", "Monday to Friday", "M-F".
_WEEKDAY_RANGE = (
    rf"{_SCHEDULE_DAY}\s*(?:[-–—]|to|through|thru|till|until)\s*{_SCHEDULE_DAY}|m\s*-\s*f"
)
_SCHEDULE_DAYS = rf"(?:{_WEEKDAY_RANGE}|{_SCHEDULE_DAY}(?:\s*(?:[,/&]|and)\s*{_SCHEDULE_DAY})+)"
_SCHEDULE_HOUR = r"(?:\d{1,2}(?:[:.]\d\d)?(?:\s*[ap]\.?m\.?)?|noon|midday|midnight)"
_SCHEDULE_HOURS = rf"{_SCHEDULE_HOUR}\s*(?:[-–—]|to|till|until)\s*{_SCHEDULE_HOUR}"
_SCHEDULE = re.compile(
    rf"\b(?:{_SCHEDULE_DAYS}[\s,:]*(?:from\s+)?{_SCHEDULE_HOURS}"
    rf"|{_SCHEDULE_HOURS}[\s,:]*(?:on\s+)?{_SCHEDULE_DAYS})(?![\w:])",
    re.IGNORECASE,
)
# A weekly window (see the module docstring): a range of weekdays or a plural that recurs
# ("weekdays", "weeknights", "weekends") with the hours said right beside it, within a few
# words of it (so a long run of numbers costs no more than a short one). "Monday to Friday
# next week" is days of a week.
_RECURRING = re.compile(
    rf"(?:\b(?:{_WEEKDAY_RANGE})|\bweek(?:day|night|end)s)\b"
    r"(?!\s+(?:of\s+)?(?:next|this|last|the\s+following)\s+week)",
    re.IGNORECASE,
)
_WINDOW_WORD = (
    r"(?<![\w:.])(?:after|before|from|at|by|until|till|around|about|between|and|to"
    r"|\d{1,2}(?::\d\d)?(?:\s*[ap]\.?m\b\.?)?|noon|midday|midnight"
    r"|(?:in\s+the\s+)?(?:mornings?|afternoons?|evenings?|nights?))(?![\w:])"
)
_WINDOW_BEFORE = re.compile(rf"(?:{_WINDOW_WORD}[\s,:–—-]*)+$", re.IGNORECASE)
_WINDOW_AFTER = re.compile(rf"(?:[\s,:–—-]*{_WINDOW_WORD})+", re.IGNORECASE)
_WINDOW_REACH = 40
_TEXTING_TOMORROW = re.compile(r"tmrw?|tmw|2moro|2morrow", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;\n](?!\d)")


def names_no_time(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]``, a phrase dateparser or the clock's patterns found, one of the
    uses above that name no time to resolve?"""
    phrase = text[start:end].strip(" ,")
    before = text[_sentence_start(text, start) : start]
    if _in_a_schedule(text, start, end) or _in_a_weekly_window(text, start, end):
        return True  # "Mon-Fri 9am-5pm EST", "Mon-Fri after 5pm"
    if _IDIOM_WEEKDAY.fullmatch(phrase) and _IDIOM_AFTER.match(text, end):
        return True  # "Monday blues", "Saturday Night Live"
    weekday = _LONE_WEEKDAY.fullmatch(phrase)
    if weekday is not None:
        # "a monday" is any Monday ("feels like a monday"), not one on the calendar.
        return (
            bool(weekday["some"])
            or _SAYS_THE_DAY.search(before) is not None
            or (_in_a_name(phrase, before))
        )
    if _IDIOM_DURATION.fullmatch(phrase):
        return True
    if _TEXTING_TOMORROW.fullmatch(phrase):
        return _DETERMINER_BEFORE.search(before) is not None  # "the tmrw app"
    night = _LAST_NIGHT.search(text, start, end)
    if night is not None:  # "the last night of the tour"
        said_before = text[_sentence_start(text, start) : night.start()]
        final = _DETERMINER_BEFORE.search(said_before) or _OF_AFTER.match(text, night.end())
        if final or night[0].istitle():  # ... or "Last Night in Soho"
            return True
    if _CLOCK_PHRASE.fullmatch(phrase) and _SAYS_THE_HOUR.search(before):
        return _ELSEWHERE_AFTER.match(text, end) is None
    if _DAY_OF_MONTH.fullmatch(phrase):
        return _DATE_FOLLOWS.match(text, end) is None
    measured = _OF_AT_END.sub("", phrase)  # dateparser takes in the "of" of "3/4 of"
    if _MEASURE.fullmatch(measured) and (measured != phrase or _OF_AFTER.match(text, end)):
        return True
    pair = _NUMBER_PAIR.fullmatch(phrase)
    # "the 2/3 majority": what comes before "the" is what may mark it as a date.
    if pair is not None and phrase[: pair.start(1)].strip().lower() in {"", "the"}:
        return not _marked_as_date(text, start, end, before)
    return False


def _in_a_schedule(text: str, start: int, end: int) -> bool:
    """Does ``text[start:end]`` overlap a weekly schedule on its line? (A line, not a
    sentence: "9 a.m.-5 p.m." holds what looks like a sentence's end.)"""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return any(
        found.start() < end and start < found.end()
        for found in _SCHEDULE.finditer(text, line_start, len(text) if line_end < 0 else line_end)
    )


def _in_a_weekly_window(text: str, start: int, end: int) -> bool:
    """Does ``text[start:end]`` lie within a weekly window: a range of weekdays or a plural
    that recurs, and the hours said right beside it?"""
    for days in _RECURRING.finditer(text):
        reach = max(0, days.start() - _WINDOW_REACH)
        before = _WINDOW_BEFORE.search(text, reach, days.start())
        after = _WINDOW_AFTER.match(text, days.end(), days.end() + _WINDOW_REACH)
        if (before.start() if before else days.start()) <= start and end <= (
            after.end() if after else days.end()
        ):
            return True
    return False


def _in_a_name(phrase: str, before: str) -> bool:
    if _NAMING_WORD.search(before) is not None:
        return True
    if phrase == "Friday" and _SERVANT.search(before) is not None:
        return True
    return _CAPITALISED.match(phrase) is not None and _NAME_BEFORE.search(before) is not None


def _marked_as_date(text: str, start: int, end: int, before: str) -> bool:
    """A number pair with nothing else of a date in its phrase is one after a word that
    introduces a date, or as the whole message."""
    if _DATE_LEAD.search(before) is not None:
        return True
    return not text[:start].strip() and not re.sub(r"[\W_]+", "", text[end:])


def _sentence_start(text: str, start: int) -> int:
    begin = 0
    for mark in _SENTENCE_END.finditer(text, 0, start):
        begin = mark.end()
    return begin
