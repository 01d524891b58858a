"""The technical skill (an agent holding `search_kb` / `send_password_reset`): walk the customer
through the knowledge base's steps, send password resets, and report bugs to engineering."""

from __future__ import annotations

import re
from typing import Any

from supportdesk.engine.confirmation import asks, asks_for_something, read_answer, requests_apart
from supportdesk.engine.protocol import Transfer
from supportdesk.models.offline import cues
from supportdesk.models.offline.classifier import denials
from supportdesk.models.offline.router import without_announcement
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills import generic
from supportdesk.models.offline.skills.common import ANSWERS_QUESTION, SkillBase
from supportdesk.lexicon import ASKS_SIZE, ASKS_TIME, MEASURES, normalise, shares_a_term, terms
from supportdesk.models.offline.view import ON_OUR_SIDE, ToolEvent
from supportdesk.readers import acts
from supportdesk.text import clip_words
from supportdesk.patterns import LazyPattern

_CLAUSES = LazyPattern(r"(?<=[,;.!])\s+")
_TROUBLE = cues.TROUBLE_TOLD  # a failure's words (in cues: the router reads reassurances by it too)

# How the steps end: the customer is asked to tell how they went (an answer is pointed back at them).
REPORT_BACK = "Let me know whether that works."
# Words that point back at what was said before ("did all of those", "tried it").
POINTS_BACK = LazyPattern(r"\b(?:that|this|it|its|those|these|them|one|ones)\b", re.I)
# A reply pointing back is terse ("did all of those, same story", 6 words; "done all of it, it's
# the same as before", 9, route-7: at 8 its clause "it's the same as before" was read alone, as
# billing's "same" charge, and handed back); a longer message that says "that" tells a matter of
# its own ("another thing: there was a login to my account that i did not do", 13, route-5 config).
REPLY_MAX_WORDS = 10
# The yes a reply to "did the steps help?" may open with (a closed class of answer words).
_OPENING_YES = LazyPattern(r"^\W*(?:yes|yeah|yea|yep|yup|ya|sure|ok(?:ay)?)\b[\s,.!]*", re.I)


def points_back(text: str) -> bool:
    """A terse reply that points back at what was said before."""
    return bool(POINTS_BACK.search(text)) and len(text.split()) <= REPLY_MAX_WORDS


# The opening of a how-to question: "how do I ...", "how can we ...", "how should I ...".
_HOW_TO = LazyPattern(r"\s*how (?:do|can|could|should|would|will|to)\b(?: (?:i|we|you|my|our|one)\b)?", re.I)


# Where a message's clauses end, a question's mark included ("is there a way to turn on 2fa? nothing
# is wrong"): the clauses `without_denied_trouble` reads one by one.
_ANY_CLAUSE = LazyPattern(r"(?<=[,;.!?])\s+")
_NO_ONE = LazyPattern(r"^\W*(?:nobody|noone|no one|no-one)\b", re.I)
_NOTHING = LazyPattern(r"^\W*nothing\b", re.I)
# "nothing dodgy going on", "nothing shady is going on": something denied to be going on at all, an
# incident denied whatever word says what kind (tech-h18).
_GOING_ON = LazyPattern(r"\b(?:(?:is |was )?go(?:ing|in'?) on|occurr\w*)\b", re.I)
_NO_TROUBLE = cues.NO_TROUBLE  # "no problem with my account", "no issues at all"
_ALL_WELL = cues.ALL_WELL  # "all good", "everything's fine" (config19)
_OWNED = cues.OWNED  # "the login alert was me", "that sign-in was just us" (sec17)
# What the customer did, told in the clause ("nothing happens when i tap sync"): what follows
# "nothing" is that action's outcome, a trouble, not a denial.
_UPON_AN_ACTION = LazyPattern(r"\b(?:when|whenever|after|once|if)\b", re.I)
# "no one on my team can log in" is an inability told, not a denial of anyone's doing
_MODAL = LazyPattern(r"\b(?:can|could|will|would|should|may|might|must)\b", re.I)
# What used to happen and has stopped ("nobody on my team gets the email anymore"): a failure
# told, no intrusion denied (kb-18: the mention emails' clause was set aside and the search
# was left with "been like that since monday").
_STOPPED = LazyPattern(r"\b(?:any ?more|no longer)\b", re.I)


