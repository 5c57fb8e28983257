"""Living-memory triggers (spec 003 §7): what fires, as which kind, with what text, and
the hard negatives that must not fire."""

from __future__ import annotations

from dataclasses import replace

import pytest

from middleware.continuity.model import MemoryKind
from middleware.memory.candidate import TEXT_MAX, MemoryCandidate
from middleware.memory.triggers import detect_memory, stated_memory


@pytest.mark.parametrize(
    ("text", "kind", "stored"),
    [
        # name
        ("My name is Sam.", "name", "Name: Sam"),
        ("my name is mary jane", "name", "Name: Mary Jane"),
        ("Call me Ishmael.", "name", "Name: Ishmael"),
        ("I go by Alex now.", "name", "Name: Alex"),
        ("Hi! You can call me Jo.", "name", "Name: Jo"),
        ("Actually, my name is Samantha.", "name", "Name: Samantha"),
        # preferences and directives
        (
            "I prefer direct assessment, no hedging.",
            "preference",
            "Prefers direct assessment, no hedging",
        ),
        (
            "I like my answers short and to the point.",
            "preference",
            "Likes their answers short and to the point",
        ),
        (
            "I hate it when you use bullet points.",
            "preference",
            "Hates it when you use bullet points",
        ),
        (
            "Please always answer in British English.",
            "directive",
            "Always answer in British English",
        ),
        ("Never use emojis.", "directive", "Never use emojis"),
        ("Never call me Bob.", "directive", "Never call the user Bob"),
        ("From now on, reply in French.", "directive", "Reply in French"),
        (
            "Going forward, keep answers under 200 words.",
            "directive",
            "Keep answers under 200 words",
        ),
        # facts about the person
        ("I'm a paralegal at a small firm.", "fact", "Is a paralegal at a small firm"),
        ("I'm a senior software engineer.", "fact", "Is a senior software engineer"),
        ("I work as a session drummer.", "fact", "Works as a session drummer"),
        ("I work at Acme Corp.", "fact", "Works at Acme Corp"),
        ("I live in Porto.", "fact", "Lives in Porto"),
        ("I'm based in Berlin.", "fact", "Is based in Berlin"),
        # changes, said plainly (spec 003 §7's "I moved / started …")
        ("I moved to Berlin.", "fact", "Lives in Berlin"),
        ("I've just relocated to Lisbon.", "fact", "Lives in Lisbon"),
        ("I now live in Berlin.", "fact", "Now lives in Berlin"),
        ("I'm now working at Globex.", "fact", "Is now working at Globex"),
        ("I started working for Globex.", "fact", "Started working for Globex"),
        # everyday things said in passing: pets, habits given up, likes
        ("I have a dog called Rex.", "fact", "Has a dog called Rex"),
        ("I have two cats.", "fact", "Has two cats"),
        ("My cat is called Miso.", "fact", "Their cat is called Miso"),
        ("my dog's name is Rex", "fact", "Their dog's name is Rex"),
        ("I took my dog Rex to the vet.", "fact", "Has a dog called Rex"),
        ("I don't drink coffee any more.", "fact", "Doesn't drink coffee any more"),
        ("I stopped drinking coffee.", "fact", "Stopped drinking coffee"),
        ("I quit smoking.", "fact", "Quit smoking"),
        ("I've given up sugar.", "fact", "Has given up sugar"),
        ("I no longer eat meat.", "fact", "No longer eats meat"),
        ("I don't smoke anymore.", "fact", "Doesn't smoke anymore"),
        ("I no longer smoke.", "fact", "No longer smokes"),
        ("I'm a heavy smoker.", "fact", "Is a heavy smoker"),
        ("I have a car.", "fact", "Has a car"),
        ("I sold my car.", "fact", "Sold their car"),
        ("I moved out of Berlin.", "fact", "Moved out of Berlin"),
        ("I love coffee!", "preference", "Loves coffee"),
        ("I hate mornings.", "preference", "Hates mornings"),
        ("I don't like olives.", "preference", "Doesn't like olives"),
        ("I love hiking, climbing and chess", "preference", "Loves hiking, climbing and chess"),
        ("i like jazz, blues, and rock", "preference", "Likes jazz, blues, and rock"),
        # corrections
        ("Actually, my birthday is in June.", "correction", "Their birthday is in June"),
        ("Actually, I live in Lisbon now.", "correction", "Lives in Lisbon"),
        ("No, I meant the other file.", "correction", "Meant the other file"),
        ("Correction: the hearing is on Tuesday.", "correction", "The hearing is on Tuesday"),
    ],
)
def test_fires(text: str, kind: str, stored: str) -> None:
    assert detect_memory(text) == [
        MemoryCandidate(kind, stored, replaces_kind=kind == "name")  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize(
    ("text", "kind", "stored"),
    [
        ("Remember that I'm allergic to peanuts.", "fact", "Is allergic to peanuts"),
        ("remember: my sister's name is Ana", "fact", "Their sister's name is Ana"),
        (
            "Please remember my office is on the 4th floor.",
            "fact",
            "Their office is on the 4th floor",
        ),
        ("Don't forget that my flight is on the 12th.", "fact", "Their flight is on the 12th"),
        ("Remember this: the client is Henderson LLC.", "fact", "The client is Henderson LLC"),
        ("Please remember I prefer metric units.", "preference", "Prefers metric units"),
        ("Keep in mind that I live in Berlin.", "fact", "Lives in Berlin"),
        ("For future reference: I'm left-handed.", "fact", "Is left-handed"),
        ("Please remember my name is Ann.", "name", "Name: Ann"),
    ],
)
def test_what_the_user_asks_to_keep_is_committed(text: str, kind: str, stored: str) -> None:
    # Spec 002 tier 3: an explicit "remember this" request is committed, never pruned.
    assert detect_memory(text) == [
        MemoryCandidate(kind, stored, replaces_kind=kind == "name", committed=True)  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize(
    "text",
    [
        # recollection and questions
        "Remember when we went to Rome?",
        "remember when we tried the other approach, it failed",
        "Do you remember my dog's name?",
        "Don't you remember what I said?",
        "Can you call me Sam from now on?",
        "Is my name on the list?",
        # refusals and in-the-moment wishes
        "I prefer not to say.",
        "I prefer the second option.",
        "I prefer option B.",
        "I like both.",
        "I like the first one better.",
        "I'd prefer a shorter version of this one.",
        # hypotheticals and reported speech
        "If I were a lawyer I'd sue them.",
        "Suppose I work at a bank, what then?",
        "Imagine I live in Tokyo.",
        "She said I'm a genius.",
        "My boss thinks I'm a slacker.",
        "My brother is a lawyer.",
        # not about the person, or not standing
        "I'm a big fan of jazz.",
        "I'm a bit tired today.",
        "I work at night mostly.",
        "I'm working at home today.",
        "I moved to Postgres last month.",
        "I moved to the next chapter.",
        "If I moved to Berlin I'd miss the sea.",
        "Never mind.",
        "Never again, that was awful.",
        "Always the same with this printer.",
        "Call me later.",
        "Call me when you're done.",
        "Remember to buy milk.",
        "Don't forget to cancel the gym membership.",
        "From now on we're squashing merges on main.",
        "remember that!",
        "The plan is to ship Monday.",
        # said in passing, but not about a pet, a habit or a lasting like
        "I have a dog in this fight.",
        "I have a cat allergy.",
        "If I had a dog called Rex I'd walk him daily.",
        "Do you have a dog called Rex?",
        "my dog is sick",
        "I stopped by the shop.",
        "I moved out of the way.",
        "I have a car in the shop.",
        "I sold my soul for this job.",
        "I stopped working on that.",
        "I quit.",
        "I love that idea.",
        "I love it.",
        "I love you.",
        "I love you, mom.",
        "I like coffee, thanks.",
        "I hate mornings, especially Mondays.",
        "I like the way you think.",
        "I hate when that happens.",
        "I like to think so.",
        "Would you love coffee?",
        "Imagine I love coffee.",
        'He wrote "I love coffee" on the wall.',
        "“I quit smoking,” he lied.",
        "",
    ],
)
def test_does_not_fire(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hi there, I live in Lisbon", MemoryCandidate("fact", "Lives in Lisbon")),
        ("Good morning, I'm a nurse.", MemoryCandidate("fact", "Is a nurse")),
        ("hello there, my name is Ana", MemoryCandidate("name", "Name: Ana", True)),
        ("good evening, I work at Globex", MemoryCandidate("fact", "Works at Globex")),
        (
            "Hey there! I prefer short answers.",
            MemoryCandidate("preference", "Prefers short answers"),
        ),
        ("Good afternoon — I live in Porto.", MemoryCandidate("fact", "Lives in Porto")),
        ("Morning, I'm a nurse.", MemoryCandidate("fact", "Is a nurse")),
        ("Evening! I live in Oslo.", MemoryCandidate("fact", "Lives in Oslo")),
        ("hiya, I work at Acme", MemoryCandidate("fact", "Works at Acme")),
        ("Howdy, call me Jo.", MemoryCandidate("name", "Name: Jo", True)),
        ("Hi again, I live in Leeds.", MemoryCandidate("fact", "Lives in Leeds")),
    ],
)
def test_a_greeting_before_a_self_statement_does_not_hide_it(
    text: str, expected: MemoryCandidate
) -> None:
    assert detect_memory(text) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hi! I'm Ana", ["Name: Ana"]),
        ("Hi, I'm Ana Silva, nice to meet you.", ["Name: Ana Silva"]),
        ("Good morning! I’m Jo.", ["Name: Jo"]),
        ("Hey there. I'm Tom from Leeds", ["Name: Tom"]),
        ("hello! I'm Ana and I live in Lisbon", ["Name: Ana", "Lives in Lisbon"]),
        # Not an introduction: a state, a place, a nationality, no greeting, no capital.
        ("Hi! I'm tired", []),
        ("Hi, I'm in Lisbon", []),
        ("Hi! I'm on it", []),
        ("Hi, I'm German", []),
        ("Hi, I'm Ana's mum", []),
        ("Hi, I'm Ana?", []),
        ("I'm Ana", []),
        ("hi im ana", []),
        # A faith, a diet or a state written with a capital is not a name.
        ("Hi, I'm Sikh", []),
        ("Hi, I'm Protestant", []),
        ("Hi, I'm Deaf", []),
        ("Hi, I'm Vegan", ["Is vegan"]),
        # A name as often as a faith: nothing tells which, and a name would replace the
        # one known (spec 003 §8 has no rung for a guess). A surname, or "my name is", does.
        ("Hi, I'm Christian", []),
        ("Hi, I'm Christian, nice to meet you", []),
        ("Hi, I'm Christian and I live in Oslo", ["Lives in Oslo"]),
        ("Hi, I'm Christian Weber", ["Name: Christian Weber"]),
        ("Hi! My name is Christian", ["Name: Christian"]),
    ],
)
def test_a_name_given_after_a_greeting_is_learned(text: str, expected: list[str]) -> None:
    assert [said.text for said in detect_memory(text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "I live in Berlin, I think",
        "i live in berlin i think",
        "I'm a nurse, probably.",
        "I work at Acme, if I remember correctly",
        "I'm allergic to cats, I'm not sure.",
        "Remember that I live in Berlin, I guess",
        "Actually, I live in Lisbon, I think",
        "I live in Berlin, I think, and I love it there",
    ],
)
def test_a_hedged_statement_is_not_learned(text: str) -> None:
    # Spec 003 §8 has no confidence for what the user is unsure of (a statement is 0.95).
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My sister lives in Rome and I live in Berlin", ["Lives in Berlin"]),
        ("My sister lives in Rome, I live in Berlin.", ["Lives in Berlin"]),
        ("My mom is a nurse and I'm a doctor.", ["Is a doctor"]),
        ("My wife and I moved to Lisbon.", ["Lives in Lisbon"]),
        ("My girlfriend Ana and I split up.", ["Broke up with Ana"]),
        ("She said she's moving and I live in Berlin.", []),
    ],
)
def test_what_someone_else_does_is_not_theirs_but_what_follows_of_their_own_is(
    text: str, expected: list[str]
) -> None:
    assert [said.text for said in detect_memory(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("we live in Madrid", ["Lives in Madrid"]),
        ("We live in Madrid now.", ["Lives in Madrid"]),
        ("we're based in Lisbon", ["Lives in Lisbon"]),
        ("We've been living in Berlin for 5 years", ["Lives in Berlin"]),
        ("we are living in new york", ["Lives in New York"]),
        ("we live in Madrid and I work in Toledo", ["Lives in Madrid", "Works in Toledo"]),
        # Nothing named as a place: what "we" live in need not be where they live.
        ("we live in a small flat", []),
        ("we live in fear of the landlord", []),
        ("if we lived in Madrid", []),
    ],
)
def test_where_we_live_is_where_the_user_lives(text: str, expected: list[str]) -> None:
    # The user is one of "we": stored as "I live in Madrid" is, so saying that is a repeat.
    assert [said.text for said in detect_memory(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # texting
        ("hiii! I'm Marta, from Porto", ["Name: Marta"]),
        ("i love cooking, baking and gardening lol", ["Loves cooking, baking and gardening"]),
        ("I live in Berlin haha", ["Lives in Berlin"]),
        ("i live in new york", ["Lives in New York"]),
        ("i'm learning german and french rn", ["Is learning German and French"]),
        # second-language English and plain everyday forms
        ("I am from Brazil and I am living in Berlin now", ["Lives in Berlin"]),
        ("I'm living in Lisbon.", ["Lives in Lisbon"]),
        ("I'm tired and I live in Berlin", ["Lives in Berlin"]),
        ("I'm working as a nurse.", ["Is working as a nurse"]),
        ("I have two cats, they are called Tom and Jerry", ["Has two cats called Tom and Jerry"]),
        ("I have a dog, his name is Rex.", ["Has a dog called Rex"]),
        ("my girlfriend is called Sofia and i love her", ["Their girlfriend is called Sofia"]),
        ("My brother speak Italian but I speak only English", ["Speaks English"]),
        ("I've been vegetarian for 5 years.", ["Is vegetarian"]),
        ("I am vegetarian since 5 years", ["Is vegetarian"]),
        ("I have been living in Berlin for 3 years", ["Lives in Berlin"]),
        # still nothing
        ("I'm working at home today.", []),
    ],
)
def test_everyday_registers_are_read_as_plainly_said(text: str, expected: list[str]) -> None:
    assert [said.text for said in detect_memory(text)] == expected


