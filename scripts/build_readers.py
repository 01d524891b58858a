"""Rebuild supportdesk/readers/data/readers.json.gz and gates.json.gz from the public corpora.

    python scripts/build_readers.py BANKING77_GIT CLINC_GIT SGD_GIT
    python scripts/build_readers.py --gates BANKING77_GIT CLINC_GIT SGD_GIT   (data/gates.json.gz only)

Each argument is a git directory (a bare clone or a checkout's .git) of, in order:
github.com/PolyAI-LDN/task-specific-datasets (Banking77, CC BY 4.0),
github.com/clinc/oos-eval (CLINC150, CC BY 3.0) and
github.com/google-research-datasets/dstc8-schema-guided-dialogue (SGD, CC BY-SA 4.0).
Files are read with `git show HEAD:path`, so no checkout is needed. Only training splits are
read: Banking77's test split measures routing and must never be trained or tuned on.

`--gates` rebuilds gates.json.gz alone (readers/gates.py: money named or not, an action
disclaimed or not); without it both files are rebuilt.

What is kept: per-act feature counts of a naive Bayes (features no act saw 3 times dropped),
and each word's document frequency over every message read (words seen in at least two).
The corpora's sentences themselves are not shipped.

The desk's own files each reader trains on (agents.toml, the eval families' tune halves, the
labelled tune files) are pinned in supportdesk/readers/data/TRAINING.json, not globbed: a family
added to evals/ changes no reader until it is named there and the readers rebuilt. Each output
records the digests of the files it was built from (and of the manifest and this script) under
"trained_on"; tests/test_readers.py fails when the committed data are not what this script
builds from the pinned set.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from supportdesk.models.offline.router import name_pattern, without_names  # noqa: E402
from supportdesk.readers import gates  # noqa: E402
from supportdesk.readers.acts import DATA, EMAIL, FORMAT, UNPAID_DESK_INTENTS, features, tokens  # noqa: E402

# Banking77 intents by the act their messages perform. Intents whose messages mix acts
# ("how do I change my PIN" and "change my PIN") are left out rather than guessed.
B77_PROBLEM = """card_arrival card_payment_wrong_exchange_rate extra_charge_on_statement pending_cash_withdrawal
card_not_working lost_or_stolen_card pin_blocked contactless_not_working pending_top_up
wrong_amount_of_cash_received card_payment_fee_charged transfer_not_received_by_recipient top_up_reverted
balance_not_updated_after_cheque_or_cash_deposit card_payment_not_recognised unable_to_verify_identity
compromised_card direct_debit_payment_not_recognised passcode_forgotten declined_cash_withdrawal
pending_card_payment lost_or_stolen_phone declined_transfer Refund_not_showing_up declined_card_payment
pending_transfer card_swallowed transaction_charged_twice reverted_card_payment? beneficiary_not_allowed
transfer_fee_charged failed_transfer virtual_card_not_working wrong_exchange_rate_for_cash_withdrawal
top_up_failed balance_not_updated_after_bank_transfer cash_withdrawal_not_recognised""".split()
B77_QUESTION = """exchange_rate fiat_currency_support card_delivery_estimate automatic_top_up exchange_via_app
age_limit top_up_limits supported_cards_and_currencies card_acceptance why_verify_identity visa_or_mastercard
topping_up_by_card disposable_card_limits atm_support transfer_timing receiving_money transfer_into_account
verify_top_up top_up_by_cash_or_cheque country_support apple_pay_or_google_pay card_about_to_expire
verify_source_of_funds getting_spare_card card_linking
top_up_by_bank_transfer_charge top_up_by_card_charge exchange_charge verify_my_identity""".split()
B77_REQUEST = """request_refund terminate_account cancel_transfer""".split()
# Banking77 intents by the desk tool's intent they ask for (the rest are not the desk's).
B77_INTENTS = {
    "refund": "request_refund Refund_not_showing_up",
    "duplicate": "transaction_charged_twice",
    "cancel": "terminate_account",
    "unrecognised": "card_payment_not_recognised direct_debit_payment_not_recognised extra_charge_on_statement",
    "card_in_app": "card_not_working declined_card_payment virtual_card_not_working",
    "top_up": "pending_top_up top_up_failed top_up_reverted topping_up_by_card verify_top_up",
    "pin": "change_pin pin_blocked passcode_forgotten",
    "identity": "verify_my_identity unable_to_verify_identity why_verify_identity",
    "personal_details": "edit_personal_details",
    "lost_phone": "lost_or_stolen_phone",
    "wallet": "apple_pay_or_google_pay contactless_not_working",
}
B77_INTENT_OF = {category: intent for intent, cats in B77_INTENTS.items() for category in cats.split()}
CLINC_OWN = {"greeting": "greeting", "goodbye": "goodbye", "thank_you": "thanks"}
# CLINC's banking and card intents, by act (the ones whose messages mix acts are left out).
CLINC_ACTS = {
    **dict.fromkeys("damaged_card report_lost_card card_declined account_blocked report_fraud".split(), "problem"),
    **dict.fromkeys("freeze_account pay_bill transfer order_checks credit_limit_change new_card redeem_rewards".split(), "request"),
    **dict.fromkeys(
        """routing bill_due interest_rate min_payment bill_balance balance replacement_card_duration expiration_date
        improve_credit_score apr credit_limit rewards_balance application_status credit_score international_fees""".split(),
        "question",
    ),
}
# CLINC's intents whose messages ask for something to be done (a call made, a timer set, a ride
# ordered), read for the act reader in their short utterances only (`short_requests`): a request
# said in a few words, often without its verb ("timer for 5 minutes", "money transfer request").
CLINC_REQUESTS = """uber order play_music update_playlist shopping_list_update todo_list_update reminder_update
calendar_update make_call text share_location alarm timer restaurant_reservation book_flight book_hotel car_rental
order_checks pay_bill transfer""".split()
# How many words a short request holds at most (`short_requests`).
SHORT_REQUEST_WORDS = 5
# CLINC's banking and card intents are the desk's own kind of business, and its meta intents
# talk to the assistant itself: neither is out of scope for a support desk.
CLINC_SKIP_DOMAINS = {"banking", "credit_cards", "meta"}
# CLINC's small talk (its intents other than greetings, goodbyes and thanks: "what are your
# hobbies", "who do you work for", "how old are you") is chit-chat said to the assistant itself:
# the scope reader learns it as its own label, read apart from questions about other domains,
# so the desk answers it as chit-chat and never searches the articles for it.
CLINC_CHIT_CHAT_DOMAIN = "small_talk"
PER_ACT_CAP = 4000
DESK_WEIGHT = 5  # the desk's own labelled examples count five times a corpus sentence
MIN_FEATURE_COUNT = 3
ALPHA = 0.5


TRAINING = DATA.parent / "TRAINING.json"
# Which of the manifest's roles each output reads (its "trained_on" digests cover these files).
READERS_ROLES = ("desk", "conversations", "acts", "intents", "desk_intents", "desk_lines", "scope", "products")
GATES_ROLES = ("desk", "conversations", "money", "disclaims", "ground", "desk_intents", "desk_lines", "access", "products")


def pinned(role: str) -> list[Path]:
    """The files the manifest names for `role` (desk, conversations, acts, intents, money, disclaims)."""
    return [REPO / p for p in json.loads(TRAINING.read_text(encoding="utf-8"))[role]]


def trained_on(roles: tuple[str, ...]) -> dict:
    """The digests of what an output is built from: the manifest, this script, and each file the
    manifest names for `roles` (tests/test_readers.py compares them with the files' own)."""

    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    files = sorted({p for role in roles for p in pinned(role)} | {Path(__file__).resolve()})
    return {
        "manifest": digest(TRAINING),
        "files": {p.relative_to(REPO).as_posix(): digest(p) for p in files},
    }


def tools_said() -> str:
    """The digest of what the shipped tools say they do, as the gates read it (`tool_descriptions`):
    a tool's description changed is a rebuild, its code changed is not."""
    return hashlib.sha256(json.dumps(tool_descriptions(_desk_agents())).encode()).hexdigest()


def corpus_commit(git_dir: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def _desk_agents() -> dict:
    import tomllib

    agents: dict = {}
    for path in pinned("desk"):
        agents.update(tomllib.loads(path.read_text(encoding="utf-8"))["agents"])
    return agents


def show(git_dir: str, path: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
    ).stdout


def ls(git_dir: str, folder: str) -> list[str]:
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "--name-only", f"HEAD:{folder}"], check=True, capture_output=True, text=True
    ).stdout
    return [f"{folder}/{name}" for name in out.split()]


