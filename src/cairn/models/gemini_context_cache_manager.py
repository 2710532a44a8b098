"""Gemini context caching: a cached content made from the stable head of an agent's prompt.

The head is the system instruction, the tools and the contents before the current turn's
trailing user messages. Its fingerprint (a hash of them and of the model) goes on every
reply (``CacheMetadata``); when the next request's head still has the fingerprint the
previous reply recorded, the head held still, and a cached content is created for it
(``caches.create``) if it is large enough: the previous prompt's measured size is at
least ``min_tokens`` and the head's share of it reaches Gemini's minimum. Requests then
name the cache (``cached_content``) and send only what follows the head, until the cache
expires, has served ``cache_intervals`` invocations, or the head changes; it is then
deleted, and made anew when the head holds still again. A cache that cannot be made
leaves the request uncached; it never fails the call.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from google import genai
from google.genai import types
from pydantic import BaseModel

from cairn.events.cache_metadata import CacheMetadata
from cairn.models.context_cache_config import ContextCacheConfig
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.model_names import gemini_major_version, model_name

logger = logging.getLogger(__name__)

_MIN_CACHE_TOKENS_GEMINI_2_5 = 2048
_MIN_CACHE_TOKENS_GEMINI_3 = 4096


def minimum_cache_tokens(model: str | None) -> int | None:
    """The smallest cached content Gemini accepts for ``model`` (None: not known)."""
    name = model_name(model or "")
    if name.startswith("gemini-2.5-"):
        return _MIN_CACHE_TOKENS_GEMINI_2_5
    version = gemini_major_version(model)
    if version is not None and version >= 3:
        return _MIN_CACHE_TOKENS_GEMINI_3
    return None


def cacheable_contents_count(contents: list[types.Content]) -> int:
    """How many leading contents form the head: all but the trailing run of user contents
    (every content when the last one is the model's)."""
    count = len(contents)
    while count > 0 and contents[count - 1].role == "user":
        count -= 1
    return count


class GeminiContextCacheManager:
    """Creates, reuses and deletes the cached contents of a Gemini client's requests.

    ``clock`` gives epoch seconds now (a cache's expiry is compared with it).
    """

    def __init__(self, genai_client: genai.Client, *, clock: Callable[[], float] = time.time):
        self.genai_client = genai_client
        self.clock = clock

    async def handle_context_caching(self, llm_request: LlmRequest) -> CacheMetadata | None:
        """Reuse, create or fingerprint a cache for ``llm_request`` (changed in place to name
        the cache it uses); the metadata its response is to carry (None without a config)."""
        config = llm_request.cache_config
        if config is None:
            return None
        previous = llm_request.cache_metadata
        if previous is not None and self._still_valid(llm_request, previous, config):
            assert previous.cache_name is not None
            self._apply(llm_request, previous.cache_name, previous.contents_count)
            return previous
        if previous is None:
            return self._fingerprint_only(llm_request)
        if previous.cache_name is not None:
            await self.cleanup_cache(previous.cache_name)
        if self._fingerprint(llm_request, previous.contents_count) != previous.fingerprint:
            return self._fingerprint_only(llm_request)  # the head changed: start over
        count = max(previous.contents_count, cacheable_contents_count(llm_request.contents))
        created = await self._create(llm_request, config, count)
        if created is None:
            return CacheMetadata(
                fingerprint=self._fingerprint(llm_request, count), contents_count=count
            )
        assert created.cache_name is not None
        self._apply(llm_request, created.cache_name, count)
        return created

    def populate_cache_metadata_in_response(
        self, llm_response: LlmResponse, cache_metadata: CacheMetadata
    ) -> None:
        """Record ``cache_metadata`` on the response (so on its event, for the next request)."""
        llm_response.cache_metadata = cache_metadata

    async def cleanup_cache(self, cache_name: str) -> None:
        """Delete a cached content; a failure is logged (the provider drops it at expiry)."""
        try:
            await self.genai_client.aio.caches.delete(name=cache_name)
        except Exception as error:
            logger.warning("could not delete Gemini context cache %s: %s", cache_name, error)

    # -- the steps ------------------------------------------------------------------------
    def _still_valid(
        self, llm_request: LlmRequest, metadata: CacheMetadata, config: ContextCacheConfig
    ) -> bool:
        if metadata.cache_name is None or metadata.expire_time is None:
            return False
        if self.clock() >= metadata.expire_time:
            logger.info("Gemini context cache %s expired", metadata.cache_name)
            return False
        if (metadata.invocations_used or 0) > config.cache_intervals:
            logger.info(
                "Gemini context cache %s served %d invocations (cache_intervals=%d)",
                metadata.cache_name,
                metadata.invocations_used,
                config.cache_intervals,
            )
            return False
        return self._fingerprint(llm_request, metadata.contents_count) == metadata.fingerprint

    def _fingerprint_only(self, llm_request: LlmRequest) -> CacheMetadata:
        count = cacheable_contents_count(llm_request.contents)
        return CacheMetadata(
            fingerprint=self._fingerprint(llm_request, count), contents_count=count
        )

    async def _create(
        self, llm_request: LlmRequest, config: ContextCacheConfig, count: int
    ) -> CacheMetadata | None:
        measured = llm_request.cacheable_contents_token_count
        if measured is None:
            return None  # no prompt measured yet: nothing to size the cache by
        if measured < config.min_tokens:
            logger.info("prompt of %d tokens is below min_tokens=%d", measured, config.min_tokens)
            return None
        minimum = minimum_cache_tokens(llm_request.model)
        head = self._head_tokens(llm_request, count, measured)
        if minimum is not None and head < minimum:
            logger.info("cacheable head of about %d tokens is below Gemini's %d", head, minimum)
            return None
        request_config = llm_request.config
        create = types.CreateCachedContentConfig(
            contents=list(llm_request.contents[:count]) or None,
            system_instruction=request_config.system_instruction,
            tools=[t for t in request_config.tools or [] if isinstance(t, types.Tool)] or None,
            tool_config=request_config.tool_config,
            ttl=config.ttl_string,
            display_name=f"cairn-cache-{count}-contents",
            http_options=config.create_http_options,
        )
        try:
            cached = await self.genai_client.aio.caches.create(
                model=llm_request.model or "", config=create
            )
        except Exception as error:
            logger.warning("could not create a Gemini context cache: %s", error)
            return None
        if not cached.name:
            logger.warning("the Gemini API created a context cache without a name")
            return None
        created_at = self.clock()
        expire_time = (
            cached.expire_time.timestamp()
            if isinstance(cached.expire_time, datetime)
            else created_at + config.ttl_seconds
        )
        return CacheMetadata(
            cache_name=cached.name,
            expire_time=expire_time,
            fingerprint=self._fingerprint(llm_request, count),
            invocations_used=1,
            contents_count=count,
            created_at=created_at,
        )

    @staticmethod
    def _apply(llm_request: LlmRequest, cache_name: str, count: int) -> None:
        """Name the cache and leave out what it holds (the last content is always sent:
        the API refuses a request without contents)."""
        config = llm_request.config
        config.cached_content = cache_name
        config.system_instruction = None
        config.tools = None
        config.tool_config = None
        dropped = min(count, max(len(llm_request.contents) - 1, 0))
        llm_request.contents = llm_request.contents[dropped:]

    def _fingerprint(self, llm_request: LlmRequest, count: int) -> str:
        """A hash of what a cache of the first ``count`` contents would hold, and where."""
        config = llm_request.config
        tools = []
        for tool in config.tools or []:
            if not isinstance(tool, types.Tool):
                continue
            dumped = tool.model_dump(mode="json", exclude_none=True)
            dumped.get("function_declarations", []).sort(key=lambda d: d.get("name") or "")
            tools.append(dumped)
        tools.sort(key=lambda t: json.dumps(t, sort_keys=True))
        head: dict[str, Any] = {
            "model": llm_request.model,
            "where": self._where(),
            "system_instruction": _json_of(config.system_instruction),
            "tools": tools,
            "tool_config": _json_of(config.tool_config),
            "contents": [
                c.model_dump(mode="json", exclude_none=True) for c in llm_request.contents[:count]
            ],
        }
        text = json.dumps(
            head, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def _where(self) -> dict[str, Any]:
        """The backend a cache lives in: a cache of one project is no use to another."""
        api_client = getattr(self.genai_client, "_api_client", None)
        if not self.genai_client.vertexai:
            return {"backend": "gemini"}
        return {
            "backend": "vertexai",
            "project": getattr(api_client, "project", None),
            "location": getattr(api_client, "location", None),
        }

    @staticmethod
    def _head_tokens(llm_request: LlmRequest, count: int, measured: int) -> int:
        """The head's tokens: the measured prompt scaled by the head's share of its size."""
        whole = _size_in_chars(llm_request, len(llm_request.contents))
        if whole <= 0:
            return measured
        return int(measured * min(1.0, _size_in_chars(llm_request, count) / whole))


def _json_of(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list):
        return [_json_of(item) for item in value]
    return value if isinstance(value, str) else str(value)


def _size_in_chars(llm_request: LlmRequest, count: int) -> int:
    config = llm_request.config
    size = len(json.dumps(_json_of(config.system_instruction), default=str))
    for tool in config.tools or []:
        if isinstance(tool, types.Tool):
            size += len(json.dumps(tool.model_dump(mode="json", exclude_none=True)))
    for content in llm_request.contents[:count]:
        size += sum(len(part.text or "") for part in content.parts or [])
    return size


__all__ = ["GeminiContextCacheManager", "cacheable_contents_count", "minimum_cache_tokens"]
