"""Whether a message is within an agent's scope: said in the words of its job.

An agent's job is its description and examples (the desk file's, the same text the router
learns from). A message is outside it when the words that carry its meaning (the rare ones:
each weighed by how uncommon it is in customers' messages in general, learned from public
corpora, see supportdesk/readers) are mostly words the job never uses: "how can I put the
interface in German?" sent to billing. The specialist then hands the message back to triage
with the reason instead of asking billing's first question.
"""

from __future__ import annotations

from functools import lru_cache

from supportdesk.config import AgentConfig
from supportdesk.lexicon import normalise
from supportdesk.models.offline import cues
from supportdesk.readers import gates
from supportdesk.readers.acts import Reading, background_counts, clauses, commonness, feature_words, read_act, read_scope, scope_reader
from supportdesk.patterns import LazyPattern

_WORD = LazyPattern(r"[a-z][a-z0-9]+")
# Below this weighted share of its meaning-bearing words in the job's words, a message is
# outside the job. Of the 22 opening messages the conversation evals send to billing without an
# email or a charge word, three share less than 0.3 (0.22 to 0.26), and each names an amount or
# a money intent, which keeps it before this test is made; every conversation eval passes.
MIN_SHARE = 0.3
MIN_WEIGHT = 1.2  # too little said (about one rare word) to judge: kept


def _stem(word: str) -> str:
    """A light stem: "charges", "charged", "charging" -> "charg" ("interface" stays itself)."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=64)
def _job_words(description: str, examples: tuple[str, ...]) -> frozenset[str]:
    words = _WORD.findall(normalise(" ".join((description, *examples))))
    return frozenset(_stem(w) for w in words)


def share_in_scope(agent: AgentConfig, text: str) -> tuple[float, float]:
    """(the weighted share of the message's words that the agent's job uses, the total weight)."""
    job = _job_words(agent.description, tuple(agent.examples))
    weights: dict[str, float] = {}
    for w in _WORD.findall(normalise(text)):
        weights[w] = max(0.0, 1.0 - commonness(w)) ** 2
    total = sum(weights.values())
    if not total:
        return 1.0, 0.0
    return sum(wt for w, wt in weights.items() if _stem(w) in job) / total, total


def outside_scope(agent: AgentConfig, text: str) -> bool:
    share, weight = share_in_scope(agent, text)
    return weight >= MIN_WEIGHT and share < MIN_SHARE


# How sure the scope reader (CLINC150's out-of-scope examples against the in-scope corpora) must
# be before a message that no agent's job covers is called outside the desk.
OUT_OF_SCOPE_CONFIDENCE = 0.99


def outside_every_job(agents: list[AgentConfig], text: str) -> bool:
    """Chit-chat nobody at this desk is for ("whats the best pizza place near me"): the scope
    reader reads it as out of scope, surely, and no agent's job uses its meaning-bearing words.
    Both: the reader alone calls "what type of ID do you accept?" out of scope (CLINC150 has
    travel documents), the job words alone know nothing of "does it run on a chromebook?". A
    question asked of the product in other domains' words ("how many fit on one video call with
    your tool?") is in scope because the reader learnt the product's own questions (the
    knowledge base's examples, scripts/build_readers.py `product_questions`), not by a rule."""
    if known_share(text) < MIN_KNOWN_SHARE:
        return False
    reading = read_matter(text)
    if reading.act != "out_of_scope" or reading.confidence < OUT_OF_SCOPE_CONFIDENCE:
        return False
    return bool(agents) and all(outside_scope(agent, text) for agent in agents)


def listed_outside(text: str) -> bool:
    """A word of the off-topic list (cues.OUT_OF_SCOPE: "weather", "recipe", "joke") in a message
    the scope reader does not read as the desk's own: "a recipe for lasagna" is outside, "the
    recipe i fixed on my laptop still has the old ingredients on my phone" is a sync problem that
    names what the file holds (issue 38, kb-11: it was refused as outside the desk)."""
    return bool(cues.OUT_OF_SCOPE.search(text)) and read_scope(text).act != "in_scope"


# Below this weighted share of its meaning-bearing words known to the scope reader, the reader's
# reading rests on the message's small words alone ("whats your guaranteed uptime, like 99.9%?
# procurement needs a number": uptime, procurement and guaranteed are words it never learnt), and
# it cannot tell the desk's own business from another's: the message is not refused as outside
# the desk; its agent says what it knows, or that it does not know and offers a person.
MIN_KNOWN_SHARE = 0.5


# A word the public corpora hold in fewer messages than this is one the reader never learnt (the
# desk's own labelled lines are no background: they are weighed five times in training).
KNOWN_MIN_MESSAGES = 3


def known_share(text: str) -> float:
    """The weighted share (rarer words weigh more, as in `share_in_scope`) of the message's words
    that the scope reader learnt: words the public corpora hold, or words the desk's own lines
    taught it as small talk only (`taught_as_small_talk`); 1.0 for common words only."""
    df, _ = background_counts()
    weights = {w: max(0.0, 1.0 - commonness(w)) ** 2 for w in _WORD.findall(normalise(text))}
    total = sum(weights.values())
    known = (wt for w, wt in weights.items() if df.get(w, 0) >= KNOWN_MIN_MESSAGES or taught_as_small_talk(w))
    return sum(known) / total if total else 1.0


