"""Learning living memory into the store: a correction retires what it corrects."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from middleware.continuity.model import MemoryFact
from middleware.continuity.settings import MemoryConfig
from middleware.memory.candidate import MemoryCandidate
from middleware.memory.learn import enforce_limit, learn_from_message
from middleware.memory.replacement import supersedes
from middleware.store import SqliteStore

NOW = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
ANA = "telegram:1"


async def remembered(store: SqliteStore, *messages: str) -> list[str]:
    for minute, text in enumerate(messages):
        await learn_from_message(store, MemoryConfig(), ANA, text, NOW + timedelta(minutes=minute))
    return [fact.text for fact in await store.memory_facts(ANA)]


@pytest.mark.parametrize(
    ("messages", "kept"),
    [
        (("I live in Berlin.", "Actually, I moved to Lisbon."), ["Lives in Lisbon"]),
        (("I live in Berlin.", "I live in Lisbon now."), ["Lives in Lisbon"]),
        (("I live in Berlin. Actually, I moved to Lisbon.",), ["Lives in Lisbon"]),
        # A change said plainly, without "actually", replaces the old one too.
        # Stored as where they live now, so a later "I live in Berlin" is a repeat.
        (("I live in Lisbon.", "I moved to Berlin."), ["Lives in Berlin"]),
        (("I live in Lisbon.", "I've just moved to Berlin."), ["Lives in Berlin"]),
        # Where "we" live is where they live: a repeat of it, or its replacement.
        (("I live in Madrid.", "We live in Madrid."), ["Lives in Madrid"]),
        (("I live in Lisbon.", "we live in Madrid now"), ["Lives in Madrid"]),
        (("I work at Acme.", "I'm now working at Globex."), ["Is now working at Globex"]),
        (("I work for Acme.", "I started working at Globex."), ["Started working at Globex"]),
        (
            ("Remember that my office is on the 4th floor.", "Actually, my office is on the 5th."),
            ["Their office is on the 5th"],
        ),
        (
            ("I work at Acme.", "I work as a nurse.", "Actually, I work for Beta now."),
            ["Works as a nurse", "Works for Beta"],
        ),
        # A job with its employer names the employer; the job stands when only it changes.
        (
            ("I work at Acme.", "I'm a software engineer at Acme."),
            ["Is a software engineer at Acme"],
        ),
        (
            ("I'm a software engineer at Acme.", "I'm now working at Globex."),
            ["Is a software engineer", "Is now working at Globex"],
        ),
        (
            ("I'm a software engineer at Acme.", "Actually, I work for Globex now."),
            ["Is a software engineer", "Works for Globex"],
        ),
        (
            (
                "I'm a software engineer at Acme.",
                "I'm now working at Globex.",
                "I'm a software engineer at Globex.",
            ),
            ["Is a software engineer at Globex"],
        ),
        (("I'm a nurse at St Mary's.", "I'm a doctor at the Royal."), ["Is a doctor at the Royal"]),
        (
            ("I'm a nurse at the moment.", "I work at Acme."),
            ["Is a nurse", "Works at Acme"],
        ),
        # A habit given up, or a like turned dislike, retires what it contradicts.
        (("I love coffee.", "I stopped drinking coffee."), ["Stopped drinking coffee"]),
        (("I love coffee.", "I don't drink coffee any more."), ["Doesn't drink coffee any more"]),
        (("Remember that I smoke.", "I quit smoking."), ["Quit smoking"]),
        (("I love olives.", "I don't like olives."), ["Doesn't like olives"]),
        (("I hate mornings.", "I love mornings."), ["Loves mornings"]),
        # One of a list of likes contradicted: the rest of the list stands.
        (
            ("I love hiking, climbing and chess.", "I hate chess."),
            ["Loves hiking and climbing", "Hates chess"],
        ),
        (
            ("I hate chess.", "I love hiking, climbing and chess."),
            ["Loves hiking, climbing and chess"],
        ),
        # A habit or a thing given up, or a place moved out of, ends it.
        (("Remember that I'm a smoker.", "I quit smoking."), ["Quit smoking"]),
        (("I'm a heavy smoker.", "I don't smoke anymore."), ["Doesn't smoke anymore"]),
        (("I'm a smoker.", "I no longer smoke."), ["No longer smokes"]),
        (("I'm a social drinker.", "I don't drink any more."), ["Doesn't drink any more"]),
        (("I have a car.", "I sold my car."), ["Sold their car"]),
        (("I have a car.", "I don't have a car anymore."), ["Doesn't have a car anymore"]),
        (("I have a bike.", "I sold my car."), ["Has a bike", "Sold their car"]),
        (("I live in Berlin.", "I moved out of Berlin."), ["Moved out of Berlin"]),
        (
            ("I live in Lisbon.", "I moved out of Berlin."),
            ["Lives in Lisbon", "Moved out of Berlin"],
        ),
        (
            ("I love coffee.", "I don't drink any more."),
            ["Loves coffee", "Doesn't drink any more"],
        ),
        # A person keeps one diet at a time.
        (("I'm vegan.", "Actually, I'm vegetarian now."), ["Is vegetarian"]),
        (("I'm vegetarian.", "I'm vegan."), ["Is vegan"]),
        (
            ("I love coffee.", "I love tea.", "I quit smoking."),
            ["Loves coffee", "Loves tea", "Quit smoking"],
        ),
        (
            ("I stopped drinking coffee.", "I love coffee."),
            ["Stopped drinking coffee", "Loves coffee"],
        ),
        # A person has one birthday, one employer, and one of each partner.
        (
            ("My birthday is on June 3rd.", "Actually, my birthday is on July 3rd."),
            ["Their birthday is on July 3rd"],
        ),
        (
            ("My birthday is in May.", "My birthday is on June 3rd."),
            ["Their birthday is on June 3rd"],
        ),
        (("My wife is called Ana.", "my wife is Maria"), ["Their wife is called Maria"]),
        (
            (
                "My wife is called Ana.",
                "Remember that my brother's name is Tom.",
                "My husband's name is Tom.",
            ),
            [
                "Their wife is called Ana",
                "Their brother's name is Tom",
                "Their husband is called Tom",
            ],
        ),
        (("I work at Acme.", "I got a new job at Globex."), ["Got a new job at Globex"]),
        (("I work at Acme.", "I started at Globex."), ["Started at Globex"]),
        (("I work at Acme.", "I now work at Globex."), ["Now works at Globex"]),
        (
            ("I'm a software engineer at Acme.", "I got a new job at Globex."),
            ["Is a software engineer", "Got a new job at Globex"],
        ),
        # Allergies add up; one outgrown ends only itself, and no habit ends one.
        (
            ("I'm allergic to peanuts.", "I'm allergic to cats."),
            ["Is allergic to peanuts", "Is allergic to cats"],
        ),
        (
            (
                "I'm allergic to peanuts.",
                "I'm allergic to cats.",
                "I'm no longer allergic to cats.",
            ),
            ["Is allergic to peanuts", "Is no longer allergic to cats"],
        ),
        (
            ("Remember that I'm allergic to coffee.", "I stopped drinking coffee."),
            ["Is allergic to coffee", "Stopped drinking coffee"],
        ),
        # A habit taken up again ends having given it up, and giving it up again ends that.
        (("I don't smoke anymore.", "I started smoking again."), ["Started smoking again"]),
        (("I quit smoking.", "I'm smoking again."), ["Is smoking again"]),
        (("I no longer eat meat.", "I started eating meat again."), ["Started eating meat again"]),
        (("I started smoking again.", "I quit smoking."), ["Quit smoking"]),
        (
            ("I stopped drinking coffee.", "I started smoking again."),
            ["Stopped drinking coffee", "Started smoking again"],
        ),
        # Giving up drink ends drinking alcohol, not drinking coffee.
        (
            ("Remember that I drink coffee.", "I don't drink any more."),
            ["Drinks coffee", "Doesn't drink any more"],
        ),
        (
            ("Remember that I'm a coffee drinker.", "I don't drink any more."),
            ["Is a coffee drinker", "Doesn't drink any more"],
        ),
        (("Remember that I drink wine.", "I don't drink any more."), ["Doesn't drink any more"]),
        (
            ("Remember that I drink wine.", "I stopped drinking beer."),
            ["Drinks wine", "Stopped drinking beer"],
        ),
        (
            ("Remember that I'm a coffee drinker.", "I don't drink coffee any more."),
            ["Doesn't drink coffee any more"],
        ),
        # Not the same topic, or not one a person has one of: both stay.
        (
            ("Remember that my kids are Tom and Ann.", "Remember that my kids love chess."),
            ["Their kids are Tom and Ann", "Their kids love chess"],
        ),
        (
            ("I live in Berlin.", "I prefer short answers."),
            ["Lives in Berlin", "Prefers short answers"],
        ),
    ],
)
async def test_a_correction_replaces_what_it_corrects(
    store: SqliteStore, messages: tuple[str, ...], kept: list[str]
) -> None:
    assert await remembered(store, *messages) == kept


def test_moving_on_in_the_work_is_not_moving_house() -> None:
    move = MemoryCandidate("correction", "Moved to the next chapter")
    assert not supersedes(move, "Lives in Berlin")
    assert supersedes(MemoryCandidate("correction", "Moved to Lisbon"), "Lives in Berlin")
    assert not supersedes(MemoryCandidate("fact", "Lives in Berlin"), "Lives in Berlin")


@pytest.mark.parametrize(
    ("messages", "kept"),
    [
        (
            (
                "Remember that I'm vegetarian.",
                "I live in Paris.",
                "Please forget that I'm vegetarian.",
            ),
            ["Lives in Paris"],
        ),
        (("I moved to Paris.", "Forget that I live in Paris."), []),
        # Only what it names goes; a "don't forget that …" is something to keep.
        (("I live in Paris.", "Forget about the meeting."), ["Lives in Paris"]),
        (("Don't forget that I'm vegetarian.",), ["Is vegetarian"]),
        # As people say it: without "that", or of "me being …".
        (("I'm vegan. I live in Paris.", "Please forget I'm vegan."), ["Lives in Paris"]),
        (("I'm vegan. I live in Paris.", "Forget about me being vegan."), ["Lives in Paris"]),
        (("I'm vegan. I live in Paris.", "forget about my being vegan"), ["Lives in Paris"]),
        (("I live in Paris. I'm vegan.", "Forget about me living in Paris."), ["Is vegan"]),
        (
            (
                "I have two cats, Mia and Leo. I'm vegan.",
                "Forget about me having two cats, Mia and Leo.",
            ),
            ["Is vegan"],
        ),
        # "About" what is not theirs asks nothing of memory.
        (("I'm vegan.", "Forget about it."), ["Is vegan"]),
        (
            ("Remember that the meeting is on Friday.", "Forget about the meeting."),
            ["The meeting is on Friday"],
        ),
        (("I'm vegan.", "Forget I said that."), ["Is vegan"]),
    ],
)
async def test_asking_to_forget_a_fact_drops_it(
    store: SqliteStore, messages: tuple[str, ...], kept: list[str]
) -> None:
    """A user who says "forget that …" must not find it in the next session's card."""
    assert await remembered(store, *messages) == kept


