"""Articles by retrieval with abstention (tools/kb.py), measured on labelled questions: some an
article answers, some none does. evals/kb-questions-tune.jsonl chose the thresholds;
evals/kb-questions-held.jsonl was never looked at while choosing them. evals/kb-customer-words-*
ask for each article in customers' own words (everyday verbs, abbreviations, device and app
names, typos, non-native phrasing), sharing as few words as possible with its title and tags;
its tune half chose the articles' new tags, its held half measures them."""

from __future__ import annotations

import dataclasses
import json

from supportdesk.lexicon import normalise
from supportdesk.tools.kb import (
    CALIBRATED,
    EDGE,
    EXAMPLES,
    MIN_COVERAGE,
    MIN_SCORE,
    NONE,
    TOLD_EXAMPLES,
    WRITTEN_EXAMPLES,
    KnowledgeBase,
    Reading,
    Thresholds,
    _stem,
    examples,
    knowledge_base,
    parse_article,
    parse_examples,
)
from tests.conftest import REPO


def _rows(half: str, family: str = "kb-questions") -> list[dict]:
    path = REPO / "evals" / f"{family}-{half}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _measure(rows: list[dict], pick) -> dict[str, float]:
    answered = [(r, pick(r["text"])) for r in rows]
    given = [(r, got) for r, got in answered if got is not None]
    unanswerable = [got for r, got in answered if r["article"] is None]
    return {
        "precision": sum(r["article"] == got for r, got in given) / len(given),
        "abstention": sum(got is None for got in unanswerable) / len(unanswerable),
        "recall": sum(r["article"] == got for r, got in answered if r["article"]) / sum(1 for r in rows if r["article"]),
    }


def _answer(text: str) -> str | None:
    hits = knowledge_base().answer(text)
    return hits[0][0].slug if hits else None


def _best_match(text: str) -> str | None:  # the search before abstention: its best article, always
    hits = knowledge_base().search(text)
    return hits[0][0].slug if hits else None


def test_held_precision_and_abstention():
    # Measured on the held half (40 questions, 13 that no article answers): precision 27/28
    # (96 %), abstention 12/13 (92 %), recall 27/27 (26/27 before other forms of an article's
    # words were found: "overwrote" for "overwritten"); with the example model (issue 38.2)
    # 26/27, 12/13, 26/27 ("webhook not firing anymore" now gets none; the one wrong article,
    # a file deleted on a schedule, stays). Without abstention the best match was
    # right 26 times out of 33 articles shown (79 %), and said nothing only 7 times in 13.
    now, before = _measure(_rows("held"), _answer), _measure(_rows("held"), _best_match)
    assert now["precision"] >= 0.95 and now["abstention"] >= 0.9 and now["recall"] >= 0.9
    assert before["precision"] < 0.85 and before["abstention"] < 0.6


def test_tune_half_is_what_chose_the_thresholds():
    tune = _measure(_rows("tune"), _answer)
    assert tune["precision"] >= 0.95 and tune["abstention"] >= 0.9
    assert (MIN_SCORE, MIN_COVERAGE) == (4.0, 0.35)


def test_an_uncovered_topic_gets_no_article():
    kb = knowledge_base()
    for question in ("is there a dark mode in the web app?", "in which country are my files stored, for gdpr?"):
        assert kb.search(question), question  # ordinary words ("app", "files") match something ...
        assert kb.answer(question) == [], question  # ... which is no answer


def test_an_email_address_told_with_its_label_names_no_matter():
    """"email dana@…" says who the customer is: neither the address nor the word labelling it is
    what the message is about (it found the article on changing one's email address)."""
    kb = knowledge_base()
    told = "need to change how i pay you, email dana@example.com"
    assert kb.query_terms(told) == kb.query_terms("need to change how i pay you")
    assert all(a.slug != "personal-details" for a, _ in kb.answer(told))
    # an email the customer speaks of is still a matter
    assert "email" in normalise("i want to change my email to dana@example.com")


def test_a_typo_one_letter_away_finds_its_article():
    assert _answer("notifcations dont come on my phone anymore") == "notifications"
    assert knowledge_base().query_terms("pasword") == {"password"}


def test_another_form_of_an_article_word_finds_it():
    kb = knowledge_base()
    # an irregular form sharing the word's start, and an inflection: the restore article's tags
    assert kb.query_terms("overwrote recovering") == {"overwritten", "recover"}
    assert _answer("my colleague overwrote the spreadsheet, can i get yesterdays version back") == "restore-files"
    assert kb.query_terms("my notes") == {"note"}  # "notes" is not "not" + "es"


def test_a_lexicon_concept_and_its_word_count_once_in_coverage():
    kb = knowledge_base()
    restore, team = kb.get("restore-files"), kb.get("team-invites")
    question = "my colleague overwrote the spreadsheet, can i get yesterdays version back"
    # "colleague" folds onto the teammate concept too; the team article holds both, and they
    # weigh as one word, so a question about an overwritten file is not mostly about teammates
    assert kb.coverage(question, restore) >= MIN_COVERAGE > kb.coverage(question, team)


