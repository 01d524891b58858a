"""The triage router: learned from the desk's examples, cached, asks when unsure."""

from __future__ import annotations

import json
import re

import pytest

from supportdesk.config import load_desk, parse_desk
from supportdesk.models.offline import classifier as clf
from supportdesk.models.offline.classifier import TextClassifier, classifier_for, examples_key
from supportdesk.lexicon import normalise
from supportdesk.models.offline.router import Router
from tests.conftest import REPO, triage_dev_set


@pytest.fixture(scope="module")
def desk():
    return load_desk(REPO / "agents.toml")


@pytest.fixture(scope="module")
def router(desk):
    return Router([desk.agents["billing"], desk.agents["technical"]], use_disk_cache=False)


def test_shipped_desk_has_plenty_of_examples(desk):
    for name in ("billing", "technical"):
        assert len(desk.agents[name].examples) >= 80
        assert len(set(desk.agents[name].examples)) == len(desk.agents[name].examples)


def test_no_dev_message_is_shipped(desk):
    """The measurement set must not leak into the product's examples."""
    dev = triage_dev_set()

    def words(text: str) -> str:  # punctuation and case must not hide a copy
        return " ".join(re.findall(r"\w+", text.lower()))

    measured = {words(json.loads(line)["text"]) for line in dev.open(encoding="utf-8")}
    shipped = {words(e) for a in desk.agents.values() for e in a.examples}
    assert not measured & shipped


@pytest.mark.parametrize(
    ("text", "agent"),
    [
        ("I was charged twice this month", "billing"),
        ("Why is there an extra fee on my bill?", "billing"),
        ("please give me my money back", "billing"),
        ("I want to cancel my subscription", "billing"),
        ("I can't log in", "technical"),
        ("the two-factor code never arrives", "technical"),
        ("my phone was stolen", "technical"),
        ("how do I change my PIN?", "technical"),
        ("the sync is stuck", "technical"),
    ],
)
def test_routes_plain_requests(router, text, agent):
    assert router.route(text).agent == agent


@pytest.mark.parametrize("text", ["I need help", "hello", "asdf qwerty", "ok"])
def test_unsure_means_ask(router, text):
    route = router.route(text)
    assert route.agent is None
    assert router.best(text).agent in ("billing", "technical")


def test_lexicon_folds_banking_words_onto_concepts():
    assert "passcode_c" in normalise("I forgot my PIN")
    assert "topup_c" in normalise("my top-up failed")
    assert "charged_c" in normalise("you debited my account")
    assert "can not" in normalise("I can't log in")


def test_another_desk_routes_its_own_way():
    text = """
[desk]
entry = "front"
fallback = "front"
[agents.front]
title = "Front"
description = "routes"
handoffs = ["kitchen", "bar"]
[agents.kitchen]
title = "Kitchen"
description = "food"
tools = ["search_kb"]
examples = ["the soup is cold", "my pizza is burnt", "the pasta was undercooked", "there is a hair in my salad"]
[agents.bar]
title = "Bar"
description = "drinks"
tools = ["find_charges"]
examples = ["my beer is flat", "the wine is corked", "this cocktail is too sweet", "the coffee is cold"]
"""
    desk = parse_desk(text, "diner.toml", tool_names=["search_kb", "find_charges"])
    router = Router([desk.agents["kitchen"], desk.agents["bar"]], use_disk_cache=False)
    assert router.route("the wine tastes corked and flat").agent == "bar"
    assert router.route("my pizza came burnt").agent == "kitchen"


def test_prediction_is_deterministic(router):
    a = router.route("there is a charge I don't recognise")
    b = router.route("there is a charge I don't recognise")
    assert a == b