async def test_what_a_message_asks_to_forget_is_reported_and_what_a_change_retires_is_not(
    store: SqliteStore,
) -> None:
    """The caller takes what was asked to be forgotten out of the replayed blocks too; a
    fact a change retired is corrected by the history itself, and is not reported."""
    await learn_from_message(store, MemoryConfig(), ANA, "I'm vegan. I live in Porto.", NOW)
    moved = await learn_from_message(store, MemoryConfig(), ANA, "I moved to Lisbon.", NOW)
    assert [f.text for f in moved.new] == ["Lives in Lisbon"] and moved.forgotten == []
    asked = await learn_from_message(
        store, MemoryConfig(), ANA, "Please forget that I'm vegan.", NOW
    )
    assert [f.text for f in asked.forgotten] == ["Is vegan"] and asked.new == []
    again = await learn_from_message(
        store, MemoryConfig(), ANA, "Please forget that I'm vegan.", NOW
    )
    assert again.forgotten == []


@pytest.mark.parametrize(
    ("messages", "kept"),
    [
        (("I work at Google.", "I left Google."), []),
        (("I'm a nurse at Acme.", "I left Acme last month."), ["Is a nurse"]),
        (("I work at Google.", "I left Google Maps."), ["Works at Google"]),
        (("I live in Berlin.", "I left Berlin."), ["Lives in Berlin"]),
        (("I left Acme.",), []),
        (("I work at Google.", "I joined Stripe as an engineer."), ["Is an engineer at Stripe"]),
        (("I work at Google.", "I joined Twitter."), ["Works at Google"]),
    ],
)
async def test_an_employer_left_or_joined_retires_only_that_employer(
    store: SqliteStore, messages: tuple[str, ...], kept: list[str]
) -> None:
    assert await remembered(store, *messages) == kept


