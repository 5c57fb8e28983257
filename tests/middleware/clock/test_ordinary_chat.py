"""Ordinary chat that mentions words the time parser may take for times (spec 000 §4.3,
§4.4): what the block is told about each line, said on Friday 13 March 2026 at 09:00 in
London. A line that names no time gets no "Times in this message" line and no question;
a real time, one told of the past included, is still read. Each line goes through the
same two calls as the clock stage (``find_time_expressions``, ``describe_expressions``);
``tests/proxy/test_clock_http.py`` drives some of them through the relay.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from middleware.clock.finding import find_time_expressions
from middleware.clock.stage import describe_expressions

NOW = datetime(2026, 3, 13, 9, 0, tzinfo=UTC)  # a Friday
ZONE = "Europe/London"


def block_lines(text: str) -> list[str]:
    """The block's time lines and questions for ``text``, as the clock stage builds them."""
    times, questions = describe_expressions(find_time_expressions(text, ZONE, NOW), ZONE)
    return [*times, *questions]


def times(*items: str) -> str:
    return "Times in this message: " + "; ".join(f"{item} ({ZONE})" for item in items) + "."


def at(phrase: str, instant: str) -> str:
    return f"{phrase} = {instant}"


def day(phrase: str, local_date: str) -> str:
    """A whole local day in London, as the block spells it: midnight to midnight."""
    start = datetime.combine(date.fromisoformat(local_date), time(), ZoneInfo(ZONE))
    end = datetime.combine(start.date() + timedelta(days=1), time(), ZoneInfo(ZONE))
    return f"{phrase} = {start.isoformat()} to {end.isoformat()}"


def ask(question: str) -> str:
    return f"Ask the user: {question}"


MORNING_SO_FAR = at('"this morning"', "2026-03-13T05:00:00+00:00 to 2026-03-13T09:00:00+00:00")
TODAY_OR_NEXT_FRIDAY = ask("Do you mean today (Friday 13 March) or Friday 20 March?")