def test_disk_cache_is_keyed_by_examples(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(clf, "_MEMORY", {})
    examples = {"a": ["red apples", "green apples"], "b": ["blue sky", "grey sky"]}
    model = classifier_for(examples)
    path = tmp_path / "supportdesk" / f"router-{examples_key(examples)}.json"
    assert path.exists()
    # A fresh process (empty memory) loads the same model from disk.
    monkeypatch.setattr(clf, "_MEMORY", {})
    loaded = classifier_for(examples)
    assert loaded is not model
    assert loaded.predict("apples please").label == model.predict("apples please").label == "a"
    other = {"a": ["red apples"], "b": ["blue sky"]}
    assert examples_key(other) != examples_key(examples)


def test_disk_cache_is_keyed_by_the_lexicon_too(monkeypatch):
    """A model trained before a concept joined the lexicon has never seen it: a changed lexicon
    must train again, not load the old model from disk."""
    from supportdesk import lexicon

    examples = {"a": ["red apples"], "b": ["blue sky"]}
    before = examples_key(examples)
    monkeypatch.setitem(lexicon.CONCEPTS, "fruit", ("apples", "pears"))
    assert examples_key(examples) != before


def test_corrupt_cache_is_retrained(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(clf, "_MEMORY", {})
    examples = {"a": ["red apples"], "b": ["blue sky"]}
    path = tmp_path / "supportdesk" / f"router-{examples_key(examples)}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert classifier_for(examples).predict("apples").label == "a"
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == clf._FORMAT


def test_round_trip_json():
    model = TextClassifier.train({"a": ["red apples"], "b": ["blue sky"]})
    again = TextClassifier.from_json(json.loads(json.dumps(model.to_json())))
    assert again.predict("sky").scores == model.predict("sky").scores


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Hi, I was charged twice for my subscription this month.", "duplicate charge"),
        ("I want to cancel my subscription", "cancellation"),
        ("I can't log in to the app", "cannot log in"),
        ("the export button does nothing", "technical question"),
    ],
)
def test_handoff_reason_is_a_short_topic(text, reason):
    from supportdesk.models.offline.triage import topic

    assert topic(text, "Technical") == reason


@pytest.mark.parametrize("ci", ["true", ""])
def test_the_leak_guard_fails_when_its_data_is_missing(tmp_path, monkeypatch, ci):
    """The dev set ships with the tests: without it the guard above fails, in CI or not."""
    from tests import conftest

    monkeypatch.setattr(conftest, "TRIAGE_DEV", tmp_path / "missing" / "dev.jsonl")
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="dev.jsonl"):
        conftest.triage_dev_set()


def test_a_text_routed_again_is_not_classified_again_and_the_memory_is_bounded(desk):
    """A turn routes its customer's message more than once (triage, then the specialist):
    the second time is remembered, the same answer, and only the last ROUTES_KEPT are kept."""
    from supportdesk.models.offline.router import ROUTES_KEPT

    router = Router([desk.agents["billing"], desk.agents["technical"]], use_disk_cache=False)
    predicted: list[str] = []
    predict = router.model.predict
    router.model.predict = lambda text, candidates: predicted.append(text) or predict(text, candidates)
    first = router.route("I was charged twice this month")
    assert router.route("I was charged twice this month") is first and len(predicted) == 1
    assert first.agent == "billing"
    # Another candidate set is another question.
    assert router.route("I was charged twice this month", exclude=["technical"]).agent == "billing"
    for n in range(ROUTES_KEPT + 20):
        router.route(f"my app crashes on screen {n}")
    assert len(router._routes) <= ROUTES_KEPT
    before = len(predicted)
    router.route("I was charged twice this month")  # long gone: classified afresh
    assert len(predicted) == before + 1



def test_an_agent_only_the_desk_file_knows_is_heard_like_a_built_in_one():
    """Issue 38: the security agent of evals/config-agent.toml (eight examples) against billing's
    and technical's two hundred each. Its description is one more example, as every agent's is
    ("secure my account" was a coin toss without it), and the ways of naming another person are
    one concept ("someone", "other person": technical's password words outweighed them)."""
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    router = Router([desk.agents[n] for n in ("billing", "security", "technical")], use_disk_cache=False)
    assert router.route("secure my account").agent == "security"
    for text in ("someone changed my password and it wasnt me", "other person use my account, not me, please help"):
        assert router.best(text).agent == "security", text
    for text in ("i forgot my password", "i can't log in", "how do i change my password"):
        assert router.route(text).agent == "technical", text
    assert "someone_c" in normalise("other person") and "someone_c" in normalise("a stranger")


