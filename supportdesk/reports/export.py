"""A session as Markdown or JSON (`supportdesk export`, the TUI's export action).

JSON is data: every item exactly as stored. Markdown is for pasting anywhere, so nothing a
customer or a model wrote can act in it: their text is made visible (`text.safe_text`) and
put in code fences longer than any run of backticks it holds, so it can forge no speaker
line, heading, HTML or fence; the few words outside fences (title, names) are escaped.
"""

from __future__ import annotations

import json
import re
from typing import Any, assert_never

from supportdesk import items as k
from supportdesk.config import DeskConfig
from supportdesk.items import ROLE_TITLES, item_to_json
from supportdesk.records import dump
from supportdesk.staff import describe
from supportdesk.store import SessionInfo
from supportdesk.text import safe_text


def session_json(info: SessionInfo, items: list[k.Item]) -> dict[str, Any]:
    return {"session": dump(info), "items": [item_to_json(i) for i in items]}


# DEL and the C1 controls (one of them, 0x9b, is a terminal's CSI): written raw they act in a
# terminal or a pager that shows the file. Outside strings JSON has none, so each is escaped.
_RAW_CONTROLS = re.compile("[\x7f-\x9f]")


def json_text(value: Any) -> str:
    """`value` as the JSON export writes it: readable UTF-8, but DEL and C1 controls escaped
    (`\\u009b`), as the Markdown export makes them visible; it decodes to the same data."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def session_json_text(info: SessionInfo, items: list[k.Item]) -> str:
    return json_text(session_json(info, items))


def _title(agent: str, config: DeskConfig | None) -> str:
    found = config.agents.get(agent) if config else None
    return found.title if found else agent


def speaker(item: k.Message, config: DeskConfig | None = None) -> str:
    """Who a message is from, as people read it."""
    return ROLE_TITLES.get(item.role) or _title(item.agent, config)


def item_line(item: k.Item, config: DeskConfig | None = None) -> str:
    """One item as a line of plain text (CLI output, and the lines of a Markdown export)."""
    match item:
        case k.Message():
            return f"{speaker(item, config)}: {item.text}"
        case k.Handoff():
            reason = f" ({item.reason})" if item.reason else ""
            return f"→ {item.handoff_kind}: {item.from_agent} → {item.to_agent}{reason}"
        case k.ToolCall():
            return f"⚙ {item.name}({json.dumps(item.arguments, ensure_ascii=False)})"
        case k.ToolResult():
            mark = "✗" if item.is_error else "✓"
            return f"{mark} {item.name}: {item.output}"
        case k.ContextSet():
            value = "(cleared)" if item.value is None else json.dumps(item.value, ensure_ascii=False)
            return f"• context {item.key} = {value} (by {item.writer})"
        case k.Notice():
            return f"! {item.notice_kind}: {item.text}"
        case k.StaffReply():
            return f"{item.person} (staff): {item.text}"
        case k.Takeover() | k.Release() | k.StateChange() | k.TagChange():
            return f"✋ {describe(item)}"
        case k.Offer():
            runner = f", {item.for_agent} runs it" if item.for_agent else ""
            return f"? offer {item.tool}({json.dumps(item.arguments, ensure_ascii=False)}): {item.action}{runner}, waiting for the customer's yes"
        case k.Confirmation():
            return f"✔ the customer confirmed {item.tool} ({item.source})"
        case k.Decline():
            return f"✗ offer of {item.tool} closed: {item.why} ({item.source})"
        case _:
            assert_never(item)


def in_brief_transcript(item: k.Item) -> bool:
    """Whether `supportdesk run` prints the item without `--verbose`: what people said and did."""
    match item:
        case k.Message() | k.Handoff() | k.Notice() | k.StaffReply() | k.Takeover() | k.Release():
            return True
        case k.Confirmation() | k.Decline():
            return True  # the customer's answer to an offer decides what the desk does
        case k.ToolCall() | k.ToolResult() | k.ContextSet() | k.StateChange() | k.TagChange() | k.Offer():
            return False  # (an offer's question is the agent's message that follows it)
        case _:
            assert_never(item)


# --- Markdown ------------------------------------------------------------------------------------

# The characters that start Markdown (GitHub's too) inside a line: emphasis, code, links and
# images, HTML and entities, headings, tables, strikethrough, math.
# Backslash-escaped (CommonMark allows it for any ASCII punctuation) they are literal; the
# text around them never starts a line, so list and quote markers need no escape.
_PUNCTUATION = re.compile(r"([\\`*_\[\]<>#!|~&$])")
# A colon starts a link only as a scheme's ("https://", "mailto:"): only that one is escaped,
# so times and "Note:" read plainly (issue 39 §5: "06\:32").
_SCHEME_COLON = re.compile(r"(?<=[A-Za-z]):(?=//)|(?i:(?<=mailto)|(?<=xmpp)):")
_BACKTICKS = re.compile(r"`+")


def inline(text: str) -> str:
    """Untrusted words for a Markdown line outside a fence: visible controls, one line, escaped."""
    return _SCHEME_COLON.sub(r"\\:", _PUNCTUATION.sub(r"\\\1", " ".join(safe_text(text).split())))


def fenced(text: str) -> list[str]:
    """Untrusted text as a fenced code block it cannot close: the fence is longer than any run
    of backticks inside it."""
    body = safe_text(text).expandtabs(4)  # a tab is a control byte too; spaces show the same
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *body.split("\n"), fence]


def session_markdown(info: SessionInfo, items: list[k.Item], config: DeskConfig | None = None) -> str:
    """The transcript: one speaker line per message (`**Who** · time`), the message in a fence;
    tool calls, results, handoffs, context writes and notices in a fence under the agent that
    made them (`*Who* · time` when that agent has not spoken just before)."""
    lines = [
        f"# {inline(info.title) or 'Untitled session'}",
        "",
        f"- session: `{inline(info.id)}`",
        f"- started: {info.created_at:%Y-%m-%d %H:%M} UTC · last activity: {info.updated_at:%Y-%m-%d %H:%M} UTC",
        f"- agent now: {inline(info.active_agent)} · handoffs: {info.handoff_count} · items: {info.item_count}",
    ]
    if info.forked_from:
        lines.append(f"- forked from `{inline(info.forked_from)}` at item {info.forked_at}")
    lines.append("")
    section: str | None = None  # whose lines the transcript is showing now
    activity: list[str] = []  # non-message lines waiting for their fence

    def flush() -> None:
        if activity:
            lines.extend([*fenced("\n".join(activity)), ""])
            activity.clear()

    for item in items:
        match item:
            case k.Message():
                flush()
                who = speaker(item, config)
                lines += [f"**{inline(who)}** · {item.created_at:%H:%M:%S}", "", *fenced(item.text), ""]
                section = f"agent:{item.agent}" if item.role == "agent" else f"role:{item.role}"
            case k.StaffReply():
                flush()
                who = f"{item.person} (staff)"
                lines += [f"**{inline(who)}** · {item.created_at:%H:%M:%S}", "", *fenced(item.text), ""]
                section = f"staff:{item.person}"
            case k.Takeover() | k.Release() | k.StateChange() | k.TagChange():
                owner = f"staff:{item.person}"
                if owner != section:
                    flush()
                    lines += [f"*{inline(item.person)} (staff)* · {item.created_at:%H:%M:%S}", ""]
                    section = owner
                activity.append(item_line(item, config))
            case (
                k.ToolCall() | k.ToolResult() | k.Handoff() | k.ContextSet() | k.Notice()
                | k.Offer() | k.Confirmation() | k.Decline()
            ):
                owner = f"agent:{item.agent}"
                if owner != section:
                    flush()
                    lines += [f"*{inline(_title(item.agent, config))}* · {item.created_at:%H:%M:%S}", ""]
                    section = owner
                activity.append(item_line(item, config))
            case _:
                assert_never(item)
    flush()
    lines += audit_markdown(items)
    return "\n".join(lines).rstrip() + "\n"


def audit_markdown(items: list[k.Item]) -> list[str]:
    """The session's staff actions (`supportdesk audit` for this session) as a Markdown table:
    who, when, from where, what. Empty when staff did nothing."""
    from supportdesk.staff import audit

    entries = audit(items)
    if not entries:
        return []
    lines = ["", "**Staff actions**", "", "| # | when (UTC) | who | from | action | detail |", "| --- | --- | --- | --- | --- | --- |"]
    for e in entries:
        detail = inline(e.detail[:200])  # cut before escaping: no cut leaves a "\\" to escape the "|"
        lines.append(
            f"| {e.seq} | {e.at:%Y-%m-%d %H:%M:%S} | {inline(e.person)} | {e.origin} | {e.action} | {detail} |"
        )
    return lines
