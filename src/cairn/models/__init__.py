"""Models: the request/response types, the adapter interface and the model registry.

The provider classes (``Gemini``, ``Claude``, ``LiteLlm``, ...) are imported when first
used, as in ADK: their SDKs are extras, and ``import cairn.models`` needs none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.lazy_names import lazy_names
from cairn.models.base_llm import BaseLlm
from cairn.models.llm_capabilities import LlmCapabilities
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.registry import LLMRegistry, UnknownModelError
from cairn.models.service_tier import ServiceTier

if TYPE_CHECKING:
    from cairn.models.anthropic_llm import AnthropicGenerateContentConfig, Claude
    from cairn.models.fallback_model import FallbackModel
    from cairn.models.gemma3_ollama import Gemma3Ollama
    from cairn.models.gemma_llm import Gemma
    from cairn.models.google_llm import Gemini
    from cairn.models.lite_llm import LiteLlm
    from cairn.models.openai_integration import OpenAILlm  # noqa: F401 - lazily served, as in ADK

_LAZY = {
    "AnthropicGenerateContentConfig": "cairn.models.anthropic_llm",
    "Claude": "cairn.models.anthropic_llm",
    "FallbackModel": "cairn.models.fallback_model",
    "Gemini": "cairn.models.google_llm",
    "Gemma": "cairn.models.gemma_llm",
    "Gemma3Ollama": "cairn.models.gemma3_ollama",
    "LiteLlm": "cairn.models.lite_llm",
    "OpenAILlm": "cairn.models.openai_integration",  # ADK serves it here too (not in __all__)
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "AnthropicGenerateContentConfig",
    "BaseLlm",
    "Claude",
    "FallbackModel",
    "Gemini",
    "Gemma",
    "Gemma3Ollama",
    "LLMRegistry",
    "LiteLlm",
    "LlmCapabilities",
    "LlmRequest",
    "LlmResponse",
    "ServiceTier",
    "UnknownModelError",
]
