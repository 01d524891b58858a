"""Simple agent replies are drawn without markdown-it, exactly as Rich's Markdown draws them."""

from __future__ import annotations

import random

import pytest
from rich.console import Console
from rich.markdown import Markdown

from supportdesk.tui.widgets.markdown_text import SimpleMarkdown, agent_text, simple_blocks

SIMPLE = [
    "",
    "Thanks, I'm bringing in our billing team to help with this.",
    "I can help with that. What's the email address on your account? If that's easier, tell me the "
    "amount and the dates of the charges you can see, and I'll find them.",
    "First line\nsecond line of the same paragraph\n\nA second paragraph (with parentheses).",
    "\n\nLeading and trailing blank lines\n\n\n\nand several between\n\n",
    "Refund of $29.99 for invoice #2 on 2024-03-01: done (CH-25), 3.5 GB = 100% of plan",
    "\"Quoted\" words, 'single' ones, an address like jo@example.com and a path /a/b/c",
    "Ünïcödé lettres, 数字 and Ελληνικά work too",
    "2024 was the year; 1 item, 12 items",
    "a" * 300,
    # strong words and bullet lists
    "Thanks, I can see **two charges** on invoice #2.\n\n- checking it now\n- item 2",
    "I found two identical charges of $29.00 for March (CH-25 on March 1 and CH-26 on March 3). "
    "I've refunded the duplicate:\n\n- refund RF-1 for CH-26\n- back on your card in 5-10 business days\n\n"
    "Is there anything else I can help with?",
    "**Refunded** $29.00 to the card ending 4242.",
    "a**b**c and **x** and **3.5 GB**",
    "- a list",
    "- **bold** item\n- an item long enough to wrap onto a second line at the narrower widths we draw it at",
    "- one\n- two\n\nAnd a closing paragraph\nwith a soft break.",
    "Two lists would be one loose list, so only one here:\n\n- a\n- b",
]
NOT_SIMPLE = [
    "# A heading",
    "1. first\n2. second",
    "12) twelve",
    "+ a list",
    "* a list",
    "- a\n\n- b",  # a loose list
    "- a\ncontinued",  # a lazy continuation line
    "para\n- list right under it",
    "- - nested",
    "- # heading in a list",
    "-  two spaces",
    "Underlined\n===",
    "Underlined\n---",
    "---",
    "    indented code",
    "  two leading spaces",
    "a hard break  \nnext",
    "a hard break\\\nnext",
    "`code`",
    "_emphasis_",
    "*emphasis*",
    "** not strong **",
    "**strong with a * inside**",
    "***three***",
    "**unclosed",
    "~~struck~~",
    "[a link](http://x)",
    "<b>html</b>",
    "&amp; entity",
    "| a | b |\n| - | - |\n| 1 | 2 |",
    "> a quote",
    "tab\there",
    "an emoji 🙂",
    "escape \\*not emphasis\\*",
    "{braces}",
    "![image](x.png)",
    "a" * 5000,
]


def _cells(renderable, width: int, console: Console) -> list[list[tuple[str, object]]]:
    """What is drawn, cell by cell: (character, style) per cell of each line."""
    lines = console.render_lines(renderable, console.options.update(width=width), pad=True)
    return [[(ch, seg.style) for seg in line for ch in seg.text] for line in lines]


def _console() -> Console:
    return Console(width=200, color_system="truecolor", force_terminal=True)


@pytest.mark.parametrize("text", SIMPLE)
@pytest.mark.parametrize("width", [20, 47, 120])
def test_simple_replies_are_drawn_as_markdown_draws_them(text, width):
    console = _console()
    blocks = simple_blocks(text)
    assert blocks is not None
    assert _cells(SimpleMarkdown(blocks), width, console) == _cells(Markdown(text), width, console)


@pytest.mark.parametrize("text", NOT_SIMPLE)
def test_any_other_markdown_goes_to_markdown(text):
    assert simple_blocks(text) is None
    assert isinstance(agent_text(text), Markdown)


def test_strong_and_bullets_are_drawn_in_their_styles():
    """The premise of the comparison: strong words and bullets look different from plain text."""
    console = _console()
    cells = _cells(SimpleMarkdown(simple_blocks("a **b**\n\n- c")), 40, console)
    assert [c for c, _ in cells[2][:4]] == [" ", "•", " ", "c"]
    assert cells[0][2][1] != cells[0][0][1] and cells[0][2][1].bold


def test_random_replies_render_the_same():
    """Random replies from the simple alphabet: words, strong words, bullet items, line breaks and
    paragraphs; whatever `simple_blocks` accepts must draw as Markdown does, at two widths."""
    rng = random.Random(12)
    words = ["refund", "charge", "2024", "3.5", "$29.99", "#2", "(yes)", "\"ok\"", "it's", "a/b", "x=y", "a+b",
             "co-op", "100%", "jo@x.io", "Élan", "done.", "why?", "well,", "note:", "wait;", "A", "B.",
             "**two charges**", "**RF-1**", "a**b**c", "**x**"]
    console = _console()
    accepted = 0
    for _ in range(300):
        lines = []
        for _ in range(rng.randint(1, 7)):
            roll = rng.random()
            line = " ".join(rng.choice(words) for _ in range(rng.randint(1, 14)))
            lines.append("" if roll < 0.2 else f"- {line}" if roll < 0.5 else line)
        text = "\n".join(lines)
        blocks = simple_blocks(text)
        if blocks is None:  # e.g. a list right under a paragraph, a line starting "B."
            assert isinstance(agent_text(text), Markdown)
            continue
        accepted += 1
        for width in (18, 60):
            assert _cells(SimpleMarkdown(blocks), width, console) == _cells(Markdown(text), width, console), text
    assert accepted > 60  # the comparison ran on many replies, lists and strong words among them
