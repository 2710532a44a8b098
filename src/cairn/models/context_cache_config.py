"""How an App caches the stable head of its agents' prompts (ADK's ``ContextCacheConfig``).

Set on ``App(context_cache_config=...)``: every LLM agent of the app then asks its model to
reuse what the previous turns sent. Gemini keeps an explicit cached content on the server
(created from the second turn on, when the prefix is large enough); Claude caches the prefix
that the request marks with ``cache_control``.
"""

from __future__ import annotations

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field


class ContextCacheConfig(BaseModel):
    """Context caching for all the LLM agents of an App (None on the App: no caching).

    ``cache_intervals``: how many invocations may reuse one Gemini cache before it is made
    anew; ``ttl_seconds``: how long the provider keeps it; ``min_tokens``: the smallest
    prompt (the previous request's measured prompt tokens) worth caching. Gemini's own
    minimum applies too: 2048 tokens for Gemini 2.5 models, 4096 for Gemini 3.
    ``create_http_options`` go with the request that creates a Gemini cache (a timeout, say:
    a creation that fails leaves the request uncached, never failed).
    """

    model_config = ConfigDict(extra="forbid")

    cache_intervals: int = Field(default=10, ge=1, le=100)
    ttl_seconds: int = Field(default=1800, gt=0)
    min_tokens: int = Field(default=0, ge=0)
    create_http_options: types.HttpOptions | None = None

    @property
    def ttl_string(self) -> str:
        """The lifetime as the Gemini API writes a duration (``"1800s"``)."""
        return f"{self.ttl_seconds}s"

    def __str__(self) -> str:
        return (
            f"ContextCacheConfig(cache_intervals={self.cache_intervals}, "
            f"ttl={self.ttl_seconds}s, min_tokens={self.min_tokens})"
        )
