"""The embedded offline model (the default provider): no network, no key, no download."""

from supportdesk.models.offline.model import OfflineModel

__all__ = ["OfflineModel"]
