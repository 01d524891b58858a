"""The learned gates that replaced word lists in models/offline/cues.py (readers/gates.py, issue 38),
measured on labelled messages: evals/money-gate-*.jsonl and evals/disclaims-*.jsonl (the tune
halves are trained on, the held halves never)."""

from __future__ import annotations

import json
import math

import pytest

from supportdesk.models.offline import cues
from supportdesk.readers import acts, gates
from tests.conftest import REPO


def _rows(name: str, half: str) -> list[dict]:
    return [json.loads(line) for line in (REPO / "evals" / f"{name}-{half}.jsonl").read_text().splitlines() if line.strip()]


def test_the_money_gate_on_its_held_half_errs_neither_way():
    # Measured: held 30/30 (0 false billing, 0 false technical); the word list it replaced, 25/30
    # (2 false billing: "do you have plans for a dark mode", "how to order the folders"; 3 false
    # technical: "acme cloud hit my account two times", "my online banking shows acme cloud twice").
    rows = _rows("money-gate", "held")
    false_billing = [r["text"] for r in rows if not r["money"] and cues.names_money(r["text"])]
    false_technical = [r["text"] for r in rows if r["money"] and not cues.names_money(r["text"])]
    assert len(false_billing) <= 1, false_billing
    assert len(false_technical) <= 1, false_technical
    # the reader itself, without the rules beside it (amounts, plan names ...)
    reader = sum(gates.reads_money(r["text"]) == r["money"] for r in rows)
    assert reader / len(rows) >= 0.9


def test_money_without_a_money_word_and_money_words_that_are_none():
    assert cues.names_money("acme cloud hit my account two times")
    assert cues.names_money("whats this second acme line on my bank")
    assert not cues.names_money("do you have plans for a dark mode")
    assert not cues.names_money("how to order the folders alphabetically")


def test_the_rules_stay_for_what_rules_read_well():
    assert cues.names_money("what is CH-9006")  # a charge's id
    assert cues.names_money("the 29.99 thing")  # an amount
    assert cues.names_money("move me to starter")  # a plan's name


def test_the_disclaimer_reader_on_its_held_half():
    # Measured: held 13/16, every request read as one (8/8) and 3 of 8 disclaimers missed ("keep
    # everything as is, just a question about prices", "nothing should be changed, tell me when i
    # renew", "i am not wanting to cancel, only to know ..."); the cue it replaced: 13/16 too.
    # A missed disclaimer costs an offer the customer can decline; a request read as one, an
    # action asked for and not offered: the reader errs the first way.
    rows = _rows("disclaims", "held")
    right = sum(gates.disclaims_action(r["text"]) == r["disclaims"] for r in rows)
    assert right / len(rows) >= 0.7
    assert sum(not gates.disclaims_action(r["text"]) for r in rows if not r["disclaims"]) >= 7
    assert sum(gates.disclaims_action(r["text"]) for r in rows if r["disclaims"]) >= 4


def test_a_request_said_casually_is_no_disclaimer():
    assert not cues.disclaims_action("hmm fine, just cancel it then")
    assert not cues.disclaims_action("maybe i should move to team")
    assert cues.disclaims_action("dont switch nothing pls, only curious")
    assert not cues.disclaims_action("no wait, make it the cheaper one")  # a correction, not "no action"


