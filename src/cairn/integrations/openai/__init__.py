"""ADK's OpenAI integration: ``OpenAILlm`` (chat completions for ``gpt-*`` / ``o*`` names),
``OpenAIResponsesLlm`` and ``AzureOpenAIResponsesLlm`` (the Responses API) and
``OpenAIGenerateContentConfig`` (the reasoning effort). Needs ``pip install 'cairn[openai]'``.
"""

from cairn.models.openai_config import OpenAIGenerateContentConfig
from cairn.models.openai_integration import OpenAILlm
from cairn.models.openai_responses_llm import AzureOpenAIResponsesLlm, OpenAIResponsesLlm

__all__ = [
    "AzureOpenAIResponsesLlm",
    "OpenAIGenerateContentConfig",
    "OpenAILlm",
    "OpenAIResponsesLlm",
]
