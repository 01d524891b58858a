"""The embedded offline model (the default provider): no network, no key, no download.

`OfflineModel` is imported on first use, so the knowledge base and other light users of
the lexicon (`supportdesk.models.offline.lexicon`) do not pay for the whole model.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OfflineModel"]


def __getattr__(name: str) -> Any:
    if name == "OfflineModel":
        from supportdesk.models.offline.model import OfflineModel

        return OfflineModel
    raise AttributeError(name)
