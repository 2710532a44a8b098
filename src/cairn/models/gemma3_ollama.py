"""Gemma 3 served by Ollama, through litellm (ADK's ``Gemma3Ollama``): ``ollama/gemma3:12b``.

Gemma 3 has no native function calling, so this is :class:`~cairn.models.lite_llm.LiteLlm`
with Gemma's text function calling (:class:`~cairn.models.gemma_llm.GemmaFunctionCallingMixin`).
Gemma 4 and later on Ollama: ``LiteLlm(model="ollama_chat/gemma4:...")``. Needs
``pip install 'cairn[litellm]'`` and an Ollama server with the model pulled.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from cairn.models.gemma_llm import GemmaFunctionCallingMixin
from cairn.models.lite_llm import LiteLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse


class Gemma3Ollama(GemmaFunctionCallingMixin, LiteLlm):
    """``Gemma3Ollama()`` talks to Ollama's ``gemma3:12b`` on localhost; ``model=`` picks
    another Gemma 3, and litellm's keyword arguments (``api_base=``...) pass through."""

    def __init__(self, model: str = "ollama/gemma3:12b", **kwargs: Any) -> None:
        super().__init__(model=model, **kwargs)

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"ollama/gemma3.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._move_function_calls_into_system_instruction(llm_request)
        async for response in super().generate_content_async(llm_request, stream):
            self._extract_function_calls_from_response(response)
            yield response