async def test_a_group_message_does_not_rewrite_what_was_said_in_private(
    store: SqliteStore,
) -> None:
    await learn_from_message(store, MemoryConfig(), ANA, "My name is Ann. I live in Lisbon.", NOW)
    for text in ("My name is Bob. I live in Paris.", "Call me Annie."):
        await learn_from_message(
            store, MemoryConfig(), ANA, text, NOW, chat_type="group", addressed=False
        )
    assert [f.text for f in await store.memory_facts(ANA)] == ["Name: Ann", "Lives in Lisbon"]
    await learn_from_message(
        store, MemoryConfig(), ANA, "Please call me Annie", NOW, chat_type="group"
    )
    assert [f.text for f in await store.memory_facts(ANA)] == ["Lives in Lisbon", "Name: Annie"]


async def test_a_plain_call_me_in_a_group_is_learned_when_addressed_to_the_assistant(
    store: SqliteStore,
) -> None:
    for addressed in (False, True):
        await learn_from_message(
            store,
            MemoryConfig(),
            ANA,
            "Call me Annie.",
            NOW,
            chat_type="group",
            addressed=addressed,
        )
        names = [f.text for f in await store.memory_facts(ANA)]
        assert names == (["Name: Annie"] if addressed else [])


async def test_a_group_teaches_the_speaker_their_own_correction_and_no_one_else(
    store: SqliteStore,
) -> None:
    bob = "telegram:2"
    await learn_from_message(store, MemoryConfig(), ANA, "Remember that I'm vegan.", NOW)
    await learn_from_message(store, MemoryConfig(), bob, "Remember that I'm vegan.", NOW)
    for text in (
        "@bot remember I prefer metric units",
        "@bot actually I'm vegetarian now, not vegan",
    ):
        await learn_from_message(store, MemoryConfig(), ANA, text, NOW, chat_type="group")
    assert [f.text for f in await store.memory_facts(ANA)] == [
        "Prefers metric units",
        "Is vegetarian",
    ]
    assert [f.text for f in await store.memory_facts(bob)] == ["Is vegan"]


