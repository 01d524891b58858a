"""Conversational cues the offline agents react to, whatever the desk routes on.

Routing between specialists is learned (classifier.py); these are the few things every
support agent recognises the same way: a greeting, thanks, a request for a person, a
question nobody on a software desk should answer, an attempt to talk an agent out of its
rules, and the customer's "yes, go ahead" or "that didn't help".
"""

from __future__ import annotations

import re

from supportdesk.models.offline import literals
from supportdesk.models.offline.kept import keep, kept_by_text
from supportdesk.patterns import LazyPattern, wait
from supportdesk.readers import acts
from supportdesk.text import clauses as split_clauses

_FLAGS = re.IGNORECASE


# A turn reads its customer's message in every step (triage, then each step of the specialist),
# asking each cue the same question of the same text: a cue remembers its answers for this many
# recent texts of up to SEARCH_KEPT_CHARS characters (a pure function of the text; a longer text
# is searched every time, so what is kept stays small: at most ~60 cues x 128 texts x 1 KB).
SEARCHES_KEPT = 128
SEARCH_KEPT_CHARS = 1_000
_UNSEEN = object()


class Cue:
    """A pattern compiled on first use: the model has many, and the desk's start-up (the TUI's
    first frame) should not pay for the ones a session never reaches."""

    __slots__ = ("source", "_compiled", "_found", "_needs")

    def __init__(self, source: str):
        self.source = source
        self._compiled: re.Pattern[str] | None = None
        self._found: dict[str, re.Match[str] | None] = {}
        # Strings one of which every match contains (literals.py): a text without any is not searched.
        self._needs: tuple[str, ...] | None = None
        wait(self)

    def compile_now(self) -> None:
        self.pattern  # noqa: B018 (compiled on access)

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._needs = literals.required_literals(self.source, _FLAGS)
            self._compiled = re.compile(self.source, _FLAGS)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        found = self._found
        known = found.get(text, _UNSEEN)
        if known is not _UNSEEN:
            return known  # type: ignore[return-value]
        pattern = self.pattern
        match = None if literals.cannot_match(self._needs, text) else pattern.search(text)
        if len(text) <= SEARCH_KEPT_CHARS:
            keep(found, text, match, SEARCHES_KEPT)
        return match

    def finditer(self, text: str):
        return self.pattern.finditer(text)

    def sub(self, repl, text: str) -> str:
        return self.pattern.sub(repl, text)


def _any(*patterns: str) -> Cue:
    return Cue("|".join(f"(?:{p})" for p in patterns))


GREETING = _any(
    r"^\s*(?:hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening)|greetings)\b[\s!,.]*(?:there)?[\s!,.]*$",
    r"^\s*(?:hi|hello|hey)[\s,!.]+(?:is )?any(?:one|body) (?:there|around)\??\s*$",
)
SMALL_TALK = _any(
    r"^\s*how are (?:you|u)(?: doing)?(?: today)?\??\s*$",
    r"^\s*(?:who|what) (?:am i talking to|are you)\??\s*$",
    r"^\s*are you (?:a )?(?:bot|robot|human|real person|ai)\??\s*$",
    r"^\s*what(?:'s| is) your name\??\s*$",
    r"^\s*what can you (?:help (?:me )?with|do)\??\s*$",
)
# "that worked", "the reset worked": what we suggested or sent did its job.
# Also what the customer did, named by its -ing word: "resuming it worked", "restarting the app
# helped" (never "nothing worked").
_WORKED = (
    r"(?:(?:(?!nothing\b|something\b|anything\b)\w+ing (?:and \w+ing )?)?(?:that|it|this|the \w+(?: \w+)?)"
    r"|those steps|the (?:reset|link|steps?|fix|new password)) (?:worked|fixed it|did it|did the trick|helped)"
)
THANKS = _any(
    r"^\s*(?:ok(?:ay)?[,!. ]*)?(?:thanks|thank you|thx|cheers|great|perfect|awesome|brilliant)\b[^?]*$",
    r"^\s*(?:that(?:'s| is) all|bye|goodbye|have a (?:good|nice) day)\b",
    rf"\b{_WORKED}\b",
)
HUMAN = _any(
    r"\b(?:speak|talk|chat)(?:ing)? (?:to|with) (?:a |an |your |the )?(?:human|person|real person|someone real|agent|manager|supervisor|representative|staff)\b",
    r"\b(?:human|real person|live agent|actual person)\b.*\b(?:please|now|need|want)\b",
    r"\b(?:want|need|get) (?:a |an )?(?:human|real person|live agent|manager|supervisor)\b",
    # "can i talk to someone", "put me through to somebody": anyone but the customer's own people.
    r"\b(?:(?:speak|talk|chat)(?:ing)? (?:to|with)|put (?:me )?through to|connect(?:ing)? me (?:to|with)|transfer me to)"
    r" (?:some(?:one|body)|any(?:one|body)|a (?:human|person))\b(?! (?:on|in|from|at) (?:my|our)\b)",
    r"\bis (?:there )?(?:some(?:one|body)|any(?:one|body)) (?:i|we) (?:can|could) (?:speak|talk|chat)\b",
)


# Asked what the assistant is ("r u a human or a bot lol", "is this a real person or a script?",
# "am i chatting with a machine"): a question about the one answering, chit-chat, not a request
# for a person (config19: the desk intents reader heard "human" and called a person in).
ASKS_WHAT_YOU_ARE = _any(
    r"^\W*(?:(?:so|wait|hey|hi|ok|okay|lol|quick question|just curious|be honest)\W+){0,3}"
    r"(?:are|r|is)\s+(?:you|u|ya|this|it)\s+(?:(?:an?|even|actually|really|just|like)\s+){0,2}"
    r"(?:real|human|person|people|bot|robot|ai|machine|program|script|chatbot|computer|live)\b",
    r"^\W*am i (?:talking|chatting|speaking|writing) (?:to|with) (?:an? )?(?:real|human|person|bot|robot|ai|machine|program|script|chatbot|computer)\b",
)


def asks_for_person(text: str) -> bool:
    """The customer asks for a person now: the rules' plain forms ("talk to a human"), else the
    desk intents reader's person, learned from the desk's lines, for the forms rules never
    finish listing ("real person pls", "a staff member immediately", "escalate this"). A question
    of what the assistant is (`ASKS_WHAT_YOU_ARE`) asks for no one unless a rule hears the ask."""
    from supportdesk.readers import gates

    if HUMAN.search(text):
        return True
    return not ASKS_WHAT_YOU_ARE.search(text) and gates.reads_person_asked(text)


