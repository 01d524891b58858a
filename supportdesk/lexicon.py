"""The domain lexicon: many ways customers say one thing, folded onto one word.

The router learns from the desk's own examples, written for a subscription software
product. Customers borrow words from their bank ("top-up", "PIN", "direct debit",
"Apple Pay") or simply say the same thing differently ("billed", "debited", "taken").
Folding those onto the product's own concepts lets a few hundred examples cover phrasing
nobody wrote. Each entry is general English or product vocabulary, not a list of
sentences from any test set.
"""

from __future__ import annotations

import re
from functools import lru_cache

from supportdesk.text import EMAIL_ADDRESS
from supportdesk.patterns import LazyPattern

# Contractions first, so "didn't" and "did not" become the same tokens.
_IRREGULAR = {"can't": "can not", "cant": "can not", "cannot": "can not", "won't": "will not", "wont": "will not",
              "ain't": "is not", "i'm": "i am",
              # the same contractions typed without the apostrophe ("it wasnt me", "i didnt do it")
              "didnt": "did not", "doesnt": "does not", "dont": "do not", "isnt": "is not", "wasnt": "was not",
              "werent": "were not", "havent": "have not", "hasnt": "has not", "couldnt": "could not",
              "wouldnt": "would not", "shouldnt": "should not", "arent": "are not"}
_SUFFIXES = {"n't": " not", "'ve": " have", "'ll": " will", "'re": " are", "'d": " would", "'s": ""}
_CONTRACTION = LazyPattern(r"\b(?:can'?t|cannot|won'?t|ain't|i'm|(?:did|does|do|is|was|were|have|has|could|would|should|are)nt)\b|\b(\w+)(n't|'ve|'ll|'re|'d|'s)\b")


def _expand(m: re.Match[str]) -> str:
    if m.group(1) is None:
        return _IRREGULAR[m.group(0)]
    return m.group(1) + _SUFFIXES[m.group(2)]


# concept -> phrasings. Longer phrasings win (they are tried first).
CONCEPTS: dict[str, tuple[str, ...]] = {
    # money leaving the customer
    "charged": (
        "charged", "billed", "debited", "deducted", "invoiced", "took money", "taken money",
        "taken from my account", "taken out", "came out of my account", "withdrawn from my account",
        "paid twice", "payed", "overcharged",
    ),
    "fee": ("fee", "fees", "surcharge", "commission", "extra cost", "extra charge", "service charge"),
    "refund": (
        "refund", "refunds", "refunded", "refunding", "reimburse", "reimbursed", "reimbursement",
        "money back", "my money returned", "return my money", "give back my money", "chargeback",
    ),
    "unrecognised": (
        "unrecognised", "unrecognized", "not recognise", "not recognize", "do not know what",
        "not know what", "unknown", "unfamiliar", "unauthorised", "unauthorized", "not authorise",
        "not authorize", "never made", "not make", "did not make", "never authorised", "suspicious",
    ),
    # someone else took the account over
    "hacked": (
        "hacked", "hack", "hacker", "hackers", "compromised", "breached", "breach", "hijacked", "taken over",
        "took over", "broke into", "broken into", "break into",
    ),
    "autopay": ("direct debit", "direct debits", "standing order", "autopay", "auto pay", "automatic payment", "recurring payment"),
    "currency": ("exchange rate", "exchange rates", "currency conversion", "conversion rate", "foreign currency", "currency", "exchange"),
    "statement": ("statement", "bank statement", "transaction history", "account history"),
    "twice": (
        "twice", "two times", "double", "duplicate", "duplicated", "two charges", "same charge", "same payment",
        "two payments", "2 payments", "2 charges", "identical payments", "identical charges", "double charged", "double billed",
    ),
    # bank products standing in for the subscription's plans, payment methods and app
    "topup": ("top up", "top-up", "topup", "top ups", "top-ups", "topping up", "topped up", "add money", "add funds", "load money", "add credits", "adding credits", "adding money"),
    "card": ("credit card", "debit card", "virtual card", "disposable card", "visa", "mastercard", "amex", "card"),
    "transfer": ("bank transfer", "wire transfer", "sepa", "transfer", "transferred", "transfers", "wire"),
    "cash": ("cash withdrawal", "cash machine", "cashpoint", "atm", "withdraw cash", "withdrawing cash", "withdrew cash", "withdrawal", "withdrawals"),
    "wallet": ("apple pay", "google pay", "android pay", "samsung pay", "gpay", "wallet", "contactless", "tap to pay", "nfc"),
    # account access
    # signing in, however it is spelt ("the login page", "when I try to sign in", "the log-in screen")
    "login": ("login", "logins", "log in", "logging in", "log-in", "sign in", "signing in", "sign-in", "signin",
              "logged in", "logged into", "loged in", "loged into", "signed in", "signed into", "log on", "logon"),
    # (A password is not the app's passcode: folded together, "change my password" found the PIN article.)
    "passcode": ("pin number", "pin code", "pin", "passcode", "pass code"),
    # (and its chat abbreviations: "forgot my pw again", "new pwd pls"; reset15)
    "password": ("password", "passwords", "passphrase", "pass word", "pw", "pwd", "passwd", "pword"),
    "locked": ("blocked", "locked out", "locked", "frozen", "suspended", "disabled", "deactivated"),
    "verify": ("verify", "verified", "verification", "verifying", "identity", "id check", "kyc", "proof of id", "identification", "id document", "passport", "driving licence", "driver license"),
    # the computer the app runs on, by its brand ("her school chromebook", "my thinkpad"); not
    # "laptop" alone: "recommend a good laptop" is no question about the app (issue 38)
    "device": (
        "device", "devices", "chromebook", "chromebooks", "macbook", "macbooks", "thinkpad", "surface pro",
    ),
    "phone": ("phone", "mobile", "cellphone", "cell phone", "iphone", "smartphone", "handset"),
    "lost": ("lost", "stolen", "misplaced", "lose", "stole", "theft", "missing phone"),
    # the people on a customer's team (inviting them is a how-to, not a plan change)
    "teammate": (
        "teammate", "teammates", "team mate", "team mates", "team member", "team members", "colleague",
        "colleagues", "coworker", "coworkers", "co-worker", "co-workers", "new member", "new members",
        "another user", "new user", "new users",
    ),
    # a person other than the customer, however named (who used their account, or their card)
    "someone": (
        "someone", "somebody", "someone else", "somebody else", "other person", "another person",
        "other people", "other user", "stranger", "strangers",
    ),
    "details": (
        "personal details", "personal information", "personal info", "my details", "my address", "my name", "surname",
        "last name", "first name", "maiden name", "home address", "phone number", "mobile number", "cell number",
        "telephone number", "contact number", "date of birth",
    ),
    # something that does not work
    "broken": (
        "not working", "not work", "does not work", "stopped working", "not functioning", "broken",
        "failed", "fails", "failing", "fail", "declined", "rejected", "refused", "denied",
        "not go through", "not going through", "not accepted", "error", "errors", "crash",
        "crashes", "crashed", "crashing", "bug", "glitch", "unsuccessful", "not successful",
        "not process", "not processed", "not approved", "not reflected", "trouble with",
        "problem with", "problems with", "issue with", "issues with", "something wrong",
        "what is wrong", "unable to use", "can not use", "not able to use", "non-functional",
        "non functional", "not functional", "stuck",
    ),
}


