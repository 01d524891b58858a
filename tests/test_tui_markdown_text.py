"""Agent replies without Markdown syntax are drawn without markdown-it, exactly as Markdown draws them."""

from __future__ import annotations

import random

import pytest
from rich.console import Console
from rich.markdown import Markdown

from supportdesk.tui.widgets.markdown_text import PlainParagraphs, agent_text, plain_paragraphs

PLAIN = [
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
]
MARKDOWN = [
    "Thanks, I can see **two charges** on invoice #2.\n\n- checking it now\n- item 2",
    "# A heading",
    "1. first\n2. second",
    "12) twelve",
    "- a list",
    "+ a list",
    "* a list",
    "Underlined\n===",
    "Underlined\n---",
    "    indented code",
    "  two leading spaces",
    "a hard break  \nnext",
    "a hard break\\\nnext",
    "`code`",
    "_emphasis_",
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
]


def _cells(renderable, width: int, console: Console) -> list[list[tuple[str, object]]]:
    """What is drawn, cell by cell: (character, style) per cell of each line."""
    lines = console.render_lines(renderable, console.options.update(width=width), pad=True)
    return [[(ch, seg.style) for seg in line for ch in seg.text] for line in lines]


@pytest.mark.parametrize("text", PLAIN)
@pytest.mark.parametrize("width", [20, 47, 120])
def test_plain_text_is_drawn_as_markdown_draws_it(text, width):
    console = Console(width=200, color_system="truecolor", force_terminal=True)
    paragraphs = plain_paragraphs(text)
    assert paragraphs is not None
    assert _cells(PlainParagraphs(paragraphs), width, console) == _cells(Markdown(text), width, console)


@pytest.mark.parametrize("text", MARKDOWN)
def test_any_markdown_syntax_goes_to_markdown(text):
    assert plain_paragraphs(text) is None
    assert isinstance(agent_text(text), Markdown)


def test_random_plain_words_render_the_same():
    """Random replies from the plain alphabet, with random line breaks and paragraphs."""
    rng = random.Random(12)
    words = ["refund", "charge", "2024", "3.5", "$29.99", "#2", "(yes)", "\"ok\"", "it's", "a/b", "x=y", "a+b",
             "co-op", "100%", "jo@x.io", "Élan", "done.", "why?", "well,", "note:", "wait;", "A", "B."]
    console = Console(width=200, color_system="truecolor", force_terminal=True)
    for _ in range(150):
        lines = []
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.25:
                lines.append("")
            else:
                lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 14))))
        text = "\n".join(lines)
        paragraphs = plain_paragraphs(text)
        if paragraphs is None:  # e.g. a line starting "B." is an ordered-list look-alike: Markdown's
            assert isinstance(agent_text(text), Markdown)
            continue
        for width in (18, 60):
            assert _cells(PlainParagraphs(paragraphs), width, console) == _cells(Markdown(text), width, console), text