@pytest.mark.parametrize(
    ("messages", "kept"),
    [
        # A move said with "we", or with when, is where they live now.
        (("I live in Berlin.", "We just moved to Lisbon."), ["Lives in Lisbon"]),
        (("I live in Berlin.", "we moved to Lisbon last month"), ["Lives in Lisbon"]),
        (("I moved to Lisbon.", "I live in Lisbon."), ["Lives in Lisbon"]),
        (("I live in Berlin.", "I no longer live in Berlin."), ["No longer lives in Berlin"]),
        (
            ("I live in Berlin.", "I don't live in Berlin anymore."),
            ["Doesn't live in Berlin anymore"],
        ),
        (
            ("I live in Lisbon.", "I no longer live in Berlin."),
            ["Lives in Lisbon", "No longer lives in Berlin"],
        ),
        (("I no longer live in Berlin.", "I live in Berlin."), ["Lives in Berlin"]),
        # One diet at a time, however it is said.
        (("I'm vegetarian.", "I went vegan."), ["Is vegan"]),
        (("I'm vegetarian.", "I am vegan now."), ["Is vegan"]),
        (("I'm vegan.", "I've gone vegetarian."), ["Is vegetarian"]),
        # A partner broken up with goes; a new one replaces the one before.
        (("My girlfriend is called Sam.", "I broke up with Sam."), []),
        (("My partner is Sam.", "Sam and I split up."), []),
        (("My wife is called Maria.", "We broke up."), []),
        (("My girlfriend is called Ana.", "I broke up with my girlfriend."), []),
        (("My wife is called Maria.", "I broke up with Sam."), ["Their wife is called Maria"]),
        (("We broke up.",), []),
        (
            ("My girlfriend is called Ana.", "My new girlfriend is called Eve."),
            ["Their girlfriend is called Eve"],
        ),
        (
            ("My boyfriend is Sam.", "I met my new boyfriend Tom at work."),
            ["Their boyfriend is called Tom"],
        ),
        # A pastime given up ends the routine.
        (
            ("I go to the gym every morning.", "I stopped going to the gym."),
            ["Stopped going to the gym"],
        ),
        (("I run every morning.", "I gave up running."), ["Gave up running"]),
        (
            ("I go to the gym every morning.", "I gave up running."),
            ["Goes to the gym every morning", "Gave up running"],
        ),
        # A pet that died goes, and nothing is learned in its place.
        (("I have a dog called Rex.", "My dog Rex passed away."), []),
        (("My cat is called Miso.", "Our cat died."), []),
        (("I have a dog called Rex.", "Our cat died."), ["Has a dog called Rex"]),
        (("I have a dog called Rex.", "My dog Bo died."), ["Has a dog called Rex"]),
        (("Our cat died.",), []),
        # A routine said with "now"; a meeting is the calendar's, not the profile's.
        (("I drink tea every morning now.",), ["Drinks tea every morning"]),
        (("I have a meeting every Monday.",), []),
        # A routine given up, said with how often it came round, ends that routine alone.
        (
            ("I drink coffee every morning.", "I no longer drink coffee every morning."),
            ["No longer drinks coffee every morning"],
        ),
        (
            ("I go running every morning.", "I don't go running every morning any more."),
            ["Doesn't go running every morning any more"],
        ),
        (
            ("I drink tea every morning.", "I no longer drink coffee every morning."),
            ["Drinks tea every morning", "No longer drinks coffee every morning"],
        ),
    ],
)
async def test_a_change_in_their_life_keeps_the_card_current(
    store: SqliteStore, messages: tuple[str, ...], kept: list[str]
) -> None:
    assert await remembered(store, *messages) == kept


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("Used to drink coffee every day", "Drinks coffee every day"),
        ("Stopped going running", "Goes running every morning"),
        ("Doesn't go running any more", "Goes running every morning"),
        ("Drinks coffee every day", "Quit coffee"),
        ("Cycles to work", "Takes the train to work"),
    ],
)
def test_a_routine_given_up_taken_up_or_changed_retires_the_old_one(new: str, old: str) -> None:
    assert supersedes(MemoryCandidate("fact", new), old)