def test_a_hedge_on_another_clause_leaves_the_plain_one() -> None:
    said = detect_memory("I live in Berlin and I think you're great")
    assert [candidate.text for candidate in said] == ["Lives in Berlin"]


def test_an_introduction_in_a_group_is_not_learned() -> None:
    assert detect_memory("Hi! I'm Ana", in_group=True, addressed=True) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Note: I'm vegan.", "Is vegan"),
        ("PS: I moved to Porto", "Lives in Porto"),
        ("P.S. I moved to Porto", "Lives in Porto"),
        ("ps i live in porto", "Lives in Porto"),
        ("NB: I'm a nurse", "Is a nurse"),
        ("Update: I work at Globex now", "Works at Globex"),
        ("Edit: I live in Leeds", "Lives in Leeds"),
        ("Important: I'm allergic to peanuts", "Is allergic to peanuts"),
    ],
)
def test_a_header_word_over_the_users_own_words_is_read_past(text: str, expected: str) -> None:
    assert [candidate.text for candidate in detect_memory(text)] == [expected]


@pytest.mark.parametrize(
    "text",
    [
        # over a plan, a reply or a reminder, not a fact about them
        "Todo: become vegan",
        "Todo: I live in Porto",
        "Re: my vegan friend",
        "Re: I'm vegan",
        "Reminder: I'm vegan",
        # not a header: no colon, or another word
        "Note that I'm vegan",
        "Noted: I am a nurse",
        "Psst I am a nurse",
        "PS5: I live in Porto",
    ],
)
def test_a_header_over_a_plan_or_another_word_is_not_read_past(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    "text",
    [
        # "morning" and "evening" as words of the sentence, not a greeting
        "Morning runs are my thing.",
        "Evening classes start soon.",
        "Evening I work at the bar.",
        "Mornings I work at the bar.",
        "Good morning, do I live in the right zone?",
        "Hi there, if I lived in Lisbon I'd surf.",
    ],
)
def test_a_morning_or_evening_that_is_not_a_greeting_is_not_skipped(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("My birthday is on June 3rd", "Their birthday is on June 3rd"),
        ("my birthday's on the 3rd of June.", "Their birthday's on the 3rd of June"),
        ("My birthday is in May.", "Their birthday is in May"),
        ("My wife is called Maria", "Their wife is called Maria"),
        ("my husband's name is Tom", "Their husband is called Tom"),
        ("my husband's name is tom", "Their husband is called Tom"),
        ("my partner is Sam", "Their partner is called Sam"),
        ("My boyfriend is named Leo.", "Their boyfriend is called Leo"),
        ("I'm allergic to peanuts", "Is allergic to peanuts"),
        (
            "I am severely allergic to penicillin and latex.",
            "Is severely allergic to penicillin and latex",
        ),
        ("I'm no longer allergic to cats.", "Is no longer allergic to cats"),
        ("I'm not allergic to cats anymore.", "Is not allergic to cats anymore"),
        ("I got a new job at Globex", "Got a new job at Globex"),
        ("I've just started a new job at Globex.", "Has just started a new job at Globex"),
        ("I started at Globex", "Started at Globex"),
        ("I now work at Globex", "Now works at Globex"),
    ],
)
def test_a_birthday_a_partner_an_allergy_or_a_new_job_is_a_fact(text: str, stored: str) -> None:
    assert detect_memory(text) == [MemoryCandidate("fact", stored)]