def denies_trouble(clause: str) -> bool:
    """The clause says a trouble did not happen: someone's doing denied ("nobody got into my
    account", "no one hacked me": classifier.denials reads what the negated subject governs),
    a trouble named with "nothing" ("nothing is wrong", "nothing happened", "nothing dodgy going
    on"), or a trouble's noun
    negated ("no problem with my account"), or what was seen owned as the customer's own doing
    ("the login alert was me", `_OWNED`). "nothing works" names no trouble of its own (it is
    one), "nothing happens when i tap sync" tells an action's outcome, and "no one on my team can
    log in" tells an inability, "nobody gets the email anymore" something stopped: none of them
    is set aside."""
    if _NO_ONE.match(clause):
        return not _MODAL.search(clause) and any(w.startswith("not_") for w in _denials(clause))
    if _NO_TROUBLE.match(clause) or _ALL_WELL.match(clause):
        return True
    if _OWNED.search(clause) and not _TROUBLE.search(clause):
        return True  # owned, and no failure told in the same clause ("it was me and now it won't open" is one)
    return bool(_NOTHING.match(clause) and (_TROUBLE.search(clause) or _GOING_ON.search(clause)) and not _UPON_AN_ACTION.search(clause))


def without_denied_trouble(query: str) -> str:
    """`query` without the clauses that deny a trouble (`denies_trouble`), unless nothing else is
    left: "nobody got in, i just want a new password" asks for a new password, and tells no trouble."""
    clauses = _ANY_CLAUSE.split(query.strip())
    kept = [c for c in clauses if not denies_trouble(c)]
    return " ".join(kept) if kept and len(kept) < len(clauses) else query


# The lexicon's concepts of what may have happened to an account or a device (someone else in it,
# a theft, a loss): denied, the words that said them are not searched. Other things said with "no"
# are what the customer lacks, the matter itself ("no push notifs since the update", "no signal").
DENIED_MATTERS = ("hacked", "lost", "unrecognised", "someone")


def _denials(clause: str) -> list[str]:
    """classifier.denials' words of `clause`, none when it tells something that stopped
    (`_STOPPED`: "nobody gets the email anymore when someone @'s them" denies no one's doing)."""
    return [] if _STOPPED.search(clause) else denials(clause)[0]


def denied_matters(text: str) -> set[str]:
    """The `DENIED_MATTERS` concepts a clause of `text` denies ("nobody stole anything": lost)."""
    found: set[str] = set()
    for clause in _ANY_CLAUSE.split(text.strip()):
        words = _denials(clause)
        found.update(c for c in DENIED_MATTERS if f"not_{c}_c" in words)
    return found


def about_denied_matter(article: dict[str, Any], denied: set[str]) -> bool:
    """The article's title names a matter the customer denied ("Lost or stolen phone" after "my
    phone isnt stolen, its at home"): it answers what did not happen."""
    return bool(denied) and any(f"{c}_c" in normalise(str(article.get("title", ""))).split() for c in denied)


def without_denied_matter(query: str) -> str:
    """`query` without the clauses that deny a trouble (`without_denied_trouble`) and, in the
    clauses kept, without the words a denial of one of `DENIED_MATTERS` governs (classifier.denials:
    "nobody stole anything", "my phone isnt stolen"): the matter denied is not what is searched,
    so "not a hack, i just left the phone with my 2fa app at home" asks about the codes, not about
    a stolen phone (kbfacts15)."""
    kept = []
    clauses = _ANY_CLAUSE.split(without_denied_trouble(query).strip())
    for clause in clauses:
        words = _denials(clause)
        denied = {w[4:] for w in words if w.startswith("not_") and not w.endswith("_c")}
        if denied and any(f"not_{c}_c" in words for c in DENIED_MATTERS):
            clause = re.sub(rf"\b(?:{'|'.join(map(re.escape, sorted(denied)))})\b", " ", clause, flags=re.I)
            # a clause that was only the denial ("not a hack or anything!!", "my account wasnt
            # compromised or nothing") says nothing once its matter is out: left in, its "account"
            # and "not" left the search unsure of the how-to asked beside it (config19)
            if len(clauses) > 1 and not [w for w in normalise(clause).lower().split() if w.isalpha() and w not in _DENIAL_FILLER]:
                continue
        kept.append(" ".join(clause.split()))
    return " ".join(c for c in kept if c) or query


# What is left of a clause that only denied something: its negation, its filler, the account.
_DENIAL_FILLER = frozenset(
    "a an the my our me i it its is was wasnt isnt not no nobody noone nothing anything something or and "
    "just like even at all account acct".split()
)


def tells_trouble(query: str) -> bool:
    """Something fails in what the customer tells (the act reader's problem, of the whole or of a
    clause, or a word of failure), the trouble they deny set aside: only then are an article's steps
    "what usually fixes this". (A clause: "no one on my team can log in, where is the setting for
    single sign-on?" reads as a question as a whole; its first clause tells the trouble.)"""
    told = without_denied_trouble(query)
    if _TROUBLE.search(told) or acts.read_act(told).act == "problem":
        return True
    # A clause telling only who the customer is ("my email is x@example.com") tells no trouble,
    # though the act reader, which knows no address, reads it as one (kb-18).
    clauses = [c for c in _ANY_CLAUSE.split(told) if c.strip()]
    return len(clauses) > 1 and any(acts.read_act(c).act == "problem" and not cues.only_facts(c) for c in clauses)