#: Words that look like times but are none: greetings, the day said as what it is, idioms,
#: versions, scores, ratings, fractions, ages, counts, decades, years told of the past.
NOT_TIMES = [
    "morning, it's friday",
    "it's friday!",
    "It's Friday!!",
    "thank god it's monday",
    'TGIF',
    'tgif, what a week',
    'happy friday everyone',
    'Happy Monday! how are you?',
    'happy new year',
    'Happy New Year!! 🎉',
    'merry christmas',
    'I hate Mondays',
    'is it friday yet?',
    'it is friday, finally',
    "it's only tuesday and I'm already tired",
    'feels like a monday',
    'what a monday',
    'Mondays, am I right',
    'in a minute',
    "I'll do it in a minute",
    'one sec',
    'one sec, brb',
    'give me a second',
    'just a sec',
    'wait a second',
    'hang on a sec',
    'give me a minute to think',
    'back in a sec',
    'in a second, let me find it',
    'may I ask you something?',
    'may I ask what you think of this?',
    'I may be wrong',
    'I may have made a mistake',
    'you may want to check the logs',
    'it may rain',
    'March on, soldier',
    'we march on',
    'the troops march forward',
    "sun's out!",
    'the sun is out',
    'I sat down and cried',
    'sat down to write',
    'wed my sweetheart',
    'we got wed last year',
    'a 9 to 5 job',
    'working 9 to 5',
    'I work a 9 to 5',
    'open 24/7',
    'they support us 24/7',
    'Python 3.11',
    'upgrade to Python 3.12 please',
    'it runs on python 3.11 and 3.12',
    'the score was 2-1',
    'they won 3-2',
    'final score 2-1 to us',
    'version 10.2',
    'bump to version 10.2',
    'v1.2 is out',
    'release 2.4.1',
    'room 101',
    'meet me in room 101',
    'page 5',
    'see page 12',
    'read chapter 3',
    'top 10',
    'top 10 movies of all time',
    "at 5 o'clock somewhere",
    "it's 5 o'clock somewhere",
    '2020 was a hard year',
    'in 2019 I lived in Spain',
    'in the 90s',
    'music from the 90s',
    'back in the 80s',
    'every now and then',
    'now and then I wonder',
    'last time',
    'last time I checked it worked',
    'next time',
    'next time, try turning it off and on',
    'for the time being',
    "for the time being let's keep it",
    'of all time',
    'best album of all time',
    'the second option',
    'the second one is better',
    'I prefer the second',
    "I'm 30",
    "I'm 30 years old",
    'she is 25',
    'he turned 40',
    'my son is 8',
    'I have 3 kids',
    'we have 2 cats and a dog',
    "at 5 kg it's heavy",
    'I got 8 out of 10',
    'rate it 7/10',
    "I'd give it 9/10",
    'it costs 5.99',
    "it's $12.50",
    'about 20 people came',
    'at least 3 times',
    '3 times a day',
    'twice a week',
    'once a month',
    'at 100% capacity',
    'battery at 5%',
    "we're at 3 of 5 done",
    'step 2 of 7',
    'chapter 11',
    'line 42 fails',
    'error 404',
    'port 8080',
    'call 911',
    '50/50 chance',
    'split it 60/40',
    '1/2 cup of sugar',
    '3/4 of the team agreed',
    'a 2:1 ratio',
    "it's 3:2 aspect ratio",
    'the 3-2 vote',
    'ages 5-10',
    'grades 9-12',
    'in 2 words: no way',
    'in 3 steps',
    'in 5 minutes of reading I learned a lot',
    'it took 3 days',
    'we waited 20 minutes',
    'the movie is 2 hours long',
    'a 5 minute read',
    '5 min read',
    'a 10 minute walk',
    "it's a 30 minute drive",
    'I slept 8 hours',
    'good morning',
    'good night',
    'good afternoon!',
    'morning!',
    'evening all',
    'have a good weekend',
    'how was your weekend?',
    "how's your day going?",
    'have a nice day',
    'day by day',
    'one day at a time',
    'someday maybe',
    "it's been a long day",
    "it's been a long week",
    'what a week',
    'the week was long',
    'this is a one-time thing',
    "it's time to go",
    'time flies',
    'about time!',
    'in time',
    'just in time',
    'on time',
    'all the time',
    'from time to time',
    "at the time I didn't know",
    'at that time we were young',
    'once upon a time',
    'time and again',
    'sometimes I wonder',
    'the best of times',
    'half the time it fails',
    'by the way, thanks',
    'the may queen',
    'Mayday',
    'Mar-a-Lago',
    'August Rush is a movie',
    'April is my sister',
    'I met June at the party',
    'Super Bowl Sunday',
    'I was born in 1990',
    'since 2010',
    'the 2000s were wild',
    'the year 2000 bug',
    'a 24 hour shop',
    'a 24-hour shop',
    '24 hour fitness',
    '7-Eleven',
    'I drive a 911',
    'Windows 11',
    'iPhone 15',
    'Ubuntu 22.04',
    'node 18.12',
    'GPT-4',
    'Area 51',
    'Route 66',
    'catch 22',
    'Apollo 13',
    "ocean's 11",
    "the 1 o'clock news was boring",
    "he's always late",
    'later!',
    'see you later',
    'talk later',
    'catch you later',
    'see ya',
    'soon',
    'see you soon',
    'not now',
    "right now I'm busy",
    'just now I realised',
    'now what?',
    'ok now it works',
    'until now it worked',
    'by now you know',
    'up to now',
    'for now',
    "for now it's fine",
    'nowadays',
    'these days',
    'back in the day',
    'the other day',
    'the whole day',
    'all day long',
    'every day',
    'give me 5 minutes',
    'any deals for Black Friday?',
    'we always watch Super Bowl Sunday at Tom’s',
    # A weekday in a name or an idiom, at a sentence's start too, in any case.
    'ugh, Monday blues',
    'Monday blues are real',
    'Friday feeling',
    'that friday feeling',
    'sunday best',
    'Saturday Night Live is funny',
    'Black Friday deals',
    'Black Friday deals are wild',
    'black friday deals are wild',
    'Ash Wednesday service',
    'Good Friday',
    'Good Friday is a holiday here',
    'Cyber Monday',
    'Cyber Monday sales are crazy',
    'Taco Tuesday at the office',
    'Throwback Thursday',
    'Super Bowl Sunday parties are the best',
    "Robinson Crusoe's man Friday",
    # Letters of the texting abbreviations of day words ("fri", "thur", "weds") inside other
    # words, and those abbreviations said as what day it is.
    'the fridge is empty again',
    'my friend fixed it',
    'fries or salad?',
    'Arthur says hi',
    'flying over Africa',
    'wedding photos are up',
    "it's fri!",
    'happy fri',
    # A nursery rhyme, not a day: not read, and labelled so.
    "thursday's child has far to go",
    # "Last night" as the final night of something, or a title: no time.
    'the last night of the tour',
    'last night of the festival was wild',
    'our last night in Rome',
    'on the last night we danced till late',
    'Last Night in Soho is a great film',
    'what a night',
    'the night shift pays more',
    # A texting "tomorrow" used as a name.
    'I got the tmrw app',
    'the Tmrw newsletter is good',
    # "Around", "about" and "sometime" with no clock time: rough amounts and idioms.
    'around the clock support',
    "it's about time you called",
    'we work around the clock',
    'around 3 people came',
    'about 3 of us are going',
    'sometime around then',
    'approx 3 hours of work',
    # Weekly schedules (opening hours, a signature): days and hours that recur.
    'Mon-Fri 9am-5pm EST',
    'Jane Doe | Support | Mon–Fri 9–5',
    "we're open Mon-Sat 10am-6pm",
    'Tue/Thu 6-8pm yoga',
    'office hours 9-5 Monday to Friday',
    'the store is open Mon-Sat',
    # A range of weekdays with the hours beside it recurs: a window, no one instant.
    "I'm free Mon-Fri after 5pm",
    'after 5pm Mon-Fri works best',
    'weekdays before 9am are hard',
    'M-F from 9am',
    'we sat for an hour',
    'pick a number between 1 and 10',
    'somewhere between 2 and 4',
    'between 2 and 4 people',
    # The answer to "02:00 to 04:00 or 14:00 to 16:00?" is read only against the question.
    'the afternoon one',
]  # fmt: skip