def test_a_disowned_action_and_a_takeover_are_each_one_concept():
    """Issue 38 (route-5): "it was not me" / "i did not do it" say someone else did it, folded with
    the other ways of naming another person; "hacked", "compromised", "breached" are one idea; a
    contraction typed without its apostrophe reads as the one typed with it."""
    assert "someone_c" in normalise("my password got changed and i did not do it")
    assert "someone_c" in normalise("email changed, not by me") and "someone_c" in normalise("a login i never did")
    assert normalise("it wasnt me") == normalise("it wasn't me")
    assert normalise("i didnt") == normalise("i did not")
    # the disowning "not" is no problem word (technical's "not working" outvoted security with it)
    assert "not" not in normalise("my email got changed and it was not me").split()
    assert "not" in normalise("my email does not update").split()
    for word in ("hacked", "compromised", "breached", "hijacked"):
        assert "hacked_c" in normalise(f"my account was {word}"), word
    assert "login_c" in normalise("someone loged into my account") and "login_c" in normalise("he signed in")


def test_a_disowned_change_reaches_the_config_only_security_agent():
    """The disowning words feed the same router as every agent's examples: the security agent's
    "someone logged into my account" now hears "a login to my account that i did not do"."""
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    router = Router([desk.agents[n] for n in ("billing", "security", "technical")], use_disk_cache=False)
    for text in ("there was a login to my account that i did not do", "somebody is in my account, i did not do this",
                 "my password got changed yesterday and i did not do it"):
        route = router.route(text)
        assert route.agent == "security" and route.confidence >= 0.8, (text, route.confidence)
    assert router.best("my email adress got changed and it wasnt me who did it").agent == "security"


def test_the_desks_own_name_and_an_account_id_do_not_route():
    """Issue 38 (security-9): every agent serves the desk's company, and an id says who writes. The
    config desk's technical examples say "Acme" a dozen times and the security agent's never, so
    "... into my acme" leaned to technical; "CUS-1005" voted as "number" (the phone number's)."""
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    agents = [desk.agents[n] for n in ("billing", "security", "technical")]
    router = Router(agents, use_disk_cache=False, desk_name=desk.desk.name)
    for text in ("my ex knows my login and keeps getting into my acme",
                 "my phone got pickpocketed on the metro and acme is still logged in on it. CUS-1005"):
        assert router.route(text).agent == "security", text
        assert router.route(text).confidence == router.route(re.sub(r"acme|CUS-\d+", " ", text)).confidence
    for text in ("i forgot my password and the login page of acme says it's wrong", "CUS-1005 here, the acme app keeps crashing"):
        assert router.route(text).agent == "technical", text
    # (the name is the desk's: a desk called something else still hears "acme" as a word)
    pickpocketed = "my phone got pickpocketed on the metro and acme is still logged in on it. CUS-1005"
    other = Router(agents, use_disk_cache=False, desk_name="Other desk").route(pickpocketed)
    assert other.confidence != router.route(pickpocketed).confidence
    # a word of the name that says what an agent is for still routes
    named = Router(agents, use_disk_cache=False, desk_name="Acme Billing support")
    assert named.route("question about billing").confidence == router.route("question about billing").confidence


@pytest.mark.parametrize(
    "text, money",
    [
        ("you billed me twice last month", True),
        ("how much is the pro plan per year?", True),
        ("i want to return my purchase", True),
        ("what did you take from my account on the 3rd?", True),
        ("is there a fee for exchanging currencies?", True),
        ("I want to change plan", True),  # the desk's own billing action, however short
        ("is there a plan to support linux?", False),
        ("can acme cloud translate my documents to spanish?", False),
        ("the page is all white, reloaded it twice", False),
        ("how do I invite my team to a shared folder?", False),
    ],
)
def test_money_named_or_not(text, money):
    """Billing's evidence (issue 38, held-5): money in some form. "twice" alone, "my team", the
    product's own name are none of it."""
    from supportdesk.models.offline.cues import names_money

    assert names_money(text) is money


# --- route-6 (issue 38) -----------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "does cancelling delete my files or do they stay?",
    "will upgrading to team lose any of my files?",
    "if i delete the app from my phone do i still keep paying?",
])
def test_a_question_about_what_an_account_action_does_is_about_the_action(text):
    from supportdesk.models.offline import triage

    assert triage.asks_what_an_account_action_does(text)