# A question asking for the remedy ("how do i fix the sync?", "what should i do about the codes?",
# "how do i get the app working again?"): the trouble's, however it is worded around it.
_ASKS_FOR_THE_FIX = LazyPattern(
    r"\b(?:fix\w*|repair\w*|solv\w*|resolv\w*|troubleshoot\w*|sort\w* (?:it|this|that|them) out|"
    r"work\w* again|what (?:should|do|can|shall|must) (?:i|we) do)\b",
    re.I,
)


def asks_beside_trouble(query: str, article: str) -> bool:
    """A question of its own asked beside a trouble told, read clause by clause with the act
    reader (issue 38.2, kb-16): "my colleague lost her phone and cant sign in, can she use a
    backup code?", "i dont have a smartphone. can the code come by text message?". The asked
    clause ends with a question mark, reads as a question or a request (not a problem: "what
    happened to my codes?"), names no failure of its own ("how do i stop it crashing?") and asks
    for no remedy ("how do i fix the sync?", `_ASKS_FOR_THE_FIX`), and no clause after it points
    back at it to say it fails ("can i log in? it keeps failing"): then it asks about the product's
    matter, if it names something `article` (the found article's title and steps) names: "the app
    crashed, any idea?" and "my files won't sync, can you help?" ask for the fix. Then the article
    answers the question rather than "usually fixes" the trouble told."""
    clauses = _ANY_CLAUSE.split(query.strip())
    for at, clause in enumerate(clauses):
        marked = clause.rstrip().endswith("?")
        fact = asks_a_fact(clause)
        if not (marked or fact) or _TROUBLE.search(clause) or _ASKS_FOR_THE_FIX.search(clause):
            continue
        if not shares_a_term(clause, article):
            continue
        if acts.read_act(clause).act not in (("question", "request") if marked else ("question",)):
            continue
        if fact or not any(points_back(later) for later in clauses[at + 1:]):
            return True
    return False


# A clause asking for a fact of the product (facts19): a measure or an address (`lexicon.MEASURES`:
# "how long till i can try again", "what address do the emails come from"), a count, or which
# thing, where, whether there is one ("which characters make it skip a file", "is there a page to
# check"). Such a question is answered by the step stating the fact, however the trouble around it
# is told, and even unmarked ("locked after too many wrong pw tries. how long till i can try
# again"); a failure told after it ("got a few that never go up") is what it asks about, not a
# sign that it fails, as after "can i log in?" (`points_back`).
_ASKS_A_FACT = LazyPattern(r"^\W*(?:which|where (?:can|do|does|is|are|would|should)|(?:is|are) there|how many)\b", re.I)


def asks_a_fact(clause: str) -> bool:
    return bool(_ASKS_A_FACT.search(clause)) or any(kind.search(clause) for kind, _ in MEASURES)


# A question asked on the side ("my files stopped syncing. also is there a dark mode?") needs this
# many words of its own (`lexicon.terms`) to be a matter: "can you help with that?" holds one.
ASIDE_MIN_TERMS = 2
# ... and a sentence of its own: a question after a comma asks on about what was told ("someone
# nicked my phone on the train, can they get into acme?" is the stolen phone's matter, kb-14).
_SENTENCE_END = LazyPattern(r"(?<=[.!?])\s+")
ASIDE_UNKNOWN = (
    "\n\nAs for your other question: I'm sorry, I don't know, and I'd rather not "
    "guess. A person from our team can find out for you: just say if you'd like me to bring one in."
)
ASIDE_ARTICLE = "\n\nAs for your other question: our article \"{title}\" answers it."


def aside_question(query: str, article: str) -> str | None:
    """A question of its own, in a sentence of its own, asked after a trouble or question the found article answers, about
    nothing `article` (its title and steps) names (talk-17): "my files stopped syncing to my phone.
    also is there a dark mode anywhere?". It ends with a question mark, reads as a question, tells
    no trouble, asks for no fix and points back at nothing ("any idea?"), and says enough of its
    own (ASIDE_MIN_TERMS). It is searched on its own, so the reply answers both, or says it does
    not know the second, rather than leave it unanswered beside the first one's steps."""
    for clause in _SENTENCE_END.split(query.strip())[1:]:
        if not clause.rstrip().endswith("?") or _TROUBLE.search(clause) or _ASKS_FOR_THE_FIX.search(clause) or points_back(clause):
            continue
        if shares_a_term(clause, article) or len(set(terms(clause))) < ASIDE_MIN_TERMS:
            continue
        if acts.read_act(clause).act == "question":
            return clause.strip()
    return None