def test_two_routines_about_different_things_both_stand() -> None:
    assert not supersedes(
        MemoryCandidate("fact", "Drinks tea every morning"), "Drinks coffee every morning"
    )
    assert not supersedes(
        MemoryCandidate("fact", "Walks the dog every evening"), "Has a dog called Rex"
    )


@pytest.mark.parametrize(
    ("messages", "kept"),
    [
        (("I have two cats, Mia and Leo.", "Leo passed away."), ["Has a cat called Mia"]),
        (("my cats Mia, Leo and Tom are asleep", "Tom died."), ["Has two cats called Mia and Leo"]),
        (
            ("I have two cats called Mia and Leo.", "Our cat died."),
            ["Has two cats called Mia and Leo"],
        ),
        (("I have a dog called Rex.", "Leo died."), ["Has a dog called Rex"]),
        (("I have a dog called Rex.", "Rex died."), []),
        (("I have two cats.", "My cat Leo died."), ["Has a cat"]),
        (
            ("I have two cats, Mia and Leo.", "My dog Leo died."),
            ["Has two cats called Mia and Leo"],
        ),
    ],
)
async def test_a_pet_that_died_leaves_the_others_named_with_it(
    store: SqliteStore, messages: tuple[str, ...], kept: list[str]
) -> None:
    assert await remembered(store, *messages) == kept


