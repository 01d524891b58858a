"""Issue 38's held-out conversations (evals/<family>-tune|held.jsonl), written before the model
changed for them: each family's both halves pass, but for the misses listed here, which are
measured as misses so that one which starts passing is moved into the passing set."""

from __future__ import annotations

import pytest

from supportdesk.commands.evals import evaluate_conversations, read_jsonl
from tests.conftest import REPO
from tests.money_turns import passes

FAMILIES = ("article-choice", "act-kind", "said-stays", "refund-refused", "demo-calendar", "hand-back", "route-5", "acts-5", "money-5", "kb-6", "learned-6", "route-6", "acts-6", "money-6", "mind-6", "offers-7", "route-7", "money-7", "tech-7b", "money-7b", "route-7b", "consent-8", "intents-8", "kb-8", "kb-9", "money-9", "kb-10", "unknown-ground-10", "kb-11", "money-10", "consent-10", "money-12", "ground-12", "route-12", "kb-12", "kb-13", "money-13", "money-13q", "ground-13", "route-13", "kb-14", "cal-14", "plan-14", "route-14", "money-15", "money-16", "route-15", "kb-15", "slots-15", "route-16", "kb-16", "money-17", "slots-16", "bill-18", "money18", "acct17", "talk-17", "sec17", "kb17", "plan19", "dates15", "kbfacts15", "reset15", "multi-15", "tech-h18", "money-h18", "controls-h18", "money-20", "tech-20", "acts-20", "money-16b", "route-16b", "kb-16b", "kb-17", "acts-17", "money-17b", "cancel-18", "talk-18", "kb-18", "money-24", "kb-24", "money19", "facts19", "talk19", "two19", "money26", "two26", "route20", "two20", "h32", "h30")
CONFIG_FAMILIES = ("config-agent", "config-hand-back", "route-5-config", "route-6-config", "route-7-config", "route-7b-config", "security-8", "security-9", "scope-9", "security-12", "security-13", "route-14-config", "config-15", "route-15-config", "route-16-config", "acct17-config", "sec17-config", "kbfacts15-config", "reset15-config", "tech-h18-config", "tech-20-config", "route-16b-config", "config-17", "config-18", "config-24", "config19", "route20-config")  # run on evals/config-agent.toml: an agent only the config knows