def _build() -> tuple[re.Pattern[str], dict[str, str]]:
    pairs = [(phrase, concept) for concept, phrases in CONCEPTS.items() for phrase in phrases]
    pairs.sort(key=lambda pair: len(pair[0]), reverse=True)
    # One alternation, longest first: each stretch of text is folded once. The phrases are
    # grouped by their first letter ("b(?:illed|illing|...)"), longest first within each group:
    # only one group can match where a word starts, so the match is the one the flat
    # alternation finds, and `re` tries a few phrases at each word instead of all of them.
    return re.compile(rf"\b(?:{_by_first_letter([p for p, _ in pairs])})\b"), {p: c for p, c in pairs}


def _by_first_letter(phrases: list[str]) -> str:
    """`phrases` (in the order to try them) as one alternation grouped by first letter."""
    groups: dict[str, list[str]] = {}
    for phrase in phrases:
        groups.setdefault(phrase[0], []).append(phrase)
    return "|".join(
        re.escape(first) + "(?:" + "|".join(re.escape(p[1:]) for p in group) + ")" for first, group in groups.items()
    )


_LEXICON_RE, _PHRASE_TO_CONCEPT = _build()
_MONEY = LazyPattern(r"[$€£]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:usd|eur|gbp|dollars?|euros?|pounds?)\b")
# An address, with the words that only label it ("email dana@…", "my e-mail is …"): the label
# names the address told, not what the message is about ("change how i pay you, email …").
_EMAIL = LazyPattern(r"(?:\b(?:my\s+)?e-?mail(?:\s+address)?(?:\s+is|\s*[:=])?\s*)?" + EMAIL_ADDRESS.pattern)
_NUMBER = LazyPattern(r"\b\d[\d,.]*\b")
# An action the customer disowns says that someone else did it ("it was not me", "i did not do
# it", "not by me"): read as "someone", and its "not" is no problem word ("not working").
_DISOWNED = LazyPattern(r"\b(?:(?:was|is) not me|not (?:done )?by me|did not do|never did|not do (?:this|that)|without me)\b")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'"})


