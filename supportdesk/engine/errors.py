"""What the engine raises to the layers above it, importable without the runner.

The TUI catches `TurnError` on its first page, before the runner (and the hooks, tools and
model protocol it imports) is built; keeping the class here keeps that import off the path.
"""

from __future__ import annotations


class TurnError(Exception):
    """A staff command that cannot be carried out (unknown agent, no such approval ...)."""