Row = tuple[str, "str | None", "str | None"]  # text, act (None: not labelled), scope (likewise)


def banking77(git_dir: str) -> list[Row]:
    rows = list(csv.DictReader(io.StringIO(show(git_dir, "banking_data/train.csv"))))
    out: list[Row] = []
    for row in rows:
        cat = row["category"]
        act = "problem" if cat in B77_PROBLEM else "question" if cat in B77_QUESTION else "request" if cat in B77_REQUEST else None
        out.append((row["text"], act, "in_scope"))
    return out


def banking77_intents(git_dir: str) -> dict[str, list[str]]:
    rows = list(csv.DictReader(io.StringIO(show(git_dir, "banking_data/train.csv"))))
    out: dict[str, list[str]] = {}
    for row in rows:
        intent = B77_INTENT_OF.get(row["category"])
        if intent is not None:
            out.setdefault(intent, []).append(row["text"])
    return out


def clinc(git_dir: str) -> list[Row]:
    data = json.loads(show(git_dir, "data/data_full.json"))
    domains = json.loads(show(git_dir, "data/domains.json"))
    skip = {intent for d in CLINC_SKIP_DOMAINS for intent in domains.get(d, [])}
    chit_chat = set(domains.get(CLINC_CHIT_CHAT_DOMAIN, []))
    out: list[Row] = []
    for text, intent in data["train"] + data["oos_train"]:
        scope = None if intent in skip or intent in CLINC_OWN else "chit_chat" if intent in chit_chat else "out_of_scope"
        out.append((text, CLINC_OWN.get(intent) or CLINC_ACTS.get(intent), scope))
    return out


def sgd_user_turns(git_dir: str) -> Iterator[tuple[set[str], str]]:
    """(the acts, the words) of every user turn of SGD's train split."""
    for path in ls(git_dir, "train"):
        if not path.rsplit("/", 1)[-1].startswith("dialogues_"):
            continue
        try:
            text = show(git_dir, path)
        except subprocess.CalledProcessError:
            # A mirror may list its largest files without holding them: build from the rest,
            # and say so (the count of SGD messages in the output's "sources" shows it too).
            print(f"skipped {path}: not in this copy of the repository", file=sys.stderr)
            continue
        for dialogue in json.loads(text):
            for turn in dialogue["turns"]:
                if turn["speaker"] == "USER":
                    yield {a["act"] for f in turn["frames"] for a in f["actions"]}, turn["utterance"]


def sgd(git_dir: str) -> list[Row]:
    out: list[Row] = []
    for acts, utterance in sgd_user_turns(git_dir):
        if acts <= {"THANK_YOU", "GOODBYE"} and "THANK_YOU" in acts:
            act: str | None = "thanks"
        elif acts == {"GOODBYE"}:
            act = "goodbye"
        elif "INFORM_INTENT" in acts:
            act = "request"
        elif "REQUEST" in acts and not acts & {"AFFIRM", "NEGATE", "SELECT"}:
            act = "question"
        else:
            act = None
        # Restaurants, trains and films: not a software desk's business.
        out.append((utterance, act, "out_of_scope" if act in ("request", "question") else None))
    return out


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _customer_turns(openings: bool = False) -> Iterator[tuple[str, dict]]:
    """Each customer turn of the pinned conversation tune halves with what it expects (only each
    conversation's first, its opening, when `openings`): what the desk's own labels are read from."""
    for path in pinned("conversations"):
        for convo in _jsonl(path):
            for turn in (convo.get("turns") or [])[: 1 if openings else None]:
                if isinstance(turn, dict) and isinstance(turn.get("customer"), str):
                    yield turn["customer"], turn.get("expect", {})


