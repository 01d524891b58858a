"""Dim text that stays readable: `dim` is turned into a colour before it reaches the terminal.

Textual draws `dim` by blending the text toward the background by half (its truecolor filter,
which runs on every line it sends; a terminal's faint attribute does about the same): on desk-light the muted lines (context lines, times, the
inspector's secondary rows) came out near #949597 on #f6f8fa, 2.7:1. Here every dim segment is
drawn in a colour blended toward its background only as far as keeps WCAG's 4.5:1 for text (not at
all when the colour is already below it), so what a person sees is what the contrast test measures.
"""

from __future__ import annotations

from functools import lru_cache

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter

# WCAG 2's ratio for text.
TEXT_RATIO = 4.5
# How far toward the background dim text is blended at most (Textual's own dim factor is 0.5).
DIM_BLEND = 0.5


def luminance(color: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(a: Color, b: Color) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@lru_cache(1024)
def readable_dim(style: Style, background: Color) -> Style:
    """`style` without `dim`, its colour blended toward the background as far as stays readable."""
    undimmed = style + Style(dim=False)
    if style.color is None or style.color.triplet is None:
        return style  # the default or an ANSI colour: Textual's truecolor filter dims it
    if style.bgcolor is not None and style.bgcolor.triplet is None:
        return style
    fg = Color.from_rich_color(style.color)
    bg = Color.from_rich_color(style.bgcolor) if style.bgcolor is not None and not style.bgcolor.is_default else background
    blend = DIM_BLEND
    while blend > 0:
        dimmed = fg.blend(bg, blend)
        if contrast(dimmed, bg) >= TEXT_RATIO:
            return undimmed + Style(color=RichColor.from_rgb(*dimmed.rgb))
        blend = round(blend - 0.05, 2)
    return undimmed


class ReadableDim(LineFilter):
    """Replaces the `dim` attribute with a readable dimmer colour (see the module)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            Segment(segment.text, readable_dim(segment.style, background), segment.control)
            if segment.style is not None and segment.style.dim
            else segment
            for segment in segments
        ]