@pytest.mark.parametrize(
    "text",
    [
        # a birthday: someone else's, asked about, supposed, or not a day of the year
        "My friend's birthday is on June 3rd.",
        "my wife's birthday is in May",
        "Is your birthday in June?",
        "If my birthday is in June, the party moves.",
        "My birthday is coming up.",
        "My birthday is tomorrow.",
        # a partner: asked about, someone else's, not a name, or reported
        "Is your wife called Maria?",
        "My friend's wife is called Maria.",
        "My wife is Italian.",
        "my partner is sick",
        "My husband is called away a lot.",
        "My wife is called Maria, she says.",
        "Imagine my wife is called Maria.",
        # an allergy: asked about, someone else's, supposed or in jest (a denial retires
        # one remembered: test_a_denial_names_the_remembered_fact_it_retires)
        "Are you allergic to peanuts?",
        "My son is allergic to peanuts.",
        "If I'm allergic to peanuts, what then?",
        "I'm allergic to Mondays.",
        "I'm allergic to this kind of code.",
        # a job: an interview, someone else's, supposed, or a time or a start
        "I got a job interview at Globex.",
        "My wife got a new job at Globex.",
        "If I got a new job at Globex I'd move.",
        "Did I start at Globex?",
        "I started at 9.",
        "I started at the bottom.",
        "I started at Christmas.",
    ],
)
def test_what_only_sounds_like_a_birthday_partner_allergy_or_job_does_not_fire(
    text: str,
) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("I started smoking again", "Started smoking again"),
        ("I've started smoking again.", "Has started smoking again"),
        ("I'm drinking again!", "Is drinking again"),
        ("I smoke again.", "Smokes again"),
        ("I started eating meat again.", "Started eating meat again"),
    ],
)
def test_a_habit_taken_up_again_is_a_fact(text: str, stored: str) -> None:
    assert detect_memory(text) == [MemoryCandidate("fact", stored)]