# One of the desk's labelled lines (scripts/build_readers.py DESK_WEIGHT, five corpus sentences).
SMALL_TALK_LINE_WEIGHT = 5


def read_matter(text: str) -> Reading:
    """The scope reader's reading of what a message is about, without its chat words ("lol",
    "tbh": `taught_as_small_talk`), which say how it is said, not what about: "whats the best
    pizza place near me lol" is another domain's question, outside the desk, not small talk."""
    return scope_reader().read(text, ignore=_holds_a_chat_word)


def _holds_a_chat_word(feature: str) -> bool:
    return any(taught_as_small_talk(word) for word in feature_words(feature))


@lru_cache(maxsize=4096)
def taught_as_small_talk(word: str) -> bool:
    """A word the desk's labelled lines gave the scope reader as chit-chat and never as the desk's
    matter ("drizzle", "lol", "tbh": evals/scope-labels-17-tune.jsonl): chat words and the weather's
    no public corpus writes, which the reader did learn, as small talk, so a chit-chat reading that
    rests on them rests on what it learnt. A word the desk's lines or corpora also give a matter
    ("uptime", "sla": evals/scope-labels-tune.jsonl) stays unknown unless the corpora hold it: a
    service question in such words is still no chit-chat (talk-17)."""
    reader = scope_reader()
    return reader.count("chit_chat", word) >= SMALL_TALK_LINE_WEIGHT and not reader.count("in_scope", word)


# How sure the scope reader must be that a message is chit-chat ("do you like your job?")
# before the desk answers it as such. A question about the company's service ("what uptime do
# you guarantee?") is in scope: the reader learnt such questions as the desk's own
# (evals/scope-labels-tune.jsonl), so the desk says it does not know and offers a person.
CHIT_CHAT_CONFIDENCE = 0.9
# At or above this weighted share of its meaning-bearing words in one agent's job, a message is
# that agent's whatever the scope reader says (the dev set's three identity-check questions).
CLAIMED_SHARE = 0.75


def life_told(agents: list[AgentConfig], clause: str) -> bool:
    """A clause that tells of the customer's day, not of the desk ("my car broke down on the way
    in", beside "ugh what a week"): the scope reader hears a trouble told, which is how the desk's
    problems are said, but no agent's job uses its meaning-bearing words (`outside_scope`, each
    agent). Venting, not a matter (multi-15). A question stays the desk's whatever its words
    ("does it run on a chromebook?" names nothing of any job either), and so does a trouble told
    in a job's words ("and now i cant log in")."""
    return read_act(clause).act == "problem" and bool(agents) and all(outside_scope(agent, clause) for agent in agents)


def chit_chat(agents: list[AgentConfig], text: str, whole: bool = False) -> bool:
    """Said to the assistant about itself, not about anything the desk does: the scope reader's
    learned reading, not a list of phrasings, made on words it knows ("what uptime do you
    guarantee in your sla?" is asked of "you" too, in words it never learnt), and not mostly in
    one agent's job words ("what type of ID do you accept?" is the technical agent's: CLINC150's
    small talk knows "you" but not the desk's identity checks). Chit-chat is short ("do u like
    your job"), so any weight of words counts here, unlike `outside_scope`'s MIN_WEIGHT. `whole`
    reads the text as one clause: a clause with the short afterthought that leans on it ("you
    working all the night, never tired?": "never tired?" alone reads as the desk's)."""
    if not agents or known_share(text) < MIN_KNOWN_SHARE:
        return False
    parts = [text] if whole else clauses(text)
    readings = [read_scope(part) for part in parts]
    # No clause is the desk's own ("our admin account was taken over, get me a real person" tells
    # a matter before asking for a person), and one at least is surely said to the assistant; the
    # others may be about nothing the desk does ("whats your favourite film, if bots are allowed
    # one", "do you like music? whats ur favourite song": the reader reads the afterthought and a
    # song asked about as out of scope, route-14), which no article answers either.
    if any(r.act == "in_scope" and not life_told(agents, part) for part, r in zip(parts, readings)):
        return False
    # Small talk's words inside a matter ("what kind of document you accept for confirm who i am,
    # passport is ok?": "who i am" is CLINC150's small talk) are no chit-chat because the reader
    # learnt the matter's own clause as the desk's (the identity check's papers,
    # evals/scope-labels-16-tune.jsonl), not by reading the message a second time whole.
    if not any(r.act == "chit_chat" and r.confidence >= CHIT_CHAT_CONFIDENCE for r in readings):
        return False
    if any(share_in_scope(agent, text)[0] >= CLAIMED_SHARE for agent in agents):
        return False
    # A ground the desk hands to a person ("support in german?") is the desk's matter. Read last:
    # the ground reader costs most, and few messages get this far (issue 34: eval routing's CPU).
    return gates.ground(text) is None
