"""The model-response fields every Event carries (shared with ``cairn.models.LlmResponse``)."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.events._base import CamelModel
from cairn.events.cache_metadata import CacheMetadata


class LlmResponseFields(CamelModel):
    """Content and metadata of one model response (or response chunk)."""

    model_version: str | None = None
    content: types.Content | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    """Where a grounded answer came from (Google Search, Maps, Vertex AI Search...)."""
    url_context_metadata: types.UrlContextMetadata | None = None
    """The URLs the url_context tool fetched, and whether each could be (cairn keeps it;
    ADK drops it)."""
    partial: bool | None = None
    """A streaming chunk: shown to the caller, never stored, its actions never applied."""
    turn_complete: bool | None = None
    finish_reason: types.FinishReason | None = None
    error_code: str | None = None
    error_message: str | None = None
    interrupted: bool | None = None
    custom_metadata: dict[str, Any] | None = None
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
    input_transcription: types.Transcription | None = None
    output_transcription: types.Transcription | None = None
    avg_logprobs: float | None = None
    logprobs_result: types.LogprobsResult | None = None
    citation_metadata: types.CitationMetadata | None = None
    cache_metadata: CacheMetadata | None = None
    """The context cache the request used or may create next (App.context_cache_config)."""
    interaction_id: str | None = None