@lru_cache(maxsize=1024)
def normalise(text: str) -> str:
    """Lower-case, expand contractions, mark money, and fold phrasings onto concepts.

    A folded concept keeps the customer's own word too ("billed" -> "billed charged"), so
    the classifier sees both the exact wording and the idea behind it.
    """
    t = text.lower().translate(_APOSTROPHES)
    t = _CONTRACTION.sub(_expand, t)
    t = _EMAIL.sub(" ", t)  # an address says who, not what about
    t = _MONEY.sub(" amount ", t)
    t = _NUMBER.sub(" number ", t)
    t = _DISOWNED.sub(" someone ", t)
    t = _LEXICON_RE.sub(lambda m: f" {m.group(0)} {_PHRASE_TO_CONCEPT[m.group(0)]}_c ", t)
    return t

# --- search terms: the words a question and an article are matched on (the knowledge base's, tools/kb.py;
# here so the offline model asks the same of an article it was handed, models never importing tools) ---

# Words that find no article. The knowledge base's own list (it began as the router's): search
# must not change, or break, when the offline model's classifier does.
STOPWORDS = frozenset(
    """a an the i me my mine we our you your it its is are was were be been being am to of in
    on at for from by with and or but so if this that these those there here do does did
    have has had will would can could should please hi hello hey thanks thank just
    what why how when where which who whom whose some any something anything possible
    get got need want like know help able also still yet very really
    stopped working work works worked anymore""".split()
)
# ("stopped working" says that something fails, not what: in an article's title it outweighed
# the thing the customer named, and "sync stopped working" found the notifications article.)
WORD = LazyPattern(r"[a-z0-9][a-z0-9_]*")

# A question asking a quantity of the product, by its kind (kb-17): a size ("the biggest single
# file sync takes", "is there a size limit", "how huge may one file be", "how heavy a file": any
# adjective of size after "how") or a time ("how long may a top-up sit pending", "how
# far back does version history go", "how much days until the credits arrive"); and the same
# kinds of quantity stated ("5 GB", "15 minutes", "1-2 business days"). The knowledge base answers
# such a question from the step stating that kind of quantity (`tools/kb.py` `measured`); the
# technical skill reads it as a question, not a problem (`asks_a_measure`).
ASKS_SIZE = LazyPattern(
    r"\b(?:how (?:big|large|huge|heavy)|biggest|largest|max(?:imum)?(?: file)? size|size (?:limit|cap|ceiling)|file size)\b", re.I
)
ASKS_TIME = LazyPattern(
    r"\b(?:how (?:long|(?:much|many) time|far(?: back)?|soon)|how (?:many|much) (?:seconds|minutes|hours|days|weeks|months)|until when)\b",
    re.I,
)
STATES_SIZE = LazyPattern(r"\b\d+(?:\.\d+)?\s?(?:[kmgt]b|bytes?)\b", re.I)
STATES_TIME = LazyPattern(
    r"\b\d+(?:-\d+)?\s?(?:seconds?|minutes?|hours?|(?:business |working )?days?|weeks?|months?|years?)\b", re.I
)
# An address asked (facts19): the page to check, the sender to allow, the site to use ("is there a
# status page", "what address do the emails come from", "which sender should i add"); stated as
# the knowledge base writes one (status.acmecloud.example, notifications@acmecloud.example).
ASKS_ADDRESS = LazyPattern(
    r"\b(?:(?:what|which)(?:'?s| is)?(?: the)?(?: (?:e-?mail|sender|web))? (?:address|sender|domain|site|website|url)|"
    r"(?:is|are) there (?:a|an|some|any)(?: [a-z-]+){0,2}? (?:page|site|website|url)|which (?:page|site|website|url))\b",
    re.I,
)
STATES_ADDRESS = LazyPattern(r"\b[a-z0-9-]{1,40}(?:\.[a-z0-9-]{1,40}){0,3}\.example\b", re.I)
# (the kind asked, the kind stated)
MEASURES = ((ASKS_SIZE, STATES_SIZE), (ASKS_TIME, STATES_TIME), (ASKS_ADDRESS, STATES_ADDRESS))


_STEM_ENDINGS = ("'s", "ies", "es", "s", "ed", "ing", "en")


def stem(word: str) -> str:
    """The word without an inflection or a silent last "e" ("versions", "overwritten",
    "restoring", "restore" -> "version", "overwrit", "restor", "restor"), a doubled last
    consonant undone; short words are left whole."""
    for suffix in _STEM_ENDINGS:
        if suffix == "es" and not word.endswith(("ses", "xes", "zes", "ches", "shes")):
            continue  # "notes" is "note" + "s", not "not" + "es"
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]
            break
    # and without a silent last "e", so "restore" meets "restored" and "restoring"
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def terms(text: str) -> list[str]:
    return [w for w in WORD.findall(normalise(text)) if w not in STOPWORDS and len(w) > 1]


def shares_a_term(text: str, other: str) -> bool:
    """`text` names something `other` names too: a word beyond the stopwords, in the same
    lexicon and word form (`stem`). The technical skill asks it of a question asked beside a
    trouble and the article found ("can she use a backup code?" and the lost phone's steps), so a
    plea for help ("any idea?", "can you help?") is not taken for a question of its own (kb-16)."""
    return bool({stem(t) for t in terms(text)} & {stem(t) for t in terms(other)})