OUT_OF_SCOPE = _any(
    r"\bweather\b", r"\btell me a joke\b", r"\bjoke\b", r"\brecipe\b", r"\bpoem\b", r"\bhomework\b",
    r"\b(?:stock|crypto|bitcoin)\b", r"\bfootball\b|\bsoccer\b|\bbasketball\b", r"\belection\b|\bpolitic",
    r"\bwrite (?:me )?(?:an? )?(?:essay|story|song|code|program)\b", r"\bmeaning of life\b",
    r"\b(?:capital|president) of\b",
)
INJECTION = _any(
    r"\bignore (?:all |any |your |the |previous |prior |these |those )*(?:rules|instructions|polic(?:y|ies)|limits?|guidelines|restrictions)\b",
    r"\b(?:disregard|forget|bypass|override) (?:all |any |your |the |previous )*(?:rules|instructions|polic(?:y|ies)|limits?)\b",
    r"\byou are now\b", r"\bsystem prompt\b", r"\bdeveloper mode\b", r"\bjailbreak\b",
    r"\bpretend (?:you are|to be)\b", r"\bas an? (?:admin|administrator)\b",
)
AFFIRM = _any(
    r"^\W*(?:yes|yeah|yea|yep|yup|ya|sure|ok(?:ay)?|alright|all right|please do|please|go ahead|do it|sounds good|correct|that's right|right|absolutely|definitely|of course|fine|confirm(?:ed)?|perfect)\b",
    r"\b(?:please|can you|could you|would you)\b.*\b(?:process|proceed|go ahead|do (?:it|that)|refund it)\b",
    r"\bprocess (?:it|that|the refund)\b", r"\bgo ahead\b", r"\bplease do\b", r"\bdo it\b",
)
DECLINE = _any(
    r"^\W*(?:no|nope|nah|don't|do not|not now|no thanks|not yet|never ?mind|hold on|wait|leave it)\b",
    r"\b(?:changed my mind|leave it as is|keep it|don't do (?:it|that)|do not do (?:it|that)|not yet|no thanks)\b",
)
# "forget the money", "never mind the charge", "scratch that": the customer drops what was under way.
DROP = _any(
    r"\b(?:forget|never ?mind|scratch|drop|ignore|skip)\b (?:about )?(?:the|that|this|my|it)\b",
    r"\bforget (?:it|that|about it)\b", r"\bscratch that\b", r"\bnever ?mind\b",
    r"\bthe (?:real|actual|bigger|main) (?:issue|problem)\b", r"\bwhat (?:really )?matters\b",
)
REAL_ISSUE = _any(r"\bthe (?:real|actual|bigger|main) (?:issue|problem)\b", r"\bwhat (?:really )?matters\b", r"\binstead\b")
STEPS_FAILED = _any(
    r"\b(?:did not|didn't|does not|doesn't|did nothing|not) (?:work|help|fix)",
    r"\b(?:still|again) (?:not|doesn't|does not|won't|can't|cannot|fails?|failing|crash|broken|the same|stuck|happening|happens|"
    r"continues|get)",
    r"\b(?:already )?tried (?:that|those|this|everything|all|it|the steps)\b",
    r"\bno luck\b", r"\bsame (?:problem|issue|error)\b", r"\bkeeps? (?:happening|crashing|failing)\b",
    # The terse replies to "let me know whether that works": nothing the steps did made a difference.
    r"^\W*(?:(?:nope|no|sadly|unfortunately)\W+)?(?:still )?(?:the )?same(?: (?:thing|here|again|as before))?\W*$",
    r"\b(?:no|not (?:any|a)) (?:change|difference)\b", r"\bnothing(?: has)? changed\b",
    r"\b(?:did not|didn't|does not|doesn't) (?:change|make (?:a|any) difference|do (?:anything|a thing))\b",
)
# The app itself misbehaving: whatever else the message names (a plan, a card), it is technical.
APP_TROUBLE = _any(
    r"\bcrash", r"\bfreez", r"\bfroze\b", r"\berror\b", r"\bbroken\b", r"\bstuck\b", r"\bbug\b",
    r"\b(?:won'?t|will not|doesn'?t|does not|can'?t|cannot) (?:open|load|start|sync|launch)\b",
    r"\b(?:not|stopped) (?:working|loading|opening|syncing|responding)\b", r"\blogged out\b", r"\blocked out\b",
)
# Files the customer removed or overwrote, wanted back: the restore article's, however much "get
# it back" sounds like money back ("I deleted a folder by mistake, can I get it back?").
_FILE_THINGS = (
    r"(?:files?|folders?|photos?|pictures?|images?|documents?|docs?|projects?|spreadsheets?|sheets?|slides?|presentations?"
    r"|decks?|notes?|trash|bin)"
)
FILES_BACK = _any(
    rf"\b(?:deleted|removed|erased|lost|overwrote|overwritten|emptied)\b[^.!?]{{0,30}}\b{_FILE_THINGS}\b",
    # a file someone spoilt, wanted as it was: "X messed up our sheet, can I roll it back?"
    rf"\b(?:messed up|mess(?:ed)? with|broke|ruined|wrecked|screwed up|changed|edited)\b[^.!?]{{0,40}}\b{_FILE_THINGS}\b"
    r"(?=.*\b(?:roll(?:ed)? (?:it |them |that )?back|revert\w*|undo|the way it was|how it was|as it was)\b)",
    rf"\b{_FILE_THINGS}\b[^.!?]{{0,30}}\b(?:deleted|removed|erased|overwritten)\b",
    r"\b(?:restore|recover|undelete|undo)\b[^.!?]{0,20}\b(?:a |the |my )?(?:delet\w*|files?|folders?|versions?)\b",
    r"\b(?:old|older|earlier|previous|yesterday's|last week's) versions?\b",
)
# Someone joining the customer's team ("add two more people", "invite my coworkers", "get my
# assistant set up with a login"): the team article's, however "add" and "team" lean towards
# the plans (what a seat costs stays billing's: triage checks for money words first).
_PEOPLE = (
    r"(?:people|persons?|teammates?|team ?mates?|colleagues?|co-?workers?|employees?|staff|assistants?|users?|"
    r"members?|someone|somebody|partners?|new hires?)"
)
ADDS_A_PERSON = _any(
    rf"\b(?:add|adding|invite|inviting|bring|bringing|onboard|onboarding|set up|setting up)\b[^.!?]{{0,25}}\b{_PEOPLE}\b",
    rf"\b{_PEOPLE}\b[^.!?]{{0,20}}\bset up\b",
)
# What the product runs on ("is there a mobile app?", "can I use it on my ipad", "which devices
# are supported"): the apps article's, however "Acme" or "pay" lean (money words still go to billing).
_DEVICE = r"(?:mobile|phone|iphone|ipad|tablet|android|ios|desktop|laptop|computer|mac|macbook|macos|windows|linux|chromebook|pc)"
ASKS_ABOUT_DEVICES = _any(
    rf"\b{_DEVICE} (?:app|apps|version|client)\b",
    rf"\b(?:app|apps|version|client) for (?:a |an |my |the )?{_DEVICE}\b",
    rf"\b(?:use|install|run|get) (?:it|acme cloud|acme|the app|this)? ?on (?:a |an |my |our |the )?{_DEVICE}\b",
    r"\b(?:which|what) (?:devices|platforms|operating systems|browsers)\b",
    r"\b(?:devices|platforms) (?:are |do you |does it )?support",
)
# What we sent has not reached them ("the link never came", "still nothing, checked spam too").
NOT_ARRIVED = _any(
    r"\b(?:never|hasn't|has not|haven't|have not|didn't|did not|still (?:hasn't|has not|haven't|have not|isn't|is not|not))\b"
    r"[^.!?]{0,30}?\b(?:arriv\w*|c[oa]me|receiv\w*|gotten|here|show(?:n|ed)? up)\b",
    r"\bstill nothing\b", r"\bnothing (?:has )?(?:arrived|c[oa]me)\b",
    r"\b(?:checked|looked in|not (?:even )?in) (?:the |my )?(?:spam|junk)\b",
)
# The customer reset the password themselves already ("I already tried resetting my password").
RESET_DONE = _any(
    r"\b(?:tried|did|done|already) (?:the |a )?(?:password )?reset(?:ting)?\b",
    r"\breset (?:my|the) password (?:already|twice|again)\b",
)
# A report the customer calls a bug, or lost data: engineering's, not the help articles'.
BUG = _any(
    r"\bbug(?:gy|s)?\b", r"\berror (?:5\d\d|code)\b", r"\bcorrupt",
)
DATA_LOSS = _any(
    r"\bdata loss\b", r"\blost (?:all |a |the |some )?(?:of )?(?:my |our )?(?:whole )?(?:files|data|work|folders?|documents)\b",
    r"\b(?:deleted|wiped|erased|removed) (?:all )?(?:my |our )?(?:files|data|folders?|documents)\b",
    r"\b(?:files|data|folders?|documents) (?:were |was |got |have been |are )?(?:deleted|wiped|erased|gone|disappeared|vanished|missing)\b",
    r"\b(?:they'?re|they are|it'?s|everything(?:'s| is)?) (?:just )?(?:gone|vanished|disappeared)\b",
)
# A loss spoken of as what would happen, not what happened: "how long do binned files stay
# before they're gone for good?", "what if a folder is deleted?" ask about the bin; the loss is
# introduced by a word of time or condition just before it (its subject between at most); or the
# lost things are the subject of a question, asked in general right after its verb ("how long do
# deleted files sit in the trash?", "are removed folders kept?": no one's files said lost, multi-15).
_LOSS_SUPPOSED = LazyPattern(
    r"\b(?:before|until|till|once|if|unless|whether|when)\s+(?:\S+\s+){0,2}$|\b(?:do|does|are|is|can|could|will|would|should)\s+$", _FLAGS
)


def data_loss_told(text: str) -> bool:
    """Lost data told as what happened (`DATA_LOSS`), not as what would happen: engineering's
    at once, where a question about the bin is the restore article's (kb-14)."""
    return any(not _LOSS_SUPPOSED.search(text[: m.start()]) for m in DATA_LOSS.finditer(text))


# "third time I'm writing", "I've contacted you 3 times": a repeat contact goes to someone senior.
# A contact is the customer's writing to the desk, never an attempt at a thing: "tried 4 times
# already", "rejected me 2 times now", "retried twice" count tries of the id check or a code, and a
# count of times is a contact only after a verb of contacting (writing, asking, explaining, calling;
# never one whose object is "me": "the app asked me 3 times already" is the app's doing;
# understand-held-29, route20). A contact told with when it was ("i already asked you last week",
# "wrote to you yesterday", "emailed support twice") is one too, but "i already told you" is said of
# this conversation, so it is no repeat.
_CONTACTING = (
    r"(?:contact(?:ed|ing)?|writ(?:e|ten|ing)|wrote|explain(?:ed|ing)?|ask(?:ed|ing)?|told|messag(?:ed|ing)|"
    r"e-?mail(?:ed|ing)|call(?:ed|ing)|chat(?:ted|ting)|reach(?:ed|ing) out)"
)
_SUPPORT = r"(?:you|u|you guys|support|your support|your team|the support team|your helpdesk)"
REPEAT_CONTACT = _any(
    r"\b(?:second|third|fourth|fifth|2nd|3rd|4th|5th|\d+(?:st|nd|rd|th)) time (?:i'?m |i am |i have |i've |that i |we )?(?:writing|contacting|asking|calling|messaging|reaching out|chatting|here|contacted|written|asked)",
    r"\b(?:contacted|written to|messaged|called|asked) (?:you|support|you guys|your team)? ?(?:\w+ )?(?:three|four|five|several|many|multiple|\d+) times\b",
    rf"\b{_CONTACTING}\b(?! me\b)[^.?!\n]{{0,40}}?\b(?:three|four|five|several|multiple|\d+) times (?:already|now|before)\b",
    r"\bkeep (?:writing|contacting|asking) (?:you|support)\b",
    rf"\b(?:asked|contacted|wrote to|written to|messaged|e-?mailed|called|chatted with|reached out to|spoken? (?:to|with)|talked to|been in touch with) {_SUPPORT}\b"
    r"[^.?!\n]{0,30}?\b(?:yesterday|last (?:week|month|time|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|(?:a few|a couple of|two|three|\d+) (?:days|weeks) ago|the other day|earlier this week|twice)\b",
    rf"\balready (?:contacted|wrote to|written to|messaged|e-?mailed|called|reached out to) {_SUPPORT}\b",
    rf"\b(?:i'?m|i am|we'?re|we are) (?:writing|contacting|messaging|e-?mailing) (?:to )?(?:{_SUPPORT} )?again\b",
)
# A trouble told in a clause: a failure's words ("can't", "error", "stopped", "nothing happened").
TROUBLE_TOLD = LazyPattern(
    r"\b(?:can'?t|cannot|won'?t|doesn'?t|don'?t|isn'?t|aren'?t|not|no longer|error\w*|fail\w*|broke\w*|stopped|"
    r"crash\w*|freez\w*|stuck|missing|gone|lost|wrong|"
    # Nothing came of what the customer did ("clicked export and nothing happened"): the trouble.
    # Opening a clause of its own, "nothing happened" denies an incident instead (technical.denies_trouble).
    r"nothing (?:\w+ )?happen\w*)\b",
    re.I,
)
# "no problem with my account", "no worries there", "no stress": a trouble's own noun, negated; or
# a worry waved off ("nothing to worry about", "don't worry about that email").
NO_TROUBLE = LazyPattern(
    r"^\W*(?:(?:there'?s |there is |i have |i've )?(?:no|not an?y?) (?:problems?|issues?|troubles?|worr(?:y|ies)|concerns?|stress)"
    r"|nothing to (?:worry|stress) about|(?:do not|don'?t) (?:worry|stress))\b",
    re.I,
)
# "all good", "everything's fine": a reassurance said as a clause of its own, no trouble told
# (config19: "no one hacked me, all good. how do i make acme ask for a one-time code" left "all
# good" in the query, and the search was unsure of the two-factor article).
ALL_WELL = LazyPattern(r"^\W*(?:all|everything(?:'s| is)?|it'?s all)\s+(?:good|fine|ok|okay|well)\W*$", re.I)
# "the login alert was me", "that sign-in was just us", "it was my own new computer": what was
# seen owned as the customer's own doing, so no one else's (sec17: its "login alert" words left
# the search for the sync trouble told beside it unsure, and it found nothing).
OWNED = LazyPattern(r"\b(?:was|were|is|'s)\s+(?:just |only |really |actually |all |in fact )?(?:me|us|mine|myself|my own)\b(?! who\b| that\b)", re.I)


def reassures(clause: str) -> bool:
    """The clause disowns an alarm: what was seen owned ("the new login alert was me on my new
    laptop", no trouble told in it) or a worry waved off ("no worries there"). It names no matter of
    its own, whatever words it says ("login alert" leans to the agents of sign-ins), so the router
    reads the message without it (understand-held-29 config, route20). (All said well is left in:
    "all fine, only asking" is the router's evidence that nothing is wrong, and placed the
    two-factor question with the technical agent; security-12.)"""
    return bool(NO_TROUBLE.match(clause) or (OWNED.search(clause) and not TROUBLE_TOLD.search(clause)))


# Ground no tool or help article on a software desk covers goes to a person, never to the nearest
# article (an agent whose tools do cover it is found by `unknown_ground`'s caller). What the
# customer asks for is read by a learned reader (`LEARNED_GROUND`); rules keep only what rules
# read well: an amount off a price ("30% off"), or a percentage a code, coupon or voucher is worth
# ("a 20% code in your newsletter"), is a discount, however the rest is said.
AMOUNT_OFF = LazyPattern(r"\b\d+ ?(?:%|percent) (?:off|discount|code|coupon|voucher|promo)\b", re.IGNORECASE)