@pytest.mark.parametrize(
    ("messages", "kept"),
    [
        (("I live in Berlin. I'm vegan.", "That's wrong, I don't live in Berlin."), ["Is vegan"]),
        (("I'm based in Berlin.", "No, I don't live in Berlin"), []),
        (("I live in Berlin. I'm vegan.", "I'm not vegan any more."), ["Lives in Berlin"]),
        (("I'm vegan.", "Actually, I'm not vegan."), []),
        (("I live in Porto. I'm vegan.", "I'm no longer vegan."), ["Lives in Porto"]),
        (("I work at Google.", "I no longer work at Google, I joined Stripe."), []),
        (("I work at Google. I'm vegan.", "I don't work at Google any more."), ["Is vegan"]),
        # Not theirs to deny, not yet true, or not what is remembered: all stand.
        (("I live in Berlin.", "I don't live in Berlin yet."), ["Lives in Berlin"]),
        (("I live in Berlin.", "She doesn't live in Berlin."), ["Lives in Berlin"]),
        (("I'm vegan.", "I'm not vegetarian."), ["Is vegan"]),
        (("I'm vegan.", "My boss isn't vegan."), ["Is vegan"]),
    ],
)
async def test_a_denial_retires_the_fact_it_denies_and_stores_nothing(
    store: SqliteStore, messages: tuple[str, ...], kept: list[str]
) -> None:
    assert await remembered(store, *messages) == kept


@pytest.mark.parametrize(
    ("messages", "kept"),
    [
        (
            ("I speak English and German.", "I speak English, German and a bit of Spanish."),
            ["Speaks English, German and a little Spanish"],
        ),
        (
            ("I speak English and German.", "I speak a little Japanese."),
            ["Speaks English and German", "Speaks a little Japanese"],
        ),
        (
            ("I speak English and German.", "I speak English and fluent French."),
            ["Speaks German", "Speaks English and fluent French"],
        ),
        # A level said once for several stays with each when one is said again.
        (
            ("I speak English and German fluently.", "I speak English."),
            ["Speaks fluent German", "Speaks English"],
        ),
    ],
)
async def test_languages_said_again_replace_only_the_ones_named_again(
    store: SqliteStore, messages: tuple[str, ...], kept: list[str]
) -> None:
    assert await remembered(store, *messages) == kept


