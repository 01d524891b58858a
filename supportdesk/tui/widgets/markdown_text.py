"""An agent's reply drawn as Rich's Markdown draws it, without loading Markdown for simple text.

Rich's Markdown (markdown-it, and Pygments through rich.syntax) is the largest import of the
chat screen's first page, 25-60 ms of CPU, and most replies use no Markdown at all or only its
two commonest marks: `**strong**` words and a `- ` bullet list. A reply that is nothing but
paragraphs and such lists (`simple_blocks`: every line and character checked against what
CommonMark could read differently) is drawn by `SimpleMarkdown` as Rich's Markdown draws it, cell
for cell: a paragraph's lines joined by a space (a soft break), left-justified in the
`markdown.paragraph` style, strong words in `markdown.strong` on top; a bullet item as " • " and
its text wrapped three cells in; a blank line between blocks and before a list. Anything else goes to Rich's
Markdown. tests/test_tui_markdown_text.py renders both for many texts and widths and compares them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import assert_never

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

# Characters that never mean anything to Markdown (CommonMark, with tables and strikethrough as
# Rich enables them) wherever they stand in a line: letters and digits of any script, spaces, and
# punctuation that is no marker, escape, entity, emphasis, code, link, HTML or table cell.
_PLAIN = r"(?:[^\W_]|[ .,;:?'\"()/@%$€£#=+\-])"
# `**strong**` around plain text that starts and ends with a letter or digit: such a run opens
# and closes strong emphasis wherever it stands (CommonMark's flanking rules), nothing else can.
_STRONG = rf"\*\*(?:[^\W_]|[^\W_]{_PLAIN}*[^\W_])\*\*"
_LINE = re.compile(rf"(?:{_PLAIN}|{_STRONG})+")
_STRONG_RUN = re.compile(rf"{_STRONG}")
# How a line may start: a letter or digit not opening an ordered list ("1." / "2)"), an opening
# quote or parenthesis, or a strong run. "-", "+", "#", "=", "*" alone and spaces could open a
# list, a heading, a setext underline, a thematic break or a code block there.
_LINE_START = re.compile(r"(?:[^\W_](?!\d*[.)](?:\s|$))|[(\"']|\*\*[^\W_])")
_BULLET = "- "
# Longer replies go to Markdown: checking a line costs more per strong mark the longer it is.
_LONGEST = 4_000

Run = tuple[str, bool]  # a piece of a line, and whether it is strong


@dataclass(frozen=True)
class Paragraph:
    """Lines of runs, drawn as one paragraph."""

    lines: list[list[Run]]


@dataclass(frozen=True)
class BulletList:
    """A `- ` list, one line of runs per bullet."""

    items: list[list[Run]]  # one line each


Block = Paragraph | BulletList


def _runs(line: str) -> list[Run] | None:
    """The line's plain and strong pieces, or None when Markdown might read more into it."""
    if line.endswith(" ") or not _LINE_START.match(line) or not _LINE.fullmatch(line):
        return None  # a trailing space can be a hard break
    runs: list[Run] = []
    at = 0
    for strong in _STRONG_RUN.finditer(line):
        if strong.start() > at:
            runs.append((line[at : strong.start()], False))
        runs.append((strong.group()[2:-2], True))
        at = strong.end()
    if at < len(line):
        runs.append((line[at:], False))
    return runs


def simple_blocks(text: str) -> list[Block] | None:
    """The paragraphs and bullet lists Markdown would make of `text`, or None when the text might
    mean more than that to Markdown."""
    if len(text) > _LONGEST:
        return None
    groups: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line:
            groups[-1].append(line)
        elif groups[-1]:
            groups.append([])
    blocks: list[Block] = []
    for group in (g for g in groups if g):
        bullets = [line.startswith(_BULLET) for line in group]
        if all(bullets):
            if blocks and isinstance(blocks[-1], BulletList):
                return None  # a blank line between items: one loose list, drawn otherwise
            items = [_runs(line[len(_BULLET) :]) for line in group]
            if any(item is None for item in items):
                return None
            blocks.append(BulletList(items))  # type: ignore[arg-type]
        elif not any(bullets):
            lines = [_runs(line) for line in group]
            if any(runs is None for runs in lines):
                return None
            blocks.append(Paragraph(lines))  # type: ignore[arg-type]
        else:
            return None  # a list interrupting a paragraph, or a lazy continuation line
    return blocks


def _text(lines: list[list[Run]], style: Style, strong: Style) -> Text:
    """A paragraph as Rich's Markdown builds it: each piece in the style of its place, a soft
    break a space in the paragraph's style."""
    text = Text(justify="left")
    for i, runs in enumerate(lines):
        if i:
            text.append(" ", style)
        for piece, is_strong in runs:
            text.append(piece, style + strong if is_strong else style)
    return text


class SimpleMarkdown:
    """Paragraphs and bullet lists, drawn as Rich's Markdown draws them."""

    def __init__(self, blocks: list[Block]) -> None:
        self.blocks = blocks

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        base = console.get_style("none")
        paragraph = console.get_style("markdown.paragraph", default="none")
        strong = console.get_style("markdown.strong", default="none")
        options = options.update(height=None)
        for n, block in enumerate(self.blocks):
            # A blank line between blocks, and before a list even when it comes first (Rich's
            # Markdown sets its "new line" from the paragraph inside the list's first item).
            if n or isinstance(block, BulletList):
                yield Segment.line()
            match block:
                case Paragraph(lines):
                    yield from console.render(_text(lines, base + paragraph, strong), options)
                case BulletList(items):
                    item = base + console.get_style("markdown.item", default="none")
                    bullet_style = console.get_style("markdown.item.bullet", default="none")
                    inner = options.update(width=options.max_width - 3)
                    for runs in items:
                        drawn = console.render_lines(_text([runs], item + paragraph, strong), inner, style=item)
                        for i, line in enumerate(drawn):
                            yield Segment(" • " if i == 0 else "   ", bullet_style)
                            yield from line
                            yield Segment("\n")
                case _:
                    assert_never(block)


def agent_text(text: str) -> RenderableType:
    """An agent's reply for the conversation pane: Markdown, loaded only when the text needs it."""
    blocks = simple_blocks(text)
    if blocks is not None:
        return SimpleMarkdown(blocks)
    from rich.markdown import Markdown  # lazy: start-up speed (markdown-it, Pygments)

    return Markdown(text)