# Words in a tool's name or description that show the desk does cover the ground after all.
UNKNOWN_GROUND_WORDS = {
    "privacy request": ("privacy", "gdpr", "personal data", "data subject"),
    "ownership transfer": ("ownership", "owner"),
    "legal matter": ("legal",),
    "request to delete the account": ("delete account", "delete_account", "account deletion", "close account"),
    "discount or promo code": ("discount", "coupon", "promo"),
    "question about a suspended account": ("suspend", "suspension"),
    "request to change invoice details": ("invoice details", "legal name", "vat", "billing address"),
}


def _packaged_desk_name() -> str:
    """The shipped desk's name (agents.toml's [desk] name), read once."""
    global _PACKAGED_NAME
    if _PACKAGED_NAME is None:
        import tomllib

        from supportdesk.config import packaged_desk_path

        try:
            _PACKAGED_NAME = str(tomllib.loads(packaged_desk_path().read_text(encoding="utf-8"))["desk"]["name"])
        except (OSError, KeyError, TypeError, ValueError):
            _PACKAGED_NAME = ""
    return _PACKAGED_NAME


_PACKAGED_NAME: str | None = None
_NAME_PATTERNS: dict[str, re.Pattern[str] | None] = {}


def without_desk_name(text: str, desk_name: str | None = None) -> str:
    """`text` without the words of the desk's own name (`desk_name`, else the shipped desk's):
    "close my Acme Cloud account permanently" is "close my account permanently" to the rules, so
    they need no slot for whatever name stands before "account", and another company's account
    ("my netflix account closed for good") is no account of this desk's (issue 38, scope-9)."""
    name = _packaged_desk_name() if desk_name is None else desk_name
    if name in _NAME_PATTERNS:
        pattern = _NAME_PATTERNS[name]
    else:
        # The name as it is said, from its first word on ("acme", "acme cloud", "acme cloud
        # support"): its later words alone are everyday words ("the support in german", "my
        # files in the cloud"), no name.
        words = [w for w in re.findall(r"[a-z][a-z0-9]+", name.lower()) if len(w) >= 3]
        said = "".join(rf"(?:\s+{re.escape(w)}" for w in words[1:]) + ")?" * (len(words) - 1)
        compiled = re.compile(rf"\b{re.escape(words[0])}{said}\b\s*", re.IGNORECASE) if words else None
        pattern = keep(_NAME_PATTERNS, name, compiled, 16)
    return pattern.sub("", text) if pattern is not None else text


# Ground no tool covers, read by a learned reader (readers/gates.py `ground`): an account the
# provider blocked, froze or put on hold (CLINC150's account_blocked) and another language
# (CLINC150's translate and change_language) of a kind public data holds; privacy, ownership,
# legal matters, discounts, what an invoice says about the customer and an account deleted from
# the desk's own labelled lines (evals/unknown-ground-tune.jsonl, ground-lines-12-tune.jsonl and
# ground-lines-13-tune.jsonl, which also holds the desk matters near each ground);
# each against every other intent of CLINC150 and Banking77 and the desk's own messages. Told in
# any words ("acme shut off our access", "where do our files physically live", "our attorney will
# be in touch"), not in a rule's.
LEARNED_GROUND = {
    "suspended": "question about a suspended account",
    "language": "request for another language",
    "privacy": "privacy request",
    "ownership": "ownership transfer",
    "legal": "legal matter",
    "discount": "discount or promo code",
    "invoice_details": "request to change invoice details",
    "deletion": "request to delete the account",
}


def unknown_ground(text: str, desk_name: str | None = None) -> str | None:
    """The kind of request no tool or article covers ("privacy request" ...), or None: the
    learned reader's (`LEARNED_GROUND`), or an amount off a price (`AMOUNT_OFF`). The desk's own
    name in it names no ground (`without_desk_name`)."""
    text = without_desk_name(text, desk_name)
    if AMOUNT_OFF.search(text):
        return LEARNED_GROUND["discount"]
    from supportdesk.readers import gates

    learned = gates.ground(text)
    if learned == gates.LANGUAGE and not (LANGUAGE_NAMED.search(text) or other_language(text)):
        # The reader learnt the request's shape ("does anyone there speak …") and is as sure of
        # "hello? is anyone there?": another language is asked for only when one is named (or
        # the message is written in one). Names are a rule's job, like plan names.
        return None
    if learned in (gates.DELETION, gates.SUSPENDED, gates.OWNERSHIP) and names_another_account(text):
        # "close my netflix account for good": the reader reads what is asked of an account,
        # whoever's; another service's is no account of this desk's. Names are a rule's job.
        return None
    if learned == gates.PRIVACY and (INVOICE_ID.search(text) or CHARGE_ID.search(text)):
        # "could you send me a copy of INV-5002 again?": the reader hears a copy of one's data
        # asked for; a copy of an invoice or a charge named by its id is that record, which
        # billing's tools read (route20). Ids are a rule's job, like names.
        return None
    if learned == gates.DISCOUNT and PASSWORD_NAMED.search(text):
        # "i would like that you are sending me the link for make new password, my mail is …":
        # the reader, taught referral links and "sending customers" (ground-lines-30), hears a
        # reward's link; a link for a password is the reset's, which the technical skill sends.
        return None
    return LEARNED_GROUND[learned] if learned is not None else None


PASSWORD_NAMED = _any(r"\bpass ?words?\b", r"\bpwd\b")


# Which of the customer's own accounts ("our company account", "my whole account"): no other
# service's name. (A state it is in, "my deactivated account", "our frozen workspace", is none either.)
_OWN_ACCOUNT_WORDS = frozenset(
    "whole entire company user personal team work business own old new main admin shared family primary "
    "org organisation organization current only".split()
)
_NAMED_ACCOUNT = LazyPattern(r"\b(?:my|our|the|this)\s+([a-z][\w.&-]*)\s+(?:account|profile|workspace)\b", re.IGNORECASE)


def names_another_account(text: str) -> bool:
    """The account spoken of is another service's ("my netflix account", "our Globex account"
    when the desk is not Globex: the desk's own name is taken out before, `without_desk_name`)."""
    return any(
        w.lower() not in _OWN_ACCOUNT_WORDS and not w.lower().endswith(("ed", "en")) for w in _NAMED_ACCOUNT.findall(text)
    )


# A language named, in English or its own name, or the words for one ("language", "translate").
LANGUAGE_NAMED = LazyPattern(
    r"\b(?:languages?|translat\w*|interpret\w*|spanish|french|german|italian|portuguese|dutch|polish|korean|"
    r"japanese|chinese|mandarin|cantonese|arabic|hindi|russian|turkish|swedish|norwegian|danish|finnish|greek|"
    r"hebrew|czech|hungarian|romanian|ukrainian|vietnamese|thai|indonesian|malay|tagalog|filipino|bengali|urdu|"
    r"punjabi|persian|farsi|swahili|catalan|croatian|serbian|bulgarian|slovak|slovenian|estonian|latvian|"
    r"lithuanian|icelandic|irish|welsh|español|espanol|deutsch|français|francais|italiano|português|nederlands|polski)\b",
    re.IGNORECASE,
)


# Vague openers: nothing in the message says what about. A message is vague when every word is
# one of these (greetings, help, problem words, pronouns, a plea for speed): triage asks instead
# of guessing, and "It's dana@example.com. Please hurry." gives only who the customer is.
_VAGUE_WORDS = frozenset(
    """a an the i i'm im me my we our us you your u it its it's this that there there's theres here is are am was be been
    have has having had got get getting need needs want wants would like to with for of on in about at and or but so just
    please pls plz can could someone somebody anyone anybody help helping assist support hi hello hey hiya there good
    morning afternoon evening problem problems issue issues trouble troubles question questions query something anything
    thing things wrong work works working worked not doesn't dont don't does do isn't isnt won't wont can't cant right
    account quick small big real some again still urgent asap now today really very hmm um ok okay yes no thanks thank
    stuff going on happening broken weird strange odd how why what when where fix fixed sort sorted out look
    happened happen advise explain tell know idea sure thing things oh ah uh well also btw yeah yea hm hmm
    aren't arent wasn't wasnt weren't werent didn't didnt haven't havent hasn't hasnt couldn't couldnt
    seems seem seemed properly anymore any more all at everything nothing anything right else off up funny amiss
    matter happy unhappy angry upset frustrated annoyed disappointed satisfied pleased mad sad fed bit very so
    totally really hurry hurried quickly fast faster rush rushed urgently soon immediately promptly""".split()
)
_WORD = LazyPattern(r"[a-z']+")


@kept_by_text(256)
def vague(text: str) -> bool:
    words = _WORD.findall(text.lower().replace("’", "'"))
    return bool(words) and not re.search(r"\d|@", text) and all(w in _VAGUE_WORDS or re.sub(r"'s$|'", "", w) in _VAGUE_WORDS for w in words)


_SLOT_VALUES = LazyPattern(
    r"(?<!\S)\S+@\S+|\b(?:cus|inv|ord)[-_#]?\d+\b|\b(?:my |the |our )?(?:e-?mail|email address|customer id|customer number|id|name|account)"
    r"(?: address)?(?:'s)?(?: on (?:the|my) account)?(?:\s*(?:is|:))?(?=\W|$)|\b(?:i'?m|i am|it'?s|this is|here)\b",
    re.IGNORECASE,
)


def only_facts(text: str) -> bool:
    """The text gives who the customer is ("the email on the account is dana@example.com",
    "email's dana@...") and nothing about what they need."""
    about = beside_facts(text)
    return not about or vague(about)


@kept_by_text(256)
def beside_facts(text: str) -> str:
    """What the text says besides who the customer is: "someone is in" of "someone is in my
    account, dana@example.com"."""
    return _SLOT_VALUES.sub(" ", text).strip(" ,.;:!?")


# Another language: the embedded model reads English only, so a message in another language goes
# to a person rather than being guessed at. Each list holds that language's commonest words that
# are not English words too ("de", "me", "is", "die" are left out).
_OTHER_LANGUAGES = {
    "Spanish": "el la los las que del por para con una uno mis este esta está hola gracias necesito tengo problema "
    "cuenta cobraron veces dos ayuda favor pago reembolso puedo funciona mi qué cómo porque pero también",
    "French": "le les des du un une je mon ma mes est pas ne avec pour bonjour merci compte connecter problème "
    "paiement deux fois pourquoi remboursement veux arrive suis vous nous aide",
    "German": "der das und ich nicht mein meine ist mit bitte hallo danke wurde zweimal konto helfen sie mir "
    "kann geld rechnung zahlung warum",
    "Italian": "il lo gli che di per con mio mia sono non ho buongiorno grazie problema pagamento ciao conto "
    "aiuto rimborso perché funziona",
    "Portuguese": "os da do em um uma meu minha não nao funciona preciso ajuda obrigado olá conta pagamento "
    "reembolso porque duas vezes",
    "Dutch": "het een ik niet mijn met hoi kan inloggen bedankt rekening betaling waarom geld terug graag",
}
_OTHER_WORDS = {name: frozenset(words.split()) for name, words in _OTHER_LANGUAGES.items()}
# Something asked for in another language ("the invoices of Acme in german language"): the desk
# writes English only, so no tool or article covers it (issue 38, held-6); read by the learned
# reader (`LEARNED_GROUND`), whatever language is named.
UNKNOWN_GROUND_WORDS["request for another language"] = ("translat", "language")
_ENGLISH_WORDS = frozenset(
    """the a an i i'm my me is are was were to and of in on at for it this that with can can't cannot not no you your
    we our have has had please what why how do does did be been get got from but so just app account""".split()
)