@pytest.mark.parametrize("text", [
    "the app deletes my files when i cancel the upload",  # trouble told, no question
    "can i use apple pay with acme cloud?",  # no account action asked about
    "please cancel my subscription",  # the request itself
])
def test_a_problem_or_a_request_is_not_a_question_about_an_action(text):
    from supportdesk.models.offline import triage

    assert not triage.asks_what_an_account_action_does(text)


def test_chit_chat_no_agent_is_for_is_outside_every_job_but_a_product_question_is_not():
    from supportdesk.models.offline import scope

    desk = load_desk(REPO / "agents.toml")
    agents = [desk.agents["billing"], desk.agents["technical"]]
    assert scope.outside_every_job(agents, "whats the best pizza place near me lol")
    assert not scope.outside_every_job(agents, "What type of ID do you accept?")
    assert not scope.outside_every_job(agents, "does it run on a chromebook?")
    # Pointed at the product, whatever its topic words: the scope reader learnt "out of scope"
    # from other domains (held in kb-6 found it: a video call's size asked of "your tool").
    assert not scope.outside_every_job(agents, "how many people fit on one video call with your tool?")


@pytest.mark.parametrize("text", ["what did i pay in march, maya.farouk12@example.com", "what did i pay in march?", "wat did i pay for feb"])
def test_a_month_named_is_a_date_not_its_letters(router, text):
    """route-7 (issue 38): "march" shares "arch" with "search", which leaned a question about what
    was paid to the app's Apple Pay troubles; a month's name votes as "month" does."""
    assert clf.features("march") == clf.features("month")
    assert router.route(text).agent == "billing"


# --- route-7 (issue 38) -----------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "two things. first, when is my next payment? rosa.chen17@example.com. second, my laptop stopped syncing since monday",
    "first the money: how much is my next bill? nils.costa13@example.com. second thing my desktop app wont open",
])
def test_matters_counted_off_are_two_matters(router, text):
    """Held-6: "first, ... second, ..." numbers two matters as "also" joins them; the first goes
    to its agent, the second waits its turn."""
    from supportdesk.models.offline import triage

    assert [r.agent for r, _ in triage.issues(text, router)] == ["billing", "technical"]


def test_an_ordinal_naming_a_charge_numbers_no_matter(router):
    from supportdesk.models.offline import triage

    assert triage.issues("the second one looks like a dupe, refund that. my app crashes too", router) == []
    assert triage._ISSUE_SPLIT.search("march 24 and 25. second one is a dupe, refund it") is None


@pytest.mark.parametrize("text, ground", [
    ("Hello, it is possible to receive the invoices of Acme in german language? My accountant need this.", "request for another language"),
    ("can my receipts come in the Spanish language please", "request for another language"),
    ("Please close my Acme account permanently and get rid of all the files you store for me.", "request to delete the account"),
    ("permanently close our Acme Cloud account", "request to delete the account"),
    ("I live in Spain, why was I charged twice?", None),
    ("can acme cloud translate my documents to spanish?", None),
])
def test_ground_no_tool_covers_a_language_asked_for_and_a_named_account_closed(text, ground):
    """Held-6: the desk writes English only, so an invoice in German is a person's; an account
    closed for good is a deletion whatever name stands before "account"."""
    from supportdesk.models.offline import cues

    assert cues.unknown_ground(text) == ground


def test_a_question_sentence_of_its_own_is_a_matter_wherever_it_leans(router):
    """Held-6: "..., and can i add my accountant to our workspace?" leans technical only a little
    (0.57), yet it asks something of its own: the second matter, not part of the price question."""
    from supportdesk.models.offline import triage

    text = "how much is the team plan per month, and can i add my accountant to our workspace?"
    assert [r.agent for r, _ in triage.issues(text, router)] == ["billing", "technical"]
    # the same clause told, not asked, must still be placed surely to be a matter of its own
    assert triage.issues("how much is the team plan per month, and my accountant has a workspace", router) == []


# --- route-13 (issue 38.4) --------------------------------------------------------------------


def test_a_plus_between_words_joins_two_matters_a_numbers_sign_does_not(router):
    """route-13: "+" written for "plus" marks a second matter as "plus" does, so the password
    link waits its turn instead of the technical skill sending it beside the refund."""
    from supportdesk.models.offline import triage

    text = "two charges of 29.99 in march + i want a new password, mail me the reset link"
    assert [r.agent for r, _ in triage.issues(text, router)] == ["billing", "technical"]
    assert triage._ISSUE_SPLIT.search("call me back on +44 20 7946 0000") is None
    assert triage._ISSUE_SPLIT.search("is it 1+1 seats on starter") is None


