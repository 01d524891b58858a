"""An agent's reply drawn as Rich's Markdown draws it, without loading Markdown for plain text.

Rich's Markdown (markdown-it, and Pygments through rich.syntax) is the largest import of the
chat screen's first page, 25-40 ms of CPU, and most replies have no Markdown syntax at all. A
reply whose every character and line start is one Markdown cannot give a meaning to
(`plain_paragraphs`) is drawn by `PlainParagraphs` as Rich's Markdown draws plain paragraphs: the
lines of a paragraph joined by a space (a soft break), each paragraph left-justified in the
`markdown.paragraph` style, a blank line between paragraphs. Anything else goes to Rich's Markdown.
tests/test_tui_markdown_text.py renders both for many texts and widths and compares them.
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.text import Text

# Characters that never mean anything to Markdown (CommonMark, with tables and strikethrough as
# Rich enables them) wherever they stand in a line: letters and digits of any script, spaces, and
# punctuation that is no marker, escape, entity, emphasis, code, link, HTML or table cell.
_PLAIN_CHARACTERS = re.compile(r"[^\W_]|[ .,;:?'\"()/@%$€£#=+\-]")
# How a line may start: a letter or digit not opening an ordered list ("1." / "2)"), or an
# opening quote or parenthesis. "-", "+", "#", "=" and spaces could open a list, a heading, a
# setext underline or a code block there.
_PLAIN_LINE_START = re.compile(r"(?:[^\W_](?!\d*[.)](?:\s|$))|[(\"'])")


def plain_paragraphs(text: str) -> list[list[str]] | None:
    """The paragraphs (each a list of its lines) Markdown would make of `text`, or None when the
    text might mean more than that to Markdown."""
    paragraphs: list[list[str]] = []
    lines: list[str] = []
    for line in text.split("\n"):
        if not line:
            if lines:
                paragraphs.append(lines)
                lines = []
            continue
        if line.endswith(" ") or not _PLAIN_LINE_START.match(line):
            return None  # a trailing space can be a hard break; the rest, see above
        if any(not _PLAIN_CHARACTERS.fullmatch(c) for c in line):
            return None
        lines.append(line)
    if lines:
        paragraphs.append(lines)
    return paragraphs


class PlainParagraphs:
    """Paragraphs of plain text, drawn as Rich's Markdown draws them: the same Text per paragraph
    (each line a piece in the paragraph style, a soft break a space between them), the same blank
    line between paragraphs."""

    def __init__(self, paragraphs: list[list[str]]) -> None:
        self.paragraphs = paragraphs

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        style = console.get_style("none") + console.get_style("markdown.paragraph", default="none")
        options = options.update(height=None)
        for n, lines in enumerate(self.paragraphs):
            if n:
                yield Segment.line()
            text = Text(justify="left")
            for i, line in enumerate(lines):
                if i:
                    text.append(" ", style)
                text.append(line, style)
            yield from console.render(text, options)


def agent_text(text: str) -> RenderableType:
    """An agent's reply for the conversation pane: Markdown, loaded only when the text needs it."""
    paragraphs = plain_paragraphs(text)
    if paragraphs is not None:
        return PlainParagraphs(paragraphs)
    from rich.markdown import Markdown  # lazy: start-up speed (markdown-it, Pygments)

    return Markdown(text)
