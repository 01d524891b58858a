"""Bar charts drawn as text: one row per label, a bar per series, and the number beside each bar.

The dashboard's charts were plotext's; at the dashboard's sizes plotext put tick labels on
uneven rows (75 and 50 on adjacent rows), drew the legend over the bars and clipped bars to
odd widths. These charts have no numeric axis to get wrong: every bar carries its own number,
a chart with several series names them in a header row above the bars (never over them), and
a row never wraps (the bars shrink to the width there is). Labels are data (agent names): they
are made inert by the caller and drawn as `Text`, never markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

# A glyph per series, so series read apart without colour too.
GLYPHS = ("█", "▒", "▓")


@dataclass(frozen=True)
class Series:
    """One series: its name (the header row when there are several), a value per label and
    the text drawn beside each bar (the value, or a rate with its counts)."""

    name: str
    values: Sequence[float]
    texts: Sequence[str]


def bar_length(value: float, largest: float, width: int) -> int:
    """Cells for `value` on a bar of `width` cells standing for `largest`; a non-zero value
    always shows at least one cell, zero shows none."""
    if value <= 0 or largest <= 0 or width <= 0:
        return 0
    return max(1, min(width, round(width * value / largest)))


def bar_lines(
    labels: Sequence[str],
    series: Sequence[Series],
    width: int,
    *,
    largest: float | None = None,
    styles: Sequence[Style | str] = (),
    label_style: Style | str = "",
) -> Text:
    """The chart as lines of at most `width` cells (no line wraps). `largest` is the value a
    full bar stands for (100 for rates); by default the largest value drawn."""
    width = max(width, 1)
    label_width = min(max((len(label) for label in labels), default=0), max(4, width // 3))
    text_widths = [max((len(t) for t in s.texts), default=0) for s in series]
    top = largest if largest is not None else max((v for s in series for v in s.values), default=0)
    # Each series gets an equal column: its bar, a space, its number, a space between columns.
    room = width - label_width - 1 - sum(w + 2 for w in text_widths)
    bar_width = max(1, room // max(1, len(series)))
    out = Text(no_wrap=True, overflow="crop")
    if len(series) > 1:
        out.append(" " * (label_width + 1))
        for n, s in enumerate(series):
            head = f"{GLYPHS[n % len(GLYPHS)]} {s.name}"
            column = bar_width + 1 + text_widths[n] + 1
            out.append(head, style=styles[n % len(styles)] if styles else "")
            out.append(" " * max(1, column - len(head)))
        out.rstrip()
        out.append("\n")
    for row, label in enumerate(labels):
        out.append(label[:label_width].ljust(label_width), style=label_style)
        out.append(" ")
        for n, s in enumerate(series):
            cells = bar_length(s.values[row], top, bar_width)
            out.append(GLYPHS[n % len(GLYPHS)] * cells, style=styles[n % len(styles)] if styles else "")
            out.append(" " * (bar_width - cells) + " ")
            out.append(s.texts[row].rjust(text_widths[n]))
            if n < len(series) - 1:
                out.append(" ")
        out.rstrip()
        if row < len(labels) - 1:
            out.append("\n")
    # A line never wider than the widget: the numbers stay whole, the bars give way.
    lines = out.split("\n")
    for line in lines:
        line.truncate(width)
    return Text("\n", no_wrap=True, overflow="crop").join(lines)


class BarChart(Widget):
    """A `bar_lines` chart sized to the widget; `show` sets what it draws."""

    COMPONENT_CLASSES = {"bar-chart--series-0", "bar-chart--series-1", "bar-chart--label", "bar-chart--empty"}
    DEFAULT_CSS = """
    BarChart { height: 1fr; padding: 0 1; }
    BarChart > .bar-chart--series-0 { color: $primary; }
    BarChart > .bar-chart--series-1 { color: $accent; }
    BarChart > .bar-chart--label { color: $text; }
    BarChart > .bar-chart--empty { color: $text-muted; }
    """

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.labels: list[str] = []
        self.series: list[Series] = []
        self.largest: float | None = None
        self.empty = ""

    def show(self, labels: Sequence[str], series: Sequence[Series], *, empty: str, largest: float | None = None) -> None:
        self.labels, self.series, self.largest, self.empty = list(labels), list(series), largest, empty
        self.refresh()

    def _colour(self, component: str) -> Style:
        """The component's colour as drawn on the panel (its full style: a partial one leaves
        colours with alpha, such as `$text`, unresolved and drew the labels white on white);
        no background, so the chart sits on its panel's."""
        return Style(color=self.get_component_rich_style(component).color)

    def render(self) -> Text:
        if not self.labels or not any(v for s in self.series for v in s.values):
            return Text(self.empty, style=self._colour("bar-chart--empty"))
        styles = [self._colour(f"bar-chart--series-{n}") for n in range(2)]
        return bar_lines(
            self.labels,
            self.series,
            self.content_size.width,
            largest=self.largest,
            styles=styles,
            label_style=self._colour("bar-chart--label"),
        )


class Drawing(Widget):
    """Text drawn for the widget's width (the handoff flow): `draw(width)` runs on every render,
    so a resize redraws rather than wrapping a bar onto a line of its own."""

    DEFAULT_CSS = "Drawing { height: 1fr; padding: 0 1; }"

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.draw: Callable[[int], Text] = lambda width: Text()

    def show(self, draw: Callable[[int], Text]) -> None:
        self.draw = draw
        self.refresh()

    def render(self) -> Text:
        text = self.draw(self.content_size.width)
        text.no_wrap = True
        text.overflow = "crop"
        return text