def _answer_with(kb: KnowledgeBase):
    def pick(text: str) -> str | None:
        hits = kb.answer(text)
        return hits[0][0].slug if hits else None

    return pick


def _bare() -> KnowledgeBase:
    """The knowledge base without the desk's example questions: BM25 alone, as before issue 38.2."""
    return KnowledgeBase(knowledge_base().articles)


def test_customer_words_held_half_keeps_its_floor():
    # The held half of evals/kb-customer-words (48 questions, 2 per article, and 8 no article
    # answers), never used to choose a tag, a lexicon entry, an example or a threshold. Before
    # the tags said what customers call things: precision 15/28, abstention 7/8, recall 15/48.
    # BM25 with the tags: 22/35, 7/8, 22/48. With the example model judging BM25 (issue 38.2):
    # 25/33, 7/8, 25/48: eight wrong articles instead of thirteen. With the thresholds
    # calibrated (kb-6) and the words learned from the examples: 24/29, 7/8, 24/48: five wrong
    # articles instead of eight, for one right one fewer. Recalibrated with the questions that
    # share only a generic word with an article (issue 38.2): 26/32, 7/8, 26/48, two right
    # articles more for one wrong one more (the lower agree threshold the tune halves chose). The
    # floor is that.
    held = _measure(_rows("held", "kb-customer-words"), _answer)
    assert held["precision"] >= 26 / 32 and held["abstention"] >= 7 / 8 and held["recall"] >= 26 / 48
    bare = _measure(_rows("held", "kb-customer-words"), _answer_with(_bare()))
    assert bare["precision"] < 0.7  # what the example model is for


def test_kb5_held_half_keeps_its_floor():
    # evals/kb-5-held.jsonl (30 questions an article answers in customers' own words, 10 none
    # does), written with its tune half before the example model, measured once on BM25 alone:
    # precision 23/28, abstention 8/10, recall 23/30. With the example model: 24/27, 8/10, 24/30
    # (25/28 by kb-6's start); calibrated (kb-6): 24/26, 8/10, 24/30.
    held = _measure(_rows("held", "kb-5"), _answer)
    assert held["precision"] >= 24 / 27 and held["abstention"] >= 8 / 10 and held["recall"] >= 24 / 30
    bare = _measure(_rows("held", "kb-5"), _answer_with(_bare()))
    assert bare["precision"] < 24 / 27


def test_the_example_model_answers_when_bm25_does_not():
    # No article says "robbed" or "log it out"; the lost-phone examples do.
    question = "someone robbed my phone, can i log it out from here"
    assert _bare().answer(question) == []
    assert _answer(question) == "lost-phone"


def test_a_question_covered_only_just_needs_the_models_agreement():
    # "automatically" is in the signed-out article's steps: BM25 found it, covering the
    # question only just (understand-held-4's "no article: scheduled sending").
    question = "can i schedule a document to be emailed automatically every monday?"
    assert _answer_with(_bare())(question) == "signed-out"
    assert knowledge_base().answer(question) == []


def test_the_model_puts_the_article_it_is_sure_of_first():
    # BM25 finds the slow-pages article first and the sign-in one too; the model is sure of
    # the sign-in one.
    question = "the sign-in page just spins forever"
    assert [a.slug for a, _ in _bare().answer(question)][:1] == ["performance"]
    assert _answer(question) == "login-problems"


def test_the_examples_are_the_tune_halves_and_never_a_held_one():
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_kb

    assert EXAMPLES.read_text(encoding="utf-8") == bench_kb.examples_text()
    assert TOLD_EXAMPLES.read_text(encoding="utf-8") == bench_kb.told_examples_text()
    shipped = {" ".join(q.split()).lower() for _, q in examples()}
    for family in bench_kb.FAMILIES + bench_kb.EXAMPLE_CONVERSATIONS:
        for row in _rows("held", family):
            text = row["text"] if "text" in row else row["turns"][0]["customer"]
            assert " ".join(text.split()).lower() not in shipped, text


def test_customers_words_are_found_through_the_articles_tags():
    # The tune half chose the tags ("pw", "laggy", "excel", "zap", "ubuntu", "binned" ...): with
    # them 44 of its 48 answerable questions get their article; with every tag removed, 17 (12
    # before the lexicon folded "pw", "pwd" ... onto "password"): the tags still carry most of it.
    kb = knowledge_base()
    bare = KnowledgeBase([dataclasses.replace(a, tags=()) for a in kb.articles])
    rows = _rows("tune", "kb-customer-words")
    tagged, untagged = _measure(rows, _answer_with(kb)), _measure(rows, _answer_with(bare))
    assert tagged["recall"] >= 44 / 48 and tagged["precision"] >= 0.9
    assert untagged["recall"] < tagged["recall"] / 2
    for slug, words in {
        "apps-devices": ("ubuntu", "chromeos", "ipados"), "performance": ("laggy", "sluggish"),
        "export-data": ("excel",), "integrations": ("zap", "msteams"), "restore-files": ("binned", "undelete"),
        "two-factor": ("mfa", "otp"), "change-password": ("pw", "pwd"),
    }.items():
        article = kb.get(slug)
        assert article is not None and set(words) <= set(article.tags), slug


