"""The desk's tools. Importing this package registers every tool in `registry`."""

from supportdesk.engine.tools import ToolRegistry

registry = ToolRegistry()
