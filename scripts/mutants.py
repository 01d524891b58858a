#!/usr/bin/env python3
"""Break the desk's protections one at a time and check the tests notice.

Each mutant is one small plausible bug in one protection: an exact snippet of a file and what
replaces it. For each, a scratch copy of the checkout (never the checkout itself) gets that one
change, and the tests named for it run against the copy with a time limit. A mutant is

  caught   the tests failed (a hang counts only if pytest-timeout failed it within the limit),
  escaped  the tests passed with the protection broken,
  hung     the run went past the script's own limit (the suite would hang: not caught cleanly),
  stale    its snippet is no longer in the file (the table needs updating).

Before any mutant, the named tests run once on the unchanged copy: they must pass, or a "caught"
would prove nothing. Plain Python, no network (the PostgreSQL tests use SUPPORTDESK_TEST_PG_URL
when it is set). Slow by design, so not part of the test run; tests/test_mutants_table.py keeps
the table from rotting (every snippet still in its file, once).

    python scripts/mutants.py                  # every mutant, the fast ones of its named tests
    python scripts/mutants.py --list
    python scripts/mutants.py --only hub-dedupe --only lease-acquire
    python scripts/mutants.py --slow-too       # the named tests' slow and TUI ones as well
    python scripts/mutants.py --fast-loop      # each mutant against the whole fast loop instead
                                               # (pytest -m "not tui and not slow"; much slower)

By default only the fast tests among the named ones run (-m "not tui and not slow"): a mutant
counts as caught only if the fast loop would catch it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FAST_LOOP = ["-m", "not tui and not slow"]
# What pytest-timeout gives each test in a mutant's run: a mutant that makes a test hang must
# fail it by name well within the script's own limit for the run.
TEST_TIMEOUT = 60


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the checkout
    original: str  # exact text, found exactly once in the file
    replacement: str
    tests: tuple[str, ...]  # pytest arguments: files, node ids, -k expressions
    why: str  # the protection, and what the bug would let happen
    # Issue 37's seventeen: "escaped" (its five that the suite missed) and "caught" (its twelve);
    # "refusal" (the one it found covered by no unit test); "ours" (further protections).
    group: str = "caught"
    limit: float = 300.0  # the whole run's limit, seconds


MUTANTS: tuple[Mutant, ...] = (
    # --- the five issue 37 found escaping, and the refusal it found without a unit test ---------
    Mutant(
        "events-token",
        "supportdesk/channels/web.py",
        '        await conversations.check_token(session_id, _bearer(request) or request.query_params.get("token"))\n'
        "        after = _last_event_id(request)\n",
        "        after = _last_event_id(request)\n",
        ("tests/test_serve_errors.py",),
        "the event stream checks the conversation's token: without it anyone reads any conversation",
        group="escaped",
    ),
    Mutant(
        "lease-acquire",
        "supportdesk/engine/runner.py",
        "                yield TurnWaiting(session_id)\n                start = await lease.start(depth)\n",
        "                yield TurnWaiting(session_id)\n                start = await self.store.turn_start(session_id, depth)\n",
        ("tests/test_runner.py::test_concurrent_turns_in_one_process_keep_order",),
        "a turn waits for the session's turn lease: without it two turns interleave their steps",
        group="escaped",
    ),
    Mutant(
        "hub-dedupe",
        "supportdesk/channels/hub.py",
        "                    if event.seq <= sent:\n",
        "                    if event.seq < sent:\n",
        ("tests/test_hub_dedupe.py",),
        "the live stream skips what its backlog sent: else the last backlog item comes twice",
        group="escaped",
    ),
    Mutant(
        "chatwoot-signature",
        "supportdesk/channels/chatwoot.py",
        'timestamp.encode("ascii") + b"." + body, hashlib.sha256)',
        "body, hashlib.sha256)",
        ("tests/test_chatwoot_signature.py",),
        "Chatwoot signs {timestamp}.{body}: over the body alone every real delivery is refused and a"
        " captured body is accepted with any fresh timestamp",
        group="escaped",
    ),
    Mutant(
        "resume-counts-calls",
        "supportdesk/engine/runner.py",
        "                calls[item.name] = calls.get(item.name, 0) + 1\n",
        "                pass\n",
        ("tests/test_exactly_once.py",),
        "a resumed turn numbers its calls after the stored ones: else its second refund replays the first",
        group="escaped",
    ),
    Mutant(
        "duplicate-pair-refunded-once",
        "supportdesk/tools/billing.py",
        'refunded = [c["id"] for c in pair if c["id"] != charge["id"] and',
        'refunded = [c["id"] for c in pair if c["id"] == charge["id"] and',
        ("tests/test_billing_duplicate_pair.py",),
        "a duplicate pair is refunded once: else both charges of the pair are refunded",
        group="refusal",
    ),
    # --- protections issue 37 found caught ---------------------------------------------------------
    Mutant(
        "conversation-token-compare",
        "supportdesk/channels/conversations.py",
        "    if not hmac.compare_digest(token_digest(token), digest):\n",
        "    if not token_digest(token):\n",
        ("tests/test_serve_errors.py",),
        "a conversation's token must be its own: else any conversation's token opens every conversation",
    ),
    Mutant(
        "staff-token",
        "supportdesk/channels/web.py",
        '    if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), staff_token.encode("utf-8", "surrogatepass")):\n',
        "    if not given:\n",
        ("tests/test_serve_staff.py",),
        "only the staff token acts as staff: else any bearer token takes conversations over",
    ),
    Mutant(
        "per-call-refund-limit",
        "supportdesk/engine/tools.py",
        "        if limit is not None and amount > limit + 1e-9:\n",
        "        if limit is not None and amount > limit * 10:\n",
        ("tests/test_tools_desk.py", "tests/test_tool_limits.py"),
        "an agent's level caps one refund: else a level-1 agent refunds ten times its limit",
    ),
    Mutant(
        "approval-threshold",
        "supportdesk/engine/tools.py",
        "        if threshold is not None and amount >= threshold - 1e-9:\n",
        "        if threshold is not None and amount > threshold * 10:\n",
        ("tests/test_tools_desk.py", "tests/test_runner.py", "tests/test_tool_limits.py"),
        "refunds from the threshold wait for staff: else large refunds go through unapproved",
    ),
    Mutant(
        "message-rate-limit",
        "supportdesk/channels/conversations.py",
        "        if len(recent) >= self.messages_per_minute:\n",
        "        if len(recent) > self.messages_per_minute * 2:\n",
        ("tests/test_serve_errors.py",),
        "a conversation may post so many messages a minute (counted in the store, across workers): else one client floods the desk",
    ),
    Mutant(
        "client-rate-limit",
        "supportdesk/channels/conversations.py",
        "        if len(sent) >= self.per_minute:\n",
        "        if len(sent) > self.per_minute * 2:\n",
        ("tests/test_serve_payloads.py",),
        "one client may create so many conversations and send so many messages a minute: else it spreads a flood over conversations",
        group="ours",
    ),
    Mutant(
        "lease-expiry",
        "supportdesk/store/sqlite_live.py",
        "    WHERE turn_leases.expires_at <= :now OR turn_leases.holder = excluded.holder\n",
        "    WHERE turn_leases.holder = excluded.holder\n",
        ("tests/test_store_turns.py::test_a_sqlite_lease_whose_holder_stopped_renewing_expires",),
        "a lease whose holder stopped renewing expires: else a crashed holder blocks the session forever",
    ),
    Mutant(
        "newer-schema-refused",
        "supportdesk/store/core.py",
        "    if version <= known:\n",
        "    if version <= known + 1:\n",
        ("tests/test_migrations.py::test_newer_schema_is_refused_and_left_byte_identical",),
        "a database from a newer supportdesk is refused untouched: else an older one rewrites it",
    ),
    Mutant(
        "chatwoot-stale-timestamp",
        "supportdesk/channels/chatwoot.py",
        "        if age > self.settings.max_signature_age:\n",
        "        if age > self.settings.max_signature_age * 1000:\n",
        ("tests/test_chatwoot.py::test_the_url_secret_and_the_signature_authenticate_every_delivery",),
        "an old signed delivery is refused: else a captured delivery can be replayed for days",
    ),
    Mutant(
        "chatwoot-path-secret",
        "supportdesk/channels/chatwoot.py",
        '        if not hmac.compare_digest(request.path_params["secret"].encode(), self._path_secret.encode()):\n',
        '        if not request.path_params["secret"]:\n',
        ("tests/test_chatwoot.py",),
        "the webhook URL's secret is checked: else anyone posts customer messages",
    ),
    Mutant(
        "refund-key-replays",
        "supportdesk/business/core.py",
        '        return demo.replayed(json.loads(stored["result"]), stored["tool"], tool, key)\n',
        "        pass\n",
        ("tests/test_business_contract.py", "tests/test_customers.py"),
        "a refund's idempotency key replays its first result: else a retried call refunds twice",
    ),
    Mutant(
        "handoff-limit",
        "supportdesk/engine/runner.py",
        "        if count > limits.max_handoffs_per_message:\n",
        "        if count > limits.max_handoffs_per_message * 3:\n",
        ("tests/test_runner.py::test_handoff_limit",),
        "a message gets so many handoffs: else agents pass it around until the step limit",
    ),
    Mutant(
        "message-size-limit",
        "supportdesk/channels/web.py",
        "        if len(body) > MAX_MESSAGE_BYTES:\n",
        "        if len(body) > MAX_MESSAGE_BYTES * 64:\n",
        ("tests/test_serve_errors.py",),
        "a message body is read no further than 16 KB: else a client without Content-Length sends megabytes",
    ),
    # --- further protections of our own choosing ---------------------------------------------------
    Mutant(
        "confirmation-gate",
        "supportdesk/engine/runner.py",
        "        if tool is None or name not in agent.tools or not tool.needs_confirmation(self.config):\n",
        "        if True:\n",
        ("tests/test_confirmation.py",),
        "a consequential call waits for the customer's yes: else whatever the model calls runs",
        group="ours",
    ),
    Mutant(
        "passed-up-offer-runs-as-the-caller",
        "supportdesk/engine/runner.py",
        "            return target if target is not None and offer.tool in target.tools else None\n",
        "            return self.config.agents.get(offer.agent)\n",
        ("tests/test_passed_up_offer.py",),
        "a yes to an action passed up is run by the agent it was passed up to: else the caller, whose limit refuses it",
        group="ours",
    ),
    Mutant(
        "passed-up-call-never-run-by-the-caller",
        "supportdesk/engine/runner.py",
        "            if gated is None and runs_as is not agent:\n",
        "            if False:\n",
        ("tests/test_passed_up_offer.py",),
        "a call passed up is only offered: else a desk without the gate runs it as the agent that passed it up",
        group="ours",
    ),
    Mutant(
        "lease-fence",
        "supportdesk/store/sqlite_live.py",
        "    if row is None or row[0] != fence:\n",
        "    if row is None:\n",
        ("tests/test_store_turns.py",),
        "an append carrying a stale lease token is refused: else a paused holder writes beside the next",
        group="ours",
    ),
    Mutant(
        "money-total-per-conversation",
        "supportdesk/business/demo.py",
        "    if in_session + amount > limits.per_conversation + slack:\n",
        "    if amount > limits.per_conversation + slack:\n",
        ("tests/test_money_limits.py",),
        "refunds and credits add up per conversation: else eight credits under the per-call limit pay out $1,999.92",
        group="ours",
    ),
    Mutant(
        "named-account",
        "supportdesk/tools/billing.py",
        '        await require_named_account(ctx, charge["customer_id"])\n',
        "        pass\n",
        ("tests/test_tools_named_account.py",),
        "a refund acts only on an account the customer named: else a model talked into it refunds anyone",
        group="ours",
    ),
    Mutant(
        "search-words-quoted",
        "supportdesk/store/sessions.py",
        """    return " ".join(f'"{w}"*' if prefix else f'"{w}"' for w, prefix in _index_terms(text))\n""",
        """    return " ".join(f'{w}*' if prefix else f'{w}' for w, prefix in _index_terms(text))\n""",
        ("tests/test_store.py", "-k", "fts_syntax"),
        "search words are quoted FTS terms: else a word such as NOT or NEAR is query syntax",
        group="ours",
    ),
    Mutant(
        "provider-error-ends-turn",
        "supportdesk/engine/events.py",
        '                case Notice(notice_kind="provider_error" | "limit"):\n',
        '                case Notice(notice_kind="limit"):\n',
        ("tests/test_exactly_once.py", "tests/test_runner.py"),
        "a turn that ended in a provider error is finished: else opening the session runs it again",
        group="ours",
    ),
    Mutant(
        "held-by-staff",
        "supportdesk/engine/runner.py",
        "        holder = reads.holder if reads.fresh else await self.held_by(session_id)\n        if holder is not None:\n"
        "            # A person holds the conversation",
        "        holder = reads.holder if reads.fresh else await self.held_by(session_id)\n        if holder is not None and only_unfinished:\n"
        "            # A person holds the conversation",
        ("tests/test_staff.py",),
        "a conversation staff took over gets no agent answers: else the agents talk over the person",
        group="ours",
    ),
    Mutant(
        "ping-pong",
        "supportdesk/engine/runner.py",
        "        if len(window) >= limits.pingpong_window and len(set(window)) < limits.pingpong_min_unique:\n",
        "        if len(window) > limits.pingpong_window and len(set(window)) < limits.pingpong_min_unique:\n",
        ("tests/test_runner.py",),
        "agents handing a conversation back and forth are stopped after the window",
        group="ours",
    ),
    # --- this round's protections (issue 34 item 1, issue 32, issue 36) ----------------------------
    Mutant(
        "release-append-fenced-sqlite",
        "supportdesk/store/sessions.py",
        "            check_fence(conn, session_id, fence)\n            if at is not None:\n",
        "            if release is None:\n                check_fence(conn, session_id, fence)\n            if at is not None:\n",
        ("tests/test_store_turn_lease.py",),
        "the append that gives the lease back is fenced (SQLite): else a holder that lost its lease writes its last answer beside the next turn",
        group="ours",
    ),
    Mutant(
        "release-append-fenced-postgres",
        "supportdesk/store/postgres.py",
        "            if holder != fence:\n",
        "            if holder not in (fence, None):\n",
        ("tests/test_store_turn_lease.py",),
        "the append that gives the lease back is fenced (PostgreSQL): else no row of ours reads as 'already given back' and a lost holder writes",
        group="ours",
    ),
    Mutant(
        "release-needs-held-lease-sqlite",
        "supportdesk/store/sessions.py",
        "            fence = release_token(session_id, release)\n",
        "            fence = release.token\n",
        ("tests/test_store_turn_lease.py",),
        "a lease no longer held cannot be given back (SQLite): else its append goes unfenced",
        group="ours",
    ),
    Mutant(
        "release-needs-held-lease-postgres",
        "supportdesk/store/postgres.py",
        "            fence = release_token(session_id, release)\n",
        "            fence = release.token\n",
        ("tests/test_store_turn_lease.py",),
        "a lease no longer held cannot be given back (PostgreSQL): else its append goes unfenced",
        group="ours",
    ),
    Mutant(
        "try-start-takes-the-lease",
        "supportdesk/store/sessions.py",
        "            if not take(conn):\n                return False, None\n",
        "            take(conn)\n",
        ("tests/test_store_turn_lease.py",),
        "the turn-start read comes only with the lease: else two turns both read and run",
        group="ours",
    ),
    Mutant(
        "answer-answers-what-its-step-saw",
        "supportdesk/engine/events.py",
        'upto = seen_upto(item) if not item.meta.get("offer_id") else _offer_step_saw(tail, at)',
        "upto = None",
        ("tests/test_turn_joins.py", "tests/test_serve_second_message.py"),
        "an answer answers only the messages its step saw: else a message stored while the step ran is never answered",
        group="ours",
    ),
    Mutant(
        "seen-message-is-answered",
        "supportdesk/engine/events.py",
        "                if item.seq <= seen:\n",
        "                if item.seq < seen:\n",
        ("tests/test_answer_saw_upto.py", "tests/test_turn_joins.py"),
        "the last message an answer's step saw is answered: else it is answered twice",
        group="ours",
    ),
    Mutant(
        "receive-without-the-lease",
        "supportdesk/engine/runner.py",
        "        [stored] = await self.store.append(session_id, [message])\n        running = self._turn_reads.get(session_id)\n",
        "        async with self.store.turn(session_id):\n"
        "            [stored] = await self.store.append(session_id, [message])\n        running = self._turn_reads.get(session_id)\n",
        ("tests/test_serve_second_message.py", "tests/test_turn_joins.py"),
        "a customer message is stored at once, not after the running turn: else the second POST's 202 waits for a slow model",
        group="ours",
    ),
    Mutant(
        "approval-field-over-words",
        "supportdesk/items.py",
        '        and "awaits_approval" not in data\n',
        "",
        ("tests/test_approval_pending.py",),
        "a result's awaits_approval is data: else an output that begins with the sentence is read as held whatever the field says",
        group="ours",
    ),
    Mutant(
        "held-refund-not-money",
        "supportdesk/store/figure_summary.py",
        "                if amount is not None and not held:\n",
        "                if amount is not None:\n",
        ("tests/test_approval_pending.py",),
        "a refund held for staff is not money moved: else the desk's figures count refunds nobody approved",
        group="ours",
    ),
    Mutant(
        "held-refund-not-money-sql",
        "supportdesk/store/figures.py",
        "AND coalesce({d.is_false('r', 'body', 'awaits_approval')}, {f('r', 'body', 'output')} NOT LIKE '{pending}%')) AS made",
        "AND {f('r', 'body', 'output')} NOT LIKE '{pending}%') AS made",
        ("tests/test_approval_pending.py",),
        "the figures' SQL reads the field on new rows: else a held refund worded differently counts as money moved",
        group="ours",
    ),
    Mutant(
        "held-result-says-so",
        "supportdesk/engine/tools.py",
        "            awaits_approval=self.approval_reason is not None,\n",
        "            awaits_approval=False,\n",
        ("tests/test_approval_held_stored.py", "tests/test_approval_pending.py"),
        "a call held for approval is stored as held: else the TUI draws it done and the figures count it",
        group="ours",
    ),
    Mutant(
        "open-store-unknown-kind",
        "supportdesk/store/__init__.py",
        '        case "postgresql":\n',
        '        case "postgresql" | str():\n',
        ("tests/test_store_location.py",),
        "open_store opens only the kinds it names: else an unknown kind goes to the PostgreSQL adapter and connects somewhere",
        group="ours",
    ),
    Mutant(
        "driver-outside-store",
        "supportdesk/engine/events.py",
        "from __future__ import annotations\n",
        "from __future__ import annotations\n\nimport sqlite3  # noqa: F401  (a quick look at the file)\n",
        ("tests/test_layers.py",),
        "only store/ and the business adapters import a database driver: else SQL creeps into the engine",
        group="ours",
    ),
    Mutant(
        "unknown-channel-not-served",
        "supportdesk/engine/channels.py",
        '    return CHANNELS.get(channel) == "served"\n',
        '    return CHANNELS.get(channel, "served") == "served"\n',
        ("tests/test_channels.py",),
        "a channel not in the table is not served: else staff writing in the TUI to a local customer send it nowhere",
        group="ours",
    ),
    Mutant(
        "serve-resumes-every-served-channel",
        "supportdesk/channels/conversations.py",
        "            if not is_served(info.channel) or info.item_count == 0:\n",
        '            if info.channel != "web" or info.item_count == 0:\n',
        ("tests/test_chatwoot.py::test_a_message_stored_before_a_crash_is_answered_in_chatwoot_after_the_restart",),
        "serve answers on start-up every served channel's unanswered message: else a Chatwoot customer's message stored before a crash waits forever",
        group="ours",
    ),
    Mutant(
        "chatwoot-outbox-resumes",
        "supportdesk/channels/chatwoot.py",
        "                await self._follow(info.id, after=await self._relayed_upto(info.id))\n",
        "                await self._follow(info.id)\n",
        ("tests/test_chatwoot_outbox.py", "tests/test_chatwoot.py"),
        "the log is Chatwoot's outbox: else a reply stored but not relayed when the worker stopped is never delivered",
        group="ours",
    ),
    Mutant(
        "chatwoot-outbox-marker",
        "supportdesk/channels/chatwoot.py",
        "                return int(notice.data[RELAYED])\n",
        "                return 0\n",
        ("tests/test_chatwoot_outbox.py", "tests/test_chatwoot.py"),
        "a restart relays from after the last reply marked relayed: else every reply of the conversation is posted again",
        group="ours",
    ),
    Mutant(
        "chatwoot-dedupe-in-the-store",
        "supportdesk/channels/chatwoot.py",
        '                    session_id, content, meta={"chatwoot_message_id": message_id}, external_id=f"chatwoot:{message_id}"\n',
        '                    session_id, content, meta={"chatwoot_message_id": message_id}\n',
        ("tests/test_chatwoot.py::test_one_delivery_sent_to_two_workers_at_once_is_stored_once",),
        "one Chatwoot delivery is stored once even by two workers at once: else the customer's message is answered twice",
        group="ours",
    ),
    Mutant(
        "money-credits-count-with-refunds",
        "supportdesk/business/core.py",
        '            f" + coalesce((SELECT sum(amount) FROM demo_credits WHERE session_id = {p(1)}), 0)"\n',
        '            ""\n',
        ("tests/test_money_limits.py",),
        "a conversation's cap counts refunds and credits together (one statement for both databases): else credits on top of refunds pass it",
        group="ours",
    ),
    Mutant(
        "money-total-per-customer",
        "supportdesk/business/demo.py",
        "    if to_customer + amount > limits.per_customer + slack:\n",
        "    if amount > limits.per_customer + slack:\n",
        ("tests/test_money_limits.py",),
        "a customer's refunds and credits add up across conversations: else a new conversation each time passes the cap",
        group="ours",
    ),
    Mutant(
        "spelling-max-length",
        "supportdesk/readers/spelling.py",
        "    if not MIN_LENGTH <= len(word) <= MAX_LENGTH or not word.isalpha() or word in vocabulary:\n",
        "    if len(word) < MIN_LENGTH or not word.isalpha() or word in vocabulary:\n",
        ("tests/test_readers.py::test_a_long_run_of_letters_is_never_spelled_out_edit_by_edit",),
        "a long run of letters is never spelled out edit by edit: else one message of 5,000 x's held a turn for minutes",
        group="ours",
    ),
    Mutant(
        "button-answers-its-own-offer",
        "supportdesk/engine/runner.py",
        'reading = ("yes" if yes else "no") if offer_id == offer.offer_id else "other"',
        'reading = "yes" if yes else "no"',
        ("tests/test_confirmation.py::test_a_button_answers_only_its_own_offer",),
        "a yes button confirms only the offer it was drawn under: else a stale button left on an older offer runs whatever is offered now",
        group="ours",
    ),
    Mutant(
        "yes-naming-another-thing",
        "supportdesk/engine/runner.py",
        '                    reading = "change_of_mind"  # "yes, the one on the 1st": not the charge offered\n',
        "                    pass\n",
        ("tests/test_confirmation.py::test_a_yes_that_names_another_sum_runs_nothing",),
        "a yes that names another charge than the offered one runs nothing: else \"yes, the one on the 1st\" refunds the charge offered instead",
        group="ours",
    ),
    Mutant(
        "yes-beside-another-question",
        "supportdesk/engine/runner.py",
        '                    reading = "other"  # which question a bare yes answers is unclear: asked again\n',
        "                    pass\n",
        ("tests/test_offer_beside.py::test_a_report_on_the_steps_runs_no_refund_offered_beside_them",),
        "after a reply that gave another agent's steps and offered a refund, a yes must name the refund: else \"great, all sorted now\" (a report on the steps) runs it",
        group="ours",
    ),
    Mutant(
        "warm-up-compiles-rules",
        "supportdesk/models/offline/model.py",
        "        patterns.compile_waiting()\n",
        "        pass\n",
        ("tests/test_warm_up.py::test_the_models_warm_up_compiles_what_waits_and_builds_every_reader",),
        "the warm-up compiles the model's rules: else the first customer message compiles them on the event loop (~0.4 s, a frozen screen)",
        group="ours",
    ),
    Mutant(
        "warm-up-builds-readers",
        "supportdesk/models/offline/model.py",
        "        readers.warm()\n",
        "        pass\n",
        ("tests/test_warm_up.py::test_the_models_warm_up_compiles_what_waits_and_builds_every_reader",),
        "the warm-up builds the learned readers: else the first message that needs one builds it on the event loop (the ground reader alone ~0.3 s)",
        group="ours",
    ),
    Mutant(
        "yes-beside-steps-before-the-email",
        "supportdesk/engine/confirmation.py",
        "            if not gives_only_details(item.text):\n",
        "            if True:\n",
        ("tests/test_offer_beside.py::test_a_report_after_the_email_turn_runs_nothing_and_the_refund_is_offered_again",),
        "steps given, then the email asked and given, then a refund offered: \"great, all sorted now\" reports on the steps; without reaching back over the email it ran the refund",
        group="ours",
    ),
    Mutant(
        "a-thing-told-running-is-no-yes",
        "supportdesk/engine/confirmation.py",
        '    r"|(?:it|it\'s|its|it is|everything(?:\'s| is)?|all|the \\w+(?: \\w+)?) (?:(?:is|are) )?(?:works|',
        '    r"|(?!)(?:it|it\'s|its|it is|everything(?:\'s| is)?|all|the \\w+(?: \\w+)?) (?:(?:is|are) )?(?:works|',
        ("tests/test_offer_beside.py::test_a_report_on_the_matter_waiting_runs_nothing_and_the_refund_is_put_again",),
        "\"ok great it works\" after \"would you like me to refund it?\", a crash told beside the refund: read as a yes, it ran the refund",
        group="ours",
    ),
    Mutant(
        "a-finding-acknowledged-is-no-yes",
        "supportdesk/engine/confirmation.py",
        "        if not _doubted(said, offered):\n",
        "        if True:\n",
        ("tests/test_confirmation.py::test_the_reader_on_a_finding_acknowledged_not_agreed_to",),
        "\"perfect, thanks for finding that\" or \"ok good to know\" after \"would you like me to refund it?\": the rules' assent word and short rest read as a yes, and the refund ran",
        group="ours",
    ),
    Mutant(
        "serve-listens-locally",
        "supportdesk/channels/command.py",
        'serve.add_argument("--host", default="127.0.0.1",',
        'serve.add_argument("--host", default="0.0.0.0",',
        ("tests/test_serve_process.py::test_serve_binds_loopback_by_default",),
        "serve listens on this machine only unless told otherwise: else a desk started to try it out answers anyone on the network",
        group="ours",
    ),
    Mutant(
        "database-password-redacted",
        "supportdesk/store/location.py",
        '            netloc = f"{userinfo.split(\':\', 1)[0]}:{MASK}@{host}"\n',
        "            pass\n",
        ("tests/test_store_location.py::test_redact_url_keeps_everything_but_the_password",),
        "a database URL is shown with its password masked: else every title bar, log line and error naming the desk's database prints the password",
        group="ours",
    ),
    Mutant(
        "asked-request-is-sure",
        "supportdesk/engine/confirmation.py",
        "        return not put_as_question or _ACTION_ASKED.search(clause) is not None or _only_the_thing_asked(clause)\n",
        "        return True\n",
        ("tests/test_request_consent.py::test_a_clause_put_as_a_question_asks_by_its_verb_or_the_thing_alone",),
        "a clause put as a question is a request only with the action's verb or naming the thing asked alone: else 'reset link expiry? <email>' (read as a request, 1.00) and 'min password length? <email>' sent a reset link nobody asked for",
        group="ours",
    ),
    Mutant(
        "reset-asked-beside-question",
        "supportdesk/engine/confirmation.py",
        "    if any(\n",
        "    if False and any(\n",
        ("tests/test_tech_20.py::test_a_request_beside_a_question_asks_for_nothing",),
        "a clause that asks for something asks for the reset link only when no other clause asks a question: else 'how long does a reset link last, and does an old one still work? send it to <email> if needed' sends a link the customer only asked about",
        group="ours",
    ),
    Mutant(
        "reset-asked-beside-why",
        "supportdesk/engine/confirmation.py",
        "        or _put_as_question(text, c) and _WH_ALONE.match(c)  # (naming no matter, money or other)\n",
        "        or False\n",
        ("tests/test_request_consent.py::test_the_reset_tool_reads_no_request_in_questions_problems_or_other_asks",),
        "a question word asked on its own beside a clause heard as a request asks about it: else 'reset link says expired, why? <email>' (the act reader hears 'why' as a problem) sends a link nobody asked for",
        group="ours",
    ),
    Mutant(
        "lone-go-beside-words",
        "supportdesk/engine/confirmation.py",
        '    r"(?:[ ,!]+(?:now|please|pls|plz|then))*[ !.]*$"\n',
        '    r".*"\n',
        ("tests/test_confirmation.py::test_go_beside_other_words_is_not_a_yes",),
        "a lone go-ahead is a yes only alone: else 'go away' or 'make it so the plan is pro' runs the offered change",
        group="ours",
    ),
    Mutant(
        "control-characters-visible",
        "supportdesk/text.py",
        "    return _CONTROL.sub(_visible, text)\n",
        "    return text\n",
        ("tests/test_cli.py::test_show_makes_control_characters_visible",
         "tests/test_hardening_export.py::test_hostile_customer_text_is_inert_in_markdown"),
        "untrusted text's control characters and bidi overrides are made visible: else a customer's ESC sequence recolours or retitles the staff's terminal, on screen and in an export",
        group="ours",
    ),
    Mutant(
        "card-method-left",
        "supportdesk/models/offline/cues.py",
        "if _METHOD_LEFT.search(text[max(0, m.start() - 40):m.start()]) or _METHOD_LEFT_AFTER.match(text[m.end():]):",
        "if False:",
        ("tests/test_slots_across_turns.py::test_the_payment_method_being_left_is_not_the_one_used",
         "tests/test_slots_across_turns.py::test_a_change_away_from_paypal_is_offered_and_made_with_the_new_card"),
        "the payment method a customer is leaving is never the one offered: else 'no more paypal, charge my visa' "
        "was offered, and on a yes made, as a change to paypal",
        group="ours",
    ),
)


def _copy_checkout(into: Path) -> Path:
    """The checkout's files as they stand (uncommitted changes included), without git's folder,
    virtual environments or caches."""
    target = into / "checkout"
    skip = shutil.ignore_patterns(".git", ".venv*", "__pycache__", ".mypy_cache", ".pytest_cache", "*.pyc", ".hypothesis")
    shutil.copytree(REPO, target, ignore=skip, symlinks=True)
    return target


def _pytest(checkout: Path, args: list[str], limit: float) -> tuple[str, float, str]:
    """Run pytest in the copy: ("passed" | "failed" | "hung" | "error", seconds, output tail)."""
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly",
               f"--timeout={TEST_TIMEOUT}", *args]
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the run and whatever it started
        out, _ = proc.communicate()
        return "hung", time.monotonic() - started, out[-2000:]
    seconds = time.monotonic() - started
    tail = out[-2000:]
    if proc.returncode == 0:
        return "passed", seconds, tail
    if proc.returncode == 1:
        return "failed", seconds, tail
    return "error", seconds, tail  # 2: interrupted, 3: internal error, 4: usage, 5: no tests


def _tests(mutant: Mutant, fast_loop: bool, slow_too: bool = False) -> list[str]:
    if fast_loop:
        return list(FAST_LOOP)
    return list(mutant.tests) if slow_too else [*mutant.tests, *FAST_LOOP]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run this mutant (repeatable)")
    parser.add_argument("--fast-loop", action="store_true", help="run the whole fast loop against each mutant")
    parser.add_argument("--slow-too", action="store_true", help="run the named tests' slow and TUI ones as well")
    parser.add_argument("--verbose", "-v", action="store_true", help="show pytest's last lines for each mutant")
    args = parser.parse_args(argv)

    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    unknown = set(args.only) - {m.name for m in MUTANTS}
    if unknown:
        print(f"no mutant named {', '.join(sorted(unknown))}; --list shows them", file=sys.stderr)
        return 2
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:30} {m.path:40} {m.group:8} {m.why}")
        return 0

    with tempfile.TemporaryDirectory(prefix="supportdesk-mutants-") as scratch:
        checkout = _copy_checkout(Path(scratch))
        # The named tests must pass on the unchanged copy, or a "caught" proves nothing.
        baseline = sorted({tuple(_tests(m, args.fast_loop, args.slow_too)) for m in chosen})
        for tests in baseline:
            outcome, seconds, tail = _pytest(checkout, list(tests), max(m.limit for m in chosen) * (3 if args.fast_loop else 1))
            if outcome != "passed":
                print(f"baseline {' '.join(tests)}: {outcome} in {seconds:.0f} s on the unchanged checkout\n{tail}")
                return 2
        print(f"baseline: {len(baseline)} test selection(s) pass unchanged", flush=True)

        results: dict[str, str] = {}
        for m in chosen:
            file = checkout / m.path
            text = file.read_text(encoding="utf-8")
            if text.count(m.original) != 1:
                results[m.name] = "stale"
                print(f"{m.name:30} stale    (its snippet is in {m.path} {text.count(m.original)} times, not once)")
                continue
            file.write_text(text.replace(m.original, m.replacement), encoding="utf-8")
            try:
                outcome, seconds, tail = _pytest(
                    checkout, _tests(m, args.fast_loop, args.slow_too), m.limit * (3 if args.fast_loop else 1)
                )
            finally:
                file.write_text(text, encoding="utf-8")
            verdict = {"failed": "caught", "passed": "escaped"}.get(outcome, outcome)
            results[m.name] = verdict
            print(f"{m.name:30} {verdict:8} {seconds:6.1f} s  {m.why}", flush=True)
            if args.verbose or verdict not in ("caught",):
                print("    " + "\n    ".join(tail.strip().splitlines()[-8:]))

    caught = sum(v == "caught" for v in results.values())
    groups = {g: sum(m.group == g for m in chosen) for g in ("escaped", "caught", "refusal", "ours")}
    print(f"\n{caught} of {len(results)} mutants caught (issue 37: {groups['escaped']} that escaped it and"
          f" {groups['caught']} it saw caught; {groups['refusal']} refusal without a unit test; {groups['ours']} of our own)")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