def test_a_mobile_number_is_a_personal_detail():
    # (an additive lexicon entry: "phone number" already was; "my mobile number is different now"
    # found the wallet article through "mobile")
    for said in ("my mobile number", "cell number", "telephone number"):
        assert "details_c" in normalise(said), said
    assert _answer("my mobile number is different now, where do i fix it") == "personal-details"


async def test_the_technical_agent_says_it_does_not_know_when_the_knowledge_base_abstains():
    # A feature nobody documents, in words BM25 alone answered with unrelated articles (the
    # export one, the signed-out one): the desk admits it does not know and offers a person.
    from supportdesk.commands.evals import evaluate_conversations

    questions = ("can a spreadsheet be mailed out automatically on fridays?", "is it possible to email a folder automatically every evening")
    for question in questions:
        assert _answer_with(_bare())(question) is not None and _answer(question) is None
    convos = [
        {"name": f"no article: {q}", "turns": [{"customer": q, "expect": {
            "agent": "technical", "tools": [{"name": "search_kb"}], "reply": ["person"],
            "reply_not": ["covers this", "usually fixes", "Exporting your data", "Signed out again"]}}]}
        for q in questions
    ]
    results = await evaluate_conversations(convos, config=str(REPO / "agents.toml"))
    assert all(r.passed for r in results), [r.failures for r in results]


def _bench():
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_kb

    return bench_kb


HAND_SET = Thresholds(veto=0.9, edge=0.5, agree=0.6, sure=0.9, assist=0.3)  # before kb-6 (rare 0.4, misses 3 as set by hand then)


def test_the_thresholds_are_what_the_tune_halves_choose():
    # tools/kb.py's five thresholds are the procedure's choice (benchmarks/bench_kb.py
    # --calibrate): on the tune halves, each question read leave-one-out, keeping the conversation
    # evals' articles; the hand-set ones keep fewer of those and show more wrong articles on tune.
    bench = _bench()
    readings, conversations = bench.tune_readings(), bench.conversation_readings()
    assert bench.calibrate(readings, conversations) == CALIBRATED
    chosen, hand = bench._score(readings, CALIBRATED), bench._score(readings, HAND_SET)
    # (as many wrong tune articles since kb-12's examples: 9 both, 129 against 126 since kb-13's;
    # conversations' articles kept 139 against 133)
    assert chosen > hand and -chosen[1] <= -hand[1]
    assert bench._kept(conversations, CALIBRATED) > bench._kept(conversations, HAND_SET)


def test_kb6_held_half_keeps_its_floor():
    # evals/kb-6-questions-held.jsonl, written before the calibration and the learned words:
    # 15/16, 7/8, 15/16 before, and after (the one wrong article: "how many people can join a
    # video call" is no question about inviting people).
    held = _measure(_rows("held", "kb-6-questions"), _answer)
    assert held["precision"] >= 15 / 16 and held["abstention"] >= 7 / 8 and held["recall"] >= 15 / 16


def test_the_held_halves_show_fewer_wrong_articles_than_the_hand_set_thresholds():
    kb = knowledge_base()

    def wrong_and_right(thresholds: Thresholds) -> tuple[int, int]:
        wrong = right = 0
        for family in _bench().FAMILIES:
            for r in _rows("held", family):
                hits = kb.answer(r["text"], thresholds=thresholds)
                wrong += bool(hits) and hits[0][0].slug != r["article"]
                right += bool(hits) and hits[0][0].slug == r["article"]
        return wrong, right

    # 4 of 160 held questions (13 on kb-6's start; 9 before the recalibration with the questions
    # that share only a generic word with an article, for three right articles more; 10 before
    # kb-12's written examples; 6 before kb-13's absent matters, 7 with the hand-set thresholds
    # then). kb-13's rule withdrew the hand-set thresholds' extra wrong article too (4 both): the
    # calibrated ones show no more wrong articles, and more right ones (104 against 101).
    (wrong, right), (hand_wrong, hand_right) = wrong_and_right(CALIBRATED), wrong_and_right(HAND_SET)
    assert wrong <= 4 and wrong <= hand_wrong and right > hand_right