@pytest.mark.parametrize(
    "text",
    [
        "If I started smoking again I'd hate myself.",
        "My dad started smoking again.",
        "Did I start smoking again?",
        "Have you started smoking again?",
        "I started eating again.",
        "I started running again.",
    ],
)
def test_what_only_sounds_like_a_habit_taken_up_again_does_not_fire(text: str) -> None:
    assert detect_memory(text) == []


def test_several_sentences_and_no_repeats() -> None:
    text = "Hi, my name is Jo. I'm a nurse. I live in Leeds. My name is Jo."
    assert detect_memory(text) == [
        MemoryCandidate("name", "Name: Jo", replaces_kind=True),
        MemoryCandidate("fact", "Is a nurse"),
        MemoryCandidate("fact", "Lives in Leeds"),
    ]


def test_curly_apostrophes() -> None:
    assert detect_memory("I’m a paralegal.") == [MemoryCandidate("fact", "Is a paralegal")]


def test_long_text_is_cut() -> None:
    [candidate] = detect_memory("Remember that " + "my cat likes tuna " * 40)
    assert len(candidate.text) <= TEXT_MAX
    assert candidate.text.endswith("…")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I prefer short answers", MemoryCandidate("preference", "Prefers short answers")),
        ("I’m allergic to peanuts.", MemoryCandidate("fact", "Is allergic to peanuts")),
        ("my cat is called Miso", MemoryCandidate("fact", "Their cat is called Miso")),
        ("call me Ana", MemoryCandidate("name", "Name: Ana", replaces_kind=True)),
        ("never use emoji with me", MemoryCandidate("directive", "Never use emoji with the user")),
        ("vegan", MemoryCandidate("fact", "vegan")),
    ],
)
def test_memory_added_by_hand_is_stored_about_the_user(
    text: str, expected: MemoryCandidate
) -> None:
    """``/memory add`` text goes into the card as a learned fact does: the model reads
    the card, and "I prefer short answers" there would be its own preference. Asked for
    in so many words, it is committed."""
    assert stated_memory(text) == replace(expected, committed=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Plainly asked of the assistant: kept, from a group too.
        ("Please call me Annie.", [MemoryCandidate("name", "Name: Annie", replaces_kind=True)]),
        ("From now on, call me Annie.", [MemoryCandidate("name", "Name: Annie", True)]),
        ("Call me Annie from now on.", [MemoryCandidate("name", "Name: Annie", True)]),
        (
            "Remember that I'm vegetarian.",
            [MemoryCandidate("fact", "Is vegetarian", committed=True)],
        ),
        (
            "Please remember my name is Ann.",
            [MemoryCandidate("name", "Name: Ann", True, committed=True)],
        ),
        # Said to the room: not theirs to keep.
        ("My name is Bob. I live in Paris.", []),
        ("Call me Annie.", []),
        ("Call me Ishmael.", []),
        ("I go by Alex now.", []),
        ("I'm a paralegal at a small firm.", []),
        ("I prefer short answers.", []),
        ("Never use emojis.", []),
        ("Actually, I live in Lisbon now.", []),
        ("I moved to Berlin.", []),
        # Not about the speaker, or not a name.
        ("Remember that the deadline is Friday.", []),
        ("Please call me later.", []),
        ("Please call me when you land.", []),
    ],
)
def test_in_a_group_only_what_is_asked_of_the_assistant(
    text: str, expected: list[MemoryCandidate]
) -> None:
    assert detect_memory(text, in_group=True) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Call me Annie.", [MemoryCandidate("name", "Name: Annie", replaces_kind=True)]),
        ("Just call me Mary Jane", [MemoryCandidate("name", "Name: Mary Jane", True)]),
        (
            "Remember that I'm vegetarian.",
            [MemoryCandidate("fact", "Is vegetarian", committed=True)],
        ),
        # Still not a name, nor what the group hears about someone.
        ("call me when you land", []),
        ("Call me Monday morning.", []),
        ("Call me back.", []),
        ("Call me Annie, I'm off now, bye all", []),
        ("My name is Bob. I live in Paris.", []),
        ("I prefer short answers.", []),
    ],
)
def test_in_a_group_a_plain_call_me_addressed_to_the_assistant_is_asked_of_it(
    text: str, expected: list[MemoryCandidate]
) -> None:
    assert detect_memory(text, in_group=True, addressed=True) == expected


