"""ADK's ``OpenAILlm`` of ``google.adk.integrations.openai``: chat completions for OpenAI's
own model names (``gpt-4o``, ``o3-mini``), with that class's defaults.

It is cairn's chat completions adapter (:class:`cairn.models.openai_llm.OpenAILlm`) with
ADK's defaults: ``model="gpt-4o"``, ``max_tokens=4096`` sent unless the request sets
``max_output_tokens``, and the model strings ``gpt-*`` and ``o<N>-*``.
"""

from __future__ import annotations

from pydantic import Field

from cairn.models import openai_llm


class OpenAILlm(openai_llm.OpenAILlm):
    """OpenAI chat completions for ``gpt-*`` and ``o<N>-*`` model names (ADK's class).

    ``OpenAILlm(model="gpt-4o", api_key=..., base_url=..., client=...)``: everything else
    (retries, errors, tool calls, streaming) is :class:`cairn.models.openai_llm.OpenAILlm`.
    """

    model: str = "gpt-4o"
    max_tokens: int | None = Field(default=4096, gt=0)

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"gpt-.*", r"o\d+-.*"]
