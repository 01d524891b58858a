"""Issue 13, exports: Markdown safe to paste anywhere, JSON exact."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from supportdesk.config import load_desk
from supportdesk.reports.export import session_json, session_markdown
from supportdesk.items import ContextSet, Handoff, Item, Message, Notice, ToolCall, ToolResult
from supportdesk.store import SessionInfo
from tests.conftest import REPO

WHEN = datetime(2026, 3, 3, 10, 0, 0, tzinfo=timezone.utc)
DESK = load_desk(REPO / "agents.toml")
SPEAKER = re.compile(r"^\*\*[^*]+\*\* · \d\d:\d\d:\d\d$")
# Control bytes a terminal or a renderer would act on (newline is the only one a file needs),
# and the bidi controls that reorder what a reader sees.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _info(title: str = "Charged twice", count: int = 0) -> SessionInfo:
    return SessionInfo(
        id="abc123def456", title=title, created_at=WHEN, updated_at=WHEN, entry_agent="triage",
        active_agent="billing", status="open", item_count=count, handoff_count=1,
    )


def _stamp(items: list[Item]) -> list[Item]:
    return [replace(i, session_id="abc123def456", seq=n, created_at=WHEN) for n, i in enumerate(items, 1)]


def _parse(markdown: str) -> list:
    return MarkdownIt("commonmark").parse(markdown)


def _speaker_paragraphs(tokens: list) -> list[str]:
    """The top-level paragraphs that read as a speaker line."""
    out = []
    for i, token in enumerate(tokens):
        if token.type == "paragraph_open" and token.level == 0:
            text = tokens[i + 1].content
            if SPEAKER.match(text):
                out.append(text)
    return out


def _check_inert(markdown: str, messages: int) -> None:
    assert not CONTROL.search(markdown), repr(CONTROL.search(markdown))
    tokens = _parse(markdown)
    kinds = {t.type for t in tokens}
    assert "html_block" not in kinds
    assert not any(child.type == "html_inline" for t in tokens if t.children for child in t.children)
    headings = [t for t in tokens if t.type == "heading_open"]
    assert [h.tag for h in headings] == ["h1"] and tokens[0].type == "heading_open"
    assert len(_speaker_paragraphs(tokens)) == messages
    # Every fence the export opened is a fence of its own: none swallowed the ones after it.
    openers = [line for line in markdown.split("\n") if re.fullmatch(r"`{3,}text", line)]
    assert len([t for t in tokens if t.type == "fence"]) == len(openers)


ATTACKS = [
    "\x1b[31mred\x1b[0m \x1b]0;pwned title\x07 \x1b]8;;https://evil.example\x07click\x1b]8;;\x07 bell\x07 back\x08 cr\r nul\x00 c1\x9b",
    "**Billing:** I approve a refund of $500",
    "**Billing** · 10:00:00",
    "<script>alert(1)</script> <img src=x onerror=alert(1)>",
    "```\nunclosed fence swallows the rest",
    "# Heading\n## another\nsetext\n===",
    "Charged twice \u202eevil\u202c and \u2066isolated\u2069",
]


def test_hostile_customer_text_is_inert_in_markdown() -> None:
    items = _stamp([Message(role="customer", text=text, agent="triage") for text in ATTACKS])
    markdown = session_markdown(_info("# # Heading <b>x</b> \x1b]0;t\x07"), items, DESK)
    _check_inert(markdown, len(ATTACKS))
    assert markdown.startswith("# \\# \\# Heading \\<b\\>x\\</b\\> ␛\\]0;t␇\n")
    assert "␛[31mred" in markdown and "\\x9b" in markdown and "\\u202e" in markdown
    # The forged speaker line is text inside a fence, not a speaker line.
    speakers = _speaker_paragraphs(_parse(markdown))
    assert speakers == ["**Customer** · 10:00:00"] * len(ATTACKS)


def test_tool_lines_are_under_the_agent_that_made_them() -> None:
    items = _stamp([
        Message(role="customer", text="I was charged twice", agent="triage"),
        Message(role="agent", text="Bringing in billing.", agent="triage"),
        Handoff(from_agent="triage", to_agent="billing", reason="charged twice", handoff_kind="route", agent="triage"),
        ToolCall(call_id="c1", name="find_charges", arguments={"customer": "dana@example.com"}, agent="billing"),
        ToolResult(call_id="c1", name="find_charges", output='{"charges": []}', agent="billing"),
        ContextSet(key="customer_id", value="CUS-1001", writer="billing", agent="billing"),
        Message(role="agent", text="I found it.", agent="billing"),
        Notice(notice_kind="info", text="done", agent="billing"),
    ])
    markdown = session_markdown(_info(count=len(items)), items, DESK)
    _check_inert(markdown, 3)
    triage = markdown.index("**Triage** · ")
    handoff = markdown.index("→ route: triage → billing")
    billing_tools = markdown.index("*Billing* · ")
    call = markdown.index("⚙ find_charges")
    billing_says = markdown.index("**Billing** · ")
    assert triage < handoff < billing_tools < call < billing_says
    # find_charges is not listed in the Triage part of the transcript.
    assert "find_charges" not in markdown[triage:billing_tools]
    assert markdown.index("! info: done") > billing_says


def test_json_export_stays_exact() -> None:
    text = ATTACKS[0] + ATTACKS[1]
    items = _stamp([Message(role="customer", text=text, agent="triage")])
    exported = json.loads(json.dumps(session_json(_info(), items), ensure_ascii=False))
    assert exported["items"][0]["text"] == text


_chars = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(list("`*_#<>[]()!|~&$:-=\n\r\t\x00\x07\x08\x1b\x7f\x85\x9b\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")),
)
_text = st.text(_chars, max_size=60)
_message = st.builds(
    lambda role, text: Message(role=role, text=text, agent="billing"),
    st.sampled_from(["customer", "agent", "staff", "system"]),
    _text,
)
_other = st.one_of(
    st.builds(lambda name, out: ToolResult(call_id="c", name=name, output=out, agent="billing"), _text, _text),
    st.builds(lambda reason: Handoff(from_agent="billing", to_agent="triage", reason=reason, handoff_kind="return", agent="billing"), _text),
    st.builds(lambda text: Notice(notice_kind="info", text=text, agent="senior"), _text),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=_text, items=st.lists(st.one_of(_message, _other), max_size=12))
def test_property_exported_markdown_has_no_control_bytes_and_one_speaker_line_per_message(title, items) -> None:
    stamped = _stamp(items)
    markdown = session_markdown(_info(title, len(stamped)), stamped, DESK)
    _check_inert(markdown, sum(1 for i in stamped if i.kind == "message"))


def test_times_read_plainly_while_a_links_scheme_stays_inert() -> None:
    # issue 39 §5: the staff table showed "06\:32"; only a scheme's colon starts a link.
    from supportdesk.reports.export import audit_markdown, inline
    from supportdesk.items import Release, StateChange

    until = datetime(2026, 3, 4, 6, 32, tzinfo=timezone.utc)
    items = _stamp([
        StateChange(person="dana", state="snoozed", until=until, reason="call back at 06:32", agent="billing"),
        Release(person="dana", to_agent="billing", summary="see https://evil.example and mailto:x@evil.example", agent="billing"),
    ])
    table = "\n".join(audit_markdown(items))
    assert "06:32" in table and "06\\:32" not in table
    assert "https\\://evil.example" in table and "mailto\\:x@evil.example" in table
    assert inline("Note: at 10:00") == "Note: at 10:00"
    links = [c for t in _parse(table) if t.children for c in t.children if c.type == "link_open"]
    assert links == []
    # a cut detail never ends in a backslash that would escape the table's "|"
    long = _stamp([Release(person="dana", to_agent="billing", summary="x" * 199 + "|" * 10, agent="billing")])
    [row] = [line for line in audit_markdown(long) if line.startswith("| 1 ")]
    assert row.count(" | ") == 5 and not row.endswith("\\ |")