def test_the_end_of_what_is_paid_for_is_a_cancellation_the_end_of_an_account_is_not():
    """route-13: a request the desk intents reader reads as cancel, with the subscription or plan
    named and no charge word ("turn off my acme plan for good"), is billing's cancellation; the
    account named instead is not what is paid for ("close my account" is a deletion, a person's),
    nor is a bank account's trouble (the dev set's Banking77 messages)."""
    from supportdesk.models.offline import triage

    assert triage._stops_paying("can u turn off my acme plan for good, dont want it anymore")
    assert not triage._stops_paying("I need to close my account")
    assert not triage._stops_paying("problem verifying my account")


# --- route-7b: denials read for what they deny (issue 38) -------------------------------------


@pytest.fixture(scope="module")
def config_router():
    cfg = load_desk(REPO / "evals" / "config-agent.toml")
    return Router([cfg.agents[n] for n in ("billing", "technical", "security")], use_disk_cache=False)


@pytest.mark.parametrize("text, denied", [
    ("nobody hacked me, i just want to change my password", "not_hacked_c"),
    ("no one broke into anything, i only want a new password", "not_hacked_c"),
    ("i wasnt hacked or anything i just forgot my password", "not_hacked_c"),
])
def test_a_denied_matter_votes_as_its_denial(text, denied):
    feats = clf.message_features(text)
    assert denied in feats and "hacked_c" not in feats
    assert "password_c" in feats  # what follows the denial's clause still votes


@pytest.mark.parametrize("text", [
    "make sure nobody else can get into my account",  # a wish, no denial
    "i can not log in",  # inability, not a denial
    "the sync did not work",  # not the customer's own doing
])
def test_what_is_no_denial_keeps_its_words(text):
    feats = clf.message_features(text)
    assert not any(f.startswith("not_") for f in feats)


@pytest.mark.parametrize("text, disowns", [
    ("i did NOT sign in from brazil last night", True),
    ("there is a laptop in my sessions that isnt mine", True),
    ("a number i dont know", True),
    # tech-h18: owning negated of one of several ("an authenticator that isn't one of mine")
    ("there's a second authenticator on my account and it isnt one of mine", True),
    ("that is not one of the options i wanted", False),
    ("i never received the reset email", False),  # receiving is no doing of the customer's
    ("i do not know what this charge is", False),  # a question about a charge
])
def test_a_disowning_votes_as_someone(text, disowns):
    assert ("someone_c" in clf.message_features(text)) is disowns
    assert "someone_c" not in clf.features(text)  # examples are trained on their own words


def test_a_disowned_sign_in_and_a_denied_hack_route_by_what_they_mean(config_router):
    assert config_router.route("i did NOT sign in from brazil last night but the email says i did").agent == "security"
    assert config_router.route("nobody hacked me, i just want to change my password to something longer").agent == "technical"


def test_someone_elses_access_is_placed_when_the_words_lean_there_too_little(config_router, monkeypatch):
    """security-13: the words leaning to the security agent below the router's confidence left a
    sign-in from a country the customer is not in unplaced ("I have receive notification of
    entering to my account from Brazil", 0.46), though the access reader read it surely; only a
    lean to another agent was overruled."""
    from supportdesk.models.offline.classifier import Prediction

    told = "i got an alert of a sign in to my account from a country i have never been to"
    for leaning in ("security", "technical"):
        weak = Prediction(leaning, 0.4, 3, {})
        monkeypatch.setattr(config_router.model, "predict", lambda text, candidates, weak=weak: weak)
        config_router._routes.clear()
        placed = config_router.route(told)
        assert placed.agent == "security" and placed.confidence >= 0.9
        assert config_router.best(told).agent == "security"