def test_the_gates_are_read_on_first_use_not_at_import():
    import subprocess
    import sys

    code = (
        "import sys, supportdesk.models.offline.cues, supportdesk.readers.gates as g;"
        "assert g._data.cache_info().currsize == 0; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_the_gates_learnt_the_desks_billing_actions_and_its_products_questions():
    """The money gate reads the desk's own billing actions (its billing tools' names and
    descriptions: a plan change, a cancellation, a refund) and the scope reader the product's
    own questions (the knowledge base's examples), where a rule used to patch each
    (cues._PLAN_CHANGE, scope._ABOUT_THE_PRODUCT). Measured on evals/gates-7 (written before the
    change; its tune half is trained on, the held half never): money held 12/14 with neither rule
    before and after (13/14 with the rule: "plan change request" reads 0.06), product/chit-chat
    held 10/10 by the scope reader; the tune half's "I want to change plan" read 0.46 before."""
    assert gates.reads_money("I want to change plan")
    assert gates.reads_money("i would like to stop my subscription from next month")
    assert not gates.reads_money("i want to change the theme to dark")
    from supportdesk.readers import acts

    # Not in any training file: a product question in the words of another domain (a video call).
    assert acts.read_scope("how many people fit on one video call with your tool?").act == "in_scope"
    rows = _rows("gates-7", "held")
    money = [r for r in rows if "money" in r]
    assert sum(cues.names_money(r["text"]) == r["money"] for r in money) >= 12
    in_scope = [r for r in rows if "in_scope" in r]
    assert all((acts.read_scope(r["text"]).act == "in_scope") == r["in_scope"] for r in in_scope)


@pytest.mark.parametrize("text, told", [
    ("my cousin found out my password and keeps logging in as me", True),
    ("my login details ended up on a leak site", True),
    ("left my laptop unlocked at a friend's place and he went through my files", True),
    ("someone used my card to pay for a plan i never bought", False),
    ("I lost my phone with the authenticator app", False),
    ("i forgot my password and the reset email never comes", False),
    ("how do i turn on two-factor? nothing is wrong", False),
])
def test_someone_else_having_the_account_is_read_by_the_access_reader(text, told):
    """Issue 38.4 (security-12): trained on Banking77's compromised cards, CLINC150's frozen
    accounts and the desk's own lines, against every other topic of the corpora, the desk's
    articles and its billing and technical lines: a disowned charge is money, a lost authenticator
    phone a sign-in problem."""
    assert gates.tells_access(text) is told


@pytest.mark.parametrize("text, told", [
    # security-13: a number or an address not the customer's, told with no "someone" in it
    ("the sign-in codes are sent to a phone number i dont know", True),
    # the app's own trouble on the customer's own device, and another company's account
    ("the app on my tablet keeps signing me out", False),
    ("my account at another company was closed", False),
])
def test_a_number_not_the_customers_is_access_and_their_own_device_or_another_company_is_not(text, told):
    """The desk's labelled lines (evals/access-lines-13-tune.jsonl) teach the kind in varied
    wording; none of these is in them (before: 0.01, 1.00, 0.47)."""
    assert gates.tells_access(text) is told


def test_the_access_reader_on_its_held_lines():
    """evals/access-lines-13-held.jsonl, never trained on: 17/19 before its tune half was learnt
    (access 10/10, near matters read as access 2/9), 18/19 after (1/9)."""
    rows = _rows("access-lines-13", "held")
    told = [r for r in rows if r["agent"] == "security"]
    near = [r for r in rows if r["agent"] != "security"]
    assert all(gates.tells_access(r["text"]) for r in told)
    assert sum(gates.tells_access(r["text"]) for r in near) <= 1


def test_the_desks_lines_of_route_13_on_their_held_half():
    """route-13 (issue 38.4): a cancellation without "cancel", export asked while leaving, a folder
    for the accountant, slowness with a spinner, a device showing an old copy, a new card or bank
    told as a replacement, the plan with the most. evals/route-lines-13-tune.jsonl is trained on
    (the desk intents reader and the money gate, as "desk_lines"; scope), the held half never. Measured on the held half: before those lines, money 20/21, desk intent 16/21, in scope
    19/21; after, 21/21, 20/21, 21/21."""
    from supportdesk.readers import acts

    rows = _rows("route-lines-13", "held")
    paid = [r["intent"] not in acts.UNPAID_DESK_INTENTS for r in rows]
    assert sum(cues.names_money(r["text"]) == p for r, p in zip(rows, paid)) >= len(rows) - 1
    assert sum(acts.reads_money_intent(r["text"]) == p for r, p in zip(rows, paid)) >= len(rows) - 1
    assert sum(acts.read_desk_intent(r["text"]).act == r["intent"] for r in rows) >= len(rows) - 2
    assert sum(acts.read_scope(r["text"]).act == "in_scope" for r in rows) >= len(rows) - 1


def test_a_money_intent_split_between_two_labels_is_still_money(monkeypatch):
    """`acts.reads_money_intent` sums the money intents: a plan asked for between pricing and
    plan_change ("which plan comes with the most stuff? i want that one" read pricing 0.55 while
    route-13 was tuned) is a money matter however it splits; none or a reset is not."""
    import math

    from supportdesk.readers import acts

    def reading(shares: dict[str, float]):
        scores = {label: math.log(shares.get(label, 1e-9)) for label in acts.DESK_INTENTS}
        best = max(scores, key=scores.__getitem__)
        return acts.Reading(best, acts.probabilities(scores)[best], scores)

    split = reading({"pricing": 0.45, "plan_change": 0.44, "other": 0.11})
    monkeypatch.setattr(acts, "read_desk_intent", lambda text: split)
    assert split.confidence < acts.MONEY_INTENT_CONFIDENCE and acts.reads_money_intent("which plan has the most?")
    unpaid = reading({"other": 0.4, "reset": 0.35, "pricing": 0.25})
    monkeypatch.setattr(acts, "read_desk_intent", lambda text: unpaid)
    assert not acts.reads_money_intent("how can my accountant see the receipts folder as well")


# The readers' fast paths (each feature's log row kept, the ground reader's common words added as
# whole rows) must give the scores of naive Bayes written out label by label, to the last bit.
READ_ALIKE = [
    "", "yes", "hi there, my account says suspended and the card was charged twice",
    "can you refund the 29.99 from march 3rd please", "where do i change my password on the ipad app",
    "the the the my my account account",
]


def _naive_scores(reader: acts.ActReader, text: str) -> dict[str, float]:
    feats = [f for f in reader.featurize(text) if f in reader._vocab]
    return {label: reader._log_prior[label] + sum(math.log(reader.likelihood(label, f)) for f in feats) for label in reader.labels}


@pytest.mark.parametrize("text", READ_ALIKE)
def test_a_read_scores_what_naive_bayes_written_out_scores(text):
    for reader in (acts.act_reader(), acts.desk_intent_reader(), gates.money_reader(), gates.ground_reader()):
        assert reader is not None
        got = reader.read(text)
        want = _naive_scores(reader, text)
        assert got.scores.keys() == want.keys()
        for label, score in want.items():
            assert got.scores[label] == pytest.approx(score, rel=1e-12, abs=1e-9), (type(reader).__name__, label)
        assert got.act == max(want, key=lambda label: want[label])
