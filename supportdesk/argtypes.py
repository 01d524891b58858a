"""Argument types the commands share: a number typed on the command line, checked with a usage
line that says what to give (argparse prints it; no traceback)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def at_least(minimum: int, what: str) -> Callable[[str], int]:
    """A whole number of `what` (e.g. "trials"), `minimum` or more."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {what} ({minimum} or more)")
        return value

    return parse


def port_number(text: str) -> int:
    """A TCP port as typed: 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port; give 0 to 65535 (0 picks a free one)")
    return port
