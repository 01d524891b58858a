"""Ground no tool covers, read by a learned reader (issue 38, scope-10 and 38.1, ground-12): an
account the provider blocked, froze or put on hold, and another language than the desk's, from
public data (CLINC150's account_blocked, translate and change_language); privacy, ownership,
legal matters, discounts, invoice details and an account deleted from the desk's own labelled
lines (evals/unknown-ground-tune.jsonl, ground-lines-12-tune.jsonl); each against every other
CLINC150 and Banking77 intent and the desk's own messages: readers/gates.py `ground`, not rules of
words. Rules keep names and amounts: a language named, another service's account, "30% off"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_every_ground_the_reader_learns_is_named_for_the_customer():
    from supportdesk.models.offline import cues
    from supportdesk.readers import gates

    assert set(cues.LEARNED_GROUND) == set(gates.GROUNDS)
    # no phrase rules of grounds are left beside the reader
    assert not hasattr(cues, "UNKNOWN_GROUND")
    # the callers' check of a desk whose tools do cover the ground still knows their words
    assert set(cues.LEARNED_GROUND.values()) <= set(cues.UNKNOWN_GROUND_WORDS)


@pytest.mark.parametrize(
    ("text", "ground"),
    [
        # a suspension told in words the old rules had no slot for (frozen, locked by the provider)
        ("our workspace has been frozen pending a review by your team", "question about a suspended account"),
        ("you locked our company account over the unpaid invoice, who can lift it", "question about a suspended account"),
        # another language, named or not after "in"
        ("could your replies come in korean from now on", "request for another language"),
        # the desk's own matters near those words stay the desk's
        ("my PIN got blocked after three tries", None),
        ("i switched off two-step login and now i am stuck at the sign in page", None),
        ("the app froze and my account page will not load", None),
        ("Can acme translate my documents to spanish?", None),
    ],
)
def test_ground_read_by_the_learned_reader(text, ground):
    from supportdesk.models.offline import cues

    assert cues.unknown_ground(text) == ground


def test_the_ground_reader_on_its_held_half():
    """evals/unknown-ground-held.jsonl is never trained on (data/TRAINING.json pins the tune half
    only): 15 of its 20 lines read right when the reader was built (the misses: 'deactivated
    account restored', 'froze my account' under the threshold, 'customer service in swedish',
    'receipts translated to german', and 'the language of the date format' read as a language)."""
    from supportdesk.readers import gates

    rows = [json.loads(line) for line in (REPO / "evals" / "unknown-ground-held.jsonl").read_text().splitlines() if line.strip()]
    right = sum((gates.ground(r["text"]) or gates.NO_GROUND) == r["ground"] for r in rows)
    assert right >= 15, f"{right}/{len(rows)}"
    # none of the held half's desk matters is sent to a person but the one known
    wrong_grounds = [r["text"] for r in rows if r["ground"] == gates.NO_GROUND and gates.ground(r["text"]) is not None]
    assert len(wrong_grounds) <= 1, wrong_grounds


def test_the_held_half_is_not_trained_on():
    training = json.loads((REPO / "supportdesk" / "readers" / "data" / "TRAINING.json").read_text())
    pinned = {p for files in training.values() if isinstance(files, list) for p in files}
    assert "evals/unknown-ground-tune.jsonl" in pinned and "evals/unknown-ground-held.jsonl" not in pinned


def test_the_sparse_ground_reader_reads_as_the_plain_naive_bayes():
    """gates.SparseReader scores through the features each label saw (some 300 labels: a read
    costs 0.2 ms, not 7): the same reading as the plain naive Bayes, to rounding."""
    from supportdesk.readers import gates

    plain = gates.GateReader(gates._data()["ground"], gates.FEATURES["ground"])
    sparse = gates.ground_reader()
    assert isinstance(sparse, gates.SparseReader)
    texts = [json.loads(line)["text"] for line in (REPO / "evals" / "unknown-ground-held.jsonl").read_text().splitlines() if line.strip()]
    for text in [*texts, "", "zzqq xxvv", "thanks!"]:
        a, b = sparse.read(text), plain.read(text)
        assert a.act == b.act and abs(a.confidence - b.confidence) < 1e-9, text


def test_another_language_is_asked_for_only_when_one_is_named():
    """The ground reader learnt the request's shape ("does anyone there speak ...") and is as sure
    of a customer checking someone is there: no language named, no language ground."""
    from supportdesk.models.offline import cues

    for text in ("hello? is anyone there?", "can someone answer me", "anyone there?"):
        assert cues.unknown_ground(text) is None, text
    for text in ("does anyone there speak polish", "can i get help in spanish"):
        assert cues.unknown_ground(text) == "request for another language", text


def test_the_ground_reader_on_its_held_lines_of_the_desks_own_grounds():
    """evals/ground-lines-12-held.jsonl (never trained on): 35 of its 44 lines read right when the
    reader learnt privacy, ownership, legal matters, discounts, invoice details and deletion
    (misses under the threshold, or read as a public intent: a server's place 'for our privacy
    policy', an account transferred 'to my daughter', 'legal proceedings', a promotion this month),
    and none of its 14 desk matters (an export for an auditor, a plan stopped, a profile's
    address, an invoice's amount) is sent to a person. 34 since ground-13's calibration (the
    temperature 1.5 chosen on the dev readings, precision first: scripts/measure_ground.py): 36
    at 1.0 with ground-13's near matters learnt."""
    from supportdesk.readers import gates

    rows = [json.loads(line) for line in (REPO / "evals" / "ground-lines-12-held.jsonl").read_text().splitlines() if line.strip()]
    right = sum((gates.ground(r["text"]) or gates.NO_GROUND) == r["ground"] for r in rows)
    assert right >= 34, f"{right}/{len(rows)}"
    assert [r["text"] for r in rows if r["ground"] == gates.NO_GROUND and gates.ground(r["text"]) is not None] == []
    training = json.loads((REPO / "supportdesk" / "readers" / "data" / "TRAINING.json").read_text())
    assert "evals/ground-lines-12-tune.jsonl" in training["ground"] and "evals/ground-lines-12-held.jsonl" not in training["ground"]


@pytest.mark.parametrize(
    ("text", "ground"),
    [
        # grounds the phrase rules had no slot for (ground-12's tune half)
        ("in which country are our files physically stored? compliance needs to know", "privacy request"),
        ("our founder left and the workspace is registered on her, we need it in my name", "ownership transfer"),
        ("this is unacceptable, our attorney will be in touch", "legal matter"),
        ("do u have a reduced price for schools?", "discount or promo code"),
        ("i dont want to exist in your system anymore, remove my account and all of it", "request to delete the account"),
        # the desk's own matters beside them
        ("We must give to our lawyer a file with all records we have in acme, how I can do this?", None),
        ("i dont want to pay for acme anymore, shut it down pls", None),
        ("the 2fa code is not accepted", None),
        # an invoice's number asked is read from the invoices; a number put on them is not
        # (bill-18: "vat number", "registration number" taught "number" to invoice details)
        ("and that invoice number?", None),
        ("need the invoice number of my january bill", None),
        ("can you print our VAT number on the invoices?", "request to change invoice details"),
    ],
)
def test_the_desks_own_grounds_read_by_the_learned_reader(text, ground):
    from supportdesk.models.offline import cues

    assert cues.unknown_ground(text) == ground


def test_a_ground_is_read_from_words_that_say_something():
    """A message read on its function words alone ("is there a ... for ... or") takes the label
    whose lines are short and alike (the desk's discount questions) at 0.95: no ground unless
    one of its uncommon words was taught the ground (gates.said_in_words_that_mean)."""
    from supportdesk.readers import gates

    assert gates.ground("is there a timeline or gantt view for projects or nah") is None
    assert gates.ground("is there a student discount?") == gates.DISCOUNT


def test_a_word_of_letters_and_digits_is_one_feature_of_the_ground_reader():
    """"2fa" is a word of its own (acts.tokens keeps only "fa"), a promo code one "<code>"
    whatever it spells ("SPRING20" is no season)."""
    from supportdesk.readers import gates

    feats = gates.ground_features("my 2fa code and SPRING20 on the 3rd")
    assert "2fa" in feats and "<code>" in feats and "3rd" not in feats and "spring20" not in feats


def test_the_desks_name_is_taken_out_as_it_is_said_from_its_first_word():
    """"Acme Cloud support": "acme", "acme cloud" and the whole are its name; "support" or "cloud"
    alone are everyday words ("the support in german" asks for a language)."""
    from supportdesk.models.offline import cues

    assert cues.without_desk_name("close my Acme Cloud account", "Acme Cloud support") == "close my account"
    assert cues.without_desk_name("the support in german, my files in the cloud", "Acme Cloud support") == "the support in german, my files in the cloud"
    assert cues.unknown_ground("do you offer the interface or the support in german") == "request for another language"
    # a name of no word of three letters takes nothing out
    assert cues.without_desk_name("close my account for good", "X") == "close my account for good"


def test_the_desks_lines_are_learnt_without_the_desks_name():
    """The ground is read without the desk's name (cues.without_desk_name), so it is learnt without
    it: "can acme cloud translate my documents" trained with "acme cloud" was read as another
    language once the name was taken out."""
    import sys

    sys.path.insert(0, str(REPO / "scripts"))
    import build_readers

    lines = build_readers.desk_ground()
    assert lines and not [t for t, _ in lines if "acme" in t.lower()]


def test_an_amount_off_is_a_discount_whatever_else_is_said():
    """Amounts are a rule's (cues.AMOUNT_OFF): "30% off" asks for a price no tool sets."""
    from supportdesk.models.offline import cues

    assert cues.unknown_ground("can i get 30% off if i pay yearly?") == "discount or promo code"
    assert cues.unknown_ground("can i pay yearly?") is None


def test_a_percentage_a_code_is_worth_is_a_discount_without_the_reader(monkeypatch):
    """Percentages are a rule's (cues.AMOUNT_OFF): "a 20% code", "15 percent voucher" name a
    discount whatever words surround them; a percentage of anything else names none."""
    from supportdesk.models.offline import cues
    from supportdesk.readers import gates

    gates.ground.cache_clear()
    monkeypatch.setattr(gates, "ground", lambda text: None)
    assert cues.unknown_ground("i got a 20% code in your newsletter but where do i put it") == "discount or promo code"
    assert cues.unknown_ground("I received 15 percent voucher in your email, how I use it?") == "discount or promo code"
    assert cues.unknown_ground("my storage is 80% full, what happens then") is None


def test_the_ground_reader_on_held_desk_matters_near_each_ground():
    """evals/ground-lines-13-held.jsonl (never trained on): desk matters that share a ground's
    words (a partner or colleague invited is no ownership, a logo and colours on the workspace no
    deletion, one's own export before closing the business no privacy request, a folder of
    invoices shared no invoice details) beside the grounds told in new words. Before the reader
    learnt ground-lines-13-tune's near matters it sent 6 of the 24 desk matters to a person
    (precision 0.81); after, 1 (a business partner brought into the workspace, still read as
    ownership), precision 0.96, recall 0.96 (scripts/measure_ground.py)."""
    from supportdesk.models.offline.cues import without_desk_name
    from supportdesk.readers import gates

    rows = [json.loads(line) for line in (REPO / "evals" / "ground-lines-13-held.jsonl").read_text().splitlines() if line.strip()]
    read = [(r["ground"], gates.ground(without_desk_name(r["text"])) or gates.NO_GROUND) for r in rows]
    sent = [r["text"] for r, (want, got) in zip(rows, read) if want == gates.NO_GROUND and got != gates.NO_GROUND]
    assert len(sent) <= 1, sent
    said = [(want, got) for want, got in read if got != gates.NO_GROUND]
    assert sum(want == got for want, got in said) >= 0.95 * len(said)
    grounds = [(want, got) for want, got in read if want != gates.NO_GROUND]
    assert sum(want == got for want, got in grounds) >= 0.9 * len(grounds)
    training = json.loads((REPO / "supportdesk" / "readers" / "data" / "TRAINING.json").read_text())
    assert "evals/ground-lines-13-tune.jsonl" in training["ground"] and "evals/ground-lines-13-held.jsonl" not in training["ground"]


def test_the_ground_reading_is_tempered_before_the_threshold(monkeypatch):
    """gates.ground_reading divides the reader's log scores by the temperature before they are
    read as probabilities (naive Bayes is sure to 1.00 of a word counted as news): the reading
    is the same, its confidence lower, and gates.ground compares that confidence."""
    from supportdesk.readers import gates

    reader = gates.ground_reader()
    assert reader is not None
    text = "please forward this to your legal department and our attorneys"
    plain = gates.ground_reading(reader, text, 1.0)
    tempered = gates.ground_reading(reader, text, 40.0)
    assert plain is not None and tempered is not None and plain[0] == tempered[0] == gates.LEGAL
    assert plain[1] > tempered[1]
    gates.ground.cache_clear()
    assert gates.ground(text) == gates.LEGAL
    gates.ground.cache_clear()
    monkeypatch.setattr(gates, "GROUND_TEMPERATURE", 40.0)
    assert gates.ground(text) is None
    gates.ground.cache_clear()


def test_each_near_matter_is_learnt_under_its_own_label():
    """A labelled line that names the desk matter it is ("topic") is learnt under that matter
    ("near:invite"), not the one label of every near matter, whose words shared by all of them
    ("our company account", "who can") came to outweigh a ground said in them; and a measure's
    fold leaves its own lines out (build_readers.desk_ground's leave_out)."""
    import sys

    sys.path.insert(0, str(REPO / "scripts"))
    import build_readers

    lines = build_readers.desk_ground()
    labels = {label for _, label in lines}
    assert {"near:invite", "near:branding", "near:export", "near:sharing", "near:files"} <= labels
    assert ("how do i bring a new coworker into our workspace", "near:invite") in lines
    left = build_readers.desk_ground({"how do i bring a new coworker into our workspace"})
    assert len(left) == len(lines) - 1 and "how do i bring a new coworker into our workspace" not in {t for t, _ in left}
