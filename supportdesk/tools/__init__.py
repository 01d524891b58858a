"""The desk's tools. Importing this package registers every tool in `registry`."""

from supportdesk.tools.shipped import registry

# Each module registers its tools on import.
from supportdesk.tools import billing, escalation, technical  # noqa: F401

__all__ = ["registry"]
