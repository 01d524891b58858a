"""The API key a model server provider sends, and keeping it out of every message.

The config names an environment variable (`model.api_key_env`), never the key itself.
"""

from __future__ import annotations

import os

from supportdesk.config import ModelSettings
from supportdesk.engine.protocol import ProviderError

# Local servers ignore the key but HTTP clients insist on one.
PLACEHOLDER_KEY = "not-needed"


def resolve_api_key(settings: ModelSettings) -> str:
    """The key from the environment variable the config names, or a placeholder.

    Raises ProviderError(auth) when the config names a variable that is not set: sending a
    placeholder to a hosted API would only produce a more confusing 401.
    """
    if not settings.api_key_env:
        return PLACEHOLDER_KEY
    key = os.environ.get(settings.api_key_env, "").strip()
    if not key:
        raise ProviderError(
            "auth",
            f"the environment variable {settings.api_key_env} is not set; "
            f"export it with the server's API key",
        )
    return key


def scrub_key(text: str, key: str) -> str:
    """`text` with the key masked (a placeholder or a very short key is left alone)."""
    if key and key != PLACEHOLDER_KEY and len(key) >= 4:
        return text.replace(key, "***")
    return text
