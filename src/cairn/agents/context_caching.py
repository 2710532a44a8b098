"""An agent's request told what its previous replies cached (ADK's context cache processor).

With ``App(context_cache_config=...)`` each request of an LLM agent carries the config, the
cache metadata of the agent's latest reply that has one, and the prompt token count of its
latest reply that has one. Both are read from the session's events, so a later turn in
another process finds the same cache. A cache reused by a new invocation counts one more use
(``invocations_used``); the model adapter decides what to create, reuse or drop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.events.cache_metadata import CacheMetadata
from cairn.models.llm_request import LlmRequest

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext


def apply_context_cache(request: LlmRequest, ctx: InvocationContext, *, agent_name: str) -> None:
    """Set ``request``'s cache fields from the App's config and ``agent_name``'s events."""
    config = ctx.context_cache_config
    if config is None:
        return
    request.cache_config = config
    metadata: CacheMetadata | None = None
    prompt_tokens: int | None = None
    for event in reversed(ctx.session.events):
        if event.author != agent_name:
            continue
        if metadata is None and event.cache_metadata is not None:
            metadata = event.cache_metadata
            used = metadata.invocations_used
            if (
                metadata.cache_name is not None
                and used is not None
                and event.invocation_id
                and event.invocation_id != ctx.invocation_id
            ):
                metadata = metadata.model_copy(update={"invocations_used": used + 1})
        usage = event.usage_metadata
        if prompt_tokens is None and usage is not None and usage.prompt_token_count is not None:
            prompt_tokens = usage.prompt_token_count
        if metadata is not None and prompt_tokens is not None:
            break
    request.cache_metadata = metadata
    request.cacheable_contents_token_count = prompt_tokens