@kept_by_text(256)
def other_language(text: str) -> str | None:
    """The language a message is written in when it reads as another one than English, else None."""
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower())
    if len(words) < 3:
        return None
    english = sum(w in _ENGLISH_WORDS for w in words)
    hits, name = max((len(set(words) & vocabulary), name) for name, vocabulary in _OTHER_WORDS.items())
    return name if hits >= 2 and hits > english else None


# "My name is Dana Whitfield, ...", "my name's Lee": who is writing, not what it is about. The
# word "name" would pull a message towards the profile article's "change my name".
_INTRODUCTION = LazyPattern(
    r"\b(?:my name is|my name's|the name is|the name's)\s+"
    # ("my name is wrong on the invoice" is about the name, and stays)
    r"(?!(?:wrong|incorrect|misspell\w*|spel\w*|not|missing|shown|showing|displayed|different|still|the|on|in|listed|"
    r"changed|outdated|old|also|now)\b)"
    r"[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?",
    _FLAGS,
)


def without_introduction(text: str) -> str:
    """The message without the writer's self-introduction (for routing)."""
    return _INTRODUCTION.sub(" ", text)


# "I'll try that", "let me give it a go": the customer goes off to try what we suggested.
TRYING = _any(
    r"^\W*(?:(?:ok(?:ay)?|alright|all right|sure|great|cool|fine|right|thanks|thank you)\W+)*"
    r"(?:i'?ll|i will|will|let me|gonna|i'?m (?:going to|gonna))\s+"
    r"(?:try|give (?:it|that|this|them|those)(?: steps)? a (?:go|try|shot)|do (?:that|this|it|those))\b[^?]*$",
)
# What the customer runs our app on: a system, a device, a browser, a version.
_SETUP = LazyPattern(
    r"\b(?:i ?os|ipad ?os|android|windows|win ?1[01]|mac ?os|macos|os ?x|linux|ubuntu|chrome ?os|iphone|ipad|pixel|samsung|"
    r"galaxy|macbook|imac|laptop|desktop|pc|chrome|chromium|firefox|safari|edge|opera|brave|sonoma|sequoia|ventura|monterey|"
    r"big sur)\b",
    _FLAGS,
)
# The words around a setup that say nothing more ("I'm on a work laptop", "if that matters").
_SETUP_FILLER = frozenset(
    """i i'm im am on using use running run a an the my our it it's its is with of if that matters helps help in case fyi
    btw also and just work new latest old version app phone computer browser device system mobile web both""".split()
)


def setup_only(text: str) -> bool:
    """The message only says what the customer runs the app on ("I'm on iOS 17", "macOS Sonoma,
    if that matters", "version 4.2 of the app"): a detail about the problem in hand, no new one."""
    if "?" in text or PROBLEM.search(text) or STEPS_FAILED.search(text):
        return False
    named = bool(_SETUP.search(text)) or bool(re.search(r"\bversion\s+v?\d", text, _FLAGS))
    rest = re.sub(r"\bv?\d+(?:\.\d+)*\b", " ", _SETUP.sub(" ", text))
    return named and all(w in _SETUP_FILLER for w in _WORD.findall(rest.lower().replace("’", "'")))


# A part of a message that states a problem or a request of its own (a symptom, or something to
# do), as opposed to context around one ("I was checking the app") or a plea ("asap please").
PROBLEM = _any(
    r"\b(?:not|never|no longer|stopped|stops|won'?t|can'?t|cannot|can ?not|couldn'?t|unable to|doesn'?t|does not|don'?t|do not|isn'?t|didn'?t|did not) "
    r"(?:\w+ )?(?:work|working|sync|syncing|load|loading|open|opening|log|sign|arrive|arrived|arrives|connect|save|start|update|upload|download|export)",
    r"\bstopped \w+ing\b", r"\bcrash", r"\bfreez", r"\bfroze\b", r"\berror\b", r"\bbroken\b", r"\bstuck\b", r"\bfail",
    r"\blogged out\b", r"\blocked out\b", r"\bhacked\b", r"\bkeeps? (?:\w+ing|getting)\b",
    r"\b(?:is|are|comes? out|shows?|looks?) (?:\w+ )?(?:empty|blank|missing|wrong|slow|gone)\b", r"\bdisappear", r"\bvanish",
    r"\bdeclined\b", r"\blocked\b", r"\bnever (?:arrives|arrived|came|comes)\b", r"\bforg[oe]t\b",
    r"\b(?:charged|billed|debited|overcharged)\b", r"\brefund", r"\bcancel", r"\bupgrade\b", r"\bdowngrade\b",
    r"\binvoices?\b", r"\breceipts?\b", r"\btwice\b", r"\bduplicate", r"\bpassword\b", r"\breset\b", r"\b(?:2fa|two-factor)\b",
    r"\bhow much\b", r"\bprices?\b", r"\bpricing\b",
)


_COURTESY = LazyPattern(
    r"\b(?:ok(?:ay)?|thanks|thank you|thx|ty|cheers|great|perfect|awesome|brilliant|wonderful|lovely|so much|very much|a lot|"
    rf"{_WORKED}|bye|goodbye|have a (?:good|nice) day|that's all|that is all)\b",
    _FLAGS,
)


def courtesy_only(text: str) -> bool:
    """Thanks and nothing more: "ok that fixed it, thank you!" (but not "thanks, also ...")."""
    return bool(THANKS.search(text)) and only_facts(_COURTESY.sub(" ", text))


# Something looks wrong with a charge: then a duplicate found is worth offering to refund.
CHARGE_TROUBLE = _any(
    r"\bcharg(?:e|es|ed)\b", r"\bpaid\b", r"\bpayments?\b", r"\bstatement\b", r"\btransactions?\b", r"\bdebit",
    r"\brecogni[sz]e\b", r"\bexplain\b", r"\btook\b|\btaken\b", r"\btwice\b|\bdouble\b|\bduplicate", r"\bbilled\b",
)
# The customer is talking about charges (so listing them answers), whatever they want done.
ABOUT_CHARGES = _any(
    r"\bcharg", r"\bbill", r"\bpaid\b", r"\bpay(?:ment|ments)?\b", r"\bstatement\b", r"\btransaction", r"\bdebit", r"\bfees?\b",
    r"\bexplain\b", r"\brecogni[sz]e\b", r"\bmoney\b", r"\btook\b|\btaken\b", r"\bcost\b",
    r"\bch-?\s?\d{4,}\b",  # a charge named by its id ("what is CH-9006?", held-4)
)
# A charge's id as the demo's charges are numbered: a literal only billing's tools read.
CHARGE_ID = LazyPattern(r"\bch-?\s?\d{4,}\b", _FLAGS)
# An invoice's id ("INV-4420", "inv 5005"): as literal as a charge's, and only billing's tools read
# invoices, whether the account holds it or not (an unknown one is said not found; route20).
INVOICE_ID = LazyPattern(r"\binv[-#]?\s?\d{3,}\b", _FLAGS)


# When a plan change takes effect: at the next renewal, or now.
AT_RENEWAL = _any(
    r"\b(?:at|on|from|after|with|by|starting|beginning) (?:the |my |our )?(?:next |upcoming )?(?:renewal|billing (?:date|cycle|period)|next (?:billing|invoice|cycle|period|month))\b",
    # A time told by the end of the period the customer is in: a subordinator, any determiner, the
    # period's noun and a verb of ending ("once this billing cycle is over", "when our current month
    # runs out", "after my term expires"); or "the end of" it.
    r"\b(?:when|once|after|as soon as)\s+(?:my|the|our|this|that|the current|my current|our current)\s+(?:current\s+)?"
    r"(?:billing\s+|paid\s+)?(?:period|subscription|plan|month|year|cycle|term)\s+"
    r"(?:ends|has ended|runs out|has run out|is over|is up|is done|expires|has expired|finishes|renews|closes)\b",
    r"\b(?:end|close) of (?:the |my |our |this |that )?(?:current )?(?:billing |paid )?(?:period|cycle|month|term|year|subscription)\b",
    r"\bnext renewal\b", r"\bat renewal\b",
)
RIGHT_NOW = _any(r"\b(?:right )?now\b", r"\bright away\b", r"\bimmediately\b", r"\btoday\b", r"\basap\b")

# Billing requests (the money skill's own vocabulary).
REFUND = _any(r"\brefund", r"\bmoney back\b", r"\breimburs", r"\breturn (?:the|my) money\b",
               # non-native and plain: "return of money", "give me back my money", "send the money back"
               r"\b(?:return|returning) of (?:the |my |our )?money\b", r"\b(?:give|send|pay) (?:me |us )?(?:back )?(?:the |my |our )?money back\b",
               r"\b(?:give|send|pay) (?:me |us )?back (?:the |my |our )?money\b", r"\breverse (?:the|that) charge\b",
               # an amount in money's place ("give me the 9.99 back", "can i have those $29.99 back"):
               # the amount is the money wanted back (a price with cents, as the amount rules read one)
               r"(?<![\w.,])[$€£]?\d+\.\d\d\s+back\b",
               # or given back by a verb of returning it ("return the 29.99 you took", "i'd like
               # january's 29.99 returned"): the amount its object, before the verb or after it
               r"\breturn\w*\s+(?:me\s+|us\s+)?(?:the\s+|my\s+|our\s+|that\s+|those\s+)?[$€£]?\d+\.\d\d\b",
               r"(?<![\w.,])[$€£]?\d+\.\d\d\s+(?:returned|reversed)\b")