KNOWN_MISSES = {
    # h30 (held-30's three seen misses by kind and two20's polish; before: tune 5/8, held 4/8 with
    # an expectation's "1,299.99" written "1299.99" fixed before the first run; after: 8/8, 7/8).
    # A reward asked for bringing friends, in words with no programme's noun ("i get some reward or
    # money back?"): the router leans to billing on "money back" and billing answers the refund
    # policy; the ground reader learnt referral and affiliate programmes by their nouns only.
    "h30 (held): no article: a reward for referring friends, non-native",
    # route20 (who gets the message: tries counted are no repeat contact, an invoice id asked for or
    # about is billing's known or not, a reassuring clause set aside, a phishing's bait no money;
    # before: tune 1/6 + 2/5 config, held 1/6 + 1/5 config; after: 6/6 + 4/5, 5/6 + 3/5). The
    # routing is right in both article misses; the articles abstain: "since tuesday" leans the
    # article reader to restoring files (its one written example naming a weekday), and the
    # authenticator code retried "2 times now" in non-native words finds no sure article.
    "route20 config (tune): the login alert was me, no stress; the desktop sync is the matter",
    "route20 (held): attempts: retried the authenticator code twice, non-native",
    # Held, config desk: a phishing's ask told while billing or technical holds it, in words the
    # access reader does not read as someone else's access, stays with billing or goes to it (the
    # specialist's scope reading hears the card words as billing's matter; not the router's).
    "route20 config (held): billing holds it, then a message wanting the card's security code",
    "route20 config (held): technical holds it, then an email asking for the card and its expiry",
    # two20 (two matters in one message, the second taken up in the same reply: a price and a
    # setting's place numbered or joined, an article's fact and an invoice or the next payment, a
    # trouble and a money action asked for, offered after the steps and run only on the yes; tune
    # 4/7 and held 1/7 before): route-5 (tune) pins the old wait (technical active, the invoice
    # pending) and is a pinned training file of the readers (its opening's "agent" is a routing
    # and money-gate example for technical): since two20 an invoice asked for is information,
    # answered after the steps in the same reply, billing active after it. It misses by design,
    # as route-6 does.
    "route 5 (tune): sync and an invoice in one message",
    # two26 (an information question waiting behind an answered question taken up in the same
    # reply, two reads of the account asked together both answered, a person asked for called "a
    # person"; tune 0/6 and held 0/6 before, 6/6 and 5/6 after): "what was my last payment and
    # when is the next one" is not split into two questions (no joining word before "when": "and
    # when is the next one" reads as the rule's one question), so only the next payment is said.
    "two26 (held): two account reads: the last payment and the next one, lowercase",
    # acts-6 (tune) pins the old wait (billing active after the price, the two-phones question
    # pending for technical): since two26 an information question the router places surely on
    # another agent is taken up in the price's reply (held-26's "the pro price and where two-factor
    # is switched on" wants that), so it ends with technical. It misses by design, as route-6 does.
    "acts 6 (tune): two matters, starter price and two phones",
    # two19 (two matters in one message, both answered: a question beside a trouble's steps is
    # answered in the same reply, the steps' report goes back to their agent, a price and a read of
    # the account asked together; tune 2/7 and held 2/7 before, 6/7 and 4/7 after): "my
    # notifications stopped coming through on desktop" finds no article (the learned article reader
    # hears "coming through" as webhooks' and abstains), so no steps are given; the question beside
    # it waits with the offer of a person, as before.
    "two19 (tune): desktop notifications stopped, and the next payment, one message",
    # Held: phone notifications that no longer show up get the sync article (the article reader's
    # pick, not the two matters'); the price beside it is answered after those steps all the same.
    "two19 (held): phone notifications gone and pro's yearly price, 'still nothing', then 'fixed now, thank you'",
    # Held: "im not getting any alert emails anymore. when do you charge me next?" and a sync told in
    # a sentence before "what was my february invoice number?" are not split into two matters
    # (triage.issues: a sentence told before a question is its preamble; splitting there cost
    # seen conversations, "we're moving to another provider. what's the way to get ... out").
    "two19 (held): alert emails gone, and when the next charge comes, one message",
    "two19 (held): ipad files out of step with the computer, and february's invoice number, one message",
    # route-6 (tune) pins the old wait (turn 1 with technical, the price pending) and is a pinned
    # training file of the readers (its opening's "agent" is a routing example for technical): its
    # expectation cannot move to the round-19 rule (the price now comes in the same reply, billing
    # active after it) without teaching the router that a crash is billing's. It misses by design.
    "route 6 (tune): crash on the ipad and a plan price",
    # facts19 (a fact an article states asked as a question: a status page, how long a lock
    # lasts, which characters sync skips, the notifications' sender; tune 6/8 and held 6/8 before,
    # 7/8 and 8/8 after; held-25's four and held-24's sign-in IPs pass since): "where can i see if
    # acme cloud is having an outage right now" is one sentence the learned money gate reads as
    # money (1.0, as "where can i see if acme is down"), so triage sends it to billing; teaching the
    # gate product-status questions needs its training lines and a rebuild.
    "facts19 (tune): where to see an outage, the status page",
    # config19 (the config desk's security matters told in new ways; tune 6/7 -> 7/7, held 5/7 ->
    # 6/7; seen since: held-24/25 config's android phone not owned, code at login beside "nobody
    # broke in" and deletion threat at a look-alike site, config-18's authenticator codes beside a
    # denial, held-23's holiday and held-25's dreaming bot, chit-chat the scope reader now knows): "where do I enable the 2fa thing for login" names "login" beside "2fa", and
    # the article search leans to the sign-in article and is left unsure (kb.answer abstains).
    "config19 (held): negation, terse: not a hack, enable the 2fa thing",
    # talk19 (chit-chat about the assistant, a terse matter after a hello; tune 5/6 -> 6/6, held
    # 4/6 -> 5/6): "what do you do when nobody is writing to you?" is words the scope reader knows
    # too few of to read (scope.known_share), and its "do" question goes to the technical agent.
    "talk19 (held): social: what the bot does when nobody writes",
    # cancel-18 (a cancel told after its reason or beside an app trouble, kept facts; tune 3/8 and
    # held 6/8 before, 7/8 and 6/8 after; held-22/23's studio, mac app, other tool, INV-5300 and
    # yearly-price-after-the-plan pass since, and since two19 the two prices beside a trouble).
    # ("can you tell me what INV-9001 is for? <email>" passes since route20: an invoice id asked
    # about is no fact of who the customer is, and billing's.)
    # acts-17 (topic words are no request: remarks and questions about a reset, a link, a card, a
    # refund or a plan; tune 8/10 -> 10/10, held 6/9 -> 8/9): "yo hook me up with a fresh pw link"
    # reads as a greeting to the act reader ("yo" opens greetings; a small label pays little for the
    # words it never saw, acts.ACT_BACKGROUND), so the email after it answers nothing asked.
    "acts 17 (held): request: slang, the pw link, email next",
    # sec17 passed because the act reader heard "and it goes to my email on file right?" as a
    # request (0.48); read as the question it is since acts-17, the rule of tech-20 applies (a
    # question beside the request: the link waits for the customer's yes, engine/confirmation.requests_apart).
    "sec17 (held): two questions, locked out and where the link goes",
    # Measured after the knowledge base's abstention and the demo calendar; each one that
    # starts passing moves out of this set. (kb-12: 31 conversations moved out once the
    # knowledge base's model learnt tools/kb/examples-written.txt: an older version typed over,
    # two devices disagreeing, a csv for the auditor, one folder for one person, an app that
    # hangs, working offline, and product questions no article answers.)
    # ("overwrited my notes by mistake ... go back" and "account email changed, i never made that
    # change" lean billing in the router but name no money: since billing needs money named
    # (cues.names_money, held-5), they reach the technical agent and pass.)
    # Held-4 (32/45 and 7/9 before, 32/45 and 8/9 on its first run after the round that fixed
    # held-3's misses; then the gate learnt a bare month, so it is seen; 44/45 after the round on
    # its failure kinds: questions about a change, changes inside a yes, duplicates told without
    # the word, charge ids, disputes, deletions, a single consonant). What each still misses:
    # ("no article: scheduled sending" passes since the knowledge base's example model must agree
    # with an article that covers a question only just: tools/kb.py EDGE.)
    # Route-5 (before: tune 6/8, held 6/6, config tune 8/10, config held 5/8). "sync trouble, then
    # a login alert" passes since a peer sharing the specialist's skill gets its matter back (the
    # router decides whose it is, not the skill); "email changed not by me", "password changed,
    # not by me" (held-3's and config hand back's) since a disowned action reads as "someone" and
    # its "not" no longer votes as the technical agent's "not working". What still misses:
    # ("sending a fax" passes since kb-12: routed right since billing needs money named, and the
    # knowledge base's example model, taught product questions no article answers, abstains.)
    # "somebody stole my account": billing now hands it back (route-6: a charge's "took" is no
    # charge without money named), but "stole" is the technical agent's stolen-phone word.
    # acts-5 (questions about an action v. requests; tune 8/14 and held 6/10 before the act reader
    # learnt it, tune 14/14 and held 8/10 after; tune's openings are trained on):
    # ("does cancelling delete my files" passes since route-6: a question about what an account
    # action does is about the action, triage.asks_what_an_account_action_does.)
    # (The preamble no longer outweighs the question (route-6), so it reaches billing; since
    # money-12 the price is followed by what a downgrade does to the period paid for, and it passes.)
    # ("sync stopped after the update" passes again since the thresholds were recalibrated with
    # kb-6's questions that share only a generic word with an article: AGREE 0.75, tools/kb.py.)
    # Held-5 (32/46 and 6/12 before this round, 32/46 and 9/12 on its first run after it; then
    # seen, its misses fixed as kinds). What it still misses: "roll back a sheet to last week's
    # state" reaches technical, but no article's words cover a spreadsheet put back as it was, so
    # the desk says it does not know (safe, and a miss).
    # kb-6 (before the calibrated thresholds and learned words: tune 10/10, held 6/8; after: 10/10,
    # 7/8). "documents i edit on my ipad never appear on the pc" shares no word with the sync
    # article and the example model reads it as no article's: the desk abstains (safe, a miss).
    # Route-6 and acts-6 (before: route tune 4/8, held 6/6; config tune 6/8, held 4/6; acts tune
    # 6/10, held 6/8). What still misses after the round:
    # "stole" / "nicked" an account: the technical agent's examples say "someone stole my phone,
    # please lock my account", and the security agent's eight examples never say "stole"; the
    # router follows the words (technical 0.87). Routing by the object of the verb is not learnt.
    # ("account nicked, locked out" passes since security8: an agent taught few examples is
    # smoothed towards the desk's background, classifier.BACKGROUND_MASS.)
    # (A hedged yes after an offer and "great thank you, that was all i needed" after a price
    # pass since the confirmation reader learnt a hedged go-ahead and leave-taking: confirmation-6.)
    # money-6 (what was said stays said; tune 7/12 and held 7/10 before, 11/12 and 8/10 after).
    # ("whats on my account for march?" reaches billing since route-7, and is answered from
    # March's charges since money-12: a question about a month is about its charges.)
    # ("two things, the ipad and a february bill" passes since consent-10: "ok it works now ty"
    # is thanks clause by clause to the act reader, so the february question is handed over.)
    # Held-6 (26/48 + 8/13 before round 6, 29/48 + 7/13 on its first run after it, then seen).
    # Passing since round 7: what a money question asks, plans in words, a change at renewal
    # (money-7: skills/money/asks.py, plans.py); the offer's own words as a yes and a double
    # charge told by both its days (offers-7: engine/confirmation.py, money/reads.py); money
    # questions inside a condition, matters counted off, a refer-back, another language and a
    # named account closed for good (route-7: readers/acts.py, triage.py, cues.UNKNOWN_GROUND).
    # An article the desk abstains on ("Apps and devices" for working offline):
    # Config desk: security not offering its tools; billing's capability list. (The ex who knows
    # the password passes since security-12: the learned access reader, router.access_owner.)
    # (The two-factor question, which abstained
    # Config desk: security told without its examples' words goes to technical; security not
    # offering its tools; billing's capability list. (The two-factor question, which abstained
    # since kb-6's calibrated thresholds, passes since the knowledge base covers a question by
    # what it asks: tools/kb.py _ASKED.) (The windows session with its hedged yes passes since
    # security-13: "hmm ok sure" is a pause and a clear yes, engine/confirmation._clear_yes_after_pause.)
    # ("whats my plan, <email>", then a tablet not owned, passes since route-14: the desk intents
    # reader's my_plan answers the plan; the tablet reaches security since security-13.)
    # offers-7 (a yes reaching the offer it answers; tune 5/10 and held 5/8 before, 8/10 and
    # 6/8 after). What still misses:
    # (The first of two days named, "on the 24th and 25th", was the refund's target until
    # money-12 read days said in one list, dialogue._BARE_DAY: it passes.)
    # (A charge above billing's limit asked about, then a yes, asked again by the senior, passes
    # since money-13: billing offers the refund on the senior's behalf, Offer.for_agent.)
    # Two matters joined by "+" ("two 29.99 charges in march on my card + i want to change my
    # password, send reset link"): since route-13 triage splits there and the refund is offered
    # first; on "ok yes" the waiting matter is handed over and the reset link sent in that turn, as
    # offers-7's tune half ("double 9.99 and a reset link, both in turn") expects, where this held
    # conversation expects it only when asked again (the two halves disagree: the lead's call).
    "offers 7 (held): two 29.99 and a password reset link",
    # Route-7-config (security7; before: tune 5/10, held 3/8; after: tune 6/10, held 4/8; held-6
    # config 7/13 -> 8/13). ("customer id given, unknown
    # browser" passes since a tool parameter taking an id or an email is filled by either; route-6's
    # "stolen login while technical holds" since an example the desk's own model places surely
    # with the security agent teaches it too: router.ceded.)
    # (A disowning with no "someone" in it passes since security-13: the access reader learnt the
    # desk's labelled lines, and a lean to the security agent too weak to route is placed by it,
    # router._by_access.)
    # route-7 (before: tune 7/10, held 5/8; after: 9/10, 7/8). Routing and the refer-back pass;
    # what misses is the knowledge base's choice of article (tools/kb): "my phone doesnt show the
    # notes i wrote on my laptop" gets no article (the desk abstains), so "same as before" follows
    # no steps; "my desktop app wont open", handed over second, gets "Apps and devices". ("same as
    # before" passes since route-12: a terse reply is up to technical.REPLY_MAX_WORDS = 10 words.)
    # (money-7's "i want the biggest plan you have pls" passes since route-12: a plan named by its
    # place names money by rule, cues.PLAN_PLACED.)
    # no steps; "my desktop app wont open", handed over second, gets "Apps and devices".
    # money-7 (tune 3/10 and held 1/8 before, 10/10 and 7/8 after). Routing, not the money
    # skill: "i want the biggest plan you have pls" names no money word triage's money test
    # knows, so it reaches the technical agent.
    # Held-7 (41/50 + 9/14 before round 7, written before it; 41/50 + 10/14 on its first run
    # after it: round 7's fixes were held-6's kinds, and held-7's misses are other kinds).
    # Which article: an uncovered question given the sync article; notes a child deleted not
    # found by the restore article (the knowledge base abstains: "I don't know"):
    # (Passing since round 7b: a refused refund said why, plans by their place and cancellation
    # in other words, a list reference with its yes (money-7b); a reset link asked for, and the
    # account's email kept for it (tech-7b).)
    # ("what card do you have on file" passes since a card-on-file question is billing's however
    # "card" leans, route-7b: triage.py.)
    # Config desk: ("I did NOT sign in from brazil" passes since a disowning votes as "someone",
    # and "a person, someone is changing my files" since the security agent calls its tool for a
    # person when a clause requests it in that tool's words: route-7b, classifier.read_denials,
    # skills/generic.py.) (A stolen laptop with "log me out everywhere" reaches security since
    # security-12: readers/gates.py tells_access, router.access_owner.) "nobody hacked me" reaches technical since route-7b (a denied
    # matter votes as its denial); the technical skill framed "i just want to change my
    # password to something longer" as a fix ("usually fixes") until security-12: a trouble denied
    # is set aside and a want with nothing failing is answered (skills/technical.tells_trouble).
    # tech-7b (tune 3/9 and held 4/7 before; a reset link asked for, the speller keeping English).
    # "a whole folder got deleted" is lost data to cues.DATA_LOSS, so an engineering ticket
    # before any article (not the technical skill's to change here):
    "tech 7b (tune): my dog on the laptop, a folder deleted",
    # ("dark mode" in the desktop app passes since kb-13: a word only the examples no article
    # answers use names an absent matter, tools/kb.py `absent`; "photos wiped on my tablet" since
    # a problem the model answers alone is covered by the words the desk knows.)
    # route-7b (card questions; before: tune 3/6, held 1/5 (its fifth added after the change, a miss both before and after); config: tune 2/8, held 2/6; after: tune 4/6, held 1/5; config tune 6/8, held 3/6; held-7 41/50 -> 42/50, held-7-config 10/14 -> 12/14).
    # Round 8 (intents8): tune 6/6, held 5/5: the card on file asked is read by the learned desk
    # intents reader (cues.asks_card_on_file), no longer by the shapes of a phrase rule.
    # Config desk: a phone or a device "not mine" is the technical agent's (its lost and stolen
    # phones' words outweigh the disowning's "someone"); "sign me out on all devices" beside a
    # lost phone or tablet too; "nobody got in ... how do i change it" reaches technical, which
    # framed the how-to as a fix (as held-7's "nobody hacked me" above; answered since security-12,
    # as is route-7's two-factor question beside "nothing is wrong").
    # "a phone number i dont recognise": the lexicon reads "not recognise" as unrecognised (the
    # desk's unknown charges), so the disowning adds no "someone" and the phone words win.
    # Route-7's "CUS-1001 here, my account sent messages to my contacts that i never wrote"
    # passed before route-7b by billing's sure lean (0.54) and billing's hand-back; the disowning
    # now votes "someone" and the router is torn (security 0.46, billing 0.45), and the message
    # reads as naming money to the gates reader (billing stays a candidate), so triage asks.
    # Held-8 (32/51 + 12/15 before round 7b, written before it; 31/51 + 12/15 on its first run
    # after it; then a plan wanted at renewal no longer heard as money back, 32/51 seen).
    # Which article: (questions no article answers met by triage's "billing or technical?" pass
    # since kb-8: a question or a problem naming no money, unsure between billing and the one
    # technical agent, is technical's: triage._product_matter; so do a spreadsheet saved over, a
    # Mac app quitting and the notifications half, since a problem told is covered by the words
    # the articles know, tools/kb.py `told`). Documents not reaching a phone (the sync article)
    # are still abstained on: the example model reads "not arriving ... phone" as the two-factor
    # codes' (and the desk abstains rather than show that article, since the told coverage reads
    # BM25's first alone):
    # "sign in through azure ad fails ... with an error": BM25 finds single sign-on first, the
    # example model is sure (0.93) of "Can't log in" and moves it first, so "same error" after its
    # steps is met with a reset link, not the senior agent. (A veto kept from an article lacking
    # more of the rare words fixed it, but recalibrated with it the thresholds lost six other
    # conversations' articles: not kept.)
    # (It passes since route-12: a sign-in through an identity provider, cues.PROVIDER_SIGN_IN, is
    # taken further when its steps failed, with no reset link offered; the article is still "Can't
    # log in", the knowledge base's choice.)
    # (A reset asked for outright, with the email up front or given next, passes since the lead
    # decided the request is the consent: send_password_reset is confirm = "request", consent-8.)
    # Money: a duplicate already refunded asked again; a date in words; plans in words
    # ("the biggest plan", "mid tier") and "never charge me again"; questions answered with the
    # charge list (the payment method, the plan's price). (Passing since consent-8: a duplicate
    # asked back before the email, or told with its days in brackets and "pls sort", goes up at
    # once so the senior's one question takes the yes; "the second one" after the price list is
    # that plan, offered: money/reads.py came_for, slots.py, money/plans.py. "two 9.99s went
    # out" passes since an amount made plural is charges of it and a duplicate told in the desk's
    # own words is heard by the desk intents reader: slots._AMOUNT_PLURAL, heard.heard_duplicate.)
    # (Config desk: "somebody else has been in my account", left with triage as vague, reaches
    # security since security-12: the access reader read it, router.access_agent.)
    # security-8 (security8; before: tune 5/10, held 6/8; after: tune 6/10, held 6/8; 8/10 and
    # 8/8 once the config desk's securing examples moved to security, below). An agent taught few
    # examples is smoothed towards the desk's background (classifier.BACKGROUND_MASS), so a word
    # it never heard no longer counts as surely not its own: "someone is reading my stuff"
    # reaches security (and route-6's nicked account, route-7's iphone not mine, route-7b's phone
    # number on the profile). What still misses: a leaked password told without "leaked" (the
    # router has no other word for a leak in security's examples); a recovery address "not mine"
    # (the technical agent's email and profile words):
    # The config desk's file (evals/config-agent.toml) gave the technical agent "someone stole my
    # phone, please lock my account" and "I lost my mobile, how do I secure my account", copied
    # from the shipped desk, which has no security agent; on this desk securing the account is
    # security's by its own description, so the two examples moved there (seven security misses
    # above pass since). "also pls log me out everywhere, my ex knows my password" after an
    # invoice question leaned technical (its password words) once billing hands it back; it
    # reaches security since security-12 (router.access_owner), as do the leaked password above.
    # intents-8 (written before the desk intents reader: tune 6/12, held 5/10; after: tune 10/12,
    # held 10/10). (Both tune misses pass since money-9: "shut it down pls" beside "dont want to pay
    # for acme anymore" reaches billing by the money skill's learned reading of a request to stop
    # paying, triage._stops_paying; "how am i billed, card or paypal?" asks which one pays.)
    # kb-8 (which article answers; before: tune 4/10, held 2/8; after: tune 4/10, held 3/8).
    # Product questions whose words an article holds in another sense ("comments" is the
    # notifications article's, "company" single sign-on's): BM25 confident, the example model
    # not sure enough that no article answers to withdraw it:
    # An article's matter told only in words no article nor example holds ("goes black and
    # shuts", "the old one again", "boots me back"): the desk abstains (safe, a miss); "my son
    # cleared out ... lost forever" reads as the lost phone's ("the old one again" passes since
    # kb-13's told coverage of the model's own article). Word meaning beyond the articles'
    # and examples' words is not learnt (wordllama 0.4 measured in benchmarks/bench_kb.py did worse
    # on the held halves). (The tune half's four such, "the friday one back", "dies", "phone shows
    # old text", "buzz ... silent", pass since kb-9: the example model learns the tune
    # conversations' first messages, benchmarks/bench_kb.py EXAMPLE_CONVERSATIONS.)
    "kb 8 (held): son cleared recipes on the ipad",
    # ("opening any board takes like a full minute now, the spinner just goes round" passes since
    # route-13: the scope reader learnt slowness told with a spinner as the desk's own.)
    # Held-9 (36/52 + 9/15 before round 8, written before it under the reset-link policy;
    # 41/52 + 11/15 on its first run after it). Which article: a matter told in words no article
    # or example holds is abstained on (safe, a miss): restore, export, team (sync and crash pass
    # since kb-9):
    # (Money: an invoice asked by its month, a charge called a duplicate that is not one, a change
    # at renewal, "the last one, yearly" and the billing period asked pass since money-9; "need to
    # change how i pay you" after the email reaches billing since money-10.)
    # Config desk: (a pickpocketed phone still signed in and phishing reach security since
    # security-9, below.)
    # security-9 (security8b; before: tune 3/8, held 4/6; after: tune 6/8, held 4/6; held-9 config
    # 11/15 -> 13/15). The desk's own name and account ids no longer route ("... into my acme"
    # leaned technical: router.without_names), and an example the desk's model places surely with
    # the security agent moves there (router.ceded), so route-7's password-changed mail and
    # profile email, and held-6's recovery phone, pass too. What still misses: someone the customer
    # knows with the password told in words no agent's examples hold ("flatmate figured out",
    # "sister ... keeps getting in" beside technical's password and login words), and a password
    # typed into a fake page told without "phished" or "fake" in security's words ("click link in
    # mail that look like acme", "a scam website"): the word model has no word for the kind.
    # (All four pass since security-12: the learned access reader reads the kind,
    # readers/gates.py tells_access, and the message goes to the agent whose examples tell of it,
    # router.access_owner.)
    # Held-9 config (11/15 before security8b, 13/15 after; the ex who knows the login passes since
    # "do it" is an imperative, not a question opened by "do": engine/confirmation._QUESTION_START;
    # a session from an android phone when the customer has an iphone since scope-9: the
    # customer's own thing of a kind named otherwise disowns the one seen, classifier._owns_another).
    # kb-9 (an article's matter told in words no article or example holds; before: tune 4/8,
    # held 2/6; after: tune 4/8, held 2/6, and held-9 41/52 -> 43/52: its stale tablet and white
    # window learnt from kb-8's tune conversations). Still abstained on: a sheet typed over ("the
    # tuesday one again"), drafts out of step between laptop and phone, the ipad behind the
    # desktop (the model sure of sync, 0.91, below SURE 0.95), a spreadsheet of contacts for the
    # accountant (BM25's export article covering 0.31 of it, below MIN_COVERAGE):
    # A wrong article: "let my assistant open just the invoices folder" is the crash article's to
    # BM25 and to the model ("open" is its word: "won't open"); letting someone in is not learnt.
    # ("print address labels" leaned billing; it reaches technical since security-9's router
    # Routing, not the knowledge base: records for a lawyer go to the senior agent as a legal
    # matter ("print address labels" leaned billing; it reaches technical since security-9's router
    # changes; "any ready made templates", read as outside the desk's scope before, reaches the
    # technical agent since money-10's readers; records for a lawyer, a legal matter to the
    # "lawyer" rule, reach the export article since ground-12's learned grounds.)
    # money-9 (held-9's money kinds; tune 3/8 and held 3/6 before, 7/8 and 6/6 after). "what plans
    # do you have?" names no plan, and the money gate does not read "plans" as money, so billing
    # (which needs money named) steps aside and the technical agent abstains:
    # (passes since route-12: the gate learnt the desk's labelled intents, "what plans" among them)
    # scope-9 (the config desk's security matter in new words; before: tune 6/8, held 3/6; after:
    # tune 6/8, held 4/6, held-9 config 14/15 -> 15/15). What still misses: a password exposed
    # told without "leaked" ("sitting in some public paste site", "in a list on internet"), and a
    # phone sold with the app still signed in: the router hears the technical agent's password,
    # phone and "log out" words, and no public labelled intent says it (Banking77's
    # compromised_card taught to security pulled card charges from billing: not kept). Another
    # company's account closed for good no longer reads as a deletion of this desk's
    # (cues.without_desk_name), but the router still places it with security. (The paste site,
    # the dump and the phone sold pass since security-12: router.access_owner.)
    "scope 9 (tune): a closed account elsewhere is not ours",
    # (Since route-12 the money gate learnt the product's own questions as no money: the move to
    # another tool passes, the auditor's download reaches the technical agent, which abstains (the
    # article is the knowledge base's); the accountant's receipts folder still reads as money, 0.70.)
    # kb-10 (an article's matter told in words no article or example holds; written before the
    # model changed: tune 5/8, held 2/6). Missed: "pasted over the quarterly forecast ...
    # yesterdays numbers", "without internet on a long flight" and "erased half of the guest list
    # ... how it was on saturday" share too few words with the restore and apps articles or their
    # examples (abstained, safe); a move to another tool, an auditor's download and an
    # accountant's receipts folder read as money by triage (billing); "will my notes still open in
    # the subway when there is no signal?" gets the crash article ("open"). (The guest list
    # erased passes since kb-13: told around the customer's own things, covered by what the desk knows.)
    "kb 10 (held): accountant should see the receipts folder too",
    # unknown-ground-10 (an account blocked, frozen or on hold, another language asked for, read by
    # the learned ground reader, readers/gates.py `ground`; before: tune 4/8, held 3/6; after: tune
    # 7/8, held 5/6; "the help articles translated to french" passes since scope-11: the scope
    # reader decides "outside the desk" only on words the corpora know; "someone who speaks
    # portuguese", read below the threshold, passes since ground-12 taught the reader a person who
    # speaks a language named).
    # ground-12 (privacy, ownership, legal matters, discounts, invoice details and deletion learnt
    # by the ground reader from the desk's labelled lines, the phrase rules gone; before: tune
    # 4/11, held 6/11; after: 11/11, 10/11). ("a 20% code in your newsletter" passes since
    # ground-13: a percentage a code is worth is a discount to the rule, cues.AMOUNT_OFF.)
    # ground-13 (desk matters near a ground: a partner invited, a logo on the workspace, one's own
    # export, a folder shared; the ground reader learnt each near matter as its own label,
    # ground-lines-13-tune; before: tune 8/10, held 9/10; after: tune 9/10, held 10/10; the
    # bookkeeper's receipts folder, which tipped the money gate, passes since route-13's lines).
    # (Since route-12: switching providers and the two devices about a recipe pass (the gate; the
    # off-topic word list yields to the scope reader, scope.listed_outside); quitting acme with
    # every note still reads as money, "at the end of the month" 0.99.)
    # kb-11 (written before the model changes: tune 2/8, held 1/6; unchanged after, since neither
    # a logistic regression in naive Bayes' place nor kb-9's and kb-10's told examples kept the
    # held halves' articles: benchmarks/bench_kb.py LogisticModel). Abstained on (safe): a rota
    # wiped, a bookkeeper's or a temp's folder, two devices disagreeing, a program vanishing, a
    # flatmate's typing over; routed away from the technical agent (triage or billing): leaving
    # with every note, switching providers; a wrong article: emoji reactions get the notifications
    # article. (The gantt chart reaches the technical agent, which abstains, since scope-11.)
    "kb 11 (tune): quitting acme, want a copy of all notes",
    # money-10 (a change of how the customer pays told without a payment method's noun, verbless
    # requests; before: tune 6/8, held 4/6; after: tune 8/8, held 5/6). "how i pay for acme needs to
    # change", the matter said as the sentence's subject, is read by the desk intents reader as a
    # change of card below its bar (0.96 < cues.CARD_CHANGE_ASKED_CONFIDENCE), so it goes to the
    # technical agent and the card told next gets the card-troubles article:
    "money 10 (held): how i pay needs to change, card, 'yep'",
    # route-12 (wording that leans to another agent's words; before: tune 12/18, held 19/23; after:
    # tune 15/18, held 21/23). (An auditors' read-only access, read as a blocked account by the ground
    # reader before, passes since ground-12's reader; "the plan with the most features" and a company
    # card that "replaced" the "personal" one pass since route-13: billing keeps a money intent told
    # in the technical agent's words, and the gate learnt a card or bank told as a replacement.) What
    # still misses: "we did each step and the error is still there" points back with no pronoun, so
    # it is searched again. (Payments from a new bank account pass since bill-18: billing's examples
    # of a failed subscription payment moved the router's lean.)
    # (Closing the business with a copy of all data, read as privacy since ground-12, the finance
    # guy's view access to the invoices folder, read as invoice details, and our logo and colours
    # on the workspace, read as a deletion, pass since ground-13's near matters.)
    "route 12 (held): microsoft sso AADSTS error, each step done",
    # Held-10 (40/53 + 11/15 before round 9, 41/53 + 11/15 on its first run after it; then seen,
    # its kinds fixed: a reset asked with a customer id, thanks clause by clause, a no with a
    # reason to a desk-file agent (consent-10); prices against the current plan, two reads in one,
    # short charge ids, money back in the customer's words (money-11); service questions, chit-chat,
    # "nothing" and "i definitely did not" as denials (scope-11)). What still misses: the apple
    # watch and a mac app spinning share no word with "Apps and devices" and the crash article
    # (abstained, safe). ("thinking about cancelling, what happens to my files" passes since
    # money-12: cancelling named in any form in a question about what it would do is answered.)
    "understand 10 (held): question: an apple watch app",
    # security-12 (the config desk's security matter told without the security agent's words, and
    # securing questions with nothing wrong; before: tune 5/11, held 8/10). Someone else having the
    # account is read by the learned access reader (readers/gates.py tells_access) and goes to the
    # agent whose examples tell of it (router.access_owner). What still misses: an ipad sold with
    # the app signed in, read as no one else's access (0.26 with "acme", 0.00 without: the reader's
    # devices given away are the desk's few lines). A how-to beside a trouble denied ("no one got
    # in", "nothing is wrong") is answered, not framed as a fix (skills/technical.tells_trouble;
    # tune 9/11 -> 10/11, held 8/10 -> 8/10), but "nothing happened" is no denial of a trouble
    # (after a click it is the trouble), so that one is still a fix; and "nothing is wrong and
    # nobody hacked me, how do i change my password" is answered with the "Can't log in" article
    # (the knowledge base's choice). (All three pass since security-13: the access reader learnt
    # devices given away or sold, "nothing happened" opening a clause denies an incident, and the
    # knowledge base is searched without the trouble denied.)
    # security-13 (the config desk's security matter told without its words, "nothing happened"
    # after a click, a how-to beside "nothing is wrong", hedged yeses, another company's account;
    # before: tune 10/13, held 10/13; after: tune 12/13, held 12/13). What still misses: an account
    # at another company (an old employer's, a site's) is placed by the words (senior, security):
    # nothing in triage reads an account named as another company's as outside the desk
    # (cues.without_desk_name serves the deletion ground only), as scope-9's netflix above.
    "security 13 (tune): an account at my old employer closed",
    "security 13 (held): a closed account at another site",
    # money-11 (a price against the current plan, two reads in one, a change asked with its price,
    # a disputed charge's refund refused with the reason, a short unknown charge id; 6 + 4, run as
    # held-only sets; before: 1/6, 1/4; after 5/6, 3/4). (Its two misses pass since money-12: a
    # question about what cancelling does to documents is answered, not offered; "billing cycle"
    # is the account's period by its own noun.)
    # money-12 (a question about what an action would do answered with nothing offered, a price
    # with what a change loses, the billing cycle by its noun, a month's charges asked, another way
    # to pay asked without a change verb, a duplicate told by both days; tune 2/8 and held 3/8
    # before, 7/8 and 4/8 after; 5/8 held once cancelling talked of in any form was answered for
    # understand-10's seen miss). (A refund above billing's limit said yes to and asked again by
    # the senior passes since money-13: billing offers it on the senior's behalf, Offer.for_agent,
    # and "refund it then, thanks a lot" asks for the offer's own action.)
    # ("whats on my acount for march" passes since money-13q: a doubled letter written once is read
    # as the word meant, and a question about a month's charges stays with billing; "team down to
    # pro, what would I pay and would I lose ..." since the price asked beside what a change does
    # is answered too.)
    # money-11 (a price against the current plan, two reads in one, a change asked with its price,
    # a disputed charge's refund refused with the reason, a short unknown charge id; 6 + 4, run as
    # held-only sets; before: 1/6, 1/4; after 5/6, 3/4): a question about what cancelling does to
    # documents is offered the cancellation (an offer, nothing done); "billing cycle" is not read
    # as a question about the plan:
    # kb-12 (tune 4/9 -> 7/9, held 4/9 -> 5/9 with the written examples). Routing, not the
    # knowledge base (route12's): a stylus question reaches billing; a pasted-over list stays with
    # triage as out of scope; two devices disagreeing on a plan reaches billing ("plan"); records
    # for the auditor reached senior as a suspended account (passes since ground-13's calibrated
    # ground reader: no ground read).
    "kb 12 (tune): no article: handwriting with a stylus",
    "kb 12 (held): wife pasted a recipe over the shopping list",
    # (The ipad's old to-do list, the tablet's last week's plan and the minutes replaced with
    # gibberish pass since kb-13: the model's own article covers a problem told by the words the
    # desk knows, and the examples hold more of one device behind another.)
    # A wrong article: "sign", "clients" and "electronically" lean to the devices article's words
    # in the example model, and BM25 finds it confident; kb-13's examples ask about e-signing and
    # signatures (one near this held line's words, that made it pass, was reworded), but this
    # question says neither: "sign" is the sign-in articles' word, "contracts" no example's.
    "kb 12 (held): no article: signatures on contracts",
    # ("keyboard shortcuts" passes since kb-13: its examples ask about shortcuts and hotkeys, as
    # features the product lacks.)
    # Held-11 (41/54 + 13/15 before round 10, 44/54 + 14/15 on its first run after it; one of those
    # three, a refund no reason fits above billing's limit, fixed after the before-run showed it, and
    # the config desk's phishing conversation since the gate's fix of a reset sent on an id alone).
    # What it still misses (credits bought with no balance pass since kb-18; webhooks stopped
    # and a sign-in email swapped pass since kb-13, "leaving one day, everything out" since route-13);
    # a cancellation asked as "stop the subscription" routed to technical. (A duplicate of two 9.99s refunded on the first
    # day passes since money-13; the next payment asked with "team" or "yearly" in it, "the 15th" of
    # this month and a yearly team price asked with the change since money-13q.)
    # (Webhooks stopped and a sign-in email swapped pass since kb-13's written examples of the
    # API and personal-details articles' kinds.)
    # kb-13 (before: tune 6/10, held 5/10; after: tune 8/10, held 7/10). E-signing a pdf reaches
    # senior. (Credits paid for with no balance, routed to billing's charges then, get the credits
    # article since kb-18: triage.tells_of_credits_not_arrived.)
    "kb 13 (held): no article: sign documents",
    # "log in with my new gmail adress instead of the old hotmail one": BM25 finds the login
    # article confident, the model is sure of personal details but its article covers too little
    # of the question ("gmail", "hotmail" weigh most: words the public corpora never hold);
    # "a colleague erased the staff rota": the model's restore article at 0.89, below sure (0.9).
    "kb 13 (tune): sign in with my new address",
    "kb 13 (held): colleague erased the rota",
    # money-13 (a yes to a refund passed up; tune 1/9 and held 1/10 before, 9/9 and 9/10 after).
    # "hey what was the 24 march and 25 march payments" (no question mark) is read as the
    # duplicate reported, so billing passes the refund up at once and the senior asks the one
    # question (an offer made for the senior is for a duplicate seen while answering a question);
    # the yes then runs it once, only the first turn's agent misses:
    "money 13 (held): the 24 and 25 march payments, 'ya refund it thank you very much'",
    # money-13q (money questions answered with what they ask: the next payment asked beside a plan
    # or a period, a day of this month, a change asked with its price, a misspelt "acount", a
    # downgrade's price and what it loses; tune 3/9 and held 2/9 before, 9/9 and 7/9 after). (The
    # price asked as a request, "..., and tell me how much the year costs.", passes since plan-14:
    # asks.told_questions.)
    # "Thinking of going from pro down to starter. What would ... and would I lose ...?": the act
    # reader reads the opening as the change asked for (route13's acts.py), so it is offered:
    "money 13q (held): pro down to starter, monthly price and what is lost",
    # route-13 (wording that leans to another agent's words; tune 9/14 and held 9/13 before, 13/14
    # and 10/13 after: the desk's labelled lines in the desk intents, money gate and scope readers,
    # a money intent kept by billing, "+" as a second matter, a subscription's end as a cancellation).
    # What still misses is the knowledge base's, not routing's: leaving with a copy of everything
    # reaches the technical agent, whose example model abstains (no article). (The ipad a day
    # behind passes since kb-13; the bookkeeper's receipts board and "if we leave acme someday,
    # can we take all our data out as csv", read as grounds on route-13's branch, since ground-13.)
    "route 13 (tune): leaving next month, copy of all boards",
    "route 13 (held): moving off acme in may, keep a copy of files",
    # Held-12 (46/69 = 66.7 % before round 11, 47/69 = 68.1 % on its first run after it: 34/54 ->
    # 35/54, config 12/15 -> 12/15; no money or account action without a yes in either run). What
    # it misses, by kind: articles told in new words (an authenticator's codes invalid, a phone
    # left in a taxi,
    # an old iOS version given the crash fix); dates (the next payment "due" answered with the
    # charges; a US-style "2/16" and a day in words pass since cal-14); what was said kept across turns (the next payment
    # after the card, a double fee told before the email, a customer id after a reset asked); a
    # change of mind to team (down to pro "from the next renewal", read as the current plan, and a
    # year's price asked with no question mark pass since plan-14); a cancellation with no
    # subscription noun to technical; two matters bounced or half answered; chit-chat about a film
    # told "no article"; config desk: a denial of someone's access routed to security, "a staff
    # member immediately" with no person asked (passes since route-15: the desk intents reader's
    # person, cues.asks_for_person). (How long the bin keeps files, read as lost data,
    # passes since kb-14: a loss supposed is no loss told, cues.data_loss_told; the plan and the
    # authenticator, the film and "nobody messing with it" on the config desk since route-14; the
    # identity check's papers since a sure small-talk clause in an unsure whole is no chit-chat;
    # an authenticator's codes invalid and a phone left in a taxi since kb-15's written examples,
    # landed by bench_kb --calibrate's one objective.)
    # (Since money-16b the next payment "upcoming" and after the card, and "yes refund it" after a
    # pair's two days and the email, pass: 'upcoming' is 'next', 'it' is the pair's repeat.)
    # Since acts-17 the reset thingy is heard asked for (the link offered, the email asked); the
    # customer id given instead of the email is noted as a fact, not taken as who (the technical
    # skill's `_tech` takes only a yes or an email as the answer to its reset offer):
    "understand 12 (held): kept: the reset thingy asked, customer id next",
    # (Since money-17b "pro for me from now on please, CUS-1032" reads plan_change: desk intents
    # lines of a plan named for whom and from when, evals/money-lines-17b-tune.jsonl.)
    "understand 12 config (held): negation: not hacked, a longer password is all",
    # kb-14 (which article answers, told in new words; tune 4/6 and held 4/6 before, tune 5/6 and
    # held 4/6 after: a loss supposed ("before it's gone") is no lost data, `cues.data_loss_told`).
    # Written examples of the remaining kinds (codes refused, a phone left somewhere, an old OS)
    # landed in kb-15 with bench_kb --calibrate's one objective; "old iphone stuck on ios 12"
    # passes since (the devices article a reference one, never framed as a fix). Still: authy
    # codes refused find the login article (BM25, the model not sure of two-factor); an old
    # android asked about, no article (model unsure).
    "kb 14 (held): authy codes rejected",
    "kb 14 (held): tablet stuck on an old android",
    # kb-15 (which article answers across the knowledge base, in customers' words; tune 8/12 and
    # held 10/12 before, tune 11/12 and held 10/12 after). A question asked beside a trouble told
    # ("how do i get the intern in? the invite says expired", "she cannot see the folder, how i give
    # her access?", "is it still recoverable or too late") is framed as a fix: the technical skill
    # reads the whole message as a problem told (`tells_trouble`), not the question asked. (The
    # colleague and the folder passes since kb-16: a question of its own beside a trouble,
    # technical.asks_beside_trouble; "how do i get the intern into the workspace?" names nothing
    # the invites article's title and steps name, "workspace" being only among its tags.)
    "kb 15 (tune): question: the intern's invite expired",
    "kb 15 (held): question: a day past the bin's month",
    # (Notes opened "in the subway when there is no signal", a regression of kb-15, pass again
    # since kb17's examples.)
    # cal-14 (dates and what was said: a US-style short date, a day in words, the next payment's
    # day and amount, an email or id given once; tune 5/5 and held 4/5 before the date rules, the
    # same after: a date not read, the whole list of charges was shown, which holds the day asked
    # too; understand-held-12's 2/16 and seventeenth of january pass since). "is my
    # plan billed monthly?" is read by the desk intents reader as a question about charges
    # ("billed"), so the charges are listed, not the plan's period:
    "cal 14 (held): kept: id once, the billing period then the next payment date",
    # plan-14 (a plan change read right; tune 4/6 and held 3/6 before, 5/6 and 4/6 after: a price
    # asked as a request to be told, a wanted plan said as exchanged for another). ("not sure
    # tbh..." then "alright, yes cancel it" passes since money-15: still deciding is a hedge, and
    # the same offer is put again.) "ugh i dunno, maybe not" leans to no ("not"): the offer is
    # turned down, so the later "ok yes, go ahead and cancel" is a new request the gate asks about:
    "plan 14 (held): cancel offered, 'ugh i dunno', then 'ok yes, go ahead and cancel'",
    # (Since money-17b a plan asked for with no verb any cue lists, "i'd like starter from now", is
    # offered: the desk intents reader's lines of a plan named from when, money-lines-17b.)
    # money-15 (plan changes, cancellations, hedges and changes of mind; tune 8/12 and held 6/12
    # before, tune 18/19 (widened before fixing) and held 8/12 on its first run after, 9/12 once
    # its credit check stopped taking "no credit has been added" for a credit added). What misses:
    # "sync was broken all weekend, could i get a 15 dollar credit?": the router sends it to
    # technical on "sync", so no credit is offered (routing, not the offer):
    "money 15 (tune): a $15 credit offered, 'umm not sure, maybe' runs nothing, then 'yes go ahead' adds it once",
    # "put us on the smaller plan, team is too much": Team is named as the plan left and "put" is
    # no verb _plan_change reads as leaving it, so the named plan wins over the place ("already on team"):
    "money 15 (held): 'the smaller plan' from team is pro, 'yes'",
    # "how much will i pay on starter?" while the change waits: the desk intents reader hears the
    # next payment, not a price (asks.price_asked is false), so the change is not put again:
    "money 15 (held): starter offered, what it costs asked, 'alright yes'",
    # route-14 (a cancellation without its noun, a reset's id given next, two matters led by the
    # plan, chit-chat with an afterthought, a person now, denials on the config desk; tune 3/5 and
    # held 5/5 before, 4/5 and 5/5 after; config tune 4/5 and held 4/5 before, 5/5 and 4/5 after).
    # ("what plan do i have right now, and ..." is split since bill-18's billing examples.)
    # ("my account isnt compromised or anything, safari just signs me out", which the access reader
    # read as someone else's access (0.96) despite the denial, passes since config-17: the denial
    # clause is read apart, router.Router.without_denials.)
    # money-16 (money answered from the demo data: refunds the policy refuses and allows, days of
    # the demo calendar, invoices, failed payments; tune 6/12 and held 5/12 before, 11/12 and 7/12
    # after the weekday, the day with no month, the day-first short date, a past "when did you
    # charge me", and a refund beside a plan change told). A failed payment with the account's fate
    # asked ("will my account get locked?", "i lose the acount?") passes since bill-18: triage gives
    # a failed payment told to billing (asks.payment_failed_told), which answers with its charge.
    # A month with no charge on the account ("my payment from last november"): the refund flow
    # refuses by policy and lists the charges, but does not say that month has none (the charges
    # answer does, "I don't see a charge in ..."):
    "money 16 (held): a refund from before the account's charges (november), refused with why",
    # "pro got billed 2x ... the extra one returned": the plan's name with "billed" reads as the Pro
    # plan's price asked; "2x" is no duplicate word and "returned" no refund word to the cues:
    "money 16 (held): an allowed refund, the extra charge returned, '2x'",
    # ("please what is the one on the 8th, i not understand it." passes since dates15: a day named
    # to billing with nothing else asked shows that day's charge.)
    # "my card expired, will next months payment fail?": the card change is read (which card
    # next?), the question about the next payment is left unanswered:
    "money 16 (held): an expired card and the next payment",
    # config-15 (the config desk's security agent in new words: compromise, unknown sign-ins,
    # phishing, leaks, strangers' devices, look-alikes, hand backs, a person asked, two matters;
    # before: tune 11/14, held 11/14; after: tune 14/14, held 11/14). What the held half misses:
    # ("a friend sent me the link", read as the reset link asked for and sent with no yes, passes
    # since acts-17: the act reader learnt reports and questions about a link, a reset, a card
    # (evals/act-lines-17-tune.jsonl), and hears it told.)
    # the phisher's address quoted ("is support@acme-billing-help.com really you?") is taken as the
    # customer's email, and a reset to it is tried (refused by policy: no such account):
    "config 15 (held): phishing asked about in two questions",
    # "the invoice page asks for my card's security code every time" reads as the app's card
    # trouble (technical's card examples), though the request is a change of the card on file:
    "config 15 (held): look-alike: the card's security code on the invoice page",
    # route-15 (two matters either way round, a person now on each agent, credits, angry, terse,
    # rambling, small talk first, non-native; tune 8/12 and held 11/12 before, 11/12 and 11/12
    # after; config tune 5/5 and held 3/5 before, 5/5 and 5/5 after).
    # (Buying credits and a long story asking "can you help with that" after its sync words pass
    # since kb-18: credits told as a trouble go to the articles, triage.tells_of_credits_not_arrived,
    # and the sync article's written examples of uploads stuck at a percentage.)
    # slots-15 (what was said stays said across turns; tune 8/10 and held 6/10 before, 10/10 and
    # 8/10 after; five tune conversations of kinds found by probing added while fixing, each a miss
    # before its fix: tune 15/15). (The reset asked beside the email passes since reset15: its clause "send me a link" asks for
    # the reset article's link, read as the desk's gate reads a request.)
    # "what was the feb 9 charge for?" after "a question about my bill" is answered as a refund
    # refused: a question about one charge is taken for the refund request it is not.
    "slots 15 (held): the account in turn 2, a question about a charge in turn 3",
    # money-17 (money answered from the data: a plan's price beside the plan, two plans compared,
    # a period's price before the gate's question, refunds refused with why, a failed payment's
    # email, access after cancelling asked, credits bought with no balance; tune 8/8 and held 5/8
    # before; tune widened before fixing to 14 with six that missed, 8/14; after: 12/14 and 6/8).
    # What misses is routing by the agents' examples: billing examples of a failed payment told by
    # email, and technical ones of credits paid for, routed these, but any line added to either
    # agent's examples moved the scope by examples that hands "before you do that, how many days
    # until it shows on my card?" (understand-3) back out of billing: taken back out in round 12b.
    # (The failed payment's email passes since bill-18: triage gives a failed payment told to
    # billing, and billing's examples tell one; understand-3 still passes with them; "not successful"
    # in any spelling is a failure since held-16's mend.)
    # billing, and billing's examples tell one; understand-3 still passes with them. "an email that
    # the payment was not successful" passes since asks._FAILED reads "wasn't successful", 15e3aa8.)
    # billing, and billing's examples tell one; understand-3 still passes with them. "an email that
    # the payment was not successful" passes since asks._FAILED reads a payment that wasn't successful.)
    # billing, and billing's examples tell one; understand-3 still passes with them.) "an email that
    # the payment was not successful": "not successful" is no failure the rule reads (the reading
    # holds "unsuccessful"; this one is spelt "succesful"), so the card-in-app examples (0.6) kept it;
    # it passes since plan19 retrained the readers (evals/desk-intents-tune.jsonl).
    # (Credits paid for with the card charged pass since kb-18: triage.tells_of_credits_not_arrived.)
    # slots-16 (tune 5/9 and held 6/8 before, 6/9 and 8/8 after). "refund the second one please"
    # to the offer of that very charge has no word of assent, so the desk's gate reads a change of
    # mind (engine/confirmation.py `_pointed` maps a pointer to the offer only beside a yes) and
    # the refund is offered again: the gate's reading, not a slot, is missed.
    "slots 16 (tune): two starter days told, the email, then 'refund the second one'",
    # (Since money-17b "downgrade to the starter plan pls, not using pro much" offers starter: the
    # plan named as where to go is the plan asked for (cues.plan_request), and a change the
    # customer tells of, "went down from pro to starter", asks for none (asks.without_own_change_told).)
    # "ok and what is it paid with?" after the invoice: the desk intents reader reads pricing
    # (0.76); lines teaching it the noun-less card question moved "what do i pay for it" and "what
    # day did the last payment come out" to card_on_file too, so they were taken back out.
    "slots 16 (tune): the march invoice asked with the id, then what it is paid with",
    # understand-held-13 (written blind before round 12; 43/54 + 13/15 before the round and the
    # same conversations after it: the round's families moved none of them). By kind: credits
    # bought with no balance routed to billing, which asks for the email; a renewal forgotten
    # shown, not refused with why; invoice details read as a ground for a person; "the second
    # one" after two days told; a reset asked, then the address, offered instead of sent; a
    # declined refund asked for again; chit-chat told "no article"; a failed payment's email
    # routed to technical; access after cancelling asked, a cancellation offered; config desk: an
    # unknown member to technical, a denial of hackers to security.
    # (Since money-17 the
    # access after cancelling asked with "say i cancel, ..." is answered, nothing offered: a
    # supposition opening a clause is a conditional, asks._CONSEQUENCE_QUESTION. The renewal
    # forgotten is refused with why since dates15: its money back is heard on the message whole.
    # Since bill-18 the failed payment's email is billing's, answered with the failed charge.)
    # (Since money-16b "which plan is that invoice for?" is answered with the plan: asks.asks_which_plan.)
    # (Since money-17b the senior's offer after the escalation names both days of the pair, the
    # duplicate's last (offers._duplicate_question), so "yes the second one" is the gate's yes.)
    # money-16b: kept on purpose: a request after a no is not the yes (the desk's gate); the
    # refund is put once more, and a yes runs it (money-16b tune's changed-mind conversation).
    "understand 13 (held): changed mind: refund offered, 'leave it', then 'actually go ahead and refund it'",
    "understand 13 config (held): negation: not worried about hackers, turning on two-factor",
    # understand-held-14 (written blind during round 12; first run 35/54 + 13/15, then the card's
    # digits corrected fixed). By kind: a question no article covers given the sign-in article
    # (self-hosting); @-mentions, a large upload, version history and sms codes not found or told
    # as a fix; a month never used answered with the capability list; slots across turns (a card
    # told before the id, the card paid with after an invoice, two days then the email read as a
    # plan, a plan named before the email lost, a corrected email); a cancel offered then a plan
    # chosen instead; chit-chat told "no article"; an invite plus a price; a plan's price not said
    # (beside the plan, two plans compared, before the gate's question); a failed payment's email
    # to technical; config desk: a holder keeping what is another agent's (notifications, an api key).
    # (Since money-17 the plan's price is said beside the plan, the two plans compared with no
    # "?", the period's price before the gate's question, and the rude refusal of a month never
    # used says why: an amount wanted back, "the 9.99 back", is money back to the refund cue.)
    "understand 14 (held): article: a 7gb video sits at 0% while the rest goes up",
    "understand 14 (held): question: login code by sms, no smartphone, non-native",
    # (Since money-17b the starter named first is offered after the email: cues.plan_request.)
    # The invite's part is routed to technical, which finds no article (triage's and the kb's).
    "understand 14 (held): two matters: an invite expired before she clicked, and team per year",
    # route-16 (small talk to the assistant, hand-backs on the config desk; tune 4/7 and held 2/6
    # before, 5/7 and 2/6 after; config tune 3/6 and held 5/6 before, 4/6 and 6/6 after).
    # (Since talk-17 the chat words no public corpus writes, "lol", "ur", "tbh", the weather's,
    # are known to the scope reader as the desk's lines taught them, scope.taught_as_small_talk,
    # and four chit-chat misses of route-16 pass. Since talk-18 the last two pass too: a short
    # clause beside the small talk, "never tired?", "ha", leans on it, triage._fragment.)
    # The ground reader reads an access token nobody made as a suspended account's question, so
    # technical escalates it to a person before its hand-back is asked (the ground lines' kind):
    "route 16 config (tune): technical holds it, then a token we never made",
    # "my account is fine" is no denied trouble to the technical skill (only "no one hacked it"
    # is), so it stays in the knowledge-base query and no article is found for the 2fa how-to:
    "route 16 config (tune): denial: account is fine, how to turn on 2fa",
    # kb-16 (articles and questions: abstention, new words, a question beside a trouble, a plan named;
    # tune 5/7 and held 4/7 before, tune 6/7 and held 6/7 after: a question of its own asked beside a
    # trouble, read clause by clause, technical.asks_beside_trouble). (One huge backup stuck
    # while the rest uploads passes since kb-18's written examples of uploads stuck at a percentage);
    # (a product question naming a plan, "does pro keep version history?", passes since kbfacts15:
    # triage.asks_feature_of_a_plan.)
    # understand-held-15 (written blind during round 12b; its first run after it 42/54 + 14/15,
    # 81.2 %, with no money or account action without a yes). By kind: a question no article
    # covers (co-editing); a failed payment refused rudely, and a payment-failed email, not read as
    # billing's; "a week ago"; a card told before the id; a long story's duplicate; a cancel
    # offered, a question, then "fine, cancel it"; chit-chat told "no article"; a terse reset with
    # an id, and "forgot the password again", not sent; an export with an invoice number; a yearly
    # price before the gate's question; config desk: a forgotten app pin with "nobody hacked".
    # "THIRD time asking. refund the march 8th payment": a repeat contact goes to senior by design
    # (cues.REPEAT_CONTACT, moves-tune's "3rd time I'm contacting you about being charged twice"),
    # who says the charge failed with nothing to refund; billing keeping it needs the lead's word on
    # which repeat contacts stay at level 1 (bill-18 left it):
    # money-16b: triage routes the capitals and "not interested in excuses" to the senior (route's).
    "understand 15 (held): refused: rude, capitals, the failed march 8 starter payment",
    # (money-18: the story's opening, "right, bear with me. i run a tiny architecture studio, five
    # of us", is read by the act reader as a request and routed to technical as a matter of its
    # own; the duplicate's part waits behind it. A story's preamble is the act reader's kind.)
    # money-16b: triage routes the studio's story to technical (route's matter, not money's).
    "understand 15 (held): rambling: an architecture studio's accountant found team twice, 'alright, yes refund the extra'",
    # bill-18 (billing's own matters: failed payments, declined renewals, invoice numbers and copies,
    # VAT ids, an export beside an invoice number, credits bought; tune 5/9 and held 4/9 before, 9/9
    # and 7/9 after). "INV number for feb pls CUS-1033": the router places it with billing (0.97) but
    # cues.names_money hears no money ("INV" alone, a month; the money gate reads none), so triage
    # gives it to the technical agent (_money_without_money), who has no article:
    "bill 18 (held): terse, the INV for feb",
    # (Credits paid for, balance 0, passes since kb-18: triage.tells_of_credits_not_arrived.)
    # money-18 (money over several turns: a question between the offer and the yes, a period's
    # price before the gate, days counted back from today, a card told before the account, a
    # long story; tune 7/10 and held 7/10 before, tune 10/10 and held 9/10 after). Still: a period
    # misspelt ("billed anually") is no period to the rules, so pro monthly reads as no change.
    "money 18 (held): pro billed anually, typo, already on pro monthly",
    # (Since acct17 a reset asked for tersely or without its verb is sent at once ("CUS-1022
    # password reset.", "can u send me the email to reset my password" then the address, "please to
    # reset my password ... my mail is"): the act reader learnt evals/acct-lines-17-tune.jsonl's
    # verbless requests, and an emoji ends a clause, so "forgot my password AGAIN, an eye-roll,
    # reset to <email>" holds a request (readers/acts.py _CLAUSE). A forgotten app pin with "nobody
    # hacked anything" gets the passcode article: a pin is no password to cues.RESET. "tired of the
    # same questions" passes by a hair on the rebuilt scope reader: chit-chat 0.89 -> 0.90.)
    # acct17 (account requests, terse or repeated; before: tune 8/11, held 9/12, config tune 3/5,
    # held 5/6; after: 11/11, 12/12, 4/5, 5/6). The config desk's router leans "switch the email i
    # log in with" to security (its examples' "someone else has my login"; the access reader reads
    # no one else's access, 0.00, but only moves a matter towards security, never away):
    "acct17 config (tune): sign-in email change",
    # The knowledge base gives "Can't log in" for sms codes not arriving "past the login": the
    # login words outweigh the two-factor article's (a knowledge-base choice, not this round's):
    "acct17 config (held): sms codes not arriving",
    # talk-17 (small talk in chat words, thanks after a resolved matter, product questions no
    # article covers, one beside a covered trouble; tune 9/14 and held 9/14 before, 13/14 and
    # 13/14 after: chat and weather words the desk's lines taught the scope reader count as known,
    # scope.taught_as_small_talk; chit-chat gets triage's friendly reply; a question asked on the
    # side of a covered one is searched on its own, technical.aside_question). Still:
    # requests a minute to the api read the api article's words (api, script, requests); labelled
    # "none:" lines for rate limits moved bench_kb --calibrate's asked threshold, left for a calibration:
    "talk 17 (tune): no article: how many api calls a minute",
    # ("hello friend, how are you today? all good with you?" passes since talk-18: each clause is
    # read as a hello or small talk by itself, triage.social_kind.)
    # kb17 (articles and facts in customers' words: an invite that never arrived, everything moved
    # to another provider, how many devices stay signed in, the notifications' sender, the largest
    # file sync takes, how long invitations and export links last, bank-transfer credits, a matter
    # no article covers; before: tune 3/8, held 3/8; after: tune 5/8, held 5/8). (Credits bought by
    # bank transfer, how long, pass since triage's asks_how_long_credits_take.)
    # Devices signed in at once, told with the devices listed ("phone, ipad, 2 laptops and a
    # desktop"): examples in those words took "desktop" from the sync article's learned words
    # (kb-13's "desktop behind the phone" lost it) or moved the calibration. (Credits by wire
    # transfer pass since triage's asks_how_long_credits_take.)
    # (The largest file sync takes passes since kb-17: the one article stating a size asked, of the
    # matter the question names, answers it: tools/kb.py `measured`.)
    # ("after i export my data how long does the download link keep working?" passes since
    # kbfacts15: a measure asked is a question, technical.asks_a_measure.)
    # understand-held-16 (written blind during round 13): 39/54 + 9/15 before the round,
    # 40/54 + 10/15 (72.5 %) on its first run after it, one account change on the wrong target (a card change to the method being left; fixed,
    # cues.card_description), no money moved without a yes). By kind: a whole message in French
    # (a member of our staff is offered; the eval asks for the word "person"); five articles
    # missed in new words (an invitation lost, moving everything out, devices signed in at once,
    # the notification sender, the largest file); bank-transfer credits; a duplicate told by its
    # two days before the id; a plan asked instead of a cancel offered; a refund held for
    # someone's word, then a yes; a slang reset with an id offered, not sent; a plan needed, told
    # as a need (the desk intents reader reads it as a card change); config desk: a login alert
    # that was me beside a sync trouble, reset emails nobody asked for, a person asked for now on
    # security, a stranger's phone login while billing or technical holds the conversation.
    # (plan19 moved out the duplicate told by its two days, the plan asked instead of the cancel,
    # the refund held for someone's word and the plan told as a need.)
    "understand 16 (held): no article: a whole message in french about the last invoice",
    # (The invitation lost, moving everything out and the notification sender pass since kb17's
    # written examples of those kinds.) Devices logged in "at the same time": examples in those
    # words made "can i use the app on my ipad and my phone at the same time?" (acts-5, the devices
    # article's) the signed-out article's and moved the calibration; left out:
    # (The largest file sync takes passes since kb-17: the examples no article answers hold upload
    # limits, so the model reads none, and the one article stating the size asked, of the matter
    # the question names, now answers it: tools/kb.py `measured`.)
    # (How long credits paid by bank transfer take passes since triage's asks_how_long_credits_take.)
    # (sec17 fixed the login alert owned, the reset emails, the person asked for and the phishing
    # email while technical holds it. The samsung login i don't own, read as money by the money
    # gate, passes since config-17: the config desk's security agent learnt a phone not owned in
    # the recent sign-ins.)
    # sec17 (security on the config desk, resets in slang; before: tune 5/5 + 6/7, held 5/5 + 6/7;
    # after: 5/5 + 7/7, 5/5 + 6/7): the owned alert is set aside, but the articles read "nothing
    # syncs on that pc, folders stay empty" as exporting (its "pc" and "folders"), and find nothing sure:
    "sec17 config (held): the new-device notice was me on the work pc, nothing syncs there",
    # plan19 (held): the desk's gate (engine/confirmation.py) hears no yes in "accountant ok'd it,
    # please refund the duplicate" ("ok'd" is no word of assent, the request does not open it):
    # the refund is asked once more, nothing runs without the yes.
    "plan 19 (held): refund offered, accountant first, 'accountant ok'd it'",
    # plan19 (held): the disclaims reader (cues.disclaims_action) hears "we have outgrown starter,
    # pro would suit us better now" as asking for no change; asks.plan_needed defers to it since
    # "thinking about team next quarter, dont switch anything" must get the price, not an offer.
    "plan 19 (held): need: outgrew starter, want pro, 'do it'",
    # understand-held-33 (written blind after round 20b, on this model): 66/69 on its first run
    # (95.7 %); no money or account action without a yes. By kind: an authenticator's code refused
    # at sign-in given the sign-in article, not the two-factor one; a double charge then a crash in
    # one message: the refund offered, the crash's steps not given in the same reply; "nuke my sub"
    # (an idiom of ending no rule names) routed to technical.
    "understand 33 (held): article: the authy code refused at sign-in",
    "understand 33 (held): two matters: a double starter charge and a crashing app",
    "understand 33 (held): request: nuke my sub, then ya",
    # understand-held-32 (written blind after round 20, during round 20b): 67/69 before round 20b
    # (97.1 %); no money or account action without a yes. By kind: a duplicate told by its two days
    # with "one has to go" read as a plan change (the plans listed); a double charge and the next
    # payment asked together: the refund offered, the next payment not said. (Both pass since
    # h32: "mid march" is a time, not the middle plan, and "15th + 16th" two days; a read asked
    # beside a refund is said before the offer.)
    # understand-held-31 (written blind after round 20, before round 20b): 68/69 on its first run
    # (98.6 %); no money or account action without a yes. Config desk: "nobody else has access,
    # the app just signs out" read as an access matter (security asks for the account to send a
    # reset link) where the denial leaves the sign-outs, technical's article.
    "understand 31 config (held): negation: nobody else has access, the app just signs out",
    # understand-held-30 (written blind during round 20, before its changes merged): 63/69 before
    # the round (91.3 %), 65/69 on its first run after it (94.2 %; 95.7 % with a disputed charge's
    # reason corrected, as in held-29); no money or account action without a yes. By kind: a
    # referral programme (no article) answered with the integrations article; a price and how long
    # a reset link lasts (the second said to follow); "pull the plug on my sub" routed to technical. (All three pass since h30.)
    # understand-held-27, -28 and -29 (written blind after round 19b, before round 20, by three
    # writers at once): first runs 69/69, 67/69 and 59/69 as written (94.2 % together; 96.6 % with
    # five expectations that were writing errors corrected: a reset link asked for is sent at once,
    # a disputed charge's reason is its dispute, a team duplicate above billing's limit is the
    # senior's); no money or account action without a yes. By kind: a price and where a setting is,
    # numbered "1) 2)"; an article's fact and an invoice asked together; a double charge beside a
    # trouble not offered until the trouble is settled; an id check tried four times read as a
    # fourth contact and escalated; an unknown invoice id routed to technical; config desk: an
    # alert the customer owns beside an invoice asked for, and a phishing email told to billing.
    # (All seven pass since round 20: route20's id check, unknown invoice id, owned alert and
    # phishing's bait; two20's three pairs of matters.)
    # understand-held-26 (written blind before round 19): 48/54 + 14/15 (89.9 %) before the round,
    # and the same after it (round 19 fixed held-24/25's seen kinds, none of these); no money or
    # account action without a yes. By kind: the next charge asked after naming the day billed
    # (read as a duplicate asked about); a no to a small duplicate's refund handed to technical;
    # three pairs of matters in one message (a price and where a setting is, the next payment and
    # an invoice, a double charge and a crash: the second unanswered or the refund not offered);
    # "bump me up a tier" routed to technical; config desk: a person asked at once for a hijacked
    # account is called "a member of our support staff", not "a person". (All seven pass since
    # round 19b: money26's numbered matters, a plan one notch up, a no with its reason and the next
    # payment asked beside a day billed; two26's information question behind an answered one, two
    # joined reads and "a person" said plainly.)
    # understand-held-25 (written blind after round 18, before round 18b): 44/54 + 13/15 (82.6 %)
    # on its first run; no money or account action without a yes. By kind: four questions whose
    # answer is a fact in an article (the status page, how long the lock lasts, which characters stop
    # sync, the notifications' sender) answered with none or the wrong one; the next renewal's day and
    # amount; a duplicate told by its two days with the email next, and one in a long story, not
    # offered; a bot asked whether it dreams searched; two matters in one message, each answered
    # alone; config desk: "nobody broke in" beside a code at login, and a deletion threat with a
    # look-alike site. (The renewal's day and amount and both duplicates told by their days pass
    # since money19; the four fact questions since facts19: tools/kb.py `measured` reads an
    # address asked, technical.asks_a_fact, triage._address_asked; the dreaming bot and both
    # config misses since config19; the two matters since two19.)
    # money-24 (issue 38, round 18b; before: tune 3/6, held 2/6; after: tune 4/6, held 2/6; the
    # three prices behind a problem pass since two19, Specialist._question_waits). The expired join link finds no article (kb's matter), the price not split from it:
    "money 24 (held): two matters: an invitation link that says expired, and team's yearly price",
    # understand-held-24 (written blind before round 18): 44/54 + 13/15 (82.6 %) before the round,
    # 46/54 + 13/15 (85.5 %) after it (84.1 % without the fix its own miss taught: "and february's?"
    # after march's invoice, lost mid-round to cancel-18's pricing follow-up, tests/test_follow_up_month.py);
    # no money or account action without a yes. By kind: two questions no article answers given steps
    # or the single sign-on article; an app not assigned in Azure given the sign-in article; a tablet
    # left on a train, and the biggest file that syncs, given none; the next debit's date and amount
    # answered with the charges; the cheapest plan asked at the end of a long story asked which plan;
    # expired invitations beside team's price: the price alone; config desk: a device the customer
    # does not own sent to technical, and a cancel after a hack kept by security (config-24 hands
    # the cancel back: a request in another skill's words follows the router's lean, however unsure).
    # (The 8gb zips pass since kb-24: "how huge" asks a size, lexicon.ASKS_SIZE. The ground reader
    # learnt the SSO "not assigned" error as no ground (it read a change of invoice details;
    # evals/ground-lines-24-tune.jsonl), but the article is still the sign-in one. Written examples
    # of the SSO "not assigned" error fixed it and keyboard-only use, and showed a fifth wrong held
    # article in tests/test_kb_retrieval.py; of a device left signed in took "how many devices at
    # once" from the signed-out article; of sign-in IPs' retention took webhooks, an api key, an
    # audit export and the mails' sender from their articles: all left out.)
    "understand 24 (held): no article: moving around only with the keyboard, no mouse",
    "understand 24 (held): article: a new starter not given the app in azure",
    "understand 24 (held): article: a tablet left on the train still signed in, kick it out from the pc",
    # (round 18b, money-24: the next debit's date and amount (cues.NEXT_PAYMENT, a word between) and
    # the cheapest plan after a story (a plan only mentioned yields to an end of the price list) pass;
    # the expired invitations are now a matter of their own and given their article, and the
    # price, a question, waits for the steps' result as any matter behind a problem does)
    # (the sign-in IPs' retention passes since facts19: a time asked that no step of the article
    # states is not that article's, tools/kb.py `unstated`)
    # kb-24 (held): the same kind, sign-in IPs' retention, given the single sign-on article (above).
    "kb-24 (held): no article: gdpr records, each login's ip adress logged and when deleted",
    # kb-24 (held): the SSO "not assigned" error given the sign-in article (above).
    "kb-24 (held): article: new here, okta says acme is not assigned to me",
    # kb-24 (tune): a device left somewhere still signed in, given the signed-out article (above).
    "kb-24 (tune): article: a work ipad forgotten at a hotel, sign it out remotely",
    "understand 24 (held): two matters: invitations expired before use, and team's monthly price, one message",
    # understand-held-23 (written blind after round 17's changes): 45/54 + 13/15 (84.1 %) on its
    # first run; no money or account action without a yes. By kind: an expired export link given
    # the password reset article; an upload stuck at 63 % given none; an invoice number nobody holds
    # answered with the customer's invoices, not said plainly; a plan's yearly price asked after
    # the plan answered with the charges; a holiday question to the bot and a toddler's message
    # searched; mention emails beside starter's yearly price: billing's part alone; a cancel for
    # moving to another tool routed to technical; config desk: a workspace export nobody ran, and
    # a son using the password, kept by technical. (A card named beside paypal on file, "paypal
    # didn't work for march, bill my amex ending 1009", answered "already paypal", passes since:
    # the method on file named beside another is the one left, account._payment_method.)
    # (Since cancel-18 the nobody's invoice, the yearly price after the plan and the other tool's
    # cancel pass: account._invoices_answer, the reader's pricing follow-up, route-lines-18; the mention emails beside starter's price since two19.)
    # (The toddler who typed the last message passes since talk-18: triage.social_kind reads
    # "ignore the last msg" as small talk and the day told beside it, scope.life_told, as no matter.)
    "understand 23 config (held): a son poking around with the password, offer, 'do it'",
    # understand-held-22 (written blind at the start of round 17, before its changes): 47/54 + 11/15
    # (84.1 %) on its first run; no money or account action without a yes. By kind: a company login
    # broken by a rotated signing certificate gets no article (single sign-on covers it); two
    # questions about how long top-ups take went to billing's email ask (the articles' since
    # triage.asks_how_long_credits_take); how long the export link lasts
    # read as a problem; a Spanish hello searched; a cancel beside an app trouble and a cancel after
    # its reason ("our studio is closing down, please end...") explained, not offered (a lone "go"
    # after a plan change offer closed it as other: `confirmation._LONE_GO` since); config desk: a deletion-threat text kept by
    # triage, "not a hack, turning on the login codes" kept by security, billing keeping a phishing
    # 2fa-code email, and an unrecognised starter charge sent to technical. (Since cancel-18 both
    # cancels pass: a progressive told is no question, asks._CONSEQUENCE_QUESTION; a waiting
    # cancellation is offered after the steps, Specialist._leaving_waits.)
    # (The spanish hello passes since talk-18: "buenos días" is small talk to the scope reader, read
    # clause by clause, triage.social_kind.)
    "understand 22 config (held): a text threatening deletion unless a link is used",
    "understand 22 config (held): billing holds it, then an 'acme-support' email asking for the 2fa code",
    # understand-held-21 (written blind at the start of round 16b): 47/54 + 12/15 (85.5 %) before
    # the round, 48/54 + 12/15 (87.0 %) on its first run after it; no money or account action without
    # a yes. By kind: the biggest file sync takes answered with no article (its examples moved
    # upload-size questions, kb16b); a cancel forgotten, March wanted back, offered the cancel instead
    # of refused with why; an unpaid invoice's reason asked after the list; a card change declined
    # ("forget it, stay on paypal") asked again; a thumbs-up closing searched; a duplicate told by
    # its two days in an anxious ramble, no refund offered; config desk: a phishing "overdue
    # invoice" email routed to billing, "nothing hacked, just a new app pin" asked which team, and
    # an API key nobody made kept by technical. (The biggest file sync takes passes since kb-17:
    # tools/kb.py `measured`. All three config misses pass since config-17: an address dressed up
    # as ours, router.dressed_up_address; a denial clause read apart, router.without_denials; "a
    # token that no one on the team made" disowns, classifier.read_denials.)
    # (The thumbs-up closing passes since talk-18: "sweet" is an interjection leaning to thanks,
    # triage._fragment, beside a sure thanks.)
    # (Since money-17b the cancel forgotten offers no cancellation and the unpaid invoice's reason is
    # its failed payment (asks.payment_failed_told); "forget it, stay on paypal" keeps paypal, the
    # method on file; the anxious ramble's "i didn't upgrade" is no plan asked, so its duplicate is
    # offered and "oh thank you, yes please" runs it.)
    # understand-held-20 (written blind at the start of round 16, before its changes): 45/54 + 13/15
    # (84.1 %) on its first run (46/54 with one expectation that pinned the email where the desk's
    # call named the same account by id); no money or account action without a yes. By kind: a
    # suspended account asked for the lockout article, a Dropbox import given the export article,
    # a card top-up's pending time asked for the email first; a charge id that does not exist not
    # said so; the failed payment asked after the card (a plan change's price missing from an offer
    # not put as a question is fixed: every change offered says its price); a greeting from Sydney
    # searched as a question; a cancel with a project's end as its reason routed to technical;
    # config desk: notification emails with "not phishing" routed to
    # security, and a phishing email "from acme billing" with an invoice zip read as billing.
    # (Since money-16b the charge id not held is said plainly, and the failed payment after the
    # card answered: a follow-up question is read as asked, a failed payment with its month.)
    "understand 20 (held): article: the account page says suspended, worried",
    "understand 20 config (held): security holds it, then the windows app freezing on start",
    # route-16b (greetings and closings in unseen words, a circumstance told before what it leads
    # to, two matters added or counted; config desk: negated security and hand-backs; tune 4/6 and
    # held 3/6 before, 5/6 and 3/6 after; config tune 4/4 and held 4/4 before and after, and a
    # fifth each written after the fixes, tune 4/5 and held 5/5 on their one run):
    # (a hello whose clause "nothing wrong" the act reader hears as a problem told, 0.92, passes
    # since talk-18: a trouble denied, triage._trouble_denied, and "hiya team" greets the team)
    # (its last clause, "nothing to report just saying hello", heard as a greeting at 0.79, under
    # triage.SOCIAL_CONFIDENCE 0.8 since the greeting lines lost their place names; passed before)
    "route 16b (tune): chit-chat: howdy folks, just waving",
    # talk-18 (a message only social, read clause by clause, triage.social_kind; tune 8/10 and held
    # 8/10 before, 10/10 and 9/10 after). "my little one was pressing buttons" is said in the
    # technical agent's job words (pressing, buttons: share 0.49), so it is no day told beside the
    # apology (scope.life_told) and the app's steps are given:
    "talk 18 (held): social: the little one pressed buttons",
    # a month unused wanted back (the money skill's refusal, not routing: billing holds it and
    # shows the charge instead of saying only a duplicate is refunded; held-18's refusal kind):
    "route 16b (held): refused: in hospital all february, february's charge back",
    # "got two q's:" opens with a word before the count, so the matters are not read as counted
    # and the invite's problem is heard as the question's preamble:
    "route 16b (held): two matters: an invite to a colleague bounced, and team monthly",
    # ("nothing's been hacked", "nothing" as a subject, is read as a denial since config-17.)
    # understand-held-19 (written blind after round 15b, before any change since): 49/54 + 14/15
    # (91.3 %) on its first run; no money or account action without a yes. By kind: a product
    # question no article answers given one that "covers this"; two questions about the reset link
    # in one message (a hesitation after a cancel offer, then "decided, go ahead", passes since
    # the time asked to decide is a hedge and a cancel's verb of "it" asks again); a top-up not
    # arrived beside a duplicate, asked for the email first; the plan asked in chat spelling
    # ("wat tier am i paying for rn"); config desk: a sync trouble handed back from security to
    # technical, searched in words no article matches.
    # (money-17b: the double starter after the bank top-up is offered and refunded on "yep"; the
    # top-up not arrived gets the credits article since kb-18, triage.tells_of_credits_not_arrived.)
    # money-20 (held-18/19's money and controls kinds in new wording; before: tune 4/8, held 5/8;
    # after: tune 7/8, held 6/8). A top-up not arrived is routed to billing by triage (the router's
    # reading, not the money skill's), which asks for the email instead of the credits article:
    "money 20 (tune): two matters: a transferred top-up not showing, then pro taken the 10th and 11th, 'yes'",
    # "plan and payment card pls": asked without a question's words or "?", and the reader reads
    # a duplicate (0.6): no plan or card heard, the charges are listed:
    "money 20 (held): plan and card in one line: team on the mastercard 5454",
    # understand-held-18 (written blind during round 15): 40/54 + 9/15 (71.0 %) before the round,
    # 41/54 + 10/15 (73.9 %) on its first run after it; no money or account action without a yes.
    # By kind: an API credential's article and a lockout's length asked as a question; refusals
    # (a month never used, a failed payment wanted back) without why; "yesterday" and "the 1st"
    # not looked up; a plan asked by the year after the next payment; a yes after waiting for an
    # accountant; two questions across agents (shortest password, next charge); controls: a cancel
    # told with its reason, a card change away from paypal, two plans' yearly prices, the plan with
    # its card; config desk: an authenticator that is not theirs and a lost phone not security's,
    # two-factor with a denial, a hand-back from security to technical, a person asked for at once.
    # money-h18: a go-ahead that reports another's word ("manager says its fine, do it") is vetoed
    # by the confirmation gate's rules (engine/confirmation.py: the learned reader reads a yes), so
    # the card waits for a plain yes; the gate's vetoes are not this family's to loosen.
    "money h18 (tune): changed mind: paypal offered, 'check with my manager', then 'manager says fine, do it'",
    # (Since money-17b held-18's "changed jobs ..., so pls give back february's payment" is refused
    # with why: a clause's opening "so" is not read with it (heard._OPENING_LINK).)
    # (controls-h18: triage splits it into its two matters and the billing half is answered once
    # the first is, but the articles find nothing sure for "whats the shortest password you
    # allow" (the knowledge base's examples: retrieval, not understanding), so "I don't know".)
    # (money-20 moved out held-18's cancel told after its reason (a "cancel" opening a clause),
    # paypal dropped for a visa (a card by its last four told, not asked, is the card to put on
    # file), pro and team by the year (a price's noun asks, no need told), held-19's plan asked
    # in chat spelling (a verb before its subject asks), money-h18's "make it starter" and
    # controls-h18's plan beside the card; held-12's "no longer need acme, cancel" with them.)
    # (controls-h18: the act reader hears "closing my small business, pls cancel acme" as a
    # question, so no cancel is offered; the desk intents reader hears "drop paypal, bill my visa
    # ending 4417" as card_on_file 0.55 and "pro vs team, yearly prices pls" as plan_change.
    # Lines teaching them were written, but each rebuild moved other families' readings: kb-8,
    # money-12, understand-15/17 failed; left for a round with time to rebalance the lines.)
    # (tech-h18 fixed four by kind: the API credentials article (kb's written examples), a lockout's
    # length asked inside a condition, "isn't one of mine" read as disowning, "nothing dodgy going
    # on" read as a denial. Left: a phone lost with the app open reads as the authenticator's loss
    # to the router's words (a security example for it moved "lost my phone with the authenticator"
    # to security too); the password's refusal told beside the recovery email changed is split by
    # triage into a technical matter first; "put me through to a member of staff" is no person asked
    # to the desk intents reader.)
    # controls-h18: plan and card asked in a line the desk intents reader reads as the card (or a
    # price) alone, so the plan is not said (same reader lines as above):
    # (tech-20: the sign-in refused beside the recovery email changed is now one matter, security's
    # (triage `_access_with_its_lockout`); left: "acme on my ipad quits the second it launches"
    # leans to no agent surely (0.39), so security keeps it; the access reader reads "lost my phone
    # ... the acme app was open on it" as no one's access (0.02; lines of lost devices with the app
    # open moved it to 0.26 only, and were left out); "put me through to a member of staff" is no
    # person asked to the desk intents reader, whose lines are money20's.) (The ipad app and the
    # festival phone pass since config-17: security torn with a peer on a matter not its own hands
    # back, specialist._not_my_access_matter; a phone gone while signed in is security's example.)
    "understand 18 config (held): shared folders wiped by an unknown account, staff now",
    # kb-16b (held-12..20's article and question misses in new wording; before: tune 11/16, held
    # 6/16; after: tune 12/16, held 7/16; fixed out of held-14..20: self-hosting and live co-editing
    # answered by no article, the devices signed in at once, an import from dropbox taking hours,
    # the kb's written examples. Held-14's mention emails stay a known miss: with "nobody ..."
    # read as a trouble rather than a denial, the search found the invitations article, a wrong
    # one, so that reading was left out).
    # (Credits bought and not arrived pass since kb-18, triage.tells_of_credits_not_arrived.) A
    # bank transfer's days: triage's and money's (billing asks for the email and never searches
    # the articles).
    "kb-16b (held): question: a bank transfer for credits, how long",
    # "suspended" is ground no tool covers (no-tool-ground's evals want a person), and held-20
    # wants the account-locked article: the two are to be reconciled (the article and a person).
    "kb-16b (tune): article: the app says account suspended, non-native",
    "kb-16b (held): article: my account is suspended suddenly",
    # another language: the desk answers "a member of our staff" will join, not "a person"
    "kb-16b (tune): no article: a message in spanish about a charge",
    "kb-16b (held): no article: a message in german about the bill",
    # (the largest file sync takes passes since kb-17: tools/kb.py `measured`, the article stating
    # the size asked, of the matter named, where the examples' labelled upload sizes read none)
    # a stale invitation: examples of it cost kb17's contractor invite lost in junk its article, and
    # kb-18's a wrong article to a held question or a pinned conversation (all but one left out)
    "kb-16b (held): article: a contractor's join link is dead",
    # "many files missing, is it stuck?" reads as data lost, escalated before any search
    "kb-16b (held): article: a slack/drive import is taking forever",
    # "installed on premises ... do you offer that" routes to billing (triage's), which asks for the email
    "kb-16b (held): no article: install acme on premises",
    # "It is possible the security code come by sms?" reads as a problem told to the act reader
    # (the acts lines are route16b's), so the article's steps are "what usually fixes this"
    "kb-16b (held): question: sms for the security code, non-native",
    # tech-20 held (measured once, after the fixes): "how much time i get to use the reset mail"
    # finds the signed-out article ("reset mail" is no word the reset article's examples use), and
    # "my desktop app stopped syncing a big video folder" finds the crash article (its "desktop app"
    # tag) where none was found before the announcement was set aside: both retrieval.
    "tech-20 (held): one thing, two questions: time to use the reset mail, and an older mail",
    "tech-20 config (held): security holds it, then the desktop app not syncing a video folder",
    # tech-h18 (held-18's technical and security kinds in new wording; before: tune 2/3 + 5/5, held
    # 2/3 + 3/5; after: tune 3/3 + 5/5, held 2/3 + 3/5; two more a half on the default desk, written
    # after the fixes to reach five, measured once: tune 4/5 + 5/5, held 4/5 + 3/5):
    # the ground reader (readers/gates.py) reads "did you revoke keys" as a suspended account, so
    # a person is brought in before the API article is searched
    "tech-h18 (tune): article: a build server's deploy step suddenly unauthorized, keys revoked?",
    # a measure the article holds in its lead sentence, not its steps ("6-digit"): the answer shows steps only
    "tech-h18 (held): question: how many digits the app passcode has",
    # "not worried about hackers" is no denial to the router's denials reader: "hackers" votes security
    "tech-h18 config (held): negation: not worried about hackers, how to turn on two step",
    # security's stray test (specialist._strays) keeps the crash: the router leans nowhere surely
    # (0.48 < 0.5) and security's config-only skill answers it with its reset question again
    "tech-h18 config (held): security holds it, then the mac app freezing at start",
    # understand-held-17 (written blind during round 14): 41/54 + 13/15 (78.3 %) before the
    # round and the same conversations on its first run after it; no money or account action
    # without a yes. By kind: an invite's expired link, two facts of the plans (version history,
    # single sign-on); a month unused refused without why; "a fortnight ago", "this past
    # wednesday"; a clinic's long story with two days' duplicate; a card's digits corrected after
    # the offer; venting about a bad day; two short reset requests (an emoji, non-native) not read
    # as asking for the link; two questions in one message; the plan and how it is paid; config
    # desk: backup codes with "not a hack", a price asked while security holds it. (multi-15
    # moved out the venting, the two questions and the plan with how it is paid.) The third
    # person's dead link: no article sure enough (kb-18's examples of the kind, see kb-16b's).
    "understand 17 (held): article: three people added, the third's link is dead a week later",
    # (dates15 took off the fortnight, this past wednesday, the clinic's two days and the card's
    # corrected digits. The month unused stays: "i'd like january's 29.99 returned" reads cancel
    # to Banking77's reader and plan_change to the desk intents reader, so no money back is heard;
    # the desk intents reader's training is where it is learnt. It passes since money-16b: an
    # amount given back by a verb of returning it is money back, cues.REFUND, then refused with why.)
    # (the two facts of the plans pass since kbfacts15: triage.asks_feature_of_a_plan, and
    # SeniorSkill._articles_first for "which of your plans ... sso", read as a privacy request.)
    # (The emoji reset passes since reset15: the reset article's link asked in a clause of its own.
    # The non-native one: since acts-17 the gate hears "can you sending me the mail" asked
    # (engine/confirmation._ACTION_ASKED, the verb in any form), but the search's first article is
    # change-password's how-to, and the technical skill offers the link only on the reset article.)
    "understand 17 (held): request: non-native, a mail to make a new password",
    "understand 17 config (held): negation: not a hack, the 2fa phone left at home, backup codes",
    # dates15 (held): 9 tune 4/9 -> 9/9, held 5/9 -> 7/9. (The bakery's starter billed the 5th and
    # 6th passes since money19: a duplicate told by its days is the duplicate cue's.)
    # "can i get back the money for the months we didnt use acme at all" reads other (1.00) to the
    # desk intents reader: no money back heard, the charges are listed, nothing offered or run.
    "dates15 (held): refused: the months the team did not use it",
    # kbfacts15 (a feature's fact asked in customers' words; tune 5/10 + 2/5 before, 9/10 + 3/5
    # after; held 6/10 + 0/5 before and after). A phone with the codes left somewhere safe reads
    # as a lost phone to the example model (phone, authenticator, "left"): only a denied loss or
    # theft sets the lost-phone article aside (technical.about_denied_matter), and then the next
    # article the search found may be the passcode one ("code app"); written examples of a phone
    # at home moved the lake phone, the six-digit lock and kb-8's work/home sync off their articles:
    "kbfacts15 (tune): negation: nobody stole it, the phone with codes is in the car",
    "kbfacts15 (held): negation: not compromised, authenticator phone at the office",
    "kbfacts15 config (tune): negation: not hacked, the 2fa phone forgotten at a friend's",
    "kbfacts15 config (held): negation: not a security thing, phone left at the gym",
    # On the config desk "phone" and "codes" lean to the security agent (its examples: a stolen
    # phone, a lost mobile), and a denied theft does not move them back; it offers a reset link:
    "kbfacts15 config (tune): negation: no theft, phone charging at home, codes needed",
    "kbfacts15 config (held): negation: no one got in, just no phone for the codes today",
    "kbfacts15 config (held): negation: not stolen, the phone is at the repair shop",
    # A plan's feature asked as the act reader hears a problem ("im on pro, how long are earlier
    # drafts kept") or as a request with a bigger plan named ("... or do you need a bigger plan"),
    # or with a period beside it ("a monthly upload quota on team"): billing's price and offer:
    "kbfacts15 (held): plan named: how long pro keeps earlier drafts",
    "kbfacts15 (held): plan named: single sign on on starter or not",
    "kbfacts15 (held): unknown: a monthly upload quota on team",
    # "for team workspaces how long do you keep old versions" reads as a privacy request, and
    # names the plan only as "team" beside people's words (senior._A_PLAN takes "on team" only);
    # "do team invitations run out after some days?" leaves triage unsure (the clarifying question):
    "kbfacts15 config (held): plan named: team keeps file versions how long",
    "kbfacts15 config (held): fact: how long an invite stays open",
    # (The price while security holds it passes since reset15: "other thing:" only announces the
    # matter and is not routed, router.without_announcement.)
    # reset15 (requests in few or odd words, a new matter while security holds it; written before
    # the round: tune 9/10, held 8/10, config tune 3/5, config held 4/5; after: 9/10, 8/10, 4/5, 5/5).
    # "send the thing" names nothing: a clause asking with no matter of its own beside a locked
    # account would read "please help, i cant log in" as asking for the link too, and send one
    # unasked; the link is offered:
    "reset15 (tune): locked out, send the thing, an id",
    "reset15 (held): locked out, send the thing, id first",
    # "can you send?" reads as a question to the act reader (0.52 against a request's 0.48), and
    # "i need new password" alone is no request for the link (test_security_matters): offered.
    "reset15 (held): need new password, mail given, can you send",
    # "new pw pls" (pw now a password, lexicon) finds the change-password article first, the
    # how-to, not the link (the knowledge base's ranking):
    "reset15 config (tune): new pw pls",
    # multi-15: a plan's price asked first, then a matter of the technical agent's (a device, how
    # to change a password, a reset link): the price's reply invites a plan change, so the other
    # matter waits its turn and is said to follow (Specialist._said_to_follow). Since two26 a
    # question the router places surely is taken up in the same reply (the password's how-to and
    # the chromebook pass); a reset link asked is an action and waits, and "does it run on android"
    # is not placed surely enough (Specialist._question_after_answer).
    "multi 15 (tune): team's price and whether it runs on android",
    "multi 15 (tune): pro's price asked and a reset link asked for",
    "multi 15 (held): team's price asked and a reset link asked for, the password forgotten",
    # multi-15 (held): "how long is trash kept before its gone for good + when do u charge me
    # next?": split at the "+", but the router places the bin's question with no agent (torn),
    # so it rides with billing's part and only the next payment is answered.
    "multi 15 (held): how long the trash keeps files and when the next charge is",
    # multi-15 (held): venting whose clauses the scope reader reads as the desk's ("my kid drew
    # on the walls": too few of its words known to the reader, scope.known_share; "i just want
    # tell someone": a person asked for, in scope), so it is searched and "I don't know" said;
    # no action taken.
    "multi 15 (held): venting: a child's drawing on the walls",
    "multi 15 (held): venting in non-native english, no question",
    # acts-20 (issue 38: the act reader's odds for words it never saw; 4/11 + 2/11, and 5/11 +
    # 5/11 with the uniform background mixed in, which is not switched on: readers/acts.py
    # ACT_BACKGROUND). Add-alpha charges greeting and goodbye 15 times less for a word they never
    # saw: "login problem" reads as a greeting, "signin issue", "acct locked out" and "sync borked
    # again" lean the same way, and their articles are offered as answers to a question.
    "acts 20 (tune): a problem in few words: 'login problem'",
    "acts 20 (tune): a problem in few words: 'sync borked again'",
    "acts 20 (held): a problem in few words: 'signin issue'",
    "acts 20 (held): a problem in few words: 'acct locked out'",
    # "pw" is no word the router or the desk intents reader was taught: the password is a change
    # of password to them, and the article on changing it is given, not the reset link.
    "acts 20 (tune): forgotten password in slang: 'forgot my pw again'",
    "acts 20 (held): forgotten password in slang: 'forgot pw, again ugh'",
    # No article speaks of uploads in these words ("borked", "yday"): none is found to answer.
    "acts 20 (held): a problem in few words: 'uploads borked since yday'",
    # Messages of words no act saw ("g'day", "heyyy", "hiya folks", "ta muchly", "kk cya", "much
    # appreciated mate", "aight peace out"): no estimate of unseen words tells a greeting from
    # thanks there (with the background, only length and the acts' prior decide). They need
    # training lines of their own (the acts files), not smoothing.
    "acts 20 (tune): a greeting in unusual words: 'heyyy'",
    "acts 20 (tune): thanks in unusual words: 'ta muchly'",
    "acts 20 (held): thanks in unusual words: 'much appreciated mate'",
    "acts 20 (tune): goodbye in unusual words: 'kk cya'",
    "acts 20 (held): goodbye in unusual words: 'aight peace out'",
    # "aye go on then", "meh, skip it": the confirmation reader's (engine/confirmation.py), not the
    # act reader's: it hears no yes and no no, and the turn is searched as a new matter. Nothing
    # runs unasked.
    "acts 20 (held): a yes in unusual words runs the cancel once: 'aye go on then'",
    "acts 20 (held): a no in unusual words runs nothing: 'meh, skip it'",
    # kb-17 (held-12..21's article and question misses by kind, in new words; before: tune 3/8,
    # held 5/9; after: tune 4/8, held 5/9; the seen held misses: the biggest file sync takes, in
    # held-16 and -21, pass). Questions about credits (how long a top-up stays pending, a bank
    # transfer's days, credits paid and not arrived) and about a plan's versions ("not on team")
    # reach billing, which holds no knowledge base (agents.toml) and asks for the email; the model
    # cannot read the articles (tests/test_layers.py: it knows no tool), so the fix is the routing
    # (triage's) or the knowledge base on billing's list (money's). A time asked of them goes to the
    # articles since triage's asks_how_long_credits_take, credits told as not arrived since kb-18's
    # tells_of_credits_not_arrived. Versions asked of a plan with "not on team" told after read as
    # a problem as a whole, and the act reader reads the question's sentence a problem too:
    "kb-17 (held): question: how far back versions go off the team plan",
    # "whats the normal wait while it says processing" asks a time by a noun, no measure the
    # technical skill reads (`asks_a_measure`), and the act reader hears a problem: the article's
    # steps are "what usually fixes this"
    "kb-17 (held): question: the usual wait while a card top-up says processing",
    # another language: the desk answers "a member of our staff" will join, not "a person"
    "kb-17 (tune): no article: a german message about the bill",
    "kb-17 (held): no article: a spanish message about the last invoice",
    # kb-18 (held-12..23's article and question misses by kind, in new words; before: tune 10/12,
    # held 8/12; after: tune 12/12, held 9/12). An export's link told as dead ("the page says it
    # has expired") is read as the reset link's by the example model, which the written examples
    # of an export's expired link did not move far enough; "why does it say my account is
    # suspended??" is ground no tool covers to the learned ground reader (a person, as
    # no-tool-ground's "why is my account suspended" expects), though the locked-account article
    # speaks of a suspended account:
    "kb-18 (held): article: last month's export link says it expired",
    # a new hire's invite called invalid: no article sure enough (see kb-16b's stale invitation)
    "kb-18 (held): article: a new hire's invite link two weeks old says invalid",
    "kb-18 (held): article: why the account says suspended, two questions",
    # config-17 (the config desk's seen misses of held-12..21 by kind: a denial is not the matter,
    # hand-backs, security's matters told without its words; before: tune 5/7, held 4/7; after:
    # tune 7/7, held 4/7). Held left: the longer password reaches technical (the denial clause read
    # apart) but the technical skill's search finds no article sure enough (kb's); "its not phishing"
    # is no denial to read_denials (a bare noun after "its not", no article), and "the emails about
    # new comments never arrive" leans to security on its own words (0.89) and to the access reader
    # (0.53). ("a webhook none of us ever set up" passes since config-18: a negated subject
    # narrowed to the customer's side disowns.)
    "config 17 (held): denial: not a security problem, a longer password",
    # config-18 (the config desk's seen misses of held-20..23 by kind; before: tune 7/8, held 4/8,
    # seen 0/10; after: tune 7/8, held 4/8, seen 5/10). A denial clause is placed on its words with
    # the denial undone (router._denied); a negated subject narrowed to the customer's side ("nobody
    # on our team", "none of us") disowns (classifier._narrowed_to_our_side), as does "i wasn't
    # trying"; "when someone mentions me" votes for no one; a bare price in words of money is an
    # amount (router.with_bare_amount). Left:
    # "CUS-1036 what plan have i got": the desk intents reader reads it with the customer id in
    # as a duplicate (0.77; "what plan have i got? CUS-1036" is my_plan), so billing answers its
    # menu, the default desk too (turn 2, the phishing 2fa-code mail, reaches security).
    "config 18 (tune): billing holds it, then someone calling himself acme helpdesk wants the verification code",
    "config 18 (held): billing holds it, then a mail as acme security asks the 6 digit code",
    # a wipe threatened by a message: the access reader reads 0.15 and the words are the
    # technical agent's files and link (0.98; held-22's sms is read as a person asked for)
    "config 18 (held): a whatsapp: the files are wiped unless the link is used today",
    # the denial read apart and security set aside, "your notification emails just stopped coming
    # to me since last week" leans to billing on "stopped", "last week" and "emails" (0.73)
    "config 18 (held): denial: no phishing, notification emails stopped",
    "config 17 (held): denial: not phishing, the comment emails never arrive",
    # money-17b (the seen money misses of held-12..21 by kind; tune 7/8 and held 4/8 before, tune
    # 7/8 and held 6/8 after). Each left is the desk's gate's reading (engine/confirmation.py), not
    # the money skill's: nothing runs without a yes either way.
    # "yes the later one": the gate reads "later" as another time than now, so no yes.
    "money 17b (tune): kept: team taken the 24th and the 25th, email after, 'yes the later one'",
    # "oh what a relief, ...": the gate reads the "what" opening it as a question, no yes.
    "money 17b (held): rambling: not good with computers, starter the 5th and 6th, 'oh what a relief, thank you dear, yes please do'",
    # "the 2nd charge": read as a charge on the 2nd of the month, another than the one offered.
    "money 17b (held): kept: starter billed the 24th and 25th, email after, 'yes the 2nd charge'",
}
# Held-back sets with no tune half: written and committed before the model changed, measured
# once (evals/README.md), then kept passing like the rest.
HELD_ONLY = ("understand-held-2", "understand-held-3", "understand-held-4", "understand-held-5", "understand-held-6", "understand-held-7", "understand-held-8", "understand-held-9", "understand-held-10", "understand-held-11", "understand-held-12", "understand-held-13", "understand-held-14", "understand-held-15", "understand-held-16", "understand-held-17", "understand-held-18", "understand-held-19", "understand-held-20", "understand-held-21", "understand-held-22", "understand-held-23", "understand-held-24", "understand-held-25", "understand-held-26", "understand-held-27", "understand-held-28", "understand-held-29", "understand-held-30", "understand-held-31", "understand-held-32", "understand-held-33", "money-11-tune", "money-11-held")
HELD_ONLY_CONFIG = ("understand-held-3-config", "understand-held-4-config", "understand-held-5-config", "understand-held-6-config", "understand-held-7-config", "understand-held-8-config", "understand-held-9-config", "understand-held-10-config", "understand-held-11-config", "understand-held-12-config", "understand-held-13-config", "understand-held-14-config", "understand-held-15-config", "understand-held-16-config", "understand-held-17-config", "understand-held-18-config", "understand-held-19-config", "understand-held-20-config", "understand-held-21-config", "understand-held-22-config", "understand-held-23-config", "understand-held-24-config", "understand-held-25-config", "understand-held-26-config", "understand-held-27-config", "understand-held-28-config", "understand-held-29-config", "understand-held-30-config", "understand-held-31-config", "understand-held-32-config", "understand-held-33-config")  # run on evals/config-agent.toml