def test_an_example_surely_another_agents_moves_to_it():
    """Issue 38 (security-9): the config desk's technical examples "someone else logged into my
    account" and "I think my account was hacked" are the security agent's by the desk's own model,
    and are moved there, not taught to both: kept with technical, "someone" and "hacked" stayed
    half its words and a stranger's doing told beside a phone leaned to it."""
    from supportdesk.models.offline.router import ceded, training_examples

    desk = load_desk(REPO / "evals" / "config-agent.toml")
    agents = [desk.agents[n] for n in ("billing", "security", "technical")]
    examples = ceded(training_examples(agents), use_disk=False)
    for text in ("someone else logged into my account", "I think my account was hacked"):
        assert text in examples["security"] and text not in examples["technical"], text
    router = Router(agents, use_disk_cache=False, desk_name=desk.desk.name)
    assert router.route("the recovery phone number on my account got swapped to a number i dont know").agent == "security"
    # a denial keeps its how-to with the technical agent
    assert router.route("nothing's wrong, no hack or anything, i just want to change my password. how?").agent == "technical"
    # the shipped desk has no example that sure of another agent: nothing moves
    shipped = load_desk(REPO / "agents.toml")
    plain = training_examples([shipped.agents["billing"], shipped.agents["technical"]])
    assert ceded(plain, use_disk=False) == plain


def test_not_before_an_article_denies_the_thing_it_names():
    """"this isnt a hacking thing" denies the hacking as "no hack" does (security-9: with the
    takeover examples moved to the security agent, the undenied "hacking" asked billing-or-what)."""
    words, _ = clf.read_denials(clf._TOKEN.findall(normalise("this isnt a hacking thing, the app just logs me out every hour")))
    assert "not_hacking" in words and "app" in words and "logs" in words
    words, _ = clf.read_denials(clf._TOKEN.findall(normalise("it is not a big deal but the app crashes")))
    assert "not_big" in words and "crashes" in words
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    router = Router([desk.agents[n] for n in ("billing", "security", "technical")], use_disk_cache=False, desk_name=desk.desk.name)
    assert router.route("this isnt a hacking thing, the app just logs me out every hour or so").agent == "technical"


def test_a_thing_named_then_the_customers_use_of_it_denied_disowns_it():
    """"a browser i dont use" disowns the browser as "a number i do not know" does (a relative
    clause: nothing after the verb, a thing before the customer), so the session reads as someone
    else's; "i dont use the app" and ", i dont understand" disown nothing."""
    def disowns(text: str) -> bool:
        return clf.read_denials(clf._TOKEN.findall(normalise(text)))[1]

    assert disowns("there's a session open on my account from a browser i dont use. wes.dubois22@example.com")
    assert not disowns("i dont use the app") and not disowns("everything fails, i dont understand")
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    router = Router([desk.agents[n] for n in ("billing", "security", "technical")], use_disk_cache=False, desk_name=desk.desk.name)
    assert router.route("there's a session open on my account from a browser i dont use. wes.dubois22@example.com").agent == "security"


def test_the_customers_own_thing_of_a_kind_disowns_another_of_that_kind():
    """"a session from an android phone, i have an iphone": the customer's own phone named
    otherwise says the one seen is someone else's (held-9 config); a thing said to be theirs too
    or referred back to ("my phone", "the phone") is no other thing."""
    def disowns(text: str) -> bool:
        return clf.read_denials(clf._TOKEN.findall(normalise(text)))[1]

    assert disowns("weird - my account shows a session from an android phone, i have an iphone.")
    assert not disowns("i have an iphone and the app crashes on my phone")
    assert not disowns("i use an iphone, the app crashes on the phone")
    assert not disowns("i got a new phone and my old phone has the codes")
    assert not disowns("i have a new phone and cant get my verification codes")


def test_who_did_what_the_part_before_told_is_no_matter_of_its_own(config_router):
    """"the recovery phone number on my account was changed and it was not me who did it": the
    second part names nothing but who did it, so it is the first part's (the whole message reaches
    security), not a second matter that sends the first alone to the technical agent (scope-9)."""
    from supportdesk.models.offline import triage

    text = "the recovery phone number on my account was changed and it was not me who did it"
    assert triage.issues(text, config_router) == []
    assert config_router.route(text).agent == "security"
    # a part that names a matter of its own is still one
    assert [r.agent for r, _ in triage.issues("my invoice shows a double charge and my app crashes on start", config_router)] == ["billing", "technical"]


# --- scope-11: a denial's grammar, the adverb and the negative determiner (issue 38) ------------


