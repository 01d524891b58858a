"""Scope-11 (issue 38): chit-chat said to the assistant is answered as chit-chat, and a question
about the company's service in words the public corpora never hold is no chit-chat nor outside
the desk: the scope reader's learned label and the background's word counts, not phrase lists."""

from __future__ import annotations

from supportdesk.models.offline import scope
from tests.conftest import REPO, shipped_specialists


def test_chit_chat_to_the_assistant_reads_as_chit_chat():
    for text in ("do you enjoy your work", "how old are you anyway"):
        assert scope.chit_chat(shipped_specialists(), text), text
    assert not scope.chit_chat(shipped_specialists(), "how do i reset my password")


def test_a_service_question_in_words_no_corpus_holds_is_neither_chit_chat_nor_outside():
    text = "whats the sla uptime you commit to, procurement wants it documented"
    assert scope.known_share(text) < scope.MIN_KNOWN_SHARE
    assert not scope.chit_chat(shipped_specialists(), text)
    assert not scope.outside_every_job(shipped_specialists(), text)
    # a matter of another domain in words the corpora hold is still outside the desk
    assert scope.outside_every_job(shipped_specialists(), "whats the best pizza place near me")


def _read(name: str) -> list[dict]:
    import json

    return [json.loads(line) for line in (REPO / "evals" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


# scope-11's pair (evals/scope-11-*.jsonl, written before the model changed; before: tune 3/4,
# held 2/2, config tune 4/4, config held 2/2). "what's your favourite colour" is still searched for
# an article: "colour" is no word of the (American) corpora, so the reader's chit-chat reading
# is not trusted on it.
SCOPE_11_MISSES = {"scope 11 (tune): chit-chat: what is your favourite colour"}


async def test_the_scope_11_pair_passes_on_the_shipped_and_the_config_desk():
    from supportdesk.commands.evals import evaluate_conversations

    for names, config in ((("scope-11-tune", "scope-11-held"), "agents.toml"), (("scope-11-config-tune", "scope-11-config-held"), "evals/config-agent.toml")):
        convos = [c for n in names for c in _read(n) if c["name"] not in SCOPE_11_MISSES]
        results = await evaluate_conversations(convos, config=str(REPO / config))
        assert [r.failures for r in results if not r.passed] == []


def test_a_question_mostly_in_an_agents_job_words_is_no_chit_chat():
    """CLINC150's small talk knows "you", not the desk's identity checks: "what type of ID do you
    accept?" reads as chit-chat to the scope reader, yet every word of it is the technical job's."""
    assert not scope.chit_chat(shipped_specialists(), "what kind of ID do you take for the identity check?")


def test_chit_chat_with_an_afterthought_about_nothing_here_is_chit_chat():
    """Route-14: a clause the reader reads as out of scope (an afterthought, another domain's
    question) beside one surely said to the assistant leaves the message chit-chat; a clause the
    desk does (in scope) still makes it a matter."""
    for text in ("whats your favourite film, if bots are allowed one", "do you like music? whats ur favourite song"):
        assert scope.chit_chat(shipped_specialists(), text), text
    assert not scope.chit_chat(shipped_specialists(), "do you like music? also my files stopped syncing")


def test_small_talk_words_inside_a_matter_are_no_chit_chat():
    """A clause the reader is sure is small talk ("... confirm who i am": CLINC150's "who are you")
    beside one it learnt as the desk's (the identity check's papers, evals/scope-labels-16-tune.jsonl)
    is a matter, not talk to the assistant (it was answered as outside the desk once route-14 let
    one sure clause beside an out-of-scope one make a message chit-chat; route-16 taught the reader
    the papers' questions instead of reading the message a second time whole)."""
    text = "what kind of document you accept for confirm who i am, passport is ok?"
    assert any(scope.read_scope(part).act == "in_scope" for part in scope.clauses(text))
    assert not scope.chit_chat(shipped_specialists(), text)
    assert scope.chit_chat(shipped_specialists(), "whats your favourite film, if bots are allowed one")