#: Real times, the ones told of the past included: still read, and asked about when they
#: are ambiguous.
TIMES = [
    ('see you at 5', [times(at('"at 5"', '2026-03-13T17:00:00+00:00'))]),
    # Said on a Friday, as "friday 3pm" is: today or a week later.
    ('friday at 3pm', [TODAY_OR_NEXT_FRIDAY]),
    ('in 2 hours', [times(at('"in 2 hours"', '2026-03-13T11:00:00+00:00'))]),
    ('next Monday', [times(day('"next Monday"', '2026-03-16'))]),
    ('tomorrow at 9', [ask('Do you mean 09:00 or 21:00 on Saturday 14 March?')]),
    ('see you friday', [TODAY_OR_NEXT_FRIDAY]),
    ('can we do friday?', [TODAY_OR_NEXT_FRIDAY]),
    ('on friday', [TODAY_OR_NEXT_FRIDAY]),
    ('friday works for me', [TODAY_OR_NEXT_FRIDAY]),
    ('Monday works', [times(day('"Monday"', '2026-03-16'))]),
    ('how about tuesday?', [times(day('"about tuesday"', '2026-03-17'))]),
    ("let's meet wednesday at 10am",
     [times(at('"wednesday at 10am"', '2026-03-18T10:00:00+00:00'))]),
    ('call me in 10 minutes', [times(at('"in 10 minutes"', '2026-03-13T09:10:00+00:00'))]),
    ('remind me in an hour', [times(at('"in an hour"', '2026-03-13T10:00:00+00:00'))]),
    ('lunch at 1pm', [times(at('"at 1pm"', '2026-03-13T13:00:00+00:00'))]),
    ('meeting on 3/4 at 2pm', [times(at('"on 3/4 at 2pm"', '2027-03-04T14:00:00+00:00'))]),
    ('due 4/15', [times(day('"4/15"', '2026-04-15'))]),
    ('the deadline is 2026-04-01', [times(day('"2026-04-01"', '2026-04-01'))]),
    ('by end of day', [times(at('"end of day"', '2026-03-13T23:59:00+00:00'))]),
    ('until monday', [times(day('"monday"', '2026-03-16'))]),
    ('this friday', [times(day('"this friday"', '2026-03-13'))]),
    ("it's on friday", [TODAY_OR_NEXT_FRIDAY]),
    ("it's friday at 3pm", [TODAY_OR_NEXT_FRIDAY]),
    ('dinner tonight at 8', [times(at('"tonight at 8"', '2026-03-13T20:00:00+00:00'))]),
    ("I'll be up at 6", [times(at('"at 6"', '2026-03-14T06:00:00+00:00'))]),
    ('the call was at 3pm', [times(at('"at 3pm"', '2026-03-12T15:00:00+00:00'))]),
    ('see you in 2 weeks', [times(at('"in 2 weeks"', '2026-03-27T09:00:00+00:00'))]),
    ('back at 9:30', [ask('Do you mean 09:30 or 21:30 on Friday 13 March?')]),
    ('party on Saturday night', [times(at('"on Saturday night"', '2026-03-14T20:00:00+00:00'))]),
    ('friday?', [TODAY_OR_NEXT_FRIDAY]),
    ("see you at 5 o'clock", [times(at('"at 5 o\'clock"', '2026-03-13T17:00:00+00:00'))]),
    ('are we still on for 4/15?', [times(day('"4/15"', '2026-04-15'))]),
    ('from 3/4 to 3/9', [times(day('"from 3/4"', '2027-03-04'), day('"3/9"', '2027-03-09'))]),
    ("I'll call you in 1 minute", [times(at('"in 1 minute"', '2026-03-13T09:01:00+00:00'))]),
    ("today is friday so I'm relaxed", [times(day('"today"', '2026-03-13'))]),
    ('a fortnight ago', [times(at('"a fortnight ago"', '2026-02-27T09:00:00+00:00'))]),
    ('I saw her a fortnight ago', [times(at('"a fortnight ago"', '2026-02-27T09:00:00+00:00'))]),
    ('I spent 2 hours on it yesterday', [times(day('"yesterday"', '2026-03-12'))]),
    ('the 4th of July party was fun', [times(day('"the 4th of July"', '2025-07-04'))]),
    # A weekday that starts a sentence and is no name is still a day.
    ("Monday I'm off", [times(day('"Monday"', '2026-03-16'))]),
    ('Good, Friday then', [TODAY_OR_NEXT_FRIDAY]),
    ('sounds good friday works', [TODAY_OR_NEXT_FRIDAY]),
    ('man friday was rough', [times(day('"friday"', '2026-03-06'))]),
    ('Monday blues. Tuesday works for me', [times(day('"Tuesday"', '2026-03-17'))]),
    ('I have the Monday blues today', [times(day('"today"', '2026-03-13'))]),
    # Days of the month, ends of months, 24-hour hours, day words beside a colon.
    ('sprint ends on the 27th', [times(day('"on the 27th"', '2026-03-27'))]),
    ("it's his 30th on the 21st", [times(day('"on the 21st"', '2026-03-21'))]),
    ("on the 3rd I'm off", [times(day('"on the 3rd"', '2026-04-03'))]),
    ('need sign-off by end of month', [times(day('"end of month"', '2026-03-31'))]),
    ('I come back at 14h', [times(at('"at 14h"', '2026-03-13T14:00:00+00:00'))]),
    ("the meeting is at 15 o'clock", [times(at('"at 15 o\'clock"', '2026-03-13T15:00:00+00:00'))]),
    ("let's do a 1:1 next tuesday", [times(day('"next tuesday"', '2026-03-17'))]),
    ('release v2.3 goes out 21/11', [times(day('"21/11"', '2026-11-21'))]),
    ('wake me up at 7 pls', [times(at('"at 7"', '2026-03-14T07:00:00+00:00'))]),
    ('yesterday: fixed the login bug. today: reviewing PRs. blockers: none',
     [times(day('"yesterday"', '2026-03-12'), day('"today"', '2026-03-13'))]),
    # Texting abbreviations of day words.
    ('cant tmrw sorry', [times(day('"tmrw"', '2026-03-14'))]),
    ('u free thurs', [times(day('"thurs"', '2026-03-19'))]),
    ('lmk by fri', [TODAY_OR_NEXT_FRIDAY]),
    ('tmr works', [times(day('"tmr"', '2026-03-14'))]),
    ('2moro?', [times(day('"2moro"', '2026-03-14'))]),
    ('weds ok?', [times(day('"weds"', '2026-03-18'))]),
    ('see u tues', [times(day('"tues"', '2026-03-17'))]),
    ('fri at 3pm?', [TODAY_OR_NEXT_FRIDAY]),
    # Today's parts of day, the past ones too, and the night just gone.
    # A part of day told of the past while under way is that part so far, never an hour
    # after the moment it was said.
    ('I ran 5k this morning', [times(MORNING_SO_FAR)]),
    ("this morning's standup went fine", [times(MORNING_SO_FAR)]),
    ('the bus was late this morning', [times(MORNING_SO_FAR)]),
    ('can we sync this afternoon?',
     [times(at('"this afternoon"', '2026-03-13T15:00:00+00:00'))]),
    ('I finished it last night', [times(at('"last night"', '2026-03-12T20:00:00+00:00'))]),
    ('last night was rough', [times(at('"last night"', '2026-03-12T20:00:00+00:00'))]),
    # A weekday naming today with a part of day and its hour: this evening, not a question.
    ('friday evening at 8?',
     [times(at('"friday evening at 8"', '2026-03-13T20:00:00+00:00'))]),
    ('standup moved to friday morning at 10',
     [times(at('"friday morning at 10"', '2026-03-13T10:00:00+00:00'))]),
    ('friday 8pm', [TODAY_OR_NEXT_FRIDAY]),
    # The time phrase stops before the words that begin the rest of the sentence.
    ("I'll call the bank tomorrow about the mortgage letter",
     [times(day('"tomorrow"', '2026-03-14'))]),
    ("I'll email Sam on Monday regarding the invoice",
     [times(day('"on Monday"', '2026-03-16'))]),
    ('meeting Ana tomorrow for lunch', [times(day('"tomorrow"', '2026-03-14'))]),
    # A rough clock time after a day keeps the day (texting, work chat, non-native English).
    ("let's talk tomorrow around noon",
     [times(at('"tomorrow around noon"', '2026-03-14T12:00:00+00:00'))]),
    ('tmrw ~noon?', [times(at('"tmrw ~noon"', '2026-03-14T12:00:00+00:00'))]),
    ('meet monday around 3pm', [times(at('"monday around 3pm"', '2026-03-16T15:00:00+00:00'))]),
    ('can we do tues about 3pm', [times(at('"tues about 3pm"', '2026-03-17T15:00:00+00:00'))]),
    ('monday sometime around 3pm works',
     [times(at('"monday sometime around 3pm"', '2026-03-16T15:00:00+00:00'))]),
    ('call you tomorrow at around 10am',
     [times(at('"tomorrow at around 10am"', '2026-03-14T10:00:00+00:00'))]),
    ('we meet us monday around 3pm',
     [times(at('"monday around 3pm"', '2026-03-16T15:00:00+00:00'))]),
    ('pls send it tomorrow approx 10am',
     [times(at('"tomorrow approx 10am"', '2026-03-14T10:00:00+00:00'))]),
    ('kindly revert tomorrow around 11am',
     [times(at('"tomorrow around 11am"', '2026-03-14T11:00:00+00:00'))]),
    ('standup moved to monday around 9:30',
     [ask('Do you mean 09:30 or 21:30 on Monday 16 March?')]),
    # Today's weekday with its part of day: this morning so far told of the past, the rest
    # of it from now said of what is ahead once its usual hour (09:00) has come.
    ('I ran 5k Friday morning',
     [times(at('"Friday morning"', '2026-03-13T05:00:00+00:00 to 2026-03-13T09:00:00+00:00'))]),
    ('did 10k friday morning, legs dead',
     [times(at('"friday morning"', '2026-03-13T05:00:00+00:00 to 2026-03-13T09:00:00+00:00'))]),
    ("I'll do it friday morning",
     [times(at('"friday morning"', '2026-03-13T09:00:00+00:00 to 2026-03-13T12:00:00+00:00'))]),
    ('can we sync this morning?',
     [times(at('"this morning"', '2026-03-13T09:00:00+00:00 to 2026-03-13T12:00:00+00:00'))]),
    # A past and a plan in one sentence: each phrase is judged in its own clause.
    ('I ran 5k this morning, can we talk tomorrow around noon?',
     [times(MORNING_SO_FAR, at('"tomorrow around noon"', '2026-03-14T12:00:00+00:00'))]),
    ('landed at 7, will call you at 9',
     [times(at('"at 7"', '2026-03-13T07:00:00+00:00'), at('"at 9"', '2026-03-13T21:00:00+00:00'))]),
    # The texting Saturday before its clock time is no past "sat": tomorrow, not last week.
    ('ok Sat 10am then', [times(at('"Sat 10am"', '2026-03-14T10:00:00+00:00'))]),
    ('sat 2pm?', [times(at('"sat 2pm"', '2026-03-14T14:00:00+00:00'))]),
    # ... before its part of day, and before "at <hour>" with no one sitting before it.
    ('sat morning works', [times(at('"sat morning"', '2026-03-14T09:00:00+00:00'))]),
    ('sat night?', [times(at('"sat night"', '2026-03-14T20:00:00+00:00'))]),
    ('Sat at 3?', [ask('Do you mean 03:00 or 15:00 on Saturday 14 March?')]),
    ('ok sat at 3pm', [times(at('"sat at 3pm"', '2026-03-14T15:00:00+00:00'))]),
    # ... but a time beside it, not in the window, is still read.
    ('free Mon-Fri after 5pm, but tomorrow at 3pm works',
     [times(at('"tomorrow at 3pm"', '2026-03-14T15:00:00+00:00'))]),
    # A duration before a day word says how long, not when: the day, not 2 hours before it.
    ('I waited 2 hours yesterday', [times(day('"yesterday"', '2026-03-12'))]),
    ('worked 3 hours today', [times(day('"today"', '2026-03-13'))]),
    # A range of hours after a day is a span on that day (not nothing, as it was).
    ('meeting tomorrow 2-3pm',
     [times(at('"tomorrow 2-3pm"', '2026-03-14T14:00:00+00:00 to 2026-03-14T15:00:00+00:00'))]),
    ('can we meet Monday 9-10am?',
     [times(at('"Monday 9-10am"', '2026-03-16T09:00:00+00:00 to 2026-03-16T10:00:00+00:00'))]),
    ('call 11-1pm?',
     [times(at('"11-1pm"', '2026-03-13T11:00:00+00:00 to 2026-03-13T13:00:00+00:00'))]),
    # ... as is one "between" two hours, asked about when it may be morning or evening.
    ('call me between 2 and 4 tomorrow',
     [ask('Do you mean 02:00 to 04:00 or 14:00 to 16:00 on Saturday 14 March?')]),
    ('tomorrow between 2pm and 4:30pm?',
     [times(at('"tomorrow between 2pm and 4:30pm"',
               '2026-03-14T14:00:00+00:00 to 2026-03-14T16:30:00+00:00'))]),
    ('free between 14 and 16 tomorrow',
     [times(at('"between 14 and 16 tomorrow"',
               '2026-03-14T14:00:00+00:00 to 2026-03-14T16:00:00+00:00'))]),
    ('call me between 2 and 4 today',
     [times(at('"between 2 and 4 today"',
               '2026-03-13T14:00:00+00:00 to 2026-03-13T16:00:00+00:00'))]),
    ('between 2 and 4pm works',
     [times(at('"between 2 and 4pm"', '2026-03-13T14:00:00+00:00 to 2026-03-13T16:00:00+00:00'))]),
    # A range "from" one hour "to" another, or past midnight, is one span on its day.
    ('from 2pm to 3:30pm tomorrow',
     [times(at('"from 2pm to 3:30pm tomorrow"',
               '2026-03-14T14:00:00+00:00 to 2026-03-14T15:30:00+00:00'))]),
    ('party 10pm-1am saturday',
     [times(at('"10pm-1am saturday"', '2026-03-14T22:00:00+00:00 to 2026-03-15T01:00:00+00:00'))]),
    # "tonight" with a range of hours or an hour after midnight is the night ahead.
    ('party tonight 11pm to 4am',
     [times(at('"tonight 11pm to 4am"',
               '2026-03-13T23:00:00+00:00 to 2026-03-14T04:00:00+00:00'))]),
    ('tonight from 1am to 3am?',
     [times(at('"tonight from 1am to 3am"',
               '2026-03-14T01:00:00+00:00 to 2026-03-14T03:00:00+00:00'))]),
    ('call me tonight between 8 and 10',
     [times(at('"tonight between 8 and 10"',
               '2026-03-13T20:00:00+00:00 to 2026-03-13T22:00:00+00:00'))]),
    ('the alarm goes off tonight at 1am',
     [times(at('"tonight at 1am"', '2026-03-14T01:00:00+00:00'))]),
    # "Tonight" with an hour and no am/pm: 1-4 are the small hours after tonight's
    # midnight (14:00 is no one's tonight), 6-11 the evening, 12 midnight.
    ('still up? tonight at 2 then', [times(at('"tonight at 2"', '2026-03-14T02:00:00+00:00'))]),
    ('ok tonight at 11', [times(at('"tonight at 11"', '2026-03-13T23:00:00+00:00'))]),
    ('fireworks tonight at 12', [times(at('"tonight at 12"', '2026-03-14T00:00:00+00:00'))]),
    # Half hours and "from now", which were missed or cut to "in an hour".
    ('call me in half an hour', [times(at('"in half an hour"', '2026-03-13T09:30:00+00:00'))]),
    ('half an hour from now', [times(at('"half an hour from now"', '2026-03-13T09:30:00+00:00'))]),
    ('back in an hour and a half',
     [times(at('"in an hour and a half"', '2026-03-13T10:30:00+00:00'))]),
    ('back in 1.5 hours', [times(at('"in 1.5 hours"', '2026-03-13T10:30:00+00:00'))]),
    # Days on from a day: not a week ago, not the day alone.
    ('a week from today works', [times(day('"a week from today"', '2026-03-20'))]),
    ("let's do a week from tuesday", [times(day('"a week from tuesday"', '2026-03-24'))]),
    # A day turned down is no plan; the day said beside it is.
    ('not tomorrow, monday', [times(day('"monday"', '2026-03-16'))]),
    ("can't do tomorrow, monday?", [times(day('"monday"', '2026-03-16'))]),
    # "Sat" after its subject is the past of "sit": the hour, gone by, not a Saturday; "see
    # you sat" is still the texting Saturday.
    ('I sat at 3pm', [times(at('"at 3pm"', '2026-03-12T15:00:00+00:00'))]),
    ('we sat at 3', [times(at('"at 3"', '2026-03-13T03:00:00+00:00'))]),  # as "we met at 3"
    ('see you sat at 3pm', [times(at('"sat at 3pm"', '2026-03-14T15:00:00+00:00'))]),
    # 02:00 in Los Angeles, 09:00 for the speaker in London: not the small hours, no
    # question which day "tomorrow" is.
    ('call me tomorrow 9am Los Angeles time',
     ['Times in this message: "tomorrow 9am Los Angeles time" = 2026-03-14T09:00:00-07:00 '
      '(America/Los_Angeles).']),
]  # fmt: skip