@pytest.mark.parametrize(
    ("messages", "kept"),
    [
        (("I work at Google.",), ["Works at Google"]),
        (("I work for the BBC.",), ["Works for the BBC"]),
        (("i work at deutsche bank",), ["Works at deutsche bank"]),
        (("I work at a startup.",), ["Works at a startup"]),
        (("I work at a startup.", "I work at Google now."), ["Works at Google"]),
        # Said again with capitals it had been texted without: kept as written then.
        (("i work at deutsche bank", "I work at Deutsche Bank"), ["Works at Deutsche Bank"]),
        (("I work at Deutsche Bank", "i work at deutsche bank"), ["Works at Deutsche Bank"]),
    ],
    ids=[
        "google",
        "bbc",
        "lowercase",
        "startup",
        "startup-then-google",
        "capitals-later",
        "capitals-first",
    ],
)
async def test_an_employer_is_kept_as_written(
    store: SqliteStore, messages: tuple[str, ...], kept: list[str]
) -> None:
    assert await remembered(store, *messages) == kept


async def test_over_the_limit_the_oldest_plain_facts_go_never_a_correction(
    store: SqliteStore,
) -> None:
    """Spec 003 §5.1 rule 4: corrections are never discarded, however old."""
    await store.add_memory_fact(ANA, "name", "Ana", source="user", at=NOW)
    for minute, text in enumerate(("Lives in Lisbon", "Is vegetarian")):
        await store.add_memory_fact(
            ANA, "correction", text, source="user", at=NOW + timedelta(minutes=minute)
        )
    later = NOW + timedelta(days=1)
    for minute, text in enumerate(("I have a dog called Rex.", "I work as a nurse.")):
        await learn_from_message(
            store, MemoryConfig(max_facts=4), ANA, text, later + timedelta(minutes=minute)
        )
    kept = [fact.text for fact in await store.memory_facts(ANA)]
    assert kept == ["Ana", "Lives in Lisbon", "Is vegetarian", "Works as a nurse"], kept


async def test_names_and_corrections_alone_over_the_limit_all_stay(store: SqliteStore) -> None:
    for minute, text in enumerate(("Lives in Lisbon", "Is vegetarian", "Works at Globex")):
        await store.add_memory_fact(
            ANA, "correction", text, source="user", at=NOW + timedelta(minutes=minute)
        )
    assert await enforce_limit(store, ANA, 2, now=NOW) == 0
    assert len(await store.memory_facts(ANA)) == 3


async def test_what_the_user_says_memory_forgot_replaces_the_old_fact_surely(
    store: SqliteStore,
) -> None:
    """Spec 003 §5.3/§7: "I already told you …" is the user's correction: it wins over
    what memory held and is as sure as a correction (1.0)."""
    assert await remembered(store, "I live in Berlin.", "I already told you I live in Lisbon.") == [
        "Lives in Lisbon"
    ]
    (fact,) = await store.memory_facts(ANA)
    assert (fact.kind, fact.confidence) == ("correction", 1.0)


async def test_over_the_limit_what_the_user_asked_to_keep_stays(store: SqliteStore) -> None:
    """Spec 002 tier 3: an explicit "remember this" request is committed, never pruned to
    make room; plain facts said since go first, however much newer."""
    await learn_from_message(store, MemoryConfig(), ANA, "Remember that I live in Berlin.", NOW)
    later = NOW + timedelta(days=1)
    for minute, text in enumerate(("I have a dog called Rex.", "I work as a nurse.", "I'm vegan.")):
        await learn_from_message(
            store, MemoryConfig(max_facts=2), ANA, text, later + timedelta(minutes=minute)
        )
    kept = [(fact.text, fact.committed) for fact in await store.memory_facts(ANA)]
    assert kept == [("Lives in Berlin", True), ("Is vegan", False)], kept


async def test_facts_asked_to_keep_alone_over_the_limit_all_stay(store: SqliteStore) -> None:
    for minute, text in enumerate(("Lives in Lisbon", "Is vegetarian", "Works at Globex")):
        await store.add_memory_fact(
            ANA, "fact", text, source="user", at=NOW + timedelta(minutes=minute), committed=True
        )
    assert await enforce_limit(store, ANA, 2, now=NOW) == 0
    assert len(await store.memory_facts(ANA)) == 3