def test_call_me_on_a_weekday_is_not_a_name() -> None:
    assert detect_memory("Call me Monday.") == []
    assert detect_memory("call me Friday evening") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "@bot remember I prefer metric units",
            [MemoryCandidate("preference", "Prefers metric units", committed=True)],
        ),
        (
            "@bot actually I'm vegetarian now, not vegan",
            [MemoryCandidate("correction", "Is vegetarian")],
        ),
        (
            "Actually, my birthday is in June.",
            [MemoryCandidate("correction", "Their birthday is in June")],
        ),
        ("Actually, I live in Lisbon now.", [MemoryCandidate("correction", "Lives in Lisbon")]),
        # A correction about the work, or a plain statement, is not the speaker's to keep.
        ("@bot correction: the hearing is on Tuesday.", []),
        ("No, I meant the other file.", []),
        ("I'm vegetarian.", []),
        # About someone else in their life, said for the room's plans: not of themselves.
        ("@bot actually, my sister is vegan", []),
        ("Actually, my best friend's allergic to nuts.", []),
        ("actually my kids are vegetarian", []),
        (
            "Actually, my office is on the 5th floor.",
            [MemoryCandidate("correction", "Their office is on the 5th floor")],
        ),
    ],
)
def test_in_a_group_a_correction_the_speaker_makes_of_themselves_is_learned(
    text: str, expected: list[MemoryCandidate]
) -> None:
    assert detect_memory(text, in_group=True, addressed=True) == expected
    if expected and expected[0].kind == "correction":
        assert detect_memory(text, in_group=True) == []  # said to the room


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("I'm vegetarian.", "Is vegetarian"),
        ("I am a vegan.", "Is vegan"),
        ("Actually, I'm vegetarian now.", "Is vegetarian"),
    ],
)
def test_a_diet_is_a_fact(text: str, stored: str) -> None:
    [candidate] = detect_memory(text)
    assert candidate.text == stored


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("I drink coffee every day.", "Drinks coffee every day"),
        ("I go running every morning", "Goes running every morning"),
        ("I walk the dog every evening.", "Walks the dog every evening"),
        ("I take the train to work.", "Takes the train to work"),
        (
            "I usually drink coffee every morning before work",
            "Usually drinks coffee every morning before work",
        ),
        ("I do yoga on weekdays.", "Does yoga on weekdays"),
        ("I swim twice a week.", "Swims twice a week"),
        ("I go to the gym each week.", "Goes to the gym each week"),
        ("I used to drink coffee every day.", "Used to drink coffee every day"),
    ],
)
def test_a_routine_said_with_how_often_is_a_fact(text: str, stored: str) -> None:
    assert detect_memory(text) == [MemoryCandidate("fact", stored)]


@pytest.mark.parametrize(
    "text",
    [
        "I drink coffee.",
        "Do I drink coffee every day?",
        "do I drink coffee every day",
        "If I drank coffee every day, I'd never sleep.",
        "if I drink coffee every day",
        "My brother drinks coffee every day.",
        "She said I drink coffee every day.",
        "I think I drink coffee every day.",
        "I don't drink coffee every day.",
        "I eat every day.",
    ],
)
def test_what_only_sounds_like_a_routine_does_not_fire(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("I usually prefer tea.", "Usually prefers tea"),
        ("I always prefer short answers.", "Always prefers short answers"),
        ("I really prefer bullet points.", "Really prefers bullet points"),
    ],
)
def test_an_adverb_before_the_verb_leaves_the_verb_conjugated(text: str, stored: str) -> None:
    # "I usually prefer tea" was stored as "Usuallies prefer tea".
    assert detect_memory(text) == [MemoryCandidate("preference", stored)]


@pytest.mark.parametrize(
    "text",
    [
        "My partner is Acme Corp.",
        "My partner is Globex Inc",
        "my partner is called Initech Ltd.",
        "My business partner is Dana.",
        "My business partner is called Dana.",
        "My partner at work is Dana.",
        "My partner in the firm is Dana.",
        "Actually, my partner is Acme Corp.",
    ],
)
def test_a_business_partner_is_not_learned_as_a_partner(text: str) -> None:
    # Spec 003 §5.1 leaves business contacts to the CRM: nothing is kept, and a business
    # given as "my partner" does not correct the partner remembered.
    assert detect_memory(text) == []
    assert detect_memory(text, in_group=True, addressed=True) == []
    assert detect_memory("My partner is Dana.") == [
        MemoryCandidate("fact", "Their partner is called Dana")
    ]


@pytest.mark.parametrize(
    "text", ["My dog Rex passed away.", "My cat Miso was put to sleep.", "my dog Rex died"]
)
def test_a_pet_that_died_is_not_learned_as_one_they_have(text: str) -> None:
    # Only what it retires (the pet remembered), nothing to keep.
    assert [candidate.retire_only for candidate in detect_memory(text)] == [True]