# A word of money taken ("a pro payment", "came out of my card", "billed"), and a run of days
# ("two days running", "back to back days", "on consecutive days"): a duplicate told by its days.
_MONEY_TOLD = (
    r"(?:charge[ds]?|payments?|paid|billed|debit(?:ed)?|taken|took|came out|withdrawn|fee|subscription|plan|starter|pro|card)"
)
_DAYS_RUNNING = r"(?:(?:two|2) days (?:running|in a row|straight)|(?:consecutive|successive|back[- ]to[- ]back) days)"
DUPLICATE = _any(
    r"\btwice\b", r"\bdouble[- ]?(?:charged?|billed|payments?)\b", r"\bduplicate", r"\b(?:two|2) (?:identical |same |equal )?(?:charges|payments)\b",
    r"\bidentical (?:charges|payments)\b", r"\bcharged again\b", r"\btwo times\b", r"\bsame (?:charge|payment) (?:twice|two times|again)\b",
    # told, not named (held-4): "charged me 129.99 on march 1 and again on march 3", "paying double",
    # "two payments a day apart", "a charge on the 15th and another one on the 16th ... same amount"
    r"\bcharged\b(?:[^.!?]|\.\d){0,60}?\b(?:and|then) (?:again|once more)\b", r"\b(?:paying|pay|paid|charged|billed) (?:me |us )?(?:double|twice)\b",
    r"\b(?:charges|payments)\b[^.!?]{0,40}\b(?:a|one|\d) days? apart\b",
    r"\b(?:charge|payment)\b(?:[^.!?]|\.\d){0,40}\band another (?:one )?\b(?:[^.!?]|\.\d){0,60}\bsame (?:amount|price|sum)\b",
    # told by its days (issue 38, money19): a money word, then a day, a word of repeating and a
    # second day ("a pro payment on the 10th and another one on the 11th", "came out of my card on
    # the 24th and then the same amount again on the 25th"), or the days said as a run ("taken two
    # days running", "billed on consecutive days"): a second charge, whichever days the account's
    # charges show. (A money word first: "logged in on the 3rd and again on the 4th" is no charge.)
    rf"\b{_MONEY_TOLD}\b(?:[^.!?]|\.\d){{0,80}}?\bthe \d{{1,2}}(?:st|nd|rd|th)\b(?:[^.!?]|\.\d){{0,60}}?"
    rf"\b(?:again|another|a second)\b(?:[^.!?]|\.\d){{0,40}}?\bthe \d{{1,2}}(?:st|nd|rd|th)\b",
    rf"\b{_MONEY_TOLD}\b(?:[^.!?]|\.\d){{0,80}}?\b{_DAYS_RUNNING}\b", rf"\b{_DAYS_RUNNING}\b[^.!?]{{0,60}}\b{_MONEY_TOLD}\b",
)
# An idiom of ending said of what is paid for ("pull the plug on my acme sub", "ditch my
# membership", "we're done with our subscription"): a cancellation however the router leans (the
# plug pulled on an app or a sync names no plan; triage's `stops_paying`, h30).
_CANCEL_IDIOM = (
    r"\b(?:pull(?:s|ed|ing)? the plug on|(?:kill|ditch|dump|axe|scrap)(?:s|ed|ing)?|(?:i'?m|we'?re|i am|we are) (?:done|finished|through) with)"
    r" (?:my |the |our |this )?(?:[\w-]+ ){0,2}(?:subscription|membership|plan|subs?)\b"
)
CANCEL_IDIOM = LazyPattern(_CANCEL_IDIOM, re.I)
CANCEL = _any(
    r"\bcancel(?:l?ing|l?ed|lation)? (?:of )?(?:my |the |our |this )?(?:[\w-]+ ){0,2}(?:subscription|plan|account|renewal|membership|service)\b",
    r"\b(?:end|stop|terminate|close|quit|discontinue|shut down) (?:my |the |our |this )?(?:[\w-]+ ){0,2}(?:subscription|membership|account|service|plan|sub)\b",
    _CANCEL_IDIOM,
    r"\bstop (?:the )?(?:automatic |auto-?)?renew(?:al|ing)\b", r"\b(?:do not|don't|dont) (?:want (?:it )?to )?renew\b", r"\bunsubscribe\b",
    # "cancel" opening the message or a clause of its own, told after its reason ("closing my small
    # business, pls cancel acme": what is cancelled named as the product, no subscription's noun)
    r"\bturn off (?:the )?(?:automatic |auto-?)?renewal\b", r"(?:^|[,;:.!]\s)\W*(?:so |and )?(?:please |pls |just )?cancel\b", r"\b(?:want|like|need|going) to cancel\b",
    # what stopping would mean: "if I stop now, do I still pay?" (a question: ASKS_IF_POSSIBLE)
    # (any opener of a condition: "say i cancel on the 25th, does ...", "suppose we stop ...")
    r"\b(?:if|say|suppose|supposing|assuming|imagine) (?:i|we) (?:cancel|stop|quit|unsubscribe)\b",
    # "ok actually just cancel it then" after talk of the plan (issue 38, held-4): "it" is the plan
    r"\b(?:just|then|actually|ok(?:ay)?|fine|so)\s+cancel (?:it|that|the whole thing|everything)\b",
    r"\bcancel (?:it|that)\s+(?:then|altogether|instead|for good)\b",
    # the same request told object first ("i just want my subscription closed", "we'd like the
    # membership cancelled"): wanted done, not told as done ("my subscription was cancelled")
    r"\b(?:want|like|need|get) (?:my |the |our |this )?(?:[\w-]+ ){0,2}(?:subscription|membership|plan) (?:cancell?ed|closed|ended|stopped|terminated)\b",
)
# "Team" the plan, not the customer's own team ("on our team", "my team's logins").
_TEAM_PLAN = r"(?:team(?=\s+plan)|(?<!\bour )(?<!\bmy )(?<!\bwhole )team)"
# A billing period said ("once a year", "every month": the period said in words, issue 38; "for
# a full year", "a whole year paid in one go", "a year up front", "per annum": a year paid at once,
# money-18; "by the year", "by the month": money-h18). One alternation, read by PERIOD and by the
# plan change's cue (PLAN_CHANGE), so a period the one hears the other hears too.
_PERIOD_WORDS = (
    r"annual(?:ly)?|yearly|monthly|per\s+annum|(?:once|every|each|per)\s+(?:a\s+)?(?:year|month)|by\s+the\s+(?:year|month)"
    r"|for\s+(?:a|one|the)\s+(?:full|whole|entire)\s+year|(?:a|one|the)\s+(?:full\s+|whole\s+|entire\s+)?year\s+"
    r"(?:paid\s+)?(?:up\s?front|in\s+advance|at\s+once|in\s+one\s+go|in\s+one\s+payment)"
)
PLAN_CHANGE = _any(
    rf"\b(?:upgrade|downgrade|switch|change|move|go|drop|step|bump|put|get)\b.*\b(?:plan|starter|pro|{_TEAM_PLAN}|{_PERIOD_WORDS})\b",
    # the plan told as what the account should be ("ok then make it starter, by the year", "make
    # us team"): "make" with what it makes, then a plan of the price list (money-h18)
    rf"\bmake\s+(?:it|that|mine|ours|me|us|the\s+plan|my\s+plan|our\s+plan)\s+(?:\w+\s+)?(?:the\s+)?(?:starter|pro|{_TEAM_PLAN})\b",
    r"\b(?:upgrade|downgrade)\b", r"\bfrom (?:the )?(?:starter|pro|team)\b.*\bto (?:the )?(?:starter|pro|team)\b",
    # where to, told by direction: "take me down to starter", "bring us up to the team plan"
    rf"\b(?:down|up)\s+to\s+(?:the\s+)?(?:starter|pro|{_TEAM_PLAN})\b",
    r"\b(?:cheaper|different|another|bigger|smaller|larger|better|new|other) (?:plan|tier|subscription)\b",
    # the billing period asked for: "can I pay yearly", "I'd like to be billed annually"
    r"\b(?:switch|change|move|go|want|like|prefer|rather|can i|could i|can we|could we) (?:to )?(?:pay(?:ing)?|be billed|be charged|being billed)"
    rf"(?:\s+\w+){{0,2}}?\s+(?:{_PERIOD_WORDS})\b",
    rf"\b(?:{_PERIOD_WORDS})\b.{{0,20}}\b(?:instead of|rather than)\b",
)
# Whether something can be done, not yet a request to do it: "can I switch to team?", "is it
# possible to move to starter?", "am I able to downgrade?". A plan change asked so is offered.
ASKS_IF_POSSIBLE = _any(
    r"\b(?:can|could|may) (?:i|we)\b[^.!?]*\?", r"\bis it possible (?:for (?:me|us) )?to\b", r"\b(?:am i|are we) able to\b",
    r"\bis (?:it|there) (?:a way|an option) to\b", r"\bif (?:i|we) (?:cancel|stop|quit|unsubscribe)\b",
)
# What a plan change would mean, asked before asking for it: "if I downgrade now do I lose what I
# paid?", "what happens to my money if I switch?" (issue 38): answered, never offered as if asked.
_CHANGE_VERB = r"(?:downgrade|upgrade|switch|change|move|go|drop|step)"
_CONSEQUENCE = r"(?:lose|lost|pay|paid|charged?|billed|refund\w*|money|back|prorat\w*|credit)"
PLAN_CHANGE_QUESTION = _any(
    rf"\bif (?:i|we) (?:were to |decide to )?{_CHANGE_VERB}\b.*\b(?:do|will|would|does|am|are|is) (?:i|we|it|that)\b.*\b{_CONSEQUENCE}\b",
    rf"\b(?:do|will|would|does) (?:i|we)\b.*\b{_CONSEQUENCE}\b.*\bif (?:i|we) (?:were to |decide to )?{_CHANGE_VERB}\b",
    rf"\bwhat happens\b.*\bif (?:i|we) (?:were to |decide to )?{_CHANGE_VERB}\b",
)
# A plan named by where it sits: on the price list ("the cheapest plan", "your top tier") or from
# the customer's own ("downgrade", "a cheaper plan", "one tier lower", "the next plan up").
_TIER = r"(?:plans?|tiers?|levels?|packages?|options?|subscriptions?|ones?)"
_MOST = r"(?:[- ](?:priced|price|cost|tier|end))?"
# (A plan named by its role is an end too, money19: "the basic one", "the basic tier"; "the Basic
# plan" stays a plan's name the desk lacks, asked about, never guessed: account._plan_change.)
_LOWEST = r"(?:cheapest|cheap|lowest|least expensive|most basic|smallest|entry[- ]level|bottom|basic(?!\s+plans?\b))"
_HIGHEST = r"(?:most expensive|priciest|highest|biggest|largest|top)"
# "the cheapest plan", and "(move me) to the cheapest" with the plan left unsaid
PLAN_LOWEST = _any(rf"\b{_LOWEST}{_MOST}\s+{_TIER}\b", rf"\b(?:to|onto) the {_LOWEST}\b(?!\s+(?!{_TIER})[a-z])")
PLAN_HIGHEST = _any(rf"\b{_HIGHEST}{_MOST}\s+{_TIER}\b", rf"\b(?:to|onto) the {_HIGHEST}\b(?!\s+(?!{_TIER})[a-z])")
# An end of the price list with a plan's own noun ("the entry-level tier", "your cheapest plan",
# "the basic tier"): a plan named by its role, billing's however the story around it leans
# (triage: a freelancer's files and clients lean to the app; money19). ("the top option" is a menu's.)
PLAN_END_NAMED = _any(rf"\b(?:{_LOWEST}|{_HIGHEST}){_MOST}\s+(?:plans?|tiers?|subscriptions?|packages?)\b")
_ONE_STEP = r"(?:a|one|the next)"
# The plan itself moved by a step of any name ("kick my plan up a notch", "our subscription down
# one level"): the plan said, so the step is a plan's, not a volume's or a screen's.
_PLAN_MOVED = r"\b(?:plan|subscription|tier|package)\s+"
_NOTCH = r"(?:notch|level|tier|step|rung)"
_DOWN_NAMED = (
    rf"\b(?:cheaper|smaller|lower|less expensive)\s+{_TIER}\b",
    rf"\bdown\s+{_ONE_STEP}\s+{_TIER}\b", rf"\b{_ONE_STEP}\s+{_TIER}\s+(?:lower|down|cheaper)\b",
    rf"{_PLAN_MOVED}down\s+{_ONE_STEP}\s+{_NOTCH}\b",
)
_UP_NAMED = (
    rf"\b(?:bigger|larger|higher|better|more expensive)\s+{_TIER}\b",
    rf"\bup\s+{_ONE_STEP}\s+{_TIER}\b", rf"\b{_ONE_STEP}\s+{_TIER}\s+(?:up|higher)\b",
    rf"{_PLAN_MOVED}up\s+{_ONE_STEP}\s+{_NOTCH}\b",
)
PLAN_DOWN = _any(r"\bdowngrade\b", *_DOWN_NAMED)
PLAN_UP = _any(r"\bupgrade\b", *_UP_NAMED)
# A plan named by its place, the plan itself said ("the biggest plan", "your priciest option", "one
# tier up"): a plan's name, as "pro" is; the bare verbs ("upgrade the app") name no plan.
PLAN_PLACED = _any(*(p.source for p in (PLAN_LOWEST, PLAN_HIGHEST)), *_DOWN_NAMED, *_UP_NAMED)
# One step, not "any plan below": "down a tier", "one plan lower", "the next plan up".
# ("the smaller plan", "the bigger one": one plan, so the next one that way, where "a cheaper
# plan" is any of those below.)
PLAN_ONE_STEP = _any(
    rf"\b(?:down|up)\s+{_ONE_STEP}\s+{_TIER}\b", rf"\b{_ONE_STEP}\s+{_TIER}\s+(?:lower|down|cheaper|up|higher)\b",
    rf"{_PLAN_MOVED}(?:down|up)\s+{_ONE_STEP}\s+{_NOTCH}\b",
    rf"\bthe\s+(?:cheaper|smaller|lower|less expensive|bigger|larger|higher|more expensive)\s+{_TIER}\b",
)
# A question about plans ("is there a cheaper plan than mine?") asks for prices, not a change.
PLAN_QUESTION = _any(
    r"(?:^|[.!?]\s*)(?:is there|are there|what(?:'s| is| are)?|which|do you have|how much)\b[^.!?]*\?",
)


