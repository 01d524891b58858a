"""Talk-17 (issue 38): small talk in chat words no public corpus writes ("tbh", "ur", "muggy")
is known to the scope reader as the desk's labelled lines taught it (evals/scope-labels-17-tune.jsonl),
so its sure chit-chat reading is trusted; a word the desk also gives a matter ("uptime") is not,
and a chat word beside another domain's question leaves it outside the desk."""

from __future__ import annotations

from supportdesk.models.offline import scope
from tests.conftest import REPO, shipped_specialists


def test_chat_words_the_desk_taught_as_small_talk_are_known():
    for text in ("tbh ur doing a great job", "ugh its so muggy today, cant sleep lol"):
        assert scope.known_share(text) >= scope.MIN_KNOWN_SHARE, text
        assert scope.chit_chat(shipped_specialists(), text), text
    assert scope.taught_as_small_talk("lol")
    # taught to the desk's matters too (evals/scope-labels-tune.jsonl): no small talk of its own
    assert not scope.taught_as_small_talk("uptime")
    assert not scope.chit_chat(shipped_specialists(), "whats your guaranteed uptime, like 99.9%? procurement needs a number")


def test_a_chat_word_beside_another_domains_question_leaves_it_outside_the_desk():
    """The matter is read without its chat words (`scope.read_matter`): "lol" says how, not what."""
    assert scope.outside_every_job(shipped_specialists(), "where can i get good sushi around here lol")


async def test_small_talk_gets_a_friendly_line_and_another_domains_request_the_refusal():
    """Triage answers small talk as a person at a desk would (triage.CHIT_CHAT_REPLY: a friendly
    line and what the desk is for), never "outside what I can help with", which stays the reply
    to a request of another domain; neither is handed to an agent."""
    from supportdesk.commands.evals import evaluate_conversations
    from supportdesk.models.offline import triage

    friendly = triage.CHIT_CHAT_REPLY.split("!")[0]
    convos = [
        {"name": "small talk", "turns": [{"customer": "tbh ur doing a great job", "expect": {"agent": "triage", "reply": [friendly], "reply_not": ["outside what"]}}]},
        {"name": "another domain", "turns": [{"customer": "where can i get good sushi around here lol", "expect": {"agent": "triage", "reply": ["outside what"]}}]},
    ]
    results = await evaluate_conversations(convos, config=str(REPO / "agents.toml"))
    assert [r.failures for r in results if not r.passed] == []


async def test_a_question_on_the_side_of_a_covered_trouble_is_searched_on_its_own():
    """A question no article answers, asked beside a trouble one does (technical.aside_question):
    the trouble's steps and, beside them, that the desk does not know and can bring a person; a
    word of opinion asked after the trouble ("what do you think?"), or a question asked on after a
    comma about what was told, is no question of its own."""
    from supportdesk.commands.evals import evaluate_conversations

    convos = [
        {"name": "aside", "turns": [{"customer": "the app crashes every time i open a big pdf. also, is there a dark mode?", "expect": {"reply": ["crashes", "other question", "person"], "tools": [{"name": "search_kb"}]}}]},
        {"name": "aside answered", "turns": [{"customer": "the app crashes every time i open a big pdf. also, how do i invite my accountant to our team?", "expect": {"reply": ["crashes", "other question", "Inviting team members"]}}]},
        {"name": "no aside", "turns": [{"customer": "the app crashes every time i open a big pdf. what do you think?", "expect": {"reply_not": ["other question"]}}]},
        {"name": "asked on", "turns": [{"customer": "someone grabbed my phone at the bar, can they get into my workspace?", "expect": {"reply": ["Lost or stolen phone"], "reply_not": ["other question"]}}]},
    ]
    results = await evaluate_conversations(convos, config=str(REPO / "agents.toml"))
    assert [r.failures for r in results if not r.passed] == []
