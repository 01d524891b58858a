"""Model providers behind one protocol (supportdesk.engine.protocol.ModelProvider).

Providers are imported only when configured, so the offline path never pays for an
HTTP client it does not use.
"""

from __future__ import annotations

from typing import assert_never

from supportdesk.config import DeskConfig
from supportdesk.engine.protocol import ModelProvider


def make_provider(config: DeskConfig) -> ModelProvider:
    """The provider `model.provider` names (one case per value the config accepts).

    The imports are lazy for start-up speed: each provider loads only when configured."""
    match config.model.provider:
        case "openai":
            from supportdesk.models.openai_compat import OpenAIProvider

            return OpenAIProvider(config)
        case "offline":
            from supportdesk.models.offline import OfflineModel

            return OfflineModel(config)
        case unknown:
            assert_never(unknown)