def _load(names: tuple[str, ...]) -> list[dict]:
    return [c for name in names for half in ("tune", "held") for c in read_jsonl(REPO / "evals" / f"{name}-{half}.jsonl")]


DEFAULT = _load(FAMILIES) + [c for name in HELD_ONLY for c in read_jsonl(REPO / "evals" / f"{name}.jsonl")]
CONFIGURED = _load(CONFIG_FAMILIES) + [c for name in HELD_ONLY_CONFIG for c in read_jsonl(REPO / "evals" / f"{name}.jsonl")]


def test_each_family_has_two_halves_in_varied_wording():
    for name in FAMILIES + CONFIG_FAMILIES:
        tune = read_jsonl(REPO / "evals" / f"{name}-tune.jsonl")
        held = read_jsonl(REPO / "evals" / f"{name}-held.jsonl")
        assert len(tune) >= 5 and len(held) >= 5, name
        assert all("(tune)" in c["name"] or "(tune):" in c["name"] for c in tune), name
        assert all("(held)" in c["name"] or "(held):" in c["name"] for c in held), name
    names = [c["name"] for c in DEFAULT + CONFIGURED]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("conversation", [c for c in DEFAULT if c["name"] not in KNOWN_MISSES], ids=lambda c: c["name"])
async def test_conversation(conversation):
    await passes(conversation)


