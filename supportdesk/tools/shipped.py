"""The registry the desk's own tools register in (a leaf, so the tool modules and the package
that imports them form no import circle)."""

from supportdesk.engine.tools import ToolRegistry

registry = ToolRegistry()