def short_requests(clinc_dir: str, sgd_dir: str) -> list[str]:
    """Requests said in a few words, often without a verb ("timer for 5 minutes", "one room 3 star
    hotel", "a table for two please"), as their own source of the act reader's requests: CLINC150's
    short train utterances of the intents that ask for something done (`CLINC_REQUESTS`), and SGD's
    short user turns that state an intent (INFORM_INTENT), not put as a question, and ask no
    question, answer no offer and thank for nothing. Among the corpora's thousands of requests with their verb, the few short
    ones are drawn as rarely as the rest (`balanced`); a source of their own keeps them heard, so
    that "reset link please" reads as the request it is, not as the problem its topic words tell."""
    data = json.loads(show(clinc_dir, "data/data_full.json"))
    out = [t for t, intent in data["train"] if intent in CLINC_REQUESTS and len(t.split()) <= SHORT_REQUEST_WORDS]
    for acts, utterance in sgd_user_turns(sgd_dir):
        if "INFORM_INTENT" in acts and not acts & {"REQUEST", "AFFIRM", "NEGATE", "SELECT", "THANK_YOU", "NEGATE_INTENT"}:
            # (Not one put as a question: "any events?" is a search asked for in SGD, and "any
            # update?" on a support desk asks where a matter stands.)
            if len(utterance.split()) <= SHORT_REQUEST_WORDS and not utterance.rstrip().endswith("?"):
                out.append(utterance)
    return out


def desk_examples() -> list[Row]:
    """The desk's own labelled messages: the pinned acts files (evals/acts-tune.jsonl; the held
    half is never read here), the opening messages of the pinned conversation evals' tune halves
    (`conversation_acts`), and the specialists' routing examples in agents.toml, all in scope;
    the product's own questions (`product_questions`) in scope, and the pinned scope files'
    labelled lines ({"text", "in_scope"}: evals/gates-7-tune.jsonl, evals/scope-labels-tune.jsonl;
    a line may name its label instead, {"text", "scope": "chit_chat"})."""
    rows = [r for path in pinned("acts") for r in _jsonl(path)]
    out: list[Row] = []
    for r in rows:
        act = r["act"]
        scope = "out_of_scope" if act == "out_of_scope" else None if act in ("thanks", "greeting", "goodbye") else "in_scope"
        out.append((r["text"], None if act == "out_of_scope" else act, scope))
    out += [(text, act, "in_scope") for text, act in conversation_acts()]
    agents = _desk_agents()
    for name, agent in sorted(agents.items()):
        if name != "triage":
            out += [(text, None, "in_scope") for text in agent.get("examples", [])]
    out += [(text, None, "in_scope") for text in product_questions()]
    out += [
        (r["text"], None, r.get("scope") or ("in_scope" if r["in_scope"] else "out_of_scope"))
        for path in pinned("scope") for r in _jsonl(path) if "in_scope" in r or "scope" in r
    ]
    return out


def product_questions() -> list[str]:
    """Questions asked of the product itself: the knowledge base's example questions (the pinned
    "products" files, "slug: question" a line; tools/kb/examples.txt, drawn from the kb families'
    tune halves), those no article answers ("none: ...") as much as the rest. Without them the
    scope reader learns out of scope from CLINC150's other domains only, and a question about what
    the product can do in words those domains use ("a video call with your tool") reads as
    chit-chat."""
    return [question for _, question in kb_examples()]


