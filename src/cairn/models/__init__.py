"""Models: the request/response types, the adapter interface and the model registry."""

from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.registry import LLMRegistry, UnknownModelError

__all__ = ["BaseLlm", "LLMRegistry", "LlmRequest", "LlmResponse", "UnknownModelError"]