def test_words_customers_use_for_one_article_count_as_covered():
    # No article says "tablet", "behind" or "pc"; the sync examples do: with them the question
    # is covered enough for the example model's answer to stand (`assist`).
    kb = knowledge_base()
    question = "my tablet is behind my pc"
    sync = kb.get("sync-issues")
    assert sync is not None
    assert kb.coverage(question, sync) < CALIBRATED.assist <= kb.coverage(question, sync, learned=True)
    assert _answer(question) == "sync-issues"
    # (a problem told, covered by the words the desk knows: kb-13) and not above its coverage
    above = kb.read(question).best_coverage + 0.01
    assert kb.answer(question, thresholds=dataclasses.replace(CALIBRATED, assist=above)) == []
    # a word the examples use for several articles says nothing of which: not learned
    for term in kb.query_terms("phone"):
        assert all(_stem(term) not in learned for learned in kb._learned), term


def test_a_word_used_for_one_article_in_at_least_half_its_uses_is_learned():
    # kb-12: with the written examples a word told of one matter is seldom never used for another
    # ("pc": the sync examples' three times, the devices' twice); it is the sync article's when
    # its examples use it at least half the time and more than any other's (or the questions no
    # article answers). Until kb-12, a word used for one article alone.
    articles = knowledge_base().articles
    slugs = [a.slug for a in articles]
    sync, devices = slugs.index("sync-issues"), slugs.index("apps-devices")
    examples = [
        ("sync-issues", "my gizmo lags behind"), ("sync-issues", "the gizmo never gets edits"),
        ("apps-devices", "is there a gizmo app"),
        ("sync-issues", "a widget shows old text"), ("apps-devices", "a widget version?"),
        ("sync-issues", "the doohickey is stale"), (None, "a doohickey theme?"), (None, "doohickey fonts?"),
    ]
    kb = KnowledgeBase(articles, examples)
    assert _stem("gizmo") in kb._learned[sync] and _stem("gizmo") not in kb._learned[devices]
    for split in ("widget", "doohickey"):  # as often elsewhere, or more often for no article
        assert all(_stem(split) not in learned for learned in kb._learned), split
    # and so in the shipped examples
    shipped = knowledge_base()
    assert _stem("pc") in shipped._learned[sync]


def test_an_article_lacking_the_questions_rare_words_is_no_answer():
    # Issue 38.2: a question sharing generic words with an article ("password", "link", "open")
    # while its subject ("share", "folder", "stranger") is in no article's answer. The
    # team-invites article scores and covers enough of it, and lacks three of its rare words
    # that other articles hold: not an answer.
    kb = knowledge_base()
    question = "i want a password on the link i share, so a stranger with the link cant open my folder"
    top, score = kb.search(question)[0]
    assert score >= MIN_SCORE and kb.coverage(question, top) >= MIN_COVERAGE
    assert kb.missed(question, top) >= CALIBRATED.misses
    reading = kb.read(question)
    unsure = {slug: 0.0 for slug in reading.probability} | {top.slug: CALIBRATED.veto - 0.01, NONE: 0.01}
    assert kb.decide(dataclasses.replace(reading, probability=unsure), CALIBRATED) == []
    # (kb-12: the example model is now sure enough, at the recalibrated veto, of the
    # password-reset article, which BM25 found confident too, and answers with it: a wrong
    # article, kept because a guard against it cost two right tune answers and a conversation
    # eval, "can our staff log in with our company okta account instead of separate passwords?")
    assert [a.slug for a, _ in kb.answer(question)][:1] != [top.slug]


def test_a_question_told_with_more_around_it_is_covered_by_what_it_asks():
    # The config desk's held-6 "how do i turn on two-step login? nothing happened, just want my
    # account safer" abstained: the context's words halve the two-factor article's coverage.
    # What the question asks covers it, when the question alone finds that article first; the
    # context never makes another article the answer ("wrong" finds login-problems).
    kb = knowledge_base()
    question = "how can i switch on two factor? a friend told me about it, i only want my account to be safer"
    assert [a.slug for a, _ in kb.answer(question)][:1] == ["two-factor"]
    context_finds_another = "where do i change my password? nothing wrong, just doing it every few months"
    assert kb.search(context_finds_another, 1)[0][0].slug == "login-problems"
    assert kb.answer(context_finds_another) == []


def test_the_model_sure_no_article_answers_withdraws_bm25s_answer():
    # BM25 confident of an article, the example model as sure (veto) that no article answers:
    # nothing ("can my clients send files without an account, like a file request link?" shares
    # five words with the password-reset article).
    kb = knowledge_base()
    article = kb.get("password-reset")
    assert article is not None
    sure_none = {a.slug: 0.0 for a in kb.articles} | {NONE: CALIBRATED.veto}
    reading = Reading(((article, 12.0),), sure_none, 0.9, None, 0.0, 0.0)
    assert kb.decide(reading, CALIBRATED) == []
    unsure = sure_none | {NONE: CALIBRATED.veto - 0.01, "password-reset": 0.01}
    assert [a.slug for a, _ in kb.decide(dataclasses.replace(reading, probability=unsure), CALIBRATED)] == ["password-reset"]


