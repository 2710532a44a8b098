"""Model strings resolve to adapters; users can add their own."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner, LlmRequest, LlmResponse
from cairn.models import BaseLlm, LLMRegistry, UnknownModelError
from cairn.models.anthropic_llm import AnthropicLlm
from cairn.models.google_llm import Gemini
from cairn.models.openai_llm import OpenAILlm


def test_built_in_model_strings() -> None:
    assert LLMRegistry.resolve("gemini-2.5-flash") is Gemini
    assert LLMRegistry.resolve("openai/gpt-4o-mini") is OpenAILlm
    assert LLMRegistry.resolve("anthropic/claude-sonnet-4-6") is AnthropicLlm
    assert LLMRegistry.resolve("claude-opus-4-1") is AnthropicLlm
    assert LLMRegistry.new_llm("openai/local-model").model == "openai/local-model"


def test_an_unknown_model_string_lists_what_is_known() -> None:
    with pytest.raises(UnknownModelError, match=r"'llama3'.*gemini-\.\*.*openai/"):
        LLMRegistry.resolve("llama3")


class EchoLlm(BaseLlm):
    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"echo-.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        said = llm_request.contents[-1].parts[0].text
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=said)]))


async def test_a_registered_model_class_serves_agents_by_name() -> None:
    LLMRegistry.register(EchoLlm)
    runner = InMemoryRunner(agent=Agent(name="echo", model="echo-1"), app_name="a")
    await runner.session_service.create_session(app_name="a", user_id="u", session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="ping")])
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    assert events[-1].content.parts[0].text == "ping"
    with pytest.raises(ValueError, match="supported_models"):
        LLMRegistry.register(BaseLlm)