@pytest.mark.parametrize(
    "text",
    [
        # Moves that are not theirs, or not made.
        "If we moved to Lisbon, I'd learn Portuguese.",
        "We never moved to Lisbon.",
        "My parents moved to Lisbon last month.",
        "She said we moved to Lisbon.",
        "Did we move to Lisbon?",
        "We moved to Postgres last month.",
        "We moved to Lisbon for the summer.",
        # Diets not kept.
        "I never went vegan.",
        "My sister went vegan.",
        "I went vegan for a month once.",
        "If I went vegan I'd miss cheese.",
        "I used to be vegan.",
        # Breakups of others, not made, or not of a couple.
        "My sister broke up with Sam.",
        "She said we broke up.",
        "We never broke up.",
        "Did you and Sam break up?",
        "If we broke up I'd move out.",
        "We broke up the fight.",
        "We split up and searched the woods.",
        # Pastimes not given up by them.
        "I stopped going to it.",
        "She stopped going to the gym.",
        "I never stopped running.",
        "I stopped running the script.",
        "I stopped going to the gym because of my knee.",
        "If I gave up running I'd go mad.",
        # Scheduled events, and pets that did not die or are not theirs.
        "I have a meeting every Monday.",
        "I have a call with the team every Friday.",
        "I have a standup every morning.",
        "My dog didn't die.",
        "My neighbour's dog died.",
        "My dog almost died.",
        "If my dog died I'd be lost.",
        "Did your dog die?",
        # Not a partner now, or a business partner.
        "My ex-boyfriend Tom called.",
        "My boyfriend Tom passed away.",
        "My partner Dana signed the contract.",
        "I drink tea every morning now?",
    ],
)
def test_what_only_sounds_like_a_change_in_their_life_does_not_fire(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("I went vegan.", "Is vegan"),
        ("I am vegan now.", "Is vegan"),
        ("I've gone vegetarian.", "Is vegetarian"),
        ("I became vegetarian last year.", "Is vegetarian"),
        ("I'm strictly vegan.", "Is strictly vegan"),
        ("We just moved to Lisbon.", "Lives in Lisbon"),
        ("We've moved to Porto a few weeks ago.", "Lives in Porto"),
        ("My new girlfriend is called Eve.", "Their girlfriend is called Eve"),
        ("Dinner with my new boyfriend Tom tonight.", "Their boyfriend is called Tom"),
        ("I stopped going to the gym.", "Stopped going to the gym"),
        ("I gave up playing the piano.", "Gave up playing the piano"),
        ("I drink tea every morning these days.", "Drinks tea every morning"),
        ("Nowadays I swim twice a week.", "Swims twice a week"),
        ("I have piano lessons every Tuesday.", "Has piano lessons every Tuesday"),
    ],
)
def test_a_change_in_their_life_is_learned(text: str, stored: str) -> None:
    assert detect_memory(text) == [MemoryCandidate("fact", stored)]


@pytest.mark.parametrize(
    ("text", "ended"),
    [
        ("My dog Rex passed away.", "Their dog Rex died"),
        ("Our cat died.", "Their cat died"),
        ("We had to put our dog down last week.", "Their dog died"),
        ("I broke up with Sam.", "Broke up with Sam"),
        ("Sam and I split up.", "Broke up with Sam"),
        ("My girlfriend Ana and I split up.", "Broke up with Ana"),
        ("We broke up.", "Broke up with their partner"),
        ("My gf dumped me.", "Broke up with their girlfriend"),
    ],
)
def test_a_pet_or_partner_gone_only_retires(text: str, ended: str) -> None:
    assert detect_memory(text) == [MemoryCandidate("fact", ended, retire_only=True)]


@pytest.mark.parametrize(
    "text",
    [
        "I'm going to the cinema with my partner Dana tonight.",
        "My partner Dana and I are off to Rome.",
        "Cooking dinner for my partner Dana.",
        "my partner Dana is sick",
    ],
)
def test_a_partner_named_in_passing_in_a_personal_sentence_is_learned(text: str) -> None:
    assert detect_memory(text) == [MemoryCandidate("fact", "Their partner is called Dana")]


@pytest.mark.parametrize(
    "text",
    [
        "My partner Dana signed the contract.",
        "my partner Dana at Acme says hi",
        "Lunch with my partner Dana from Globex.",
        "My business partner Dana called.",
        "Our partner company is Acme.",
        "My partner Dana Holdings sued.",
        "I met my partner Dana for the pitch.",
        "my partner Dana & I run the shop",
        "My partner at Acme, Dana, agrees.",
        "Talked to my partner Dana about work.",
        "My tennis partner Dana won.",
        "Had a drink with my ex-partner Dana.",
    ],
)
def test_a_partner_named_in_a_business_sentence_is_not_learned(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "denied"),
    [
        ("That's wrong, I don't live in Berlin.", "Lives in Berlin"),
        ("No, I don't live in Berlin", "Lives in Berlin"),
        ("I don't work at Acme.", "Works at Acme"),
        ("I'm not vegan", "Is vegan"),
        ("I'm not vegan any more.", "Is vegan"),
        ("Actually, I'm not vegan.", "Is vegan"),
        ("I'm not a teacher.", "Is a teacher"),
        ("I'm not allergic to peanuts.", "Is allergic to peanuts"),
        # "No longer", and work ended "any more", deny as "not" does.
        ("I'm no longer vegan.", "Is vegan"),
        ("I'm no longer a nurse", "Is a nurse"),
        ("I no longer work at Google.", "Works at Google"),
        ("I don't work at Google anymore.", "Works at Google"),
    ],
)
def test_a_denial_names_the_remembered_fact_it_retires(text: str, denied: str) -> None:
    assert detect_memory(text) == [MemoryCandidate("fact", denied, retire_only=True, denies=True)]