def _article_text(article: dict[str, Any]) -> str:
    return " ".join([str(article.get("title", "")), *map(str, article.get("steps", []))])


# A question asking a measure of the product (a time, a count, a size, how far back): its fact.
# A size and a time are asked as the knowledge base reads them (`lexicon.MEASURES`, kb-17).
_MEASURE = LazyPattern(
    rf"{ASKS_SIZE.pattern}|{ASKS_TIME.pattern}|"
    r"\b(?:how (?:many|often|old)|what(?:'?s| is) the (?:limit|maximum|max|oldest|longest))\b",
    re.I,
)


# A condition opening what comes before the measure asked ("if my kid keeps typing the wrong
# passcode, how long ..."): the trouble in it is supposed, the event measured, not one told.
_SUPPOSED = LazyPattern(r"^\W*(?:(?:quick (?:one|q\w*)|out of curiosity|just wondering|hi|hey|hello)\W+)?(?:if|in case|suppos\w*|what if|whenever)\b", re.I)


def asks_a_measure(query: str) -> bool:
    """A measure asked ("how many days before an invitation stops working?", "if i bin something
    by mistake how long until it's gone for good"), with nothing failing told before it: a trouble
    named after the measure word is the measured event, a hypothetical, not one that happened
    (kbfacts15), and so is one inside a condition before it (`_SUPPOSED`, tech-h18); "my app
    crashes, how long until you fix it" tells its trouble first."""
    found = _MEASURE.search(query)
    if found is None:
        return False
    before = query[: found.start()]
    return not _TROUBLE.search(before) or bool(_SUPPOSED.match(before))


def asks_how(query: str) -> bool:
    """A question rather than a problem report (acts.asks_rather_than_reports), a measure asked
    (`asks_a_measure`), or a situation
    told and then a question asked about it, with nothing in it failing: "someone from
    marketing needs access to our shared folder, how do i give it to her?" asks how (issue 38),
    though a need told reads as a problem."""
    if acts.asks_rather_than_reports(query) or asks_a_measure(query):
        return True
    *told, last = _CLAUSES.split(query.strip())
    if _HOW_TO.match(last) and last.rstrip().endswith("?") and not _TROUBLE.search(query):
        # "how do I get my staff signing in through Okta?": the form of a how-to question, nothing
        # failing; the act reader's bag of words heard "get all", "in to" as a problem (held-5).
        return True
    # Put as a question by its mark or, unmarked, by the act reader: "after i kick off a big
    # export and the mail arrives, whats the shelf life of that download link" (kb-18).
    put_as_question = last.rstrip().endswith("?") or acts.read_act(last).act == "question"
    return bool(told) and put_as_question and acts.asks_rather_than_reports(last) and not _TROUBLE.search(query)


def asks_about_the_reset(text: str) -> bool:
    """The message asks about the reset link (how long it lasts, whether an older one still works)
    and for nothing (engine/confirmation.requests_apart, the reset tool's reading of a request):
    a measure asked, or a question with nothing failing told. A how-to ("how do i reset my
    password?") is answered by the link offered; "does the reset link expire, and is the first one
    dead once i ask for another?" by the article."""
    if requests_apart(text):
        return False
    if asks_a_measure(text):
        return True
    said = without_announcement(text)
    # A how-to after a turn to it ("also how do I reset my password?", after a refund) is one
    # still: it was "not a question" only while the act reader heard it as a problem (acts-17).
    how_to = any(_HOW_TO.match(clause) for clause in cues.clauses(said) or [said])
    # The act reader's question, not a question's form: "just curious how your password reset
    # works" has neither a "?" nor a question word opening it, and was offered the link (kb-18).
    return not how_to and not tells_trouble(said) and acts.read_act(said).act == "question"


LOGIN_ARTICLES = ("login-problems", "password-reset", "account-locked")
# The article whose step the reset tool carries out: a request it answers is the tool's to do.
RESET_ARTICLE = "password-reset"
NO_ARTICLE = (
    "I'm sorry, I don't know: none of our help articles answers that, and I'd rather not guess. "
    "A person from our team can find out for you: just say if you'd like me to bring one in."
)
# The article the search found was given earlier in this conversation: say so, and move on.
ARTICLE_GIVEN = (
    "The steps for this are the ones from our article \"{title}\" above, so I won't paste them again. "
    "If you've tried them and they didn't help, tell me what happened when you did and I'll take it further; "
    "or I can bring in a person from our team: just say if you'd like one."
)
# (Noted, not looked up: nothing here has checked that an account has that email.)
ACCOUNT_NOTED = (
    "Thanks, I've noted that. Did the steps above fix it? If not, tell me what happens when you "
    "follow them and I'll take it further."
)
SETUP_NOTED = (
    "Thanks, I've noted that for this case. Did the steps above fix it? If not, tell me what happens when you "
    "follow them and I'll take it further."
)


