"""The conversation's colours come from the theme's variables, built in Python (`item_lines.LOOKS`),
and are the colours Textual's stylesheet gave the component classes they replaced, in every theme.

The reference below is the widget as it was: the same parts as component classes with their CSS
rules, styled by Textual. Both sit side by side under the same screen while the app switches
through every theme (Textual's own and the desk's), so a part computed differently, or styles kept
from the theme before, fail.
"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical

from supportdesk.tui import themes
from supportdesk.tui.widgets.item_lines import LOOKS, ItemLines
from supportdesk.tui.widgets.render import AgentLook

pytestmark = pytest.mark.tui

# The component classes and rules `ItemLines` had (textual resolved them as styled nodes).
REFERENCE_CSS = """
Reference > .item-lines--customer { background: $boost; }
Reference > .item-lines--edge-customer { color: $secondary; }
Reference > .item-lines--edge-agent { color: $primary; }
Reference > .item-lines--staff { background: $warning 8%; }
Reference > .item-lines--edge-staff { color: $warning; }
Reference > .item-lines--staff-reply { background: $success 8%; }
Reference > .item-lines--edge-staff-reply { color: $success; }
Reference > .item-lines--staff-act { background: $warning 12%; }
Reference > .item-lines--system { color: $text-muted; }
Reference > .item-lines--edge-system { color: $panel-lighten-2; }
Reference > .item-lines--folded { color: $text-muted; }
Reference > .item-lines--folded-error { color: $text-error; }
Reference > .item-lines--handoff { background: $primary 12%; }
Reference > .item-lines--notice { background: $warning 10%; }
Reference > .item-lines--edge-notice { color: $warning; }
Reference > .item-lines--notice-error { background: $error 10%; }
Reference > .item-lines--edge-notice-error { color: $error; }
Reference > .item-lines--notice-granted { background: $success 10%; }
Reference > .item-lines--edge-notice-granted { color: $success; }
Reference > .item-lines--notice-info { background: $boost; }
Reference > .item-lines--edge-notice-info { color: $primary; }
Reference > .item-lines--cursor { background: $accent 18%; }
Reference > .item-lines--hover { background: $boost; }
Reference > .item-lines--flash { background: $accent 30%; }
"""


class Reference(ItemLines):
    COMPONENT_CLASSES = set(LOOKS)
    DEFAULT_CSS = REFERENCE_CSS


class Looks(App):
    # A coloured container between the screen and the widgets: the parts blend over it.
    CSS = "#box { background: $panel; color: $text-accent; }"

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield ItemLines(AgentLook(None), id="lean")
            yield Reference(AgentLook(None), id="reference")


async def test_every_part_has_the_colours_its_css_rule_gave_in_every_theme(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    app = Looks()
    loaded, errors = themes.load_themes()
    assert errors == [] and loaded
    async with app.run_test(size=(80, 20)) as pilot:
        for theme in loaded:
            app.register_theme(theme)
        names = [theme.name for theme in loaded] + ["textual-dark", "textual-light", "nord", "solarized-light"]
        lean, reference = app.query_one("#lean", ItemLines), app.query_one("#reference", Reference)
        seen = set()
        for name in names:
            app.theme = name
            await pilot.pause()
            assert lean.rich_style == reference.rich_style
            for part in sorted(LOOKS):
                got, want = lean.look_style(part), reference.get_component_rich_style(part)
                assert got == want, f"{name}: {part}: {got} != {want}"
            seen.add(lean.look_style("item-lines--handoff").bgcolor)
        # The themes really differ (the test would pass on styles that never change otherwise).
        assert len(seen) == len(names)