def plan_step(text: str) -> str | None:
    """Where the plan asked for sits: "lowest", "highest", "down" or "up" (one step: "down1",
    "up1"); None when the text names no plan by its place."""
    if PLAN_LOWEST.search(text):
        return "lowest"
    if PLAN_HIGHEST.search(text):
        return "highest"
    one = "1" if PLAN_ONE_STEP.search(text) else ""
    if PLAN_DOWN.search(text):
        return "down" + one
    if PLAN_UP.search(text):
        return "up" + one
    return None


# How a card's last four digits are told after its brand: "ending 1234", "ends in 3318", "last 4
# digits 7719", "****1234" (one definition for the payment cue and `card_description`).
_LAST_FOUR = r"(?:end(?:ing|s)(?: in| with)?|last (?:four|4)(?: digits| numbers)?(?: are| is| of it)?|\*+|x+)\s*(\d{4})\b"
_CARD_BRAND = r"\b(visa|mastercard|master card|amex|american express|discover)\b"
PAYMENT_METHOD = _any(
    r"\b(?:update|change|replace|new|add|switch|swap)\b.*\b(?:payment method|card on file|billing card|credit card|card|paypal)\b",
    # a card named by its brand and last four digits: "put my new mastercard ending 1234 on the account"
    # (or said to be another one to pay with: "pay with a different card - mastercard ending 7310";
    # "new visa ends in 3318", "a new mastercard, last 4 digits 7719": the digits told any way
    # `card_description` reads them)
    r"\b(?:update|change|replace|new|add|switch|swap|different|another|other|pay with|use)\b.*" + _CARD_BRAND + r"[^.\d]{0,30}?" + _LAST_FOUR,
    r"\b(?:card|payment method) (?:has )?expired\b",
)
# The card on file taken away, not replaced by another: no tool removes one, and a subscription
# needs one ("remove my credit card", "unlink my visa", "I don't want my card stored with you").
_CARD_ON_FILE = (
    r"(?:(?:credit |debit )?cards?(?: details| number| info(?:rmation)?)?|payment (?:method|details|info(?:rmation)?)s?|"
    r"visa|mastercard|master card|amex|american express|paypal)"
)
# (The payment methods' nouns, for the money skill's grammar over them.)
CARD_ON_FILE_WORDS = _CARD_ON_FILE
REMOVE_CARD = _any(
    rf"\b(?:remove|removing|delete|deleting|unlink|detach|forget|get rid of|erase|wipe)\b[^.!?]{{0,25}}\b{_CARD_ON_FILE}\b",
    rf"\btake (?:my|the|our) {_CARD_ON_FILE} off\b",
    rf"\b(?:do not|don'?t) want (?:my|the|our) {_CARD_ON_FILE} (?:stored|saved|kept|on file)\b",
)
# The customer says outright that they ask for no change (yet): "I'm not asking you to change
# anything", "dont switch nothing pls, only curious", "no changes for now": what follows is a
# question about the action, never a request for it (issue 38). Learned (readers/gates.py).
# The customer says outright that they ask for no change (yet): "I'm not asking you to change
# anything", "don't switch anything yet", "just wondering". Rules read the plain shapes; the
# learned reader (readers/gates.py) the rest, a clause speaking for the message only when it names
# an action: "no wait" before "make it the cheaper one" disclaims nothing (the reader alone moved
# with each rebuild on such short clauses, and read the plain shapes no better: held 13/16 each).
_ACTION_VERB = r"(?:change|switch|move|cancel|upgrade|downgrade|refund|touch|do)"
_NAMES_ACTION = LazyPattern(rf"\b{_ACTION_VERB}\b", _FLAGS)
DISCLAIMS_ACTION = _any(
    rf"\b(?:not|n'?t|never)\s+(?:asking|wanting|want|looking|trying|planning|going|ready|here)\s+(?:you\s+)?(?:to|for you to)\s+{_ACTION_VERB}\b",
    rf"\b(?:do not|don'?t|please don'?t|no need to)\s+{_ACTION_VERB}\s+(?:anything|it|my plan|the plan|my account)\b",
    r"\bno changes?\b[^.!?]{0,15}\b(?:yet|for now|right now|at the moment|please)\b",
    # ("only need the entry level plan" wants a plan, money19: a plan by its place is no disclaimer)
    rf"\b(?:just|only|merely)\s+(?:wondering|curious|asking|checking|looking|need(?:ing)? (?:the|a|to know)|want(?:ing)? (?:the|to know))\b"
    rf"(?!\s+(?:{_LOWEST}|{_HIGHEST})\b)",
)


def disclaims_action(text: str) -> bool:
    from supportdesk.readers import gates

    return DISCLAIMS_ACTION.search(text) is not None or gates.disclaims_action(text, clause_counts=_NAMES_ACTION.search)


NAMES_PAYMENT_METHOD = _any(rf"\b{_CARD_ON_FILE}\b")
# How sure the desk intents reader (readers/acts.py `read_desk_intent`: the desk's labelled
# examples, its tools' descriptions, Banking77's and CLINC150's train intents) must be that a
# message asks which card or payment method pays. Chosen on evals/desk-intents-tune.jsonl and the
# card questions of the tune halves (route-7b, intents-8): their readings are 0.9 to 1.0, a card
# change or removal reads its own intent (update_card, remove_card), a card page crashing "other".
CARD_ON_FILE_CONFIDENCE = 0.8


# How sure the desk intents reader must be that a request, read with the card told after it, asks
# for the card to be changed (`card_change_told`).
CARD_CHANGE_CONFIDENCE = 0.9


def card_change_told(earlier: str, text: str) -> bool:
    """`text` names a card (the rules read it: "visa ending 6612") after a request the cues do not
    hear as a change of payment method ("need to change how i pay you", "need to update my payment
    details"), and the desk intents reader, reading the request with the card, hears the change of
    card (its update_card): the card is the one to put on file (issue 38: what was said stays said)."""
    from supportdesk.readers import acts

    if card_description(text) is None or not earlier.strip():
        return False
    reading = acts.read_desk_intent(f"{earlier} {text}")
    return reading.act == "update_card" and reading.confidence >= CARD_CHANGE_CONFIDENCE


# How sure the desk intents reader must be that a message asks for another card on file when no
# card is named yet (`asks_card_change`): the tune halves' requests read 0.99 and more.
CARD_CHANGE_ASKED_CONFIDENCE = 0.99


# How much likelier (in log-odds, read without topic words: acts.topic_free_scores) the question
# may be than the request and the problem in a message the desk intents reader hears as a change
# of card, for it to be the change asked for rather than a how-to question about paying (the app's
# wallet article: "how do i pay with apple pay" reads 8.4). Chosen on the tune halves: money-10's
# requests to pay another way read -5.7 to 0.6 (a statement of want, "want to change the way i
# pay", leans to a question by its "way"); Banking77's "Any charges applicable for new card?" 2.6.
CARD_CHANGE_QUESTION_MARGIN = 2.0
# Paying itself, the verb: "change how i pay you" names no payment method's noun, yet what pays
# is the matter (a closed family of one verb's forms, as the payment methods' nouns are).
_PAYING = LazyPattern(r"\b(?:pay|pays|paying|paid)\b", re.I)


@kept_by_text(256)  # (a pure reading, asked by triage and the money skill each step)
def asks_card_change(text: str) -> bool:
    """A request for another card or payment method on the account, told in words no cue lists
    ("i'd like to pay with a different card from now on", "use paypal instead of my card", "need
    to change how i pay you"): the desk intents reader reads its update_card, the act reader a
    request rather than a problem and no question (`CARD_CHANGE_QUESTION_MARGIN`: a how-to question
    about paying in the app is the app's), and a payment method's noun or paying itself is named
    (issue 38)."""
    from supportdesk.readers import acts

    if APP_TROUBLE.search(text) or not (NAMES_PAYMENT_METHOD.search(text) or _PAYING.search(text)):
        return False
    if CHARGE_ID.search(text):
        return False  # a charge named by its id is that charge's matter ("paypal lists CH-9931??")
    reading = acts.read_desk_intent(text)
    if reading.act != "update_card" or reading.confidence < CARD_CHANGE_ASKED_CONFIDENCE:
        return False
    # Asked for, not told as a problem ("I got a fee when paying with my card") nor asked about.
    said = acts.topic_free_scores(text)
    return said["request"] > said["problem"] and said["question"] - max(said["request"], said["problem"]) < CARD_CHANGE_QUESTION_MARGIN


# Two questions joined by a conjunction before the second's question word ("what plan am i on and
# what do i pay for it", "which card is on my account and what plan am i on?"): grammar, a closed
# class. Each is a part of its own to a bag of words, which hears the louder one alone in the whole.
# (or a yes-no question's verb before its subject: "... and does it work on android?", "... and
# can i use it on my ipad")
_QUESTION_OPENS = r"(?:what|how|when|which|where|(?:does|do|can|could|will|is|are)\s++(?:it|i|you|we|they|that|this)\b)"
# (the space run taken from its start and whole, possessively: tried from every space of a long
# run and backtracked, "refund" + 16,000 spaces + "me" took seconds, tests/test_offline_linear.py)
# ("+" and "&" join as "and" does in terse messages: "which card is on file + when is next payment")
QUESTIONS_JOINED = LazyPattern(rf"(?<!\s)\s++(?:and|also|plus|\+|&)\s++(?={_QUESTION_OPENS})", re.I)
# A clause that opens as a question does (its words, not its "?").
OPENS_AS_QUESTION = LazyPattern(rf"^\s*{_QUESTION_OPENS}", re.I)