@pytest.mark.parametrize(
    "text",
    [
        "I don't live in Berlin yet.",
        "I'm not vegan yet",
        "don't I live in Berlin?",
        "Don't I live in Berlin",
        "She doesn't live in Berlin.",
        "My boss isn't vegan.",
        "I'm not sure.",
        "I'm not a morning person.",
        "If I'm not vegan, what then?",
        "She said I'm not vegan.",
    ],
)
def test_what_only_sounds_like_a_denial_denies_nothing(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("I live in Berlin, by the way, and I love it there.", ["Lives in Berlin"]),
        ("I'm a teacher, by the way.", ["Is a teacher"]),
        ("I work at Acme, which is a startup in Berlin.", ["Works at Acme"]),
        ("I live in Lisbon but I work in Porto.", ["Lives in Lisbon", "Works in Porto"]),
        ("I'm a nurse and I love coffee.", ["Is a nurse", "Loves coffee"]),
        # Not split: the first part says nothing of its own, or the whole is supposed.
        ("My wife and I broke up.", ["Broke up with their wife"]),
        ("If I lived in Lisbon and I had a dog, I'd be happy.", []),
        ("She said I live in Berlin and I'm lazy.", []),
    ],
)
def test_a_fact_is_kept_without_an_aside_or_the_clause_after_it(
    text: str, stored: list[str]
) -> None:
    assert [candidate.text for candidate in detect_memory(text)] == stored


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("We have two cats, Mia and Leo.", "Has two cats called Mia and Leo"),
        ("We've got a dog called Rex.", "Has a dog called Rex"),
        (
            "I speak English, German and a bit of Spanish",
            "Speaks English, German and a little Spanish",
        ),
        ("I speak French fluently.", "Speaks fluent French"),
        ("I'm fluent in Italian.", "Speaks fluent Italian"),
        ("I'm a native Spanish speaker.", "Speaks native Spanish"),
        ("I also speak some Japanese.", "Speaks some Japanese"),
        # One level for several languages is said once.
        ("I speak English and German fluently", "Speaks English and German fluently"),
        ("I speak fluent English and fluent German.", "Speaks English and German fluently"),
        ("I'm fluent in Italian and Spanish.", "Speaks Italian and Spanish fluently"),
        ("I speak a bit of French and a little German", "Speaks French and German a little"),
        # and those being learned
        ("I'm learning Spanish", "Is learning Spanish"),
        ("i'm learning spanish on duolingo", "Is learning Spanish"),
        ("I've been studying Japanese and Korean.", "Is learning Japanese and Korean"),
        ("I'm trying to learn Greek.", "Is learning Greek"),
    ],
)
def test_pets_a_household_has_and_languages_spoken_are_facts(text: str, stored: str) -> None:
    assert detect_memory(text) == [MemoryCandidate("fact", stored)]


@pytest.mark.parametrize(
    "text",
    [
        "I speak to my boss every Monday.",
        "I speak for everyone here.",
        "Do you speak German?",
        "My sister speaks German.",
        "If I spoke German, I'd move.",
        "We have two options, A and B.",
    ],
)
def test_what_only_sounds_like_a_language_or_pets_does_not_fire(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "I hate pineapple on it",
        "I love cheese with it.",
        "I like mine with that",
        "I love stuff like that",
        "I prefer pineapple on it",
        "I prefer mine without them",
    ],
)
def test_a_like_of_something_said_before_is_not_learned(text: str) -> None:
    # "Pineapple on it" means nothing out of the conversation; "Hates pineapple" would be
    # more than they said.
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I hate pineapple on pizza", ["Hates pineapple on pizza"]),
        ("I prefer short answers", ["Prefers short answers"]),
        ("I love it when you keep it short", ["Loves it when you keep it short"]),
    ],
)
def test_a_like_with_its_object_named_is_learned(text: str, expected: list[str]) -> None:
    assert [said.text for said in detect_memory(text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "I live in fear of deadlines",
        "I live in hope",
        "I'm living in constant fear of my inbox",
        "I live in the moment",
        "I basically live in my pyjamas",
        "Actually, I live in hope",
    ],
)
def test_living_in_a_state_of_mind_is_not_where_they_live(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Berlin", ["Lives in Berlin"]),
        ("I live in a small flat", ["Lives in a small flat"]),
        ("I live in the Netherlands", ["Lives in the Netherlands"]),
        ("Actually, I live on the 5th floor", ["Lives on the 5th floor"]),
        ("actually I live with my parents", ["Lives with their parents"]),
    ],
)
def test_where_they_live_is_still_learned(text: str, expected: list[str]) -> None:
    assert [said.text for said in detect_memory(text)] == expected


@pytest.mark.parametrize(
    ("text", "in_group"),
    [
        ("remember that I hate pineapple on it", False),
        ("please remember I'm allergic to it", False),
        ("@bot remember that I hate pineapple on it", True),
    ],
)
def test_a_remembered_like_of_something_said_before_is_not_learned(
    text: str, in_group: bool
) -> None:
    assert detect_memory(text, in_group=in_group, addressed=True) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("remember that I love walks in that park", ["Loves walks in that park"]),
        ("remember that we live in a small flat", ["We live in a small flat"]),
        ("remember that we live in Madrid", ["Lives in Madrid"]),
    ],
)
def test_a_remembered_body_that_names_what_it_means_is_learned(
    text: str, expected: list[str]
) -> None:
    assert [said.text for said in detect_memory(text)] == expected


@pytest.mark.parametrize(
    "said",
    [
        "I have two cats, Mia and Leo",
        "I have two cats, they're called Mia and Leo",
        "I have a dog called Rex",
        "my husband's name is Tom",
        "my partner is Sam",
        "my boyfriend Tom is lovely",
        "I'm severely allergic to cats and dogs",
        "I drink coffee every morning",
        "I take the train to work",
        "I love hiking",
        "my dog Rex died",
        "Leo passed away",
        "we broke up",
    ],
)
def test_an_everyday_thing_asked_to_keep_is_stored_as_said_plainly(said: str) -> None:
    """ "Remember that I have two cats, Mia and Leo" is "Has two cats called Mia and
    Leo", as said plainly, so that "Leo passed away" later finds it; ``/memory add``
    reads it the same way."""
    (plainly,) = detect_memory(f"{said}.")
    assert detect_memory(f"Remember that {said}.") == [replace(plainly, committed=True)]
    assert stated_memory(said) == replace(plainly, committed=True)


def test_memory_added_by_hand_is_kept_even_when_it_points_back() -> None:
    # "/memory add" is asked in so many words; the user knows what "it" is.
    assert stated_memory("I'm allergic to it") == MemoryCandidate(
        "fact", "Is allergic to it", committed=True
    )