def kb_examples() -> list[tuple[str, str]]:
    """(article slug or "none", question) of each line of the pinned "products" files."""
    out: list[tuple[str, str]] = []
    for path in pinned("products"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#") and ":" in line:
                slug, question = line.split(":", 1)
                out.append((slug.strip(), question.strip()))
    return out


# The tools that change an account or move money (models/offline/dialogue.py's, and the card's).
ACCOUNT_TOOLS = {"refund_charge", "issue_credit", "change_plan", "cancel_subscription", "update_payment_method"}
OFFER_WORDS = ("shall i", "before i do anything")


def conversation_acts() -> list[tuple[str, str]]:
    """The acts the desk's conversation evals (the tune halves of the families,
    evals/*-tune.jsonl; never a held half, nor conversations.jsonl, whose openings some held
    halves repeat) give
    an opening message by what they expect of the reply: one answered with an account or money
    action offered or made is a request ("can I switch to Team?" is asked for, by the desk's
    convention), unless it tells of a charge made twice: that is a problem the desk answers with
    an offer ("you charged me twice"); one whose reply must neither make such an action nor
    offer it is a question about it."""
    from supportdesk.models.offline import cues

    out: list[tuple[str, str]] = []
    for text, expect in _customer_turns(openings=True):
        made = set(expect.get("offers", [])) | {t.get("name") for t in expect.get("tools", [])}
        if made & ACCOUNT_TOOLS:
            out.append((text, "problem" if cues.DUPLICATE.search(text) else "request"))
        elif set(expect.get("not_tools", [])) >= ACCOUNT_TOOLS and any(w in expect.get("reply_not", []) for w in OFFER_WORDS):
            out.append((text, "question"))
    return out


def balanced(by_source: dict[str, list[str]], cap: int) -> list[str]:
    """Up to `cap` sentences with each source's share as even as its size allows (a small
    source gives all it has), spread evenly over each source's list: deterministic. Without
    it the act whose sentences come from one corpus learns that corpus's topic ("card" would
    mean a problem because Banking77 gives most problem reports)."""
    sources = sorted(by_source, key=lambda s: len(by_source[s]))
    chosen: list[str] = []
    for i, name in enumerate(sources):
        share = (cap - len(chosen)) // (len(sources) - i)
        texts = by_source[name]
        step = max(1, len(texts) // max(share, 1))
        chosen += texts[::step][:share]
    return chosen


def naive_bayes(  # type: ignore[no-untyped-def]
    labelled: dict[str, dict[str, list[str]]], desk: list[tuple[str, str]], features=features, desk_weight: int = 0,
    weighed: Sequence[tuple[str, str, int]] = (),
) -> dict:
    """Per-label feature counts: each label takes up to PER_ACT_CAP corpus sentences (see
    `balanced`), plus the desk's examples DESK_WEIGHT times each, and the `weighed` (text, label,
    times) as many times as each says."""
    counts: dict[str, Counter[str]] = {}
    docs: dict[str, int] = {}
    for label, by_source in sorted(labelled.items()):
        chosen = balanced(by_source, PER_ACT_CAP)
        c: Counter[str] = Counter()
        for text in chosen:
            c.update(features(text))
        counts[label] = c
        docs[label] = len(chosen)
    for text, label, times in [(text, label, desk_weight or DESK_WEIGHT) for text, label in desk] + list(weighed):
        for _ in range(times):
            counts.setdefault(label, Counter()).update(features(text))
        docs[label] = docs.get(label, 0) + times
    total_by_feature: Counter[str] = Counter()
    for c in counts.values():
        total_by_feature.update(c)
    keep = {f for f, n in total_by_feature.items() if n >= MIN_FEATURE_COUNT}
    return {
        "alpha": ALPHA,
        "counts": {a: {f: n for f, n in sorted(c.items()) if f in keep} for a, c in sorted(counts.items())},
        "totals": {a: sum(n for f, n in c.items() if f in keep) for a, c in sorted(counts.items())},
        "docs": dict(sorted(docs.items())),
    }


# --- the desk's own intents (readers/acts.py `read_desk_intent`) ------------------------------------

# Banking77's train intents by the desk intent they ask (acts.DESK_INTENTS); the rest of its
# intents are banking the desk does not do ("other"), but for those whose messages sit between
# the two (a fee on a statement, a card payment's rate), which are left out rather than guessed.
B77_DESK = {
    "refund": "request_refund Refund_not_showing_up",
    "cancel": "terminate_account",
    "unrecognised": "card_payment_not_recognised direct_debit_payment_not_recognised",
    "duplicate": "transaction_charged_twice",
    "reset": "passcode_forgotten",
    "update_card": "card_linking",
}
B77_DESK_LEFT_OUT = set("""extra_charge_on_statement card_payment_fee_charged reverted_card_payment? pending_card_payment
declined_card_payment card_payment_wrong_exchange_rate cash_withdrawal_not_recognised change_pin
edit_personal_details compromised_card lost_or_stolen_card""".split())
# CLINC150's train intents by desk intent (a bill's due date is the next payment; the
# transactions made are the charges asked about); its out-of-scope train split and the domains
# that are no money at all are "other".
CLINC_DESK = {"next_payment": "bill_due", "charges": "transactions spending_history"}
CLINC_DESK_OTHER_DOMAINS = ("utility", "home", "auto_and_commute", "kitchen_and_dining", "small_talk", "travel", "work")
# Each corpus gives a desk intent at most this many sentences: the desk's own examples are a few
# dozen a label, and a corpus's thousands would drown them (its "terminate_account" speaks of
# bank accounts, the desk of subscriptions).
DESK_INTENT_CAP = 300
KB_RESET_SLUGS = {"password-reset", "change-password"}
KB_MONEY_SLUGS = {"credits-top-up", "wallet-payments"}
# The articles whose questions speak of paying (a top-up, a wallet, a card the app refuses for the
# subscription): for the money gate (`product_no_money`), every other article's questions are no
# money. The questions no article answers ("none") are left out too: some ask of a discount or a
# student price.
KB_PAYING_SLUGS = KB_MONEY_SLUGS | {"card-in-app", "none"}
# Each tool's own description says which desk intent asks for it (see `tool_descriptions`).
TOOL_DESK_INTENT = {
    "refund_charge": "refund", "update_payment_method": "update_card", "change_plan": "plan_change",
    "cancel_subscription": "cancel", "find_charges": "charges", "list_invoices": "invoice", "list_plans": "pricing",
    "send_password_reset": "reset", "search_kb": "other",
}
# The conversation evals' tune halves: an opening answered with this tool offered or made asks
# for that intent (a duplicate told is refunded: it stays "duplicate" when the cue says so).
# (A reset link sent at once: the opening asked for it, however it is worded: "forgotten password
# 😩 send a link", "new pass pls"; reset15. Offered only, it answers sign-in trouble told, which
# asks for no link (`ASKED_ONLY`): "i can't log in, it says error 403" is no reset asked for.)
OFFER_DESK_INTENT = {"refund_charge": "refund", "change_plan": "plan_change", "cancel_subscription": "cancel",
                     "update_payment_method": "update_card", "send_password_reset": "reset"}
ASKED_ONLY = {"send_password_reset"}


def desk_intent_corpora(b77: str, clinc_dir: str) -> dict[str, dict[str, list[str]]]:
    of = {cat: intent for intent, cats in B77_DESK.items() for cat in cats.split()}
    out: dict[str, dict[str, list[str]]] = {}
    for row in csv.DictReader(io.StringIO(show(b77, "banking_data/train.csv"))):
        cat = row["category"]
        if cat in B77_DESK_LEFT_OUT:
            continue
        out.setdefault(of.get(cat, "other"), {}).setdefault("banking77", []).append(row["text"])
    data = json.loads(show(clinc_dir, "data/data_full.json"))
    domains = json.loads(show(clinc_dir, "data/domains.json"))
    clinc_of = {i: intent for intent, names in CLINC_DESK.items() for i in names.split()}
    other = {i for d in CLINC_DESK_OTHER_DOMAINS for i in domains[d]} - set(CLINC_MONEY) - CLINC_NOT_NONE
    for text, intent in data["train"] + data["oos_train"]:
        label = clinc_of.get(intent) or ("other" if intent in other or intent == "oos" else None)
        if label is not None:
            out.setdefault(label, {}).setdefault("clinc150", []).append(text)
    return out


def labelled_intents() -> list[Path]:
    """The desk's files of lines labelled by desk intent: evals/desk-intents-tune.jsonl ("desk_intents",
    also the ground reader's near matters) and the lines written for routing ("desk_lines":
    evals/route-lines-13-tune.jsonl, read by the desk intents reader and the money gate only; as
    near matters they outweighed a ground told beside them, "can you erase our workspace? we're
    moving to another tool" read as an export's "other" rather than a person's matter)."""
    return pinned("desk_intents") + pinned("desk_lines")


def desk_intent_examples() -> list[tuple[str, str]]:
    """The desk's own messages by intent: the pinned labelled files (evals/desk-intents-tune.jsonl;
    its held half is never read), what the desk's tools say they do (`TOOL_DESK_INTENT`), and the
    opening messages of the pinned conversation evals' tune halves by the action they must be
    offered or done (`OFFER_DESK_INTENT`)."""
    import supportdesk.tools  # noqa: F401  (registers the shipped tools)
    from supportdesk.models.offline import cues
    from supportdesk.tools.shipped import registry

    out = [(r["text"], r["intent"]) for path in labelled_intents() for r in _jsonl(path)]
    # The product's own questions (the knowledge base's examples, `product_questions`'s files):
    # a password reset's are "reset", money's own (top-ups, wallets) are left out, the rest ask
    # nothing of money ("do you have keyboard shortcuts?", "which datacenter keeps my files?").
    out += [(question, "reset" if slug in KB_RESET_SLUGS else "other") for slug, question in kb_examples() if slug not in KB_MONEY_SLUGS]
    for name, intent in sorted(TOOL_DESK_INTENT.items()):
        tool = registry.get(name)
        if tool is not None:
            out += [(t, intent) for t in (name.replace("_", " "), tool.description, *gates.clauses(tool.description))]
    for text, expect in _customer_turns(openings=True):
        offered = [t for t in expect.get("offers", []) if t not in ASKED_ONLY]
        made = [t for t in [*offered, *(x.get("name") for x in expect.get("tools", []))] if t in OFFER_DESK_INTENT]
        if len(set(made)) == 1:
            intent = OFFER_DESK_INTENT[made[0]]
            out.append((text, "duplicate" if intent == "refund" and cues.DUPLICATE.search(text) else intent))
        elif expect.get("agent") == "technical":
            out.append((text, "other"))
    # An address says who writes, not what they ask.
    return [(EMAIL.sub(" ", t), label) for t, label in out]


def desk_intents(b77: str, clinc_dir: str) -> dict:
    corpora = {label: {src: balanced({src: texts}, DESK_INTENT_CAP) for src, texts in by.items()}
               for label, by in desk_intent_corpora(b77, clinc_dir).items()}
    return naive_bayes(corpora, desk_intent_examples())


# --- the gates (readers/gates.py): money named or not, an action disclaimed or not ------------------

# Banking77 intents that speak of money. The 24 intents of /work/shared/data/triage/dev.jsonl (how
# routing is measured) are never read here, nor are the intents about cards, PINs and identity
# (whether "my card hasn't arrived" is money is the desk's call, not the corpus's).
B77_MONEY = """balance_not_updated_after_bank_transfer balance_not_updated_after_cheque_or_cash_deposit cancel_transfer
card_payment_wrong_exchange_rate cash_withdrawal_not_recognised declined_card_payment declined_cash_withdrawal
declined_transfer exchange_rate failed_transfer pending_card_payment pending_cash_withdrawal pending_top_up
pending_transfer receiving_money reverted_card_payment? top_up_limits top_up_reverted transfer_not_received_by_recipient
transfer_timing wrong_amount_of_cash_received wrong_exchange_rate_for_cash_withdrawal automatic_top_up topping_up_by_card
top_up_by_cash_or_cheque verify_source_of_funds transfer_into_account beneficiary_not_allowed fiat_currency_support
exchange_via_app""".split()
# CLINC150 intents that speak of money, and the domains whose talk is none (the rest are left out).
CLINC_MONEY = """bill_due pay_bill interest_rate min_payment bill_balance transfer balance spending_history transactions
credit_limit_change apr redeem_rewards credit_limit rewards_balance international_fees payday taxes income
rollover_401k w2 direct_deposit exchange_rate order order_status""".split()
# (Not "meta": its "change the volume", "change your name" would teach that a change is never
# money, and a plan change is.)
CLINC_NO_MONEY_DOMAINS = ("utility", "home", "auto_and_commute", "kitchen_and_dining", "small_talk", "travel", "work")
CLINC_NOT_NONE = {"gas", "book_flight", "book_hotel", "car_rental", "restaurant_reservation", "shopping_list",
                  "shopping_list_update", "cancel", "insurance", "insurance_change", "cancel_reservation"}


# The desk's own messages weigh more in the gates than in the act reader: what money and a
# disclaimer sound like on a software desk ("change plan", "dont need it anymore") is the desk's.
GATE_DESK_WEIGHT = 10


def money_corpora(b77: str, clinc_dir: str) -> dict[str, dict[str, list[str]]]:
    rows = list(csv.DictReader(io.StringIO(show(b77, "banking_data/train.csv"))))
    out: dict[str, dict[str, list[str]]] = {gates.MONEY: {}, gates.NO_MONEY: {}}
    out[gates.MONEY]["banking77"] = [r["text"] for r in rows if r["category"] in B77_MONEY]
    data = json.loads(show(clinc_dir, "data/data_full.json"))
    domains = json.loads(show(clinc_dir, "data/domains.json"))
    none = {i for d in CLINC_NO_MONEY_DOMAINS for i in domains[d]} - set(CLINC_MONEY) - CLINC_NOT_NONE
    out[gates.MONEY]["clinc150"] = [t for t, i in data["train"] if i in CLINC_MONEY]
    out[gates.NO_MONEY]["clinc150"] = [t for t, i in data["train"] if i in none]
    return out


def desk_money() -> list[tuple[str, str]]:
    """The desk's own messages, money or not: the specialists' examples (billing's are money,
    technical's none), what their own tools say they do (`tool_descriptions`), the opening messages of the conversation evals' tune halves by the agent
    they must reach, and the pinned money files (evals/money-gate-tune.jsonl; its held half is
    never read)."""
    out: list[tuple[str, str]] = []
    agents = _desk_agents()
    for name, label in (("billing", gates.MONEY), ("technical", gates.NO_MONEY)):
        out += [(t, label) for t in agents[name].get("examples", [])]
    out += tool_descriptions(agents)
    for text, expect in _customer_turns(openings=True):
        agent = expect.get("agent")
        if agent in ("billing", "technical"):
            out.append((text, gates.MONEY if agent == "billing" else gates.NO_MONEY))
    # The desk's labelled intents (evals/desk-intents-tune.jsonl): each of the desk's money intents
    # ("what tier is our account on", "put me on the middle tier") is money, the unpaid ones
    # ("reset", "person", "other") are not. Without them a plan asked about in words the product's questions
    # also use ("which plans can i pick from?") read as no money (issue 38, route-12).
    # A person asked for ("real person pls") says nothing of money either way: taught as no money at
    # the desk's weight its words thinned every other no-money word, and product questions read as
    # money ("do you have gantt charts? and can tasks have due dates?" 0.41 -> 0.52, route-15).
    out += [(r["text"], gates.NO_MONEY if r["intent"] in UNPAID_DESK_INTENTS else gates.MONEY)
            for path in labelled_intents() for r in _jsonl(path) if r["intent"] != "person"]
    out += [(r["text"], gates.MONEY if r["money"] else gates.NO_MONEY) for path in pinned("money") for r in _jsonl(path) if "money" in r]
    # An address says who writes, not whether money is spoken of.
    return [(EMAIL.sub(" ", t), label) for t, label in out]


# How many times each of the product's own questions counts as no money in the gate: at the
# desk's ten, plan questions near the line lost their money to the questions' "which", "can i"
# ("which plans can i pick from?" 0.53 before, under 0.5); at one, "we are switching providers, how do
# I download everything we have stored with you" stayed money (0.55). Chosen on the tune halves
# (route-12, intents-8, understand-9) with the desk's labelled intents beside them.
PRODUCT_GATE_WEIGHT = 5


def product_no_money() -> list[tuple[str, str, int]]:
    """The product's own questions (`kb_examples`), but those of the articles
    about paying (`KB_PAYING_SLUGS`), as no money, PRODUCT_GATE_WEIGHT times each. Without them
    the gate's "none" knew only CLINC150's home, travel and small talk, so an account matter
    told in a complaint's or a plan's words ("we're moving to another tool next month, how do i
    take all our stuff with us?", "how can my accountant see the receipts folder") read as money,
    as Banking77's complaints do, and went to billing (issue 38, route-12)."""
    return [(EMAIL.sub(" ", question), gates.NO_MONEY, PRODUCT_GATE_WEIGHT)
            for slug, question in kb_examples() if slug not in KB_PAYING_SLUGS]


def tool_descriptions(agents: dict) -> list[tuple[str, str]]:
    """The desk's own actions in its own words: each tool only billing has (a refund, a plan
    change, a cancellation, a card replaced, charges and prices read) is money, each tool only
    technical has is none; its name in words, its description whole and clause by clause. The corpora know money as banking
    (transfers, top-ups): "change plan" and "cancel my subscription" are the desk's, and its
    tools say them. What they say is digested in the data (`tools_said`), so that a description
    changed is a rebuild."""
    import supportdesk.tools  # noqa: F401  (registers the shipped tools)
    from supportdesk.tools.shipped import registry

    billing, technical = set(agents["billing"].get("tools", [])), set(agents["technical"].get("tools", []))
    out: list[tuple[str, str]] = []
    for names, label in ((billing - technical, gates.MONEY), (technical - billing, gates.NO_MONEY)):
        for name in sorted(names):
            tool = registry.get(name)
            if tool is not None:
                # its name too, in words ("change plan", "cancel subscription"): the action itself
                said = (name.replace("_", " "), tool.description, *gates.clauses(tool.description))
                out += [(text, label) for text in said]
    return out


def disclaim_corpora(sgd_dir: str) -> dict[str, dict[str, list[str]]]:
    """SGD's user turns that decline an offered action ("no, I don't want to buy them now") and
    those that ask for one ("I'd like to book a table")."""
    out: dict[str, dict[str, list[str]]] = {gates.DISCLAIMS: {"sgd": []}, gates.ASKS: {"sgd": []}}
    for acts, utterance in sgd_user_turns(sgd_dir):
        if "NEGATE_INTENT" in acts:
            out[gates.DISCLAIMS]["sgd"].append(utterance)
        elif "INFORM_INTENT" in acts or "AFFIRM_INTENT" in acts:
            out[gates.ASKS]["sgd"].append(utterance)
    return out


def desk_disclaims() -> list[tuple[str, str]]:
    """The pinned disclaims files (evals/disclaims-tune.jsonl), and the desk's messages that disclaim nothing."""
    out = [(r["text"], gates.DISCLAIMS if r["disclaims"] else gates.ASKS) for path in pinned("disclaims") for r in _jsonl(path)]
    # Every turn of the tune halves but those whose reply must neither make nor offer an action
    # (a question about one, which may disclaim it): "hmm fine, just cancel it then", "ok do
    # it", "how much is team", "the app won't open" say nothing against acting.
    for text, expect in _customer_turns():
        about = set(expect.get("not_tools", [])) >= ACCOUNT_TOOLS and any(
            w in expect.get("reply_not", []) for w in OFFER_WORDS
        )
        if not about:
            out.append((text, gates.ASKS))
    # A request's clauses ask for nothing to be held back either: "dont need it anymore" beside
    # "cancel my plan" is a reason, and gates.disclaims_action reads clauses one by one.
    out += [(c, gates.ASKS) for t, label in list(out) if label == gates.ASKS for c in gates.clauses(t)[1:]]
    return [(EMAIL.sub(" ", t), label) for t, label in out]


# --- ground no tool or article covers (readers/gates.py `ground`) ----------------------------------
# CLINC150 train intents that ask for the same ground as the desk's unknown grounds (cues.py
# UNKNOWN_GROUND): an account a provider holds, blocked, frozen or on hold, is a suspension staff
# review; a translation or another language for the replies is a language the desk does not write.
# Its "freeze_account" (asking for a block) is left out: it shares every word with a block told.
CLINC_GROUND = {gates.SUSPENDED: "account_blocked", gates.LANGUAGE: "translate change_language"}
CLINC_GROUND_LEFT_OUT = {"freeze_account"}


def topic_corpora(b77: str, clinc_dir: str, clinc_of: dict[str, str], b77_of: dict[str, str], left_out: set[str]) -> dict[str, dict[str, list[str]]]:
    """The intents `clinc_of` and `b77_of` name, under the label they map them to, and every other
    intent of CLINC150's and Banking77's train splits as a label of its own ("clinc:pin_blocked"
    ...); `left_out` intents of neither. A naive Bayes with one label for "everything else" spreads
    that label's counts over every topic, so any message near a reading's words ("my PIN is
    blocked", "why is there a fee on my account") reads as it; each topic its own label is read
    against it on equal terms, and the reading is the reader's only when its label is the
    likeliest of them all."""
    data = json.loads(show(clinc_dir, "data/data_full.json"))
    out: dict[str, dict[str, list[str]]] = {}
    for text, intent in data["train"] + data["oos_train"]:
        if intent in left_out:
            continue
        if intent == "translate":
            # "how do i say 'hotel' in finnish": the phrase to translate is any words at all
            # ("thank you"); what asks for another language is the rest.
            text = _QUOTED.sub(" ", text)
        out.setdefault(clinc_of.get(intent, f"clinc:{intent}"), {}).setdefault("clinc150", []).append(text)
    for row in csv.DictReader(io.StringIO(show(b77, "banking_data/train.csv"))):
        if row["category"] in left_out:
            continue
        out.setdefault(b77_of.get(row["category"], f"b77:{row['category']}"), {}).setdefault("banking77", []).append(row["text"])
    return out


def ground_corpora(b77: str, clinc_dir: str) -> dict[str, dict[str, list[str]]]:
    """Each ground's CLINC150 train intents (`CLINC_GROUND`) against every other topic of the
    corpora (`topic_corpora`)."""
    of = {i: ground for ground, names in CLINC_GROUND.items() for i in names.split()}
    return topic_corpora(b77, clinc_dir, of, {}, CLINC_GROUND_LEFT_OUT)


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def desk_ground(leave_out: Collection[str] = ()) -> list[tuple[str, str]]:
    """The pinned ground files' labelled lines (evals/unknown-ground-tune.jsonl: {"text", "ground"};
    its held half is never read), the desk's money intents (evals/desk-intents-tune.jsonl: none of
    them is a ground no tool covers), and each turn of the conversation tune halves that must not
    reach a person, or must reach a level-1 agent or make a call without one: none of them a ground, each
    labelled by the agent or the tool it must reach ("desk:billing", "desk:search_kb")."""
    # The lines written near a ground that are the desk's ("the 2fa code is not accepted" beside a
    # promo code not accepted) are a label of their own: among the catch-all of the desk's other
    # messages their few shared words would be outweighed by the ground's. A line that names the
    # desk matter it is ("topic": "invite", "branding", "export", "sharing", "files") is that
    # matter's label ("near:invite"): one label of every near matter learns the words all of them
    # share ("our company account", "who can") and outweighs a true ground said in them ("you
    # locked our company account ..., who can lift it"), where each matter's own label holds only
    # its own words (a partner invited, a logo put on) against the ground it is near.
    # (`leave_out`: labelled lines a measure reads with a reader that never saw them,
    # scripts/measure_ground.py.)
    out = [(r["text"], r["ground"] if r["ground"] != gates.NO_GROUND else f"near:{r['topic']}" if r.get("topic") else "desk:near")
           for r in ground_lines() if r["text"] not in leave_out]
    out += [(r["text"], f"desk:{r['intent']}") for path in pinned("desk_intents") for r in _jsonl(path)]
    for text, expect in _customer_turns():
        made = [t.get("name") for t in expect.get("tools", []) if isinstance(t, dict)]
        taken = expect.get("agent") not in (None, "senior", "triage") or made
        if "request_human" in expect.get("not_tools", []) or (taken and "request_human" not in made):
            out.append((text, f"desk:{expect.get('agent') or (made[0] if made else 'other')}"))
    # The desk's own name is taken out before the ground is read (cues.without_desk_name: "close my
    # acme account for good" is "close my account for good"), so the desk's lines lose it too.
    from supportdesk.models.offline.cues import without_desk_name

    return [(without_desk_name(EMAIL.sub(" ", t)), label) for t, label in out]


def ground_lines() -> list[dict]:
    """The pinned ground files' labelled lines ({"text", "ground"})."""
    return [r for path in pinned("ground") for r in _jsonl(path)]


def ground_part(corpora: dict[str, dict[str, list[str]]], leave_out: Collection[str] = ()) -> dict:
    """The ground reader's parameters (gates.json.gz's "ground") from `ground_corpora`'s topics
    and the desk's lines (read once by a measure that builds one reader a fold)."""
    return naive_bayes(corpora, desk_ground(leave_out), gates.FEATURES["ground"], GATE_DESK_WEIGHT)


# --- someone else has the account or its keys (readers/gates.py `access`) ------------------------------
# Banking77 and CLINC150 train intents that tell of someone else having what opens an account: a
# card's details compromised, a phone lost or stolen with the account on it, an account to be
# frozen or blocked against use. Every other intent is a topic of its own (`topic_corpora`).
# CLINC150's report_fraud is left out: its messages are mostly a charge disowned ("this charge
# from sam's club is fraudulent"), the billing agent's unrecognised charge as much as a break-in.
# Banking77's lost_or_stolen_phone is left out too: on a software desk a phone lost is as often the
# codes it held ("I lost my phone with the authenticator app", a sign-in problem) as a thief in.
B77_ACCESS = "compromised_card"
CLINC_ACCESS = "freeze_account"
ACCESS_LEFT_OUT = {"report_fraud", "lost_or_stolen_phone"}
# The knowledge base's article on a lost phone, left out of the desk's topics for the same reason.
KB_ACCESS_LEFT_OUT = {"lost-phone"}


def access_corpora(b77: str, clinc_dir: str) -> dict[str, dict[str, list[str]]]:
    return topic_corpora(
        b77, clinc_dir, dict.fromkeys(CLINC_ACCESS.split(), gates.ACCESS), dict.fromkeys(B77_ACCESS.split(), gates.ACCESS), ACCESS_LEFT_OUT
    )


def desk_access() -> list[tuple[str, str]]:
    """The desk's own lines, by the agent they must reach: each new matter (a conversation's
    opening, or a turn that must reach another agent than the turn before) of the pinned "access"
    files (the tune halves of the families run on a desk with an agent for account security,
    evals/config-agent.toml) is someone else's access when it must reach the agent the desk
    file made for it, and that other agent's topic ("desk:technical") otherwise, as is each of
    their labelled lines ({"text", "agent"}: evals/access-lines-13-tune.jsonl, a device given
    away or sold still signed in, a session or a number not the customer's, beside their near
    matters: a number of their own changed, another company's account); the billing
    agent's examples and the shipped desk's tune openings that must reach billing are money
    ("someone used my card to pay for ..." is a charge disowned, not a break-in). The shipped
    desk's technical examples are not read: with no agent for security there, its own hacked
    accounts are among them. Which agent is the security one is the eval files' label, read here
    once; the router finds its desk's own by reading each agent's examples (router.access_owner)."""
    out: list[tuple[str, str]] = []
    def label(agent: str) -> str:
        return gates.ACCESS if agent == ACCESS_AGENT else f"desk:{agent}"

    for path in pinned("access"):
        for convo in _jsonl(path):
            if isinstance(convo.get("text"), str) and isinstance(convo.get("agent"), str):
                out.append((convo["text"], label(convo["agent"])))  # a labelled line
                continue
            before = None
            for turn in convo.get("turns") or []:
                agent = turn.get("expect", {}).get("agent") if isinstance(turn, dict) else None
                if agent and agent != before and isinstance(turn.get("customer"), str):
                    out.append((turn["customer"], label(agent)))
                before = agent or before
    agents = _desk_agents()
    openings = list(_customer_turns(openings=True))
    out += [(t, "desk:billing") for t in agents["billing"].get("examples", [])]
    out += [(t, "desk:billing") for t, expect in openings if expect.get("agent") == "billing"]
    technical = [*agents["technical"].get("examples", []), *(t for t, expect in openings if expect.get("agent") == "technical")]
    out += [(t, "desk:technical") for t in technical if not _speaks_of_another(t)]
    # what the product's articles answer, each article a topic ("kb:sync-issues")
    out += [(q, f"kb:{slug}") for slug, q in kb_examples() if slug not in KB_ACCESS_LEFT_OUT]
    # An address, an account id and the desk's own name say who writes and to whom, not what about:
    # the router reads the message without them (router.without_names), and so the reader learns.
    names = name_pattern(_desk_name())
    return [(EMAIL.sub(" ", without_names(t, names)), label) for t, label in out]


def _desk_name() -> str:
    import tomllib

    return " ".join(tomllib.loads(path.read_text(encoding="utf-8")).get("desk", {}).get("name", "") for path in pinned("desk"))


# The concepts (the router's lexicon, supportdesk/lexicon.py) of someone else, a break-in, a theft.
_ANOTHERS = ("someone_c", "hacked_c", "lost_c")


def _speaks_of_another(text: str) -> bool:
    """The shipped desk, which has no agent for account security, gives its technical agent the
    matters of someone else in the account ("I think my account was hacked", "my phone was stolen
    and it has my account on it", "my email was changed and i never did that"): such a line, as
    the router reads it (someone, a hack or a theft named, or something disowned), is no example of
    what is *not* someone else's access, and is left out of the technical topic."""
    from supportdesk.models.offline.classifier import message_features

    return any(c in message_features(text) for c in _ANOTHERS)


# The agent the pinned "access" files' desk (evals/config-agent.toml) made for account security.
ACCESS_AGENT = "security"


def build_gates(b77: str, clinc_dir: str, sgd_dir: str) -> None:
    data: dict[str, Any] = {
        "format": gates.FORMAT,
        "trained_on": {**trained_on(GATES_ROLES), "tools_said": tools_said(), "corpora": {"banking77": corpus_commit(b77), "clinc150": corpus_commit(clinc_dir), "sgd": corpus_commit(sgd_dir)}},
        "money": naive_bayes(money_corpora(b77, clinc_dir), desk_money(), gates.FEATURES["money"], GATE_DESK_WEIGHT, product_no_money()),
        "disclaims": naive_bayes(disclaim_corpora(sgd_dir), desk_disclaims(), gates.FEATURES["disclaims"], GATE_DESK_WEIGHT),
        "ground": ground_part(ground_corpora(b77, clinc_dir)),
        "access": naive_bayes(access_corpora(b77, clinc_dir), desk_access(), gates.FEATURES["access"], GATE_DESK_WEIGHT),
    }
    blob = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    with open(gates.DATA, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(blob)
    print(f"{gates.DATA}: {gates.DATA.stat().st_size:,} bytes; money {data['money']['docs']}; disclaims {data['disclaims']['docs']}; "
          f"ground {len(data['ground']['docs'])} labels, of them {({k: v for k, v in data['ground']['docs'].items() if ':' not in k})}; "
          f"access {len(data['access']['docs'])} labels, of them {({k: v for k, v in data['access']['docs'].items() if ':' not in k})}")


def main(argv: list[str]) -> int:
    only_gates = argv[:1] == ["--gates"]
    argv = argv[1:] if only_gates else argv
    if len(argv) != 3:
        print("usage: python scripts/build_readers.py [--gates] BANKING77_GIT CLINC_GIT SGD_GIT", file=sys.stderr)
        return 2
    b77, clinc_dir, sgd_dir = argv
    build_gates(b77, clinc_dir, sgd_dir)
    if only_gates:
        return 0
    corpora = {"banking77": banking77(b77), "clinc150": clinc(clinc_dir), "sgd": sgd(sgd_dir)}
    df: Counter[str] = Counter()
    n_messages = 0
    acts: dict[str, dict[str, list[str]]] = {}
    scopes: dict[str, dict[str, list[str]]] = {}
    for name, rows in corpora.items():
        for text, act, scope in rows:
            df.update(set(tokens(text)))
            n_messages += 1
            if act is not None:
                acts.setdefault(act, {}).setdefault(name, []).append(text)
            if scope is not None:
                scopes.setdefault(scope, {}).setdefault(name, []).append(text)
    acts["request"]["short"] = short_requests(clinc_dir, sgd_dir)
    desk = desk_examples()
    data = {
        "format": FORMAT,
        "trained_on": {**trained_on(READERS_ROLES), "corpora": {"banking77": corpus_commit(b77), "clinc150": corpus_commit(clinc_dir), "sgd": corpus_commit(sgd_dir)}},
        "sources": {name: len(rows) for name, rows in corpora.items()},
        # An email address says who writes, not what they do: the desk's examples carry one far
        # more often than the corpora, and would teach the act reader that an address is an act.
        "acts": naive_bayes(acts, [(EMAIL.sub(" ", t), a) for t, a, _ in desk if a is not None]),
        "scope": naive_bayes(scopes, [(t, s) for t, _, s in desk if s is not None]),
        "intents": naive_bayes(
            {intent: {"banking77": texts} for intent, texts in banking77_intents(b77).items()},
            [(r["text"], r["intent"]) for path in pinned("intents") for r in _jsonl(path)],
        ),
        "desk_intents": desk_intents(b77, clinc_dir),
        "background": {"n": n_messages, "df": {w: n for w, n in sorted(df.items()) if n >= 2}},
    }
    DATA.parent.mkdir(parents=True, exist_ok=True)
    blob = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    with open(DATA, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(blob)
    print(f"{DATA}: {DATA.stat().st_size:,} bytes; acts {data['acts']['docs']}; scope {data['scope']['docs']}; "
          f"intents {data['intents']['docs']}; desk intents {data['desk_intents']['docs']}; "
          f"background over {n_messages:,} messages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