def test_the_articles_are_read_when_the_tools_are_built_not_by_the_first_search():
    # A server builds its tools when it opens its desk; the first turn that searches must not
    # parse every article on the event loop (~0.2 s). A fresh interpreter: nothing read before.
    import subprocess
    import sys

    code = (
        "from supportdesk.wiring import shipped_tools; shipped_tools(); "
        "from supportdesk.tools.kb import knowledge_base; print(knowledge_base.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "1"


def test_kb7_questions_told_with_context_keep_their_article_and_gain_no_wrong_one():
    # evals/kb-7-*.jsonl: questions with something told around them, written after the asked
    # clause's coverage was first tried (so seen): held 5 right, 0 wrong, 2 of 2 abstentions
    # without it; 6 right and 1 wrong with it alone ("is there a calendar view? would help my
    # team ..." found integrations by its "calendar" tag); 6 right, 0 wrong, 2 abstentions with
    # the model's lean to the article over none required too. Tune: 7 right, 0 wrong, 2 of 2.
    kb = knowledge_base()
    for half, right_at_least in (("tune", 7), ("held", 6)):
        rows = [json.loads(line) for line in (REPO / "evals" / f"kb-7-{half}.jsonl").read_text().splitlines() if line.strip()]
        shown = [(r, hits[0][0].slug) for r in rows if (hits := kb.answer(r["text"]))]
        assert not [r["text"] for r, slug in shown if slug != r["article"]], half
        assert sum(slug == r["article"] for r, slug in shown) >= right_at_least, half


def test_the_thresholds_are_chosen_on_the_pinned_conversations_only(tmp_path, monkeypatch):
    # benchmarks/kb_calibration.json pins the conversation evals --calibrate reads: each exists,
    # and a family not named there (a new one, or a held-back set) is read by nothing.
    import json

    bench = _bench()
    files = bench.calibration_files()
    assert files and all(p.exists() for p in files)
    assert not [p.name for p in files if p.name.startswith(("understand-held-7", "understand-held-8", "understand-held-9"))]
    full = bench.conversation_questions()
    fewer = json.loads(bench.CALIBRATION.read_text())
    dropped = next(name for name in fewer["files"] if name != "conversations.jsonl" and any(
        json.loads(line)["turns"][0]["customer"] in {r["text"] for r in full}
        for line in (REPO / "evals" / name).read_text().splitlines() if line.strip() and json.loads(line).get("turns")
    ))
    fewer["files"].remove(dropped)
    monkeypatch.setattr(bench, "CALIBRATION", tmp_path / "pinned.json")
    bench.CALIBRATION.write_text(json.dumps(fewer))
    assert len(bench.conversation_questions()) < len(full)


def test_a_problem_told_is_covered_by_what_the_articles_know_a_question_is_not():
    # kb-8 (issue 38.2): what happened is told around the customer's own things, which no article
    # could name ("anything bigger than like 50mb"): BM25's first article covers a problem told by
    # the words the articles hold, and the crash article answers. A question's word no article
    # holds is what it asks about: "is there a timeline or gantt view" gets no article.
    kb = knowledge_base()
    told = "the mac app just quits on me whenever i open anything bigger than like 50mb"
    crashes = kb.get("app-crashes")
    assert crashes is not None and kb.search(told)[0][0] is crashes and kb.told(told)
    assert kb.coverage(told, crashes) < MIN_COVERAGE <= kb.coverage(told, crashes, told=True)
    assert [a.slug for a, _ in kb.answer(told)][:1] == ["app-crashes"]
    asked = "is there a timeline or gantt view for projects"
    assert not kb.told(asked) and kb.answer(asked) == []


def test_a_question_the_model_reads_as_no_articles_gets_none_a_problem_told_keeps_it():
    # kb-8 (issue 38.2): a question asks about its words no article holds, so BM25's answer
    # sharing its other words gives way when the example model gives NONE `asked` (chosen by
    # bench_kb --calibrate, not set by hand); a problem told at the same probabilities keeps it.
    kb = knowledge_base()
    article = kb.get("apps-devices")
    assert article is not None and CALIBRATED.asked < CALIBRATED.veto
    leaning_none = {a.slug: 0.0 for a in kb.articles} | {NONE: CALIBRATED.asked, "apps-devices": 1.0 - CALIBRATED.asked}
    question = Reading(((article, 12.0),), leaning_none, 0.9, None, 0.0, 0.0, asked=True)
    assert kb.decide(question, CALIBRATED) == []
    told = dataclasses.replace(question, asked=False)
    assert [a.slug for a, _ in kb.decide(told, CALIBRATED)] == ["apps-devices"]
    assert kb.read("is there a word count somewhere??").asked


def test_a_veto_of_bm25s_answer_lets_the_model_answer_alone():
    # kb-9: BM25 finds the crash article first; the example model is sure of the sync article,
    # which BM25 did not find confident. The veto withdraws the crash article
    # and the model's own article answers, as it would had BM25 found nothing (sure, assist);
    # before, the desk said it did not know.
    kb = knowledge_base()
    crash, sync = kb.get("app-crashes"), kb.get("sync-issues")
    assert crash is not None and sync is not None
    t = CALIBRATED
    reading = Reading(
        confident=((crash, 10.0),), probability={"sync-issues": t.sure, "app-crashes": 1 - t.sure, NONE: 0.0},
        top_coverage=0.6, best=sync, best_coverage=t.assist, best_score=9.0,
    )
    assert [a.slug for a, _ in kb.decide(reading, t)] == ["sync-issues"]
    # and not when the model alone would not answer: its article covering too little of the question
    weak = dataclasses.replace(reading, best_coverage=t.assist / 2)
    assert kb.decide(weak, t) == []
    # kb-customer-words' held "changes on my laptop dont show up on my phone" (BM25: the crash article)
    assert _answer("changes on my laptop dont show up on my phone") == "sync-issues"


def test_the_example_model_learns_the_kb8_tune_conversations():
    # kb-9: the first messages of kb-8's tune conversations (an article's matter told in words no
    # article holds) are examples too (benchmarks/bench_kb.py EXAMPLE_CONVERSATIONS); without
    # them held-9's stale tablet and white window got no article ("I don't know").
    bench = _bench()
    learned = {(r["article"], " ".join(r["text"].split())) for r in bench.conversation_examples()}
    assert ("app-crashes", "every time i try to print, the windows app just dies and dissapears") in learned
    assert learned <= set(examples())
    # kept out of examples.txt, which trains the readers too (their "products")
    assert not learned & set(parse_examples(EXAMPLES.read_text(encoding="utf-8")))
    kb = knowledge_base()
    # (the written examples, kb-12, teach the same matters: without both, no article)
    written = set(parse_examples(WRITTEN_EXAMPLES.read_text(encoding="utf-8")))
    without = KnowledgeBase(kb.articles, [e for e in examples() if e not in learned and e not in written])
    for question, slug in (
        ("the tablet is showing an older version of my notes than the pc, this mornings edits just arent there", "sync-issues"),
        ("on windows 11 the acme window goes all white after the splash screen and then shuts itself", "app-crashes"),
    ):
        assert _answer(question) == slug
        assert _answer_with(without)(question) is None


def test_calibration_reads_the_first_messages_no_article_answers_as_none():
    # kb-10: --calibrate counts the wrong articles it would show in conversation evals, among them
    # any article for a first message whose reply must not present one ("covers this").
    bench = _bench()
    rows = {r["text"]: r["article"] for r in bench.conversation_questions()}
    assert rows["is there a way to put a password on a share link so only ppl with the code can open the folder?"] is None
    assert any(article is None for article in rows.values()) and any(rows.values())


def test_the_logistic_regression_measured_beside_naive_bayes_learns_articles_and_public_none():
    # kb-10: benchmarks/bench_kb.py measures a logistic regression in the example model's place
    # (not kept: its held halves showed more wrong articles); its NONE class learns CLINC150's
    # out-of-scope train split (benchmarks/kb_oos_clinc.txt, shipped with its licence noted).
    bench = _bench()
    text = bench.PUBLIC_NONE.read_text(encoding="utf-8")
    assert "CC BY 3.0" in text and "oos_train" in text and len(bench.public_none_examples()) == 100
    with_public = bench.LogisticModel(knowledge_base(), examples(), bench.public_none_examples())
    without = bench.LogisticModel(knowledge_base(), examples(), ())
    p = with_public.probabilities("how do i change my password")
    assert max(p, key=lambda k: p[k]) == "change-password"
    off_topic = "how many calories are in a banana"
    p = with_public.probabilities(off_topic)
    assert max(p, key=lambda k: p[k]) == NONE
    assert p[NONE] > without.probabilities(off_topic)[NONE] + 0.1


def test_calibration_prefers_fewer_wrong_articles_in_conversations_when_as_many_are_kept():
    # kb-12: among threshold combinations keeping as many conversation evals' articles, the one
    # showing fewer wrong articles there wins (a wrong one costing three missed, as on tune);
    # before, the first in grid order did: here the lowest edge, under which BM25's answer to a
    # first message no article answers stands on a coverage of 0.3 without the model's agreement.
    bench = _bench()
    kb = knowledge_base()
    article = kb.get("password-reset")
    assert article is not None
    undecided = {a.slug: 0.0 for a in kb.articles} | {"password-reset": 0.5, NONE: 0.5}
    reading = Reading(((article, 12.0),), undecided, 0.3, article, 0.3, 12.0)
    conversations = [({"text": "a first message no article answers", "article": None}, kb, reading)]
    chosen = bench.calibrate([], conversations)
    assert kb.decide(reading, chosen) == []
    assert bench._conversations_key(conversations, chosen) > bench._conversations_key(
        conversations, dataclasses.replace(chosen, edge=bench.GRID_EDGE[0], agree=bench.GRID_AGREE[0])
    )


def test_the_written_examples_copy_no_eval_message():
    # kb-12: tools/kb/examples-written.txt was written for the model, never drawn from an eval;
    # an eval's message among them would make that eval measure what the model was taught.
    # (The lead's unseen set is never opened.)
    def said(row: dict) -> list[str]:
        return [row["text"]] if "text" in row else [t["customer"] for t in row.get("turns", []) if isinstance(t, dict) and "customer" in t]

    messages = {
        " ".join(text.split()).lower()
        for path in sorted((REPO / "evals").glob("*.jsonl")) if not path.name.startswith("understand-held-11")
        for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
        for text in said(json.loads(line))
    }
    written = parse_examples(WRITTEN_EXAMPLES.read_text(encoding="utf-8"))
    assert len(written) >= 400 and sum(slug is None for slug, _ in written) >= 80
    assert not [q for _, q in written if " ".join(q.split()).lower() in messages]


def test_a_problem_the_model_answers_alone_is_covered_by_what_the_desk_knows():
    # kb-13 (issue 38.2): a problem told is told around the customer's own things ("my old
    # grocery list"), which no article and no example names; the example model's own article
    # (`_alone`'s assist) is judged by the words the articles hold or the examples taught, as
    # BM25's first article is by the articles' words (`coverage`'s `told` with `learned`). A
    # question still counts every word it asks about.
    kb = knowledge_base()
    told = "the tablet keeps showing my old grocery list though i changed it on the phone this morning"
    sync = kb.get("sync-issues")
    assert sync is not None and kb.told(told)
    assert kb.coverage(told, sync, learned=True) < CALIBRATED.assist <= kb.coverage(told, sync, learned=True, told=True)
    assert kb.read(told).best_coverage >= CALIBRATED.assist
    assert _answer(told) == "sync-issues"
    # words the examples taught the article count as known, no article holding them: dropped,
    # "my tablet is behind my pc" would weigh no word at all
    assert kb.coverage("my tablet is behind my pc", sync, learned=True, told=True) == 1.0
    asked = "is there a timeline or gantt view for projects"
    reading = kb.read(asked)
    assert reading.best is not None and reading.best_coverage == kb.coverage(asked, reading.best, learned=True)


def test_a_problem_told_with_a_question_at_its_end_is_still_told():
    # `Reading.asked` is the act reader's verdict (a bool), not the question clause read for
    # coverage (`read` once stored the clause there, a non-empty string: every told problem
    # ending in a question counted as asked in `decide`'s NONE rule).
    reading = knowledge_base().read("the app freezes when i open a big photo, what should i do?")
    assert reading.confident and reading.asked is False


def test_a_question_naming_a_matter_no_article_covers_gets_none():
    # kb-13 (issue 38.2): "dark" and "widget" are used only by examples no article answers (twice
    # or more), so they name absent matters; a question asking for one gets no article sharing its
    # other words ("android app", "mobile app"), whichever rule chose that article: BM25's first,
    # or another put first by a veto ("does the mobile app have a dark mode": app-passcode).
    kb = knowledge_base()
    assert {_stem(t) for t in kb.query_terms("dark widget")} <= kb._absent
    assert not {_stem(t) for t in kb.query_terms("phone sheet")} & kb._absent
    # nor a word one such example uses: too few to say a matter is absent
    assert sum("fax" in text.split() for _, text in examples()) == 1 and "fax" not in kb._absent
    for question in ("does the android app have a widget", "does the mobile app have a dark mode"):
        reading = kb.read(question)
        assert reading.asked and kb.decide(dataclasses.replace(reading, absent={}), CALIBRATED) != []
        assert kb.decide(reading, CALIBRATED) == []
    # a problem told around such a thing keeps its article
    told = "the desktop app crashes whenever i open a pdf"
    assert kb.read(told).absent.get("app-crashes") and _answer(told) == "app-crashes"
    # and an article the model is sure of (`sure`) answers a question naming such a thing as what
    # it is about: "task" is an absent matter's word, a csv of the tasks is an export
    asked = "can i export a csv listing every task in our workspace?"
    reading = kb.read(asked)
    assert reading.asked and reading.absent.get("export-data") and reading.probability["export-data"] >= CALIBRATED.sure
    assert _answer(asked) == "export-data"


def test_calibration_counts_a_wrong_article_as_a_conversation_failed():
    # kb-15: the conversations passing come first, not their articles kept. Thresholds letting
    # BM25's barely covering answers stand keep one conversation's article and show two others a
    # wrong one (two failed for one kept); the old key (articles kept first) chose them.
    bench = _bench()
    kb = knowledge_base()
    right, other = kb.get("password-reset"), kb.get("export-data")
    assert right is not None and other is not None
    undecided = {a.slug: 0.0 for a in kb.articles} | {NONE: 0.5}
    keeps = Reading(((right, 12.0),), undecided | {right.slug: 0.5}, 0.3, right, 0.3, 12.0)
    wrong = Reading(((other, 12.0),), undecided | {other.slug: 0.5}, 0.3, other, 0.3, 12.0)
    conversations = [
        ({"text": "a first message the reset article answers", "article": right.slug}, kb, keeps),
        ({"text": "a first message no article answers", "article": None}, kb, wrong),
        ({"text": "another no article answers", "article": None}, kb, wrong),
    ]
    chosen = bench.calibrate([], conversations)
    assert bench._passed(conversations, chosen) == 2
    assert [kb.decide(reading, chosen) for _, _, reading in conversations] == [[], [], []]


def test_calibration_scores_tune_questions_and_conversations_as_one():
    # kb-15: one utility over every labelled question. A conversation failed either way (shown
    # another article than its own, or none) weighs no more than a tune question: four tune
    # questions given their article (+4) outweigh that conversation shown a wrong one (-3); the
    # old key (the conversations' utility before the tune halves') withdrew all five.
    bench = _bench()
    kb = knowledge_base()
    other = kb.get("export-data")
    assert other is not None
    reading = Reading(((other, 12.0),), {a.slug: 0.0 for a in kb.articles} | {NONE: 0.5, other.slug: 0.5}, 0.3, other, 0.3, 12.0)
    tune = [({"text": f"tune question {i} the export article answers", "article": other.slug}, kb, reading) for i in range(4)]
    conversations = [({"text": "a first message the reset article answers", "article": "password-reset"}, kb, reading)]
    chosen = bench.calibrate(tune, conversations)
    assert [a.slug for a, _ in kb.decide(reading, chosen)][:1] == [other.slug]


def test_a_tie_moves_no_threshold():
    # kb-15: with nothing to choose on, every combination ties, and the shipped one stays (the
    # grids' order alone had moved the rare-word check for no gain measured).
    assert _bench().calibrate([], []) == CALIBRATED


def test_a_reference_article_is_marked_as_one():
    kb = knowledge_base()
    devices, crashes = kb.get("apps-devices"), kb.get("app-crashes")
    assert devices is not None and crashes is not None
    assert devices.reference and not crashes.reference
    assert parse_article("x", "# X\n\nKind: reference\nTags: a\n\n1. one").reference
    assert "Kind" not in parse_article("x", "# X\n\nKind: reference\n\n1. one").body


async def test_a_reference_article_is_never_framed_as_a_fix():
    # kb-15: the devices article says what the product runs on; a device stuck on an old OS,
    # told as a problem with a question after it, gets it as an answer, not as "what usually
    # fixes this ... let me know whether that works".
    from supportdesk.commands.evals import evaluate_conversations

    question = "my tablet cant update past android 9 anymore. the acme app on it, is that still fine?"
    assert _answer(question) == "apps-devices"
    convos = [{"name": "a device on an old OS", "turns": [{"customer": question, "expect": {
        "agent": "technical", "tools": [{"name": "search_kb"}], "reply": ["Apps and devices", "covers this"],
        "reply_not": ["usually fixes", "whether that works"]}}]}]
    results = await evaluate_conversations(convos, config=str(REPO / "agents.toml"))
    assert all(r.passed for r in results), [r.failures for r in results]


def test_an_article_told_in_other_words_and_a_fact_it_states_are_found():
    # kb17: an invitation lost though junk was checked is the invite article's (not the reset's,
    # whose steps also say "check spam"); leaving for another vendor is an export; a question of
    # how many devices may stay signed in, or which address the notifications come from, gets
    # the article whose steps state it (the reply quotes the steps: the fact is said). Learnt
    # from tools/kb/examples-written.txt's kb17 lines: without them these read as a reset, nothing,
    # the lost-phone article and nothing.
    kb = knowledge_base()
    asked = {
        "added our new hire to the workspace yesterday but the join email never came, he checked spam twice": ("team-invites", ""),
        "we are switching to a competitor next month, how do we take all of our stuff out of acme at once??": ("export-data", ""),
        "can i be logged in on my phone, tablet and both laptops together or is there a maximum": ("signed-out", "five"),
        "our mail filter blocks your notification mails, which sender address should it allow": ("notifications", "notifications@acmecloud.example"),
    }
    for question, (slug, fact) in asked.items():
        hits = kb.answer(question)
        assert hits and hits[0][0].slug == slug, question
        assert fact in " ".join(hits[0][0].steps), question


def test_an_integrations_credentials_refused_by_the_api_get_the_api_article():
    # (tech-h18: a job or service of the customer's own whose key the API refuses, told without
    # "401" or "api key", left the search unsure: its written examples teach the kind.)
    assert _answer("the overnight integration that sends orders into acme via the api is being rejected, it says our credentials are not accepted") == "api-webhooks"
    assert _answer("since thursday the api says our service account is not authorised, we didn't touch anything") == "api-webhooks"