@pytest.mark.parametrize("conversation", [c for c in CONFIGURED if c["name"] not in KNOWN_MISSES], ids=lambda c: c["name"])
async def test_config_only_agent_conversation(conversation):
    await passes(conversation, "evals/config-agent.toml")


@pytest.mark.parametrize("conversation", [c for c in DEFAULT + CONFIGURED if c["name"] in KNOWN_MISSES], ids=lambda c: c["name"])
async def test_a_known_miss_still_misses(conversation):
    config = "evals/config-agent.toml" if conversation in CONFIGURED else "agents.toml"
    [result] = await evaluate_conversations([conversation], config=str(REPO / config))
    assert not result.passed


async def test_the_plan_question_is_answered_once_not_for_every_later_message():
    convo = {"name": "plan then something else", "turns": [
        {"customer": "what plan am i on? dana@example.com", "expect": {"agent": "billing", "reply": ["Pro plan"]}},
        {"customer": "my account's been compromised", "expect": {"reply_not": ["You're on the Pro plan"]}},
    ]}
    await passes(convo)


async def test_a_question_about_cancelling_is_answered_then_the_request_offered_and_done():
    """acts-5: the question gets the facts and nothing held for a yes; asked for next, the same
    action is offered, and made on the yes."""
    money = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]
    convo = {"name": "asked about, then asked for", "turns": [
        {"customer": "if i cancel today do i still get charged for next month?? dana@example.com",
         "expect": {"agent": "billing", "reply": ["won't be charged"], "reply_not": ["shall i"], "not_tools": money,
                    "context_absent": ["pending_offer"]}},
        {"customer": "ok then please cancel it", "expect": {"offers": ["cancel_subscription"], "not_tools": money}},
        {"customer": "yes", "expect": {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1001"}}]}},
    ]}
    await passes(convo)


async def test_a_preamble_before_the_question_is_no_matter_of_its_own():
    """route-6: "Hello, so I have been a customer for a while" reads as a problem to the act reader
    (it knows no plain statement); before the one question the message carries it is a preamble,
    not a second matter for the technical agent."""
    convo = {"name": "preamble, then the question", "turns": [
        {"customer": "Hello, so I have been a customer for a while and I'm generally happy, but money is tight this "
                     "year and my partner asked me to check something: if we downgraded to the starter plan, would we "
                     "lose anything we already paid for? Not deciding today. dana@example.com",
         "expect": {"agent": "billing", "context_absent": ["pending_issues"],
                    "not_tools": ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]}},
    ]}
    await passes(convo)


async def test_a_product_question_naming_no_money_reaches_technical_without_billing_or_technical():
    """kb-8: the router unsure, a question about what the product does that names no money is the
    technical agent's (billing needs money named), who says it does not know and offers a person;
    one that names money is still not sent there."""
    money = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]
    convo = {"name": "product question, no money", "turns": [
        {"customer": "is there a timeline or gantt view for projects or nah",
         "expect": {"agent": "technical", "reply": ["person"], "reply_not": ["is this about billing", "covers this"], "not_tools": money}},
    ]}
    await passes(convo)


async def test_someone_else_in_the_account_told_in_few_words_is_not_asked_about():
    """security-12: "somebody else has been in my account i'm sure of it" names nothing triage's
    vagueness test knows, so it asked "billing, technical or security?"; the learned access reader
    reads it, and on a desk with an agent whose examples tell of that (router.access_agent) it goes
    there. The shipped desk, with no such agent, still asks."""
    told = "somebody else has been in my account i'm sure of it"
    convo = {"name": "someone in the account, few words", "turns": [
        {"customer": told, "expect": {"agent": "security", "reply_not": ["So I can bring in the right colleague"]}}]}
    await passes(convo, "evals/config-agent.toml")
    shipped = {"name": "someone in the account, few words, shipped desk", "turns": [
        {"customer": told, "expect": {"agent": "triage", "reply": ["So I can bring in the right colleague"]}}]}
    await passes(shipped)