@kept_by_text(256)  # (a pure reading, asked by triage and the money skill each step)
def asks_card_on_file(text: str) -> bool:
    """Which card is on file, asked and not changed: "which card do you have for me?", "is it
    still the visa?", "how am i paying you at the moment?" (read from the account; issue 38). Read
    by the learned desk intents reader, not by the shapes of a phrase."""
    from supportdesk.readers import acts

    # The whole message, or one of its clauses when something comes before it ("so i got a new
    # bank last year and forgot to check, what card is paying for acme now?"): a bag of words
    # hears a preamble as loudly as the question. (A clause of three words or fewer is no
    # question of its own: "card on file?" is read whole.)
    parts = [text, *acts.question_clauses(text), *(c for c in acts.clauses(text) if len(acts.tokens(c)) > 3)]
    parts += [q for part in list(parts) for q in QUESTIONS_JOINED.split(part)]
    # The reader knows the desk's few dozen card questions against thousands of other sentences,
    # and a naive Bayes hears words new to a small label softly: "do you have keyboard shortcuts?"
    # reads card_on_file too, and so does "is our annual subscription renewing in 2026 or 2027".
    # The part read must name a payment method (its noun, as the rules name plans: a card, PayPal,
    # a brand), and a charge's day or month named makes it a question about that charge ("what's
    # the payment on the 24th for?").
    from supportdesk.models.offline import slots

    if slots.names_a_day_or_month(text):
        return False
    return any(
        (r := acts.read_desk_intent(part)).act == "card_on_file" and r.confidence >= CARD_ON_FILE_CONFIDENCE
        and NAMES_PAYMENT_METHOD.search(part) is not None
        for part in dict.fromkeys(parts)
    )


# When the next payment is taken, and how much: the account's renewal, not a charge already made.
NEXT_PAYMENT = _any(
    # ("next renewal" is left out: "from my next renewal" says when a change takes effect)
    # ("upcoming" is "next" in other words: "date of my upcoming payment plus the amount")
    # (a word may name whose or which payment between them: "next acme debit", "next monthly debit")
    r"\b(?:ne?xt|upcoming|coming) (?:[a-z]+ )?(?:payment|charge|bill(?:ing)?(?: date)?|invoice|debit)\b",
    # a verb of charging said with "next" after it ("when does my card get hit next", "when will
    # you bill me next"): when the account is charged again (money19; not "next to", "next month's")
    r"\b(?:charged|billed|debited|hit|taken|charge|bill|debit|take)(?: (?:me|us|it))? next\b(?! to\b| (?:month|year)'?s\b)",
    r"\b(?:take|charge|bill|debit|pay)\b[^.?!]{0,20}\bnext time\b",
    # (asked in the past, "when did you charge me in february?", it is a charge already taken)
    r"\b(?:when|what date|what day)\b(?!\s+(?:did|was|were|have|had)\b)[^.?!]{0,40}"
    r"\b(?:renew(?:s|al)?|(?:billed|charged|debited) again|charge me|bill me|take (?:the )?(?:next )?payment)\b",
    r"\b(?:charged|billed|debited) next (?:month|year)\b",
    # how long until it is due again: "how long until the plan comes up for payment again?",
    # "how many days till we renew", "when does the yearly one come up again?" (issue 38)
    r"\bhow (?:long|many (?:days|weeks|months))\b[^.?!]{0,20}\b(?:until|till|til|before)\b[^.?!]{0,60}"
    r"\b(?:renew\w*|pay\w*|charg\w*|bill\w*|due|debit\w*|comes? (?:up|round|around))\b",
    r"\b(?:comes?|coming) (?:up|round|around|due) (?:again|for (?:payment|renewal)(?: again)?)\b",
)
# Which plan the account is on now: "what plan am I on?", "which subscription do we have?".
MY_PLAN = _any(
    r"\b(?:what|which)(?:'s| is)? (?:plan|subscription|tier)\b[^.?!]{0,12}\b(?:am i|are we|i'?m|we'?re|do (?:i|we) have|i have|we have)\b",
    r"\bwhat(?:'s| is) (?:my|our) (?:current )?(?:plan|subscription|tier)\b", r"\b(?:my|our) current (?:plan|subscription)\b",
)
INVOICE = _any(r"\binvoices?\b", r"\breceipts?\b")
# "where do I find my invoices?", "how can I download a receipt?": where, not which.
WHERE_TO_FIND = _any(
    r"\b(?:where|how)\b[^.!?]{0,40}\b(?:find|get|download|see|access|view|look at|copy|copies)\b",
    r"\bwhere (?:are|is|can)\b",
)
# "my last invoice", "the most recent receipt": the newest alone (not "last month", "last two").
LATEST = _any(r"\b(?:last|latest|most recent|newest)\b(?! (?:month|year|week|few|two|three|\d))")
PRICING = _any(
    r"\bhow much (?:is|does|do|are|would)\b", r"\bprices?\b|\bpricing\b", r"\bwhat (?:do|does|would) .* cost\b",
    r"\b(?:what|which) plans\b", r"\bplans (?:do you|are there|you (?:have|offer))\b", r"\bcost per (?:month|year)\b",
    # "which of your plans is the cheapest?": a question that ranks the plans by price
    r"\b(?:what|which)\b[^.?!]{0,40}\b(?:cheapest|cheaper|most expensive|priciest|least expensive)\b[^.!]*\?",
    # "how much will that cost?", "what will that cost me?": the price of what is being talked about
    r"\bhow much (?:will|is that going to)\b", r"\bwhat (?:will|would) (?:that|it|this) cost\b",
    # "what it costs per month", "what each one costs a year"
    r"\bwhat (?:it|that|this|they|each(?: one)?)\b[^.!?]{0,10}\bcosts?\b", r"\bcosts? (?:per|a|each) (?:month|year)\b",
    # non-native word order, a plan named: "how much cost the pro plan?", "how much for team?" (held-4)
    r"\bhow much (?:costs?|for)\b(?=[^.!?]*\b(?:plans?|starter|pro|team|tiers?)\b)",
)
# Plans weighed against each other by price: "the difference in price between pro and team",
# "how much more is team than pro?", "a cheaper plan than pro", "team compared to starter".
# A question about prices, not yet a change (unless a change is asked for beside it).
PRICE_COMPARISON = _any(
    r"\b(?:price|cost) difference\b", r"\bdifference in (?:price|cost)\b", r"\bcompared? (?:to|with)\b",
    r"\bcompare (?:the )?(?:prices?|costs?|plans?)\b",
    r"\b(?:cheaper|more expensive|pricier|less expensive)(?: (?:plan|tier|option|one)s?)? than\b",
    r"\bhow much (?:more|less|cheaper)\b",
)
# The price comparison's direction: plans below, or above, the one named after it.
_THAN = r"(?: (?:plan|tier|option|one)s?)? than (?:the )?(starter|pro|team)\b"
CHEAPER_THAN = LazyPattern(r"\b(?:cheaper|less expensive|smaller)" + _THAN, _FLAGS)
DEARER_THAN = LazyPattern(r"\b(?:more expensive|pricier|bigger|larger)" + _THAN, _FLAGS)
EXPLAIN = _any(r"\bexplain\b", r"\bwhat (?:is|was|are) (?:this|these|that) (?:charge|payment|fee)", r"\bdon'?t recogni[sz]e\b", r"\bnot recogni[sz]e\b", r"\bwhy (?:was|am|did|were) (?:i|we)\b.*\bcharged?\b")
CREDIT = _any(r"\bcredit\b(?! card)", r"\bcompensat", r"\boutage\b", r"\bdowntime\b")

# Technical requests (the tech skill's own vocabulary). The password's, which a reset link sets
# anew: the app's passcode (pin) is set again in the app after signing in with the password (its
# own article, tools/kb/app-passcode.md), so a forgotten pin asks for no reset link (acct17).
RESET = _any(
    r"\breset (?:my |the )?password\b", r"\bpassword reset\b", r"\breset link\b",
    r"\bforg[oe]t(?:ten)? (?:my |the )?password\b", r"\bsend (?:me )?(?:a |the )?(?:new )?(?:password|reset)\b",
)
LOGIN = _any(
    r"\b(?:can ?not|can't|cant|cannot|unable to|couldn't|can't) (?:even )?(?:log|sign) ?in\b", r"\b(?:log|sign) ?in (?:fails?|problem|issue)",
    r"\blocked out\b", r"\b(?:log|sign) ?in (?:is(?:n't| not)|does(?:n't| not)|won'?t|keeps? failing)", r"\bcan'?t (?:get|access) (?:in|into) my account\b",
)
# Single sign-on named, or the identity provider it goes through (names, as plan names are: a
# rule's job): the password is the provider's, not ours.
PROVIDER_SIGN_IN = _any(
    r"\bsso\b", r"\bsingle[- ]sign[- ]on\b", r"\bsaml\b", r"\bokta\b", r"\bazure(?: ad)?\b", r"\bentra(?: id)?\b",
    r"\bonelogin\b", r"\badfs\b", r"\bidentity provider\b", r"\bidp\b", r"\bgoogle workspace\b",
)
# Trouble at the sign-in step, told any way ("every time I try logging in it throws an error",
# "won't let me sign in", "stuck at the signin form"): of the articles a search finds, the
# sign-in ones answer it. Not when signing in works and something after it does not.
_SIGNING_IN = r"(?:log ?in|logging in|log-in|logins?|sign ?in(?:to)?|signing in|sign-in)"
_SIGN_IN_TROUBLE = _any(
    LOGIN.source,
    rf"\b{_SIGNING_IN}\b[^.!?]{{0,40}}\b(?:errors?|fails?|failing|failed|rejected|refused|wrong|spins?|spinning|"
    r"reloads?|nothing happens|does nothing|won'?t|doesn'?t|does not|stuck|not accept\w*|unexpected)\b",
    rf"\b(?:errors?|fails?|failing|won'?t let me|can'?t|cannot|stuck (?:at|on)|rejected|refused)\b[^.!?]{{0,40}}\b{_SIGNING_IN}\b",
)
_SIGNS_IN_FINE = _any(
    r"\bcan (?:log|sign) ?in\b", r"\b(?:logged|signed) in (?:fine|ok|okay|normally|without (?:a )?problems?)\b",
    r"\b(?:log|sign) ?in (?:works|is fine)\b",
)


def sign_in_trouble(text: str) -> bool:
    return bool(_SIGN_IN_TROUBLE.search(text)) and not _SIGNS_IN_FINE.search(text)


# A question about how to do something, or about what the product offers ("how do I change my
# password", "is there an iphone app?"): its article is the answer to it, not a fix to try. Not
# when the message names trouble ("how come it won't open", "can I fix the sync error").
_ASKS = _any(
    r"^\W*(?:how|where|which)\b", r"^\W*what(?:'s| is)? the (?:best )?way\b",
    r"^\W*(?:is|are) there\b", r"^\W*(?:can|could|may) (?:i|we)\b", r"^\W*(?:do|does) (?:you|acme|it)\b",
    r"\bhow (?:do|can|would|should|to)\b", r"\bis (?:there a way|it possible) to\b",
)
_NAMES_TROUBLE = _any(
    r"\b(?:can'?t|cannot|unable|won'?t|doesn'?t|isn'?t|didn'?t|aren'?t|not|never|no longer)\b",
    r"\b(?:fix|fails?|failed|failing|wrong|problems?|issues?|trouble|keeps?|suddenly|anymore|stopped)\b",
)


def asks_how(text: str) -> bool:
    return (
        bool(_ASKS.search(text))
        and not _NAMES_TROUBLE.search(text)
        and not APP_TROUBLE.search(text)
        and not sign_in_trouble(text)
    )


