"""ADK's path for ``CacheMetadata``: what a response records about its context cache."""

from cairn.events.cache_metadata import CacheMetadata

__all__ = ["CacheMetadata"]