class TechSkill(SkillBase):
    def _told_the_steps_failed(self, text: str) -> bool:
        """Asked how the steps went, the customer points back at them and tells of trouble in
        words no cue lists ("did all of those, same story"): the act reader hears a problem,
        and nothing in it is a setup detail (issue 38, held-6)."""
        if not self.view.last_agent_text().rstrip().endswith(REPORT_BACK) or not points_back(text):
            return False
        # A yes first says the steps were done ("yes did all of those, nothing"); how they went is
        # told after it (the act reader, hearing "yes", reads the whole as thanks).
        told = _OPENING_YES.sub("", text) or text
        return not cues.setup_only(text) and acts.read_act(told).act == "problem"

    def _card_change_elsewhere(self, text: str):
        """A card named after a request to change how the customer pays (cues.card_change_told),
        with no tool here to change it: back to triage with the request and its card, for the
        agent whose tools put a card on file (issue 38: the apple-pay article's "pay" words had
        brought "need to change how i pay you" here)."""
        v = self.view
        target = self.return_target()
        if target is None or v.has_tool("update_payment_method") or v.turn_tools or v.turn_handoffs:
            return None
        earlier = [t for t in self.topic_texts() if t != text]
        if not earlier or not cues.card_change_told(earlier[-1], text):
            return None
        return self._hand_back(f"{earlier[-1]} {text}")

    def _tech(self, text: str):
        v, step = self.view, self.step
        elsewhere = self._card_change_elsewhere(text)
        if elsewhere is not None:
            return elsewhere
        results = self._tech_results()
        if results is not None:
            return results
        topic_texts = self.topic_texts()
        issue = v.context.get("issue") or (topic_texts[0] if topic_texts else text)
        searched_before = [t for t in v.tools if t.name == "search_kb" and t.ok]

        # Troubleshoot first: only a report the customer calls a bug, or lost data, goes
        # straight to engineering; a first crash report gets the help article's steps.
        bug = bool(cues.BUG.search(text) or cues.data_loss_told(text))
        failed = bool(cues.STEPS_FAILED.search(text) or self._told_the_steps_failed(text)) and bool(searched_before) and not v.turn_tools
        if v.context.get("bug_summary") and not v.calls("create_ticket") and v.has_tool("create_ticket"):
            return self._ticket(v.context["bug_summary"])
        login_issue = any(cues.LOGIN.search(t) or cues.RESET.search(t) for t in topic_texts + [text]) or any(
            isinstance(t.output, dict) and (t.output.get("articles") or [{}])[0].get("id") in LOGIN_ARTICLES
            for t in searched_before
        )
        reset_sent = any(t.name == "send_password_reset" and t.ok for t in v.tools)
        # A link we sent that never arrived is a failed step too; a reset they did themselves is
        # the step a reset link would be, so it is not offered again.
        missing = reset_sent and bool(cues.NOT_ARRIVED.search(text)) and not v.turn_tools
        reset_done = bool(cues.RESET_DONE.search(text))
        failed = failed or missing
        # Signing in through the company's identity provider, no password of ours is in it: a
        # reset link is no next step when the steps failed (issue 38: "sign in through azure ad
        # fails ... same error" was offered a reset instead of being taken further).
        through_provider = any(cues.PROVIDER_SIGN_IN.search(t) for t in topic_texts + [text])
        if failed and login_issue and not through_provider and not bug and not reset_sent and not reset_done and v.has_tool("send_password_reset"):
            # The usual next step for a refused password is a reset, not an engineering ticket.
            failed = False
            force_reset = True
        else:
            force_reset = False
        if bug or failed:
            return self._take_further(text, issue, searched_before, bug=bug, missing=missing)

        # A question about the reset ("how long is the reset link good for?", "is an older link
        # dead once i ask for another?") is answered by its article, not taken for a request.
        asked_about = asks_about_the_reset(text)
        wants_reset = force_reset or (not asked_about and any(cues.RESET.search(t) for t in ([text] + topic_texts[-2:]))) or (
            # Our offer ("just tell me the email") is taken by a yes or by an email in this reply;
            # one given earlier does not make any later reply a yes ("I'm on chrome on windows").
            "reset link" in v.last_agent_text().lower() and (read_answer(text) == "yes" or bool(slot_extraction.emails_in(text)))
        )
        if wants_reset and v.has_tool("send_password_reset"):
            asked = self._reset_asked()
            if asked is not None:
                return asked
        if searched_before and not v.turn_tools and cues.setup_only(text):
            # "I'm on iOS 17" after the steps: a detail of this problem, kept for the case (and an
            # engineer's ticket), not a new search.
            return step.answer(SETUP_NOTED, customer_setup=text.strip()[:120])
        if searched_before and not v.turn_tools and cues.only_facts(text):
            # Who they are, after the steps (the facts go to the shared context): no new search.
            return step.answer(ACCOUNT_NOTED)
        if v.has_tool("search_kb"):
            just_arrived = bool(v.turn_handoffs) and v.turn_handoffs[-1].to_agent == self.me.name
            if just_arrived and v.context.get("issue"):
                query = v.context["issue"]  # what triage understood, without the small talk around it
            else:
                query = text if len(text.split()) > 3 or not topic_texts else " ".join(topic_texts[-2:])
            # A trouble denied is no topic: "nothing is wrong and nobody hacked me, how do i change
            # my password" is searched as the how-to (its "wrong" and "hacked" found the sign-in
            # article, or left the search unsure), and answered as a question (`tells_trouble`).
            # Words that only announce a new matter ("also separate thing, ...", "different topic:")
            # name nothing an article holds, and left the search unsure of the matter after them
            # (tech-20 config: a folder the mac app won't sync found no article): the router's reading.
            query = without_denied_matter(without_announcement(query))
            if not v.called_with("search_kb", {"query": query}):
                return step.call("search_kb", {"query": query}, issue=issue[:300])
        if not v.has_tool("search_kb"):
            # No knowledge base to search (an agent defined in the desk file, with a reset tool
            # among its own): use the tool its description and instructions say fits.
            return generic.Generic(self).decide(text)
        return step.answer("Could you tell me a bit more about what happens, and what you see on screen?")

    def _reset_asked(self):
        """A reset link the customer wants: the email asked for when no account is known, the
        link already sent said so, else the offer (or the call); None when this reset was made."""
        v, step = self.view, self.step
        who = self._reset_account()
        if who is None:
            return step.answer(
                "I can send you a password reset link. What's the email address on your account? "
                "The link always goes to the address we have on file."
            )
        sent = [t for t in v.tools if t.name == "send_password_reset" and t.ok]
        if sent and not v.facts.emails[-1:] == [who]:
            return step.answer(
                f"I've already sent a reset link to {self._mask(sent[-1].output.get('email', ''))}; it's valid for 30 minutes. "
                "Only the newest link works, so use the latest email."
            )
        if not self._reset_made({"customer": who}):
            return self._reset(who)
        return None

    def _reset_account(self) -> str | None:
        """Whose password a reset would be for: the account found, else the email or the customer
        id they gave (an id told anywhere in the conversation is a slot like an email; the tool
        takes either, and its policy checks that an account matches before anything is sent)."""
        v = self.view
        told = v.facts.emails[-1:] or v.facts.customer_ids[-1:]
        account = v.context.get("customer_id")
        if told and account and not self._found_as(told[0], str(account)):
            # Named after the account was found ("and one for my other account, marco@..."): the
            # reset is for the one named last (issue 38.3: a changed slot replaces the old one).
            return told[0]
        return account or (told[0] if told else None) or v.context.get("customer_email")

    def _found_as(self, told: str, account: str) -> bool:
        """A tool of this conversation found `account` by the email or id `told` (or is it)."""
        if told.lower() == account.lower():
            return True
        for t in self.view.tools:
            if not (t.ok and isinstance(t.output, dict)):
                continue
            asked = str(t.arguments.get("query") or t.arguments.get("customer") or "").lower()
            found = t.output.get("customer_id") or t.output.get("id") or (t.output.get("customers") or [None])[0]
            if str(found) == account and told.lower() in (asked, str(t.output.get("email", "")).lower()):
                return True
        return False

    def _reset_made(self, args: dict[str, Any]) -> bool:
        """This reset ran (or was refused); a call only offered, whose offer was turned down, did not."""
        return any(
            t.name == "send_password_reset" and t.arguments == args and (t.ok or (t.is_error and not str(t.output).startswith("not run:")))
            for t in self.view.tools
        )

    def _reset(self, who: str):
        """A reset link: where the desk's gate holds it, the question goes with the call (asked
        once, in this agent's words); otherwise the call."""
        args = {"customer": who}
        if self.step.gated("send_password_reset", args):
            return self.step.offer(
                "I can email a password reset link to the address on file for your account; it's valid for 30 minutes. "
                "Shall I send the reset link now?",
                "send_password_reset", args,
            )
        return self.step.call("send_password_reset", args)

    def _take_further(self, text: str, issue: str, searched_before: list[ToolEvent], *, bug: bool = False, missing: bool = False):
        """The steps did not fix it (or it is a bug, or the reset link never came): a ticket, a
        higher level, or a person, with everything the customer said."""
        v, step = self.view, self.step
        summary = self._bug_summary(text if bug else issue, text, [] if bug else searched_before)
        if v.has_tool("create_ticket"):
            return self._ticket(summary)
        target = self.escalation_target("create_ticket")
        if target:
            title = v.desk.agents[target].title.lower()
            steps_tried = [a["id"] for t in searched_before for a in (t.output or {}).get("articles", [])[:1]]
            why = (
                "the customer reports a bug" if bug
                else "the password reset link did not arrive" if missing
                else "the knowledge-base steps did not fix it"
            )
            return Transfer(
                to_agent=target,
                reason=f"{why}: {clip_words(summary, 120)}",
                handoff_kind="escalate",
                text=("Thanks for reporting this. " if bug else "Thanks for checking. " if missing else "Thanks for trying that. ")
                + f"This needs a closer look, so I'm passing it to a {title} colleague "
                "who can get engineering involved; they'll have everything you've told me.",
                context=step.context({"bug_summary": summary, "steps_tried": steps_tried, "escalation_reason": why}),
            )
        return self._ask_human("the steps did not fix the problem", {"bug_summary": summary})

    def _tech_results(self):
        v, step = self.view, self.step
        if not v.turn_tools:
            return None
        last = v.turn_tools[-1]
        if not last.done:
            return None
        if last.name == "send_password_reset":
            if last.is_error:
                return step.answer(
                    "I couldn't find an account with that email address. Could you check it, or give me the one you signed up with?"
                )
            email = self._mask(last.output.get("email", "")) if isinstance(last.output, dict) else "your email"
            step.resolved = True
            return step.answer(
                f"I've sent a password reset link to {email}. It's valid for 30 minutes; check your spam folder if it hasn't "
                "arrived in a few minutes. Let me know if anything goes wrong."
            )
        if last.name == "create_ticket":
            if last.is_error:
                return step.answer(f"I couldn't open the ticket: {(last.reason or ON_OUR_SIDE).rstrip('. ')}.")
            out = last.output if isinstance(last.output, dict) else {}
            step.resolved = True
            return step.answer(
                f"I've opened engineering ticket {out.get('ticket_id')} with everything you've described "
                f"(\"{clip_words(str(out.get('summary', '')), 120)}\"). "
                + (
                    "Our engineers will follow up by email; you don't need to repeat anything."
                    if out.get("customer_id")
                    else "If you tell me the email on your account, I'll add it so our engineers can reach you."
                )
            )
        if last.name == "search_kb":
            aside_note = ""
            searched = [t for t in v.turn_tools if t.name == "search_kb" and t.done and isinstance(t.output, dict)]
            if len(searched) >= 2 and searched[-2].output.get("articles"):
                # The search just made was for a question asked on the side of the one before it
                # (`aside_question`): what it found, or that nothing was, goes beside that answer.
                before = searched[-2]
                aside = aside_question(str(before.arguments.get("query", "")), _article_text(before.output["articles"][0]))
                if aside is not None and aside == str(last.arguments.get("query", "")):
                    found = last.output.get("articles", []) if isinstance(last.output, dict) else []
                    aside_note = (
                        ASIDE_ARTICLE.format(title=found[0]["title"]) if found else ASIDE_UNKNOWN
                    )
                    last = before
            articles = last.output.get("articles", []) if isinstance(last.output, dict) else []
            if not articles:
                # The knowledge base abstained: no article answers this with confidence. Say so,
                # and offer a person, rather than present a loosely related article. (Ground no
                # tool covers, searched first for a question, goes up as that ground:
                # `SeniorSkill._articles_first`.)
                if v.latest and cues.unknown_ground(v.latest, v.desk.desk.name) is not None:
                    beyond = self._beyond_me(v.latest, searched=True)
                    if beyond is not None:
                        return beyond
                return step.answer(NO_ARTICLE)
            top = articles[0]
            denied = denied_matters(f"{v.context.get('issue') or ''}. {v.latest}")
            if about_denied_matter(top, denied):
                # The best match is about the matter the customer denied ("nobody stole it, my phone
                # with the codes is just at home"): another the search found confidently answers.
                top = next((a for a in articles if not about_denied_matter(a, denied)), top)
            if top["id"] not in LOGIN_ARTICLES and cues.sign_in_trouble(str(last.arguments.get("query", ""))):
                # The search matches words ("logging" finds the signed-out article, "my details"
                # the personal details one); trouble signing in is answered by a sign-in article
                # when the search found one at all.
                top = next((a for a in articles if a["id"] in LOGIN_ARTICLES), top)
            query = str(last.arguments.get("query", ""))
            if top["id"] == RESET_ARTICLE and v.has_tool("send_password_reset") and (
                asks_for_something(query, put_as_question=query.rstrip().endswith("?")) and acts.read_act(query).act == "request"
                or bool(requests_apart(query))
            ):
                # The article found is the one whose step the reset tool carries out ("support can
                # send the reset link"), and the customer asks for it to be done, not how to do it
                # ("pls email me a link to set a new password", issue 38, held-7): the link is
                # offered (or the email asked for), not the article's steps shown. Asked in a
                # clause of its own, as the desk's gate reads a request: "forgot my pw again 🙄
                # link to <email>" tells a problem, then asks (reset15).
                asked = self._reset_asked()
                if asked is not None:
                    return asked
            # A Markdown list: the TUI renders agent text as Markdown, so each step gets its own line.
            steps = "\n".join(f"{i}. {s}" for i, s in enumerate(top["steps"][:5], start=1))
            if steps and any(steps in m.text for m in v.agent_messages):
                # Given already in this conversation: never pasted again word for word (issue 39).
                given = ARTICLE_GIVEN.format(title=top["title"])
                if any(given in m.text for m in v.agent_messages):
                    # Said once already that those steps are the ones: more of the same trouble
                    # means they did not fix it, so take it further instead of saying so again.
                    searched = [t for t in v.tools if t.name == "search_kb" and t.ok]
                    topic_texts = self.topic_texts()
                    issue = v.context.get("issue") or (topic_texts[0] if topic_texts else v.latest)
                    return self._take_further(v.latest, str(issue), searched)
                return step.answer(given)
            query = str(last.arguments.get("query", ""))
            aside = None if aside_note else aside_question(query, _article_text(top))
            if aside is not None and not v.called_with("search_kb", {"query": aside}):
                return step.call("search_kb", {"query": aside})
            if (
                top.get("reference")
                or asks_how(without_denied_trouble(query))
                or asks_beside_trouble(query, " ".join([top["title"], *top["steps"]]))
                or not tells_trouble(query)
            ):
                # A question, not a problem (or a want with nothing failing: "nobody hacked me, i
                # just want a longer password"): the article answers it; nothing is there to "fix".
                # Nor is there in an article saying what the product is (what it runs on), whatever
                # was told: "my ipad is stuck on ios 14" gets what the app needs, not a fix.
                return step.answer(
                    f"Our article \"{top['title']}\" covers this:\n\n{steps}{aside_note}\n\n{ANSWERS_QUESTION}"
                )
            closing = REPORT_BACK
            said = f"Here's what usually fixes this (from our article \"{top['title']}\"):\n\n{steps}{aside_note}\n\n"
            if top["id"] in LOGIN_ARTICLES and v.has_tool("send_password_reset"):
                who = self._reset_account()
                reset = {"customer": who} if who else None
                if reset is not None and step.gated("send_password_reset", reset) and not self._reset_made(reset):
                    # Who they are is known: the offer goes with the call, so a yes sends the
                    # link (asked once; without the call, the yes would only lead to the gate's question).
                    return step.offer(
                        said + "If they don't fix it, I can send a password reset link to the email on your account. "
                        "Would you like me to send it now?",
                        "send_password_reset", reset,
                    )
                closing = (
                    "If you'd like, I can also send you a password reset link: just tell me the email "
                    f"on your account. {closing}"
                )
            return step.answer(said + closing)
        return None

    def _bug_summary(self, issue: str, text: str, searched: list[ToolEvent]) -> str:
        tried = ""
        if searched and isinstance(searched[-1].output, dict) and searched[-1].output.get("articles"):
            tried = f" Steps from '{searched[-1].output['articles'][0]['title']}' did not help."
        first = issue.strip().rstrip(".") + "."
        latest = "" if text.strip() == issue.strip() else f" Then: {text.strip().rstrip('.')}."
        setup = self.view.context.get("customer_setup")
        runs_on = f" Setup: {str(setup).rstrip('.')}." if setup and str(setup) != text.strip() else ""
        return clip_words(f"{first}{latest}{tried}{runs_on}", 480)

    def _ticket(self, summary: str):
        v = self.view
        # Attach the account when the customer has told us who they are, so engineering can
        # reach them without anyone asking again.
        email = v.facts.emails[-1] if v.facts.emails else v.context.get("customer_email")
        if not v.context.get("customer_id") and email and v.has_tool("find_customer"):
            if not v.called_with("find_customer", {"query": email}):
                return self.step.call("find_customer", {"query": email})
        severity = "high" if cues.data_loss_told(summary) or (cues.BUG.search(summary) and any(w in summary.lower() for w in ("data", "lost", "deleted", "corrupt"))) else "normal"
        args: dict[str, Any] = {"summary": clip_words(summary, 480), "severity": severity}
        customer = v.context.get("customer_id") or self._customer_id()
        if customer:
            args["customer_id"] = customer
        return self.step.call("create_ticket", args)

    @staticmethod
    def _mask(email: str) -> str:
        name, _, domain = email.partition("@")
        if not domain:
            return "the email on file"
        return f"{name[:1]}***@{domain}"
