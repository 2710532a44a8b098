"""ADK's older path of its OpenAI integration; the same names as ``cairn.integrations.openai``."""

from cairn.integrations.openai import (
    AzureOpenAIResponsesLlm,
    OpenAIGenerateContentConfig,
    OpenAILlm,
    OpenAIResponsesLlm,
)

__all__ = [
    "AzureOpenAIResponsesLlm",
    "OpenAIGenerateContentConfig",
    "OpenAILlm",
    "OpenAIResponsesLlm",
]