#: Chat of other registers (group banter, stand-ups, non-native English, texting, dates
#: written day first or ISO, "the 3rd", "end of month", "EOD", "next week sometime"),
#: each labelled with whether it names a time the block should read or ask about.
OTHER_REGISTERS = [
    ("lol who's bringing snacks friday", True),
    ('haha same', False),
    ("ok who's in for drinks at 7", True),
    ('count me in 🍻', False),
    ("I'm 5 mins away", False),
    ('running 10 min late sorry', False),
    ('brb 5', False),
    ("dude it's been ages", False),
    ('who won the game 3-1?', False),
    ('lmao 10/10 would watch again', False),
    ('we should do this again next week sometime', True),
    ('pizza friday again?', True),
    ('happy bday!! 🎂', False),
    ('movie night saturday?', True),
    ('gg ez', False),
    ('one more round then bed', False),
    ("first round's on me", False),
    ("I'll have the PR up by EOD", True),
    ('deploy is scheduled for 2026-03-20', True),
    ("we'll sync at 10:30 tomorrow", True),
    ('retro moved to Thursday 2pm', True),
    ('Q2 planning kicks off next week', True),
    ('ticket JIRA-1234 is blocked', False),
    ('p1 incident resolved, RCA to follow', False),
    ('merged #4521', False),
    ('coverage is at 87%', False),
    ('CI takes 12 minutes now', False),
    ('the build broke on 3.12', False),
    ('OKR score 0.7', False),
    ('we hit 99.9% uptime', False),
    ('1:1 with Sam moved to friday', True),
    ('I will send you the documents until friday', True),
    ('we see us on monday', True),
    ('I am in holiday since 2 weeks', False),
    ('please revert me by tomorrow', True),
    ('kindly do the needful before 5pm', True),
    ('we meet us the 3rd', True),
    ('I have 3 years experience', False),
    ('I am working here since 2019', False),
    ('do you have time this days?', False),
    ('how much time do you need?', False),
    ('thanks for your time', False),
    ('I wait your answer', False),
    ('k see u at 8', True),
    ('omw', False),
    ('lunch at 1 ok', True),
    ('call u later', False),
    ('gm', False),
    ('gn', False),
    ('ttyl', False),
    ('its 2am why am i awake', False),
    ('ugh mondays', False),
    ('meet @ 6?', True),
    ('sry was asleep', False),
    ('ya 5 more min', False),
    ('the invoice is due 21/11', True),
    ('flight is 2026-04-02 at 14:05', True),
    ('contract ends 31/12/2026', True),
    ('ISO 8601 is the standard', False),
    ('use the format YYYY-MM-DD', False),
    ('the 3rd option is best', False),
    ('she came 3rd in the race', False),
    ('invoice by end of month', True),
    ('next week sometime?', True),
    ('sometime next week works', True),
    ('EOD works', True),
    ('eod is fine', True),
    ("I'll ping you EOD", True),
    ('A4 paper', False),
    ('B2B sales', False),
    ('a 4x4 car', False),
    ('COVID-19', False),
    ('the 2/3 majority', False),
    ("it's 50/50", False),
    ('mix 1:1 with water', False),
    ('we won 2:0', False),
    ('at 2:1 odds', False),
    # Parts of day in texting, non-native English and work chat.
    ('lol last night tho', True),
    ('did u see the game last night', True),
    ("last night's deploy broke prod", True),
    ('this morning I have send the report', True),
    ('yesterday night I could not sleep', True),
    ('pls review before this evening', True),
    ('this evening is the premiere', True),
    ('had the best night', False),
    ('night owl here', False),
    ('the morning after', False),
    ('my tmrw subscription expired', False),
    ('tmrw works for me', True),
    ('ok around 3?', True),
    ('roughly around lunch', False),
    ('what about it', False),
    # A weekday beside one hour is a plan, not a schedule.
    ('see you Fri 9am', True),
    ('ok Sat 10am-ish then', True),
    # "Tonight" told of the past (before the night, still the night ahead) and nights
    # that name no time.
    ('had a great time tonight', True),
    ('tonight was fun', True),
    ('had a great night', False),
    ('good night all', False),
    # Today's part of day ahead (asked about once it is over) and greetings.
    ('can we talk this morning?', True),
    ("let's sync this afternoon", True),
    ('morning all, coffee first', False),
    # The time somewhere else: its zone is the block's (references.py), a clock time said
    # of it is read; the place alone names no time.
    ('what time is it back in Berlin?', False),
    ("it's 3pm back in Berlin", True),
    ('back in Berlin at last', False),
    # The speaker's own day, told as it is or was: still read (in a group it is no time
    # to ask whose it is, ``whose_time.py``).
    ('so sore today', True),
    ('had a long day yesterday', True),
]  # fmt: skip


