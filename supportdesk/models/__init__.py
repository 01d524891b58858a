"""Model providers behind one protocol (supportdesk.engine.protocol.ModelProvider).

Providers are imported only when configured, so the offline path never pays for an
HTTP client it does not use.
"""

from __future__ import annotations

from supportdesk.config import DeskConfig
from supportdesk.engine.protocol import ModelProvider


def make_provider(config: DeskConfig) -> ModelProvider:
    if config.model.provider == "openai":
        from supportdesk.models.openai_compat import OpenAIProvider

        return OpenAIProvider(config)
    from supportdesk.models.offline import OfflineModel

    return OfflineModel(config)
