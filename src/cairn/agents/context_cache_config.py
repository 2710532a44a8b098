"""ADK's path for ``ContextCacheConfig``: an App's context caching settings."""

from cairn.models.context_cache_config import ContextCacheConfig

__all__ = ["ContextCacheConfig"]