# (Linear: a split takes a whitespace run whole from where it starts, or begins where the run
# ends (after an earlier split took it); see triage._ISSUE_SPLIT.)
CLAUSE_SPLIT = LazyPattern(
    r"(?<=[.!?;])\s++|(?:(?<!\s)\s*+(?:,|\.)?\s*+|(?<=\s)(?:[,.]\s*+)?)"
    r"\b(?:also|and also|another thing|one more thing|by the way|btw|plus)\b[,:]?\s*+", _FLAGS
)
# A card's brand, then its last four digits however they are introduced: "ending (in)", "ends
# (in|with)", "last four/4 (digits) are", "****", "x" (issue 38: "my mastercard ends in 3141" named
# no card, and the card was asked for again after the email).
# (Between a brand and its digits, no other payment method: "replace the amex with my visa ending
# 1881" names the visa's digits, not the amex's; controls-h18.)
_OTHER_METHOD = r"(?:visa|mastercard|master card|amex|american express|discover|paypal)"
CARD_DESCRIPTION = LazyPattern(
    _CARD_BRAND + rf"(?:(?!\b{_OTHER_METHOD}\b)[^.\d]){{0,30}}?" + _LAST_FOUR + r"|\b(paypal)\b", _FLAGS
)
CARD_NUMBER = LazyPattern(r"\b(?:\d[ -]?){13,19}\b")
PLAN_NAME = LazyPattern(rf"\b(starter|pro|{_TEAM_PLAN})\b", _FLAGS)
PERIOD = LazyPattern(rf"\b({_PERIOD_WORDS})\b", _FLAGS)
# Right before a period: the one they are on ("from", "instead of", "rather than", "not").
_PERIOD_LEFT = LazyPattern(r"\b(?:from|instead of|rather than|not)\s+(?:the\s+)?(?:an?\s+)?$", _FLAGS)
_PERIOD_TO = LazyPattern(r"\b(?:to|onto)\s+(?:the\s+)?(?:an?\s+)?$", _FLAGS)


_PARTS = LazyPattern(r"[,;.!?]++\s*+|(?<!\s)\s++-++\s++|(?<!\s)\s++(?:but|instead)\s++", _FLAGS)


def parts(text: str) -> list[str]:
    """A message cut at every comma and sentence end: finer than `clauses`."""
    return [p.strip() for p in _PARTS.split(text) if p and p.strip()]


def clauses(text: str) -> list[str]:
    """A message split where customers change subject ("..., also I can't log in"): at a
    sentence's end (its mark kept) and before a word that turns to another matter, not at every
    comma as the readers' clauses are (supportdesk.text.clauses, the one splitter)."""
    return split_clauses(text, CLAUSE_SPLIT, strip=" ,.")


# The last four digits told without the card's brand ("sorry, it ends 4410 not 4401", "last four
# are 4410"): a repair of a card named before. Digits after "not" or "instead of" are the ones
# taken back (held-14: the card was changed to the digits the customer had just corrected).
_LAST_FOUR_TOLD = LazyPattern(
    r"(?<!not )(?<!instead of )\b(?:end(?:ing|s)(?: in| with)?|last (?:four|4)(?: digits| numbers)?(?: are| is)?)\s*(\d{4})\b",
    _FLAGS,
)


def last_four_told(text: str) -> str | None:
    """The last four digits of a card told without its brand, the ones not taken back."""
    m = _LAST_FOUR_TOLD.search(text)
    return m.group(1) if m else None


# Right before a payment method: the one being left ("no more paypal", "switch from paypal",
# "off the visa", "replace my amex", "instead of paypal"), as `_PERIOD_LEFT` is for periods.
_METHOD_LEFT = LazyPattern(
    r"\b(?:from|instead of|rather than|not|no more|no longer|off|away from|replace|ditch|drop"
    r"|stop(?:ping)? (?:using|paying (?:with|by|through)|charging))\s+(?:(?:my|the|our|that|this|old|current|using)\s+)*$",
    _FLAGS,
)


# Right after a payment method: it is taken away ("take paypal off", "paypal out, visa in").
_METHOD_LEFT_AFTER = LazyPattern(r"^\s+(?:(?:the|my|our)\s+account\s+)?(?:off|out)\b", _FLAGS)


def card_description(text: str) -> str | None:
    """The payment method to use that `text` names: the first not told as the one being left
    (held-16: "no more paypal for me, charge my visa ending 2290" was offered as a change to
    paypal, and the customer's "that's right" ran it; controls-h18: "take paypal off the account
    and charge visa ending 9921" was offered as paypal). None when every method named is left."""
    named = cards_named(text)
    return named[0] if named else None


def cards_named(text: str) -> list[str]:
    """Every payment method `text` names that is not told as the one being left, in order
    (`card_description` is the first)."""
    out = []
    for m in CARD_DESCRIPTION.finditer(text):
        if _METHOD_LEFT.search(text[max(0, m.start() - 40):m.start()]) or _METHOD_LEFT_AFTER.match(text[m.end():]):
            continue
        if m.group(3):
            out.append("paypal")
        else:
            brand = m.group(1).lower().replace("master card", "mastercard").replace("american express", "amex")
            out.append(f"{brand} ending {m.group(2)}")
    return out


# The plan they are on, named beside a change: "from Team", "I'm on Starter", "currently on pro",
# "we have the starter plan", "on pro right now". It is where they are, never the plan to move to.
_PLAN_FROM = LazyPattern(
    r"\b(?:from|(?:i'?m|i am|we'?re|we are)\s+(?:currently\s+|now\s+)?on|currently on|(?:i|we)\s+(?:currently\s+)?have"
    r"|my current plan is)\s+(?:the |my |our )?(starter|pro|team)\b"
    r"|\bon (?:the )?(starter|pro|team)(?: plan)? (?:right now|now|currently|at the moment)\b",
    _FLAGS,
)


# "to the Basic plan": a plan named as where to go. Words that say which by place or kind are
# not names ("to the cheapest plan", "to a yearly plan").
_PLAN_TARGET = LazyPattern(r"\b(?:to|onto|into|for) (?:the |a |an )?([a-z][\w-]*) (?:plan|tier|subscription)\b", _FLAGS)
_NOT_A_NAME = LazyPattern(  # (matched at the word: `match` anchors there, "^" would not)
    rf"(?:{_LOWEST}|cheaper|cheapest|lower|higher|bigger|smaller|better|next|new|other|different|same|current|old|"
    r"paid|free|annual|yearly|monthly|family|business|individual|personal|top|premium|best|one|this|that|my|our|your)\s",
    _FLAGS,
)


def unknown_plan(text: str) -> str | None:
    """A plan name the desk does not have, named as where to go ("downgrade to the Basic plan"):
    asked about, never mapped to the nearest plan."""
    for m in _PLAN_TARGET.finditer(text):
        word = m.group(1)
        # (read with the noun after it: "the basic tier" is the cheapest, "the Basic plan" a name)
        if not PLAN_NAME.fullmatch(word) and not _NOT_A_NAME.match(text, m.start(1), m.end()):
            return word
    return None


def plan_request(text: str) -> tuple[str | None, str | None]:
    """(the plan asked for, the billing period asked for). In "from Team to Pro" it is Pro, and in
    "I'm on Starter and want to downgrade" none."""
    current = {m.start(1) if m.group(1) else m.start(2) for m in _PLAN_FROM.finditer(text)}
    # A plan named as the one left or not wanted ("starter, not team", "instead of pro") is no request.
    named = [m for m in PLAN_NAME.finditer(text) if m.start() not in current and not _PERIOD_LEFT.search(text, 0, m.start())]
    # The plan named as where to go ("go down to starter, pro is too pricey") rather than one
    # named after it as the reason; unless what comes between takes it back ("to team, no wait,
    # pro"): then the plan named last is the one meant (money-17).
    from supportdesk.models.offline.slots import repairs

    gone_to = [m for m in named if _PERIOD_TO.search(text, 0, m.start())]
    plan = named[-1] if named else None
    if gone_to and plan is not None and not repairs(text[gone_to[-1].end() : plan.start()]):
        plan = gone_to[-1]
    # "from yearly to monthly", "yearly instead of monthly": the period they leave is no request.
    # Of the rest, one named as where to go ("to annual") before the first named.
    periods = [m for m in PERIOD.finditer(text) if not _PERIOD_LEFT.search(text, 0, m.start())]
    period = next((m for m in periods if _PERIOD_TO.search(text, 0, m.start())), periods[0] if periods else None)
    period_value = None
    if period:
        period_value = "monthly" if "month" in period.group(1).lower() else "annual"
    return (plan.group(1).lower() if plan else None, period_value)


# What makes a message billing's at all: money in some form, however it is said ("my bank shows
# acme twice", "why do i owe you", "overcharged"). A message with none of it ("is there a plan to
# support linux?", "how do I cancel sharing a folder") is a product question or a problem, however
# its other words lean the router (issue 38). Read by a learned reader (readers/gates.py), with
# rules for what rules read well: an amount or a currency sign, a charge's id, a plan's name, a
# billing period, a card's number.
_AMOUNT = LazyPattern(r"[$€£]|\b\d+[.,]\d\d\b")


@kept_by_text(256)
def names_money_literally(text: str) -> bool:
    """An amount, a charge or invoice id, a plan's name or place, a billing period or a card number: the rules' part
    of `names_money`, without the learned money gate's reading."""
    return bool(
        _AMOUNT.search(text) or CHARGE_ID.search(text) or INVOICE_ID.search(text) or PLAN_NAME.search(text) or PLAN_PLACED.search(text) or PERIOD.search(text)
        or CARD_NUMBER.search(text)
    )


@kept_by_text(256)  # a pure reading asked several times a turn (tests/test_turn_cpu.py)
def names_money(text: str) -> bool:
    """The message speaks of money in some form: the evidence a billing agent needs to be the one
    a message is for."""
    if names_money_literally(text):
        return True
    # (A change of plan however short, "I want to change plan", is the gate's to read: it learnt
    # the desk's own billing actions from the billing tools' names and descriptions.)
    from supportdesk.readers import gates

    return gates.reads_money(text)


_FILE_NAMED = LazyPattern(rf"\b(?:[a-z]+ ){{1,2}}(?={_FILE_THINGS}\b)", _FLAGS)


def without_file_names(text: str) -> str:
    """The text with the words that name a file taken out ("our pricing sheet" -> "our sheet"): a
    money word naming a document is no money matter."""
    return _FILE_NAMED.sub("", text)


# A trouble's steps reported to have worked: "ok now it works", "that fixed it", "its syncing
# again", "sorted, thanks" (bounded: one word between the verb and "now"/"again").
WORKS_NOW = LazyPattern(
    r"\b(?:works?|worked|working|fixed|sorted|solved|resolved)\b|\b\w+ing (?:\w+ )?(?:again|now)\b|\b(?:fine|ok|okay) now\b",
    re.I,
)


def reports_on_steps(text: str) -> bool:
    """The customer tells how a trouble's steps went: they failed (`STEPS_FAILED`, "nope, still
    crashes"), or worked ("ok now it works, thanks"), asking nothing."""
    if STEPS_FAILED.search(text):
        return True
    return "?" not in text and bool(WORKS_NOW.search(text) or THANKS.search(text) and acts.read_act(text).act != "thanks")