@pytest.mark.parametrize("text", NOT_TIMES)
def test_chat_that_names_no_time_gets_no_time_line_and_no_question(text: str) -> None:
    assert block_lines(text) == []


@pytest.mark.parametrize(("text", "expected"), TIMES)
def test_real_times_in_chat_are_still_read(text: str, expected: list[str]) -> None:
    assert block_lines(text) == expected


def test_the_corpus_is_large_enough_to_judge_the_parser_by() -> None:
    assert len(NOT_TIMES) >= 150
    assert len(set(NOT_TIMES)) == len(NOT_TIMES)


@pytest.mark.parametrize(("text", "names_a_time"), OTHER_REGISTERS)
def test_chat_of_other_registers_is_read_as_labelled(text: str, names_a_time: bool) -> None:
    assert bool(block_lines(text)) == names_a_time


def test_precision_and_recall_over_the_whole_corpus() -> None:
    """Precision and recall of "this line names a time" over every labelled line; the
    figures are the ones the README quotes."""
    labelled = [
        *((text, False) for text in NOT_TIMES),
        *((text, True) for text, _ in TIMES),
        *OTHER_REGISTERS,
    ]
    read = {text: bool(block_lines(text)) for text, _ in labelled}
    hits = sum(read[text] and wanted for text, wanted in labelled)
    false_alarms = sum(read[text] and not wanted for text, wanted in labelled)
    misses = sum(wanted and not read[text] for text, wanted in labelled)
    # 514 lines, 175 read, no false alarm, none missed: precision 1.000, recall 1.000.
    assert (len(labelled), hits, false_alarms, misses) == (514, 175, 0, 0)
