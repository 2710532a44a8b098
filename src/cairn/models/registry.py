"""Model strings to model classes: ``gemini-*``, ``openai/<model>``, ``gpt-*``,
``anthropic/<model>``, ``ollama_chat/<model>`` and litellm's other providers..."""

from __future__ import annotations

import importlib
import re
from typing import ClassVar

from cairn.errors import CairnError
from cairn.models.base_llm import BaseLlm

_LITELLM_PROVIDERS = (
    r"(azure|azure_ai|groq|bedrock|ollama_chat|together_ai|vertex_ai|mistral|deepseek"
    r"|fireworks_ai|cohere|databricks|ai21)/.*"
)
"""The litellm providers ADK sends through LiteLlm (openai/ and anthropic/ have adapters here)."""

# Built-in adapters, imported only when a model string needs them (their SDKs are extras).
_BUILT_IN: list[tuple[str, str, str]] = [
    (r"gemini-.*", "cairn.models.google_llm:Gemini", "google-genai (always installed)"),
    (r"openai/.+", "cairn.models.openai_llm:OpenAILlm", "pip install 'cairn[openai]'"),
    # OpenAI's own names, as in ADK: its OpenAI integration's chat completions class.
    (r"gpt-.*", "cairn.models.openai_integration:OpenAILlm", "pip install 'cairn[openai]'"),
    (r"o\d+-.*", "cairn.models.openai_integration:OpenAILlm", "pip install 'cairn[openai]'"),
    (r"anthropic/.+", "cairn.models.anthropic_llm:AnthropicLlm", "pip install 'cairn[anthropic]'"),
    (r"claude-.*", "cairn.models.anthropic_llm:AnthropicLlm", "pip install 'cairn[anthropic]'"),
    # Gemma 4 and later call functions natively (Gemini); Gemma 3 needs Gemma's workaround.
    (r"gemma-4.*", "cairn.models.google_llm:Gemini", "google-genai (always installed)"),
    (r"gemma-.*", "cairn.models.gemma_llm:Gemma", "google-genai (always installed)"),
    (r"ollama/gemma3.*", "cairn.models.gemma3_ollama:Gemma3Ollama", "pip install 'cairn[litellm]'"),
    (_LITELLM_PROVIDERS, "cairn.models.lite_llm:LiteLlm", "pip install 'cairn[litellm]'"),
    (r"ollama/(?!gemma3).*", "cairn.models.lite_llm:LiteLlm", "pip install 'cairn[litellm]'"),
]


class UnknownModelError(CairnError, ValueError):
    """No registered model class serves this model string."""


class LLMRegistry:
    """Resolves model strings; classes registered later take precedence."""

    _registered: ClassVar[list[tuple[re.Pattern[str], type[BaseLlm]]]] = []

    @classmethod
    def register(cls, llm_class: type[BaseLlm]) -> None:
        """Serve every pattern of ``llm_class.supported_models()`` with ``llm_class``."""
        patterns = llm_class.supported_models()
        if not patterns:
            raise ValueError(
                f"{llm_class.__name__}.supported_models() returns no patterns; return regular "
                "expressions of the model strings it serves, e.g. [r'my-model-.*']"
            )
        for pattern in patterns:
            cls._registered.insert(0, (re.compile(pattern), llm_class))

    @classmethod
    def resolve(cls, model: str) -> type[BaseLlm]:
        for pattern, llm_class in cls._registered:
            if pattern.fullmatch(model):
                return llm_class
        for pattern_text, target, install in _BUILT_IN:
            if re.fullmatch(pattern_text, model):
                module_name, class_name = target.split(":")
                try:
                    module = importlib.import_module(module_name)
                except ModuleNotFoundError as exc:
                    raise UnknownModelError(
                        f"model {model!r} needs the {exc.name!r} package: {install}"
                    ) from exc
                found: type[BaseLlm] = getattr(module, class_name)
                return found
        known = [p for p, _, _ in _BUILT_IN] + [p.pattern for p, _ in cls._registered]
        raise UnknownModelError(
            f"no model class serves {model!r}. Known patterns: {', '.join(known)}. Use e.g. "
            "'gemini-2.5-flash', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', pass a "
            "BaseLlm instance as model=, or LLMRegistry.register(YourLlm)."
        )

    @classmethod
    def new_llm(cls, model: str) -> BaseLlm:
        """An instance of the class serving ``model``."""
        return cls.resolve(model)(model=model)