@pytest.mark.parametrize(
    "text",
    [
        "I work for them",
        "I'm a nurse there",
        "I live near it",
        "remember that I work for them",
        "actually, I work for them now",
    ],
)
def test_a_fact_of_something_said_before_is_not_learned(text: str) -> None:
    # Who "them" are, or where "there" is, was said earlier: out of the chat it is nothing.
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm a teacher at that school", ["Is a teacher at that school"]),
        ("I live in Berlin and I love it there", ["Lives in Berlin"]),
        ("actually, I work for Globex now", ["Works for Globex"]),
    ],
)
def test_a_fact_naming_what_it_means_is_learned(text: str, expected: list[str]) -> None:
    assert [said.text for said in detect_memory(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I joined Stripe as an engineer", MemoryCandidate("fact", "Is an engineer at Stripe")),
        ("I just joined Stripe, new job!", MemoryCandidate("fact", "Works at Stripe")),
        ("I joined Stripe's payments team", MemoryCandidate("fact", "Works at Stripe")),
        (
            "I joined Goldman Sachs as an analyst in March",
            MemoryCandidate("fact", "Is an analyst at Goldman Sachs"),
        ),
        ("I left Google last month", MemoryCandidate("fact", "Left Google", retire_only=True)),
    ],
)
def test_an_employer_joined_with_a_word_of_work_or_left_is_read(
    text: str, expected: MemoryCandidate
) -> None:
    assert detect_memory(text) == [expected]


# Spec 003 §7's explicit recall-failure triggers that carry what was told: memory failed
# the user, and what they had said is their correction (§5.3: sure, 1.0, and it wins).
@pytest.mark.parametrize(
    ("text", "kind", "stored"),
    [
        ("I already told you I'm vegetarian.", "correction", "Is vegetarian"),
        ("I just told you, I'm a nurse", "correction", "Is a nurse"),
        ("I told you already, I live in Lisbon.", "correction", "Lives in Lisbon"),
        ("No, I said I live in Lisbon.", "correction", "Lives in Lisbon"),
        ("You forgot that I'm allergic to nuts!", "correction", "Is allergic to nuts"),
        ("I mentioned it before: I'm a nurse.", "correction", "Is a nurse"),
        ("Hi, I already told you I'm vegan!", "correction", "Is vegan"),
        ("I already told you my name is Ana.", "name", "Name: Ana"),
        ("I just told you, I prefer short answers.", "preference", "Prefers short answers"),
    ],
)
def test_what_the_user_says_memory_forgot_is_their_correction(
    text: str, kind: str, stored: str
) -> None:
    assert [(said.kind, said.text) for said in detect_memory(text)] == [(kind, stored)]


def test_a_recall_failure_denying_a_fact_retires_it() -> None:
    assert detect_memory("I already told you I'm not vegan.") == [
        MemoryCandidate("fact", "Is vegan", retire_only=True, denies=True)
    ]


def test_each_statement_told_again_is_a_correction() -> None:
    assert detect_memory("I already told you I live in Berlin and I'm a nurse.") == [
        MemoryCandidate("correction", "Lives in Berlin"),
        MemoryCandidate("correction", "Is a nurse"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I joined Twitter",
        "I joined a gym",
        "I joined the call",
        "I joined Zoom for the team call",
        "I joined Slack's team call",
        "I joined LinkedIn, new job hunt begins",
        "I joined Monday's team meeting",
        "I joined Discord as a user",
        "I left my keys at home",
        "I left Google Maps open",
    ],
)
def test_joining_or_leaving_with_no_word_of_an_employer_is_not_read(text: str) -> None:
    assert detect_memory(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "I already told you that yesterday.",
        "I already told you about the deploy.",
        "You forgot the attachment.",
        "I already told you I'm vegetarian, I think.",
        "She said I already told you I'm vegan.",
        "I already told you I'm vegetarian?",
    ],
)
def test_a_recall_failure_without_a_statement_of_the_user_learns_nothing(text: str) -> None:
    assert detect_memory(text) == []


def test_in_a_group_a_recall_failure_is_learned_only_when_said_to_the_assistant() -> None:
    said = "I already told you I'm vegetarian."
    assert detect_memory(said, in_group=True, addressed=True) == [
        MemoryCandidate("correction", "Is vegetarian")
    ]
    assert detect_memory(said, in_group=True, addressed=False) == []
    told_of_another = "I already told you my sister is vegan."
    assert detect_memory(told_of_another, in_group=True, addressed=True) == []


# Spec 003 §7's memory trigger "important:": what follows is learned when it states
# something of the user; the work's notes are not theirs.
@pytest.mark.parametrize(
    ("text", "kind", "stored"),
    [
        ("Important: I'm allergic to peanuts.", "fact", "Is allergic to peanuts"),
        ("IMPORTANT - my name is Ana", "name", "Name: Ana"),
        ("Very important: never call me Bob.", "directive", "Never call the user Bob"),
    ],
)
def test_what_is_marked_important_is_learned(text: str, kind: str, stored: str) -> None:
    assert [(said.kind, said.text) for said in detect_memory(text)] == [(kind, stored)]


def test_a_work_note_marked_important_is_not_about_the_user() -> None:
    assert detect_memory("Important: the deadline is Friday.") == []


@pytest.mark.parametrize("in_group", [False, True])
@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "Remember that I'm vegan and my wife is called Maria.",
            [("fact", "Is vegan"), ("fact", "Their wife is called Maria")],
        ),
        (
            "Please remember I live in Berlin, and I love hiking.",
            [("fact", "Lives in Berlin"), ("preference", "Loves hiking")],
        ),
        # Not a statement each: one fact, or what the parts say.
        (
            "Remember that my wife and I live in Berlin.",
            [("fact", "Their wife and they live in Berlin")],
        ),
        ("Please remember I live in Berlin and I love it there.", [("fact", "Lives in Berlin")]),
    ],
)
def test_a_remember_that_body_keeps_each_statement_it_joins(
    text: str, kept: list[tuple[MemoryKind, str]], in_group: bool
) -> None:
    """ "Remember that I'm vegan and my wife is called Maria" is two facts, as the same
    words said plainly are, each kept as asked."""
    assert detect_memory(text, in_group=in_group) == [
        MemoryCandidate(kind, said, committed=True) for kind, said in kept
    ]
