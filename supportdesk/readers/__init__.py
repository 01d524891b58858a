"""Learned readers of customer text, trained on public labelled data (see data/LICENSES.md).

Below the models and the tools, so both may use them: the offline model reads a message's
act and scope (acts.py) and whether it speaks of money or disclaims an action (gates.py), the
knowledge base asks how common a word is. Nothing here is loaded at import:
the parameters are read on first use, or by a warm-up (`warm`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def factories() -> list[Callable[[], Any]]:
    """The readers' builders: the zero-argument functions each module keeps one result of
    (`lru_cache(maxsize=1)`), found rather than listed, so a reader added later is warmed too."""
    import inspect

    from supportdesk.readers import acts, gates, spelling

    return [
        value
        for module in (acts, gates, spelling)
        for value in list(vars(module).values())
        if (params := getattr(value, "cache_parameters", None)) is not None
        and params()["maxsize"] == 1 and not inspect.signature(value).parameters
    ]


def warm() -> None:
    """Every reader built now (its parameters read, its tables made) rather than by the first
    message that needs it (`OfflineModel.warm_up`)."""
    for build in factories():
        build()