async def test_a_fact_asked_to_keep_is_committed_once_and_stays_so(store: SqliteStore) -> None:
    said = "I live in Berlin."
    assert [f.committed for f in await facts_after(store, said)] == [False]
    # Asked to keep later: the fact already known becomes committed, said plainly again
    # it stays so.
    for text, committed in (("Don't forget that I live in Berlin.", True), (said, True)):
        assert [f.committed for f in await facts_after(store, text)] == [committed]


async def facts_after(store: SqliteStore, text: str) -> list[MemoryFact]:
    await learn_from_message(store, MemoryConfig(), ANA, text, NOW)
    return await store.memory_facts(ANA)


@pytest.mark.parametrize(
    ("later", "kept"),
    [
        # A correction or a move replaces it (what replaces it is kept only if asked).
        ("Actually, I moved to Lisbon.", [("Lives in Lisbon", False)]),
        ("I moved to Lisbon.", [("Lives in Lisbon", False)]),
        ("Remember that I moved to Lisbon.", [("Lives in Lisbon", True)]),
        ("I no longer live in Berlin.", [("No longer lives in Berlin", False)]),
        # Asked to forget: gone.
        ("Please forget that I live in Berlin.", []),
    ],
)
async def test_a_fact_asked_to_keep_still_yields_to_the_user(
    store: SqliteStore, later: str, kept: list[tuple[str, bool]]
) -> None:
    await learn_from_message(store, MemoryConfig(), ANA, "Remember that I live in Berlin.", NOW)
    await learn_from_message(store, MemoryConfig(), ANA, later, NOW + timedelta(days=400))
    assert [(f.text, f.committed) for f in await store.memory_facts(ANA)] == kept


async def test_what_still_stands_of_a_fact_asked_to_keep_is_kept(store: SqliteStore) -> None:
    await learn_from_message(
        store, MemoryConfig(), ANA, "Remember that I have two cats called Mia and Leo.", NOW
    )
    await learn_from_message(
        store, MemoryConfig(), ANA, "Leo passed away.", NOW + timedelta(days=9)
    )
    assert [(f.text, f.committed) for f in await store.memory_facts(ANA)] == [
        ("Has a cat called Mia", True)
    ]


async def test_pets_asked_to_keep_with_their_names_after_a_comma_lose_the_one_that_died(
    store: SqliteStore,
) -> None:
    await learn_from_message(
        store, MemoryConfig(), ANA, "Remember that I have two cats, Mia and Leo.", NOW
    )
    await learn_from_message(
        store, MemoryConfig(), ANA, "Leo passed away.", NOW + timedelta(days=9)
    )
    assert [(f.text, f.committed) for f in await store.memory_facts(ANA)] == [
        ("Has a cat called Mia", True)
    ]


async def test_over_the_limit_a_fact_asked_to_keep_for_a_week_goes_once_the_week_is_over(
    store: SqliteStore,
) -> None:
    """Kept on request for as long as the user said it holds, as the compactor keeps it
    (``confidence.is_kept``): after that week it is the oldest plain fact."""
    monday = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    await learn_from_message(
        store, MemoryConfig(), ANA, "Remember that I'm in Lisbon this week.", monday
    )
    await learn_from_message(store, MemoryConfig(), ANA, "I'm vegan.", monday)
    assert await enforce_limit(store, ANA, 1, now=monday + timedelta(days=2)) == 1
    assert [f.text for f in await store.memory_facts(ANA)] == ["Is in Lisbon this week"]
    await learn_from_message(store, MemoryConfig(), ANA, "I'm vegan.", monday)
    assert await enforce_limit(store, ANA, 1, now=monday + timedelta(days=8)) == 1
    assert [f.text for f in await store.memory_facts(ANA)] == ["Is vegan"]
