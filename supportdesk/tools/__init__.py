"""The desk's tools. Importing this package registers every tool in `registry`."""

from supportdesk.engine.tools import ToolRegistry

registry = ToolRegistry()

# Each module registers its tools on import (kept after `registry` exists on purpose).
from supportdesk.tools import billing, escalation, technical  # noqa: E402,F401