def test_a_word_between_the_customer_and_their_denied_doing_still_disowns(config_router):
    """"i definitely did not change my password" disowns the change as "i did not change" does: one
    word between the subject and its verb (an adverb) leaves the subject the customer's."""
    for text in ("i really did not reset my password", "we honestly never asked for a new login code"):
        _, disowns = clf.read_denials(clf._TOKEN.findall(normalise(text)))
        assert disowns, text
    assert config_router.route("i certainly did not change my password last night, yet an email says it was changed").agent == "security"


def test_nothing_before_a_matter_denies_it_with_its_concept(config_router):
    """"nothing suspicious" denies the matter "suspicious" names, its concept too (the concept read
    from a plain word is denied with it; "unrecognised" itself stays what it says), so the how-to
    after it reaches the technical agent."""
    words, _ = clf.read_denials(clf._TOKEN.findall(normalise("nothing suspicious here, i want to set a passcode on the app")))
    assert "not_suspicious" in words and "unrecognised_c" not in words and "passcode" in words
    words, _ = clf.read_denials(clf._TOKEN.findall(normalise("no unrecognised login, just a question")))
    assert "unrecognised_c" in words  # a concept phrased as a negation is never denied
    assert config_router.route("nothing suspicious at all, i'd just like to switch on two factor for my login").agent == "technical"


def test_someone_else_having_the_account_goes_to_the_agent_whose_examples_say_so():
    """Issue 38.4 (security-12): a password a relative found out is told in the technical agent's
    password and login words, and the word model places it there; the learned access reader
    (readers/gates.py tells_access) reads the kind, and the message goes to the agent whose own
    examples tell of it, found by reading them, never by its name: the config desk's security agent
    renamed is found the same. A charge someone else made (money) and a sign-in problem stay put."""
    import dataclasses

    from supportdesk.models.offline.router import access_owner
    from supportdesk.readers import gates

    desk = load_desk(REPO / "evals" / "config-agent.toml")
    guardian = dataclasses.replace(desk.agents["security"], name="guardian", title="Account safety")
    router = Router([desk.agents["billing"], guardian, desk.agents["technical"]], use_disk_cache=False, desk_name=desk.desk.name)
    assert access_owner(router._examples) == "guardian"
    told = "my cousin found out my password and keeps logging in as me"
    assert router.model.predict(told, router.targets).label == "technical"  # the words alone
    assert router.route(told).agent == "guardian" and router.best(told).agent == "guardian"
    assert router.route(told, exclude=["guardian"]).agent != "guardian"  # handed back: never to it again
    # (a card's details compromised is the access reader's kind too, but it speaks of money: the words decide)
    assert gates.tells_access("someone has my card number and is paying for things with it")
    for text, agent in (("someone used my card to pay for a plan i never bought", "billing"),
                        ("someone has my card number and is paying for things with it", "billing"),
                        ("i forgot my password", "technical"), ("the app crashes when i open it", "technical")):
        assert router.route(text).agent == agent, text


def test_a_desk_without_an_agent_for_someone_elses_access_routes_by_the_words(desk, router):
    """The shipped desk's technical agent holds a few hacked accounts among two hundred examples:
    no agent's examples mostly tell of someone else's access, so its routing is the words'."""
    from supportdesk.models.offline.router import access_owner

    assert access_owner(router._examples) is None
    assert router.route("my cousin found out my password and keeps logging in as me").agent == "technical"


def test_a_desk_with_no_agent_taught_little_never_reads_for_access(desk, monkeypatch):
    """Only an agent taught little (a desk file's own, beside built-in agents with two hundred
    examples) can be the one for someone else's access: the shipped desk's router never loads the
    access reader (its parameters are most of the gates' file: start-up and every route would pay)."""
    from supportdesk.models.offline import router as router_module
    from supportdesk.readers import gates

    def never(text):
        raise AssertionError(f"the access reader was asked about {text!r}")

    monkeypatch.setattr(router_module, "_OWNERS", {})
    monkeypatch.setattr(gates, "tells_access", never)
    shipped = Router([desk.agents["billing"], desk.agents["technical"]], use_disk_cache=False)
    for text in ("my cousin found out my password and keeps logging in as me", "I was charged twice"):
        assert shipped.route(text).agent is not None and shipped.best(text).agent is not None
