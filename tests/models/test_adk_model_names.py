"""ADK's model class names at ADK's paths, and where Claude sends its calls."""

from __future__ import annotations

import anthropic
import pytest

import cairn.models
from cairn.agents.run_config import ServiceTier as RunConfigServiceTier
from cairn.models.anthropic_llm import AnthropicLlm, Claude
from cairn.models.google_llm import Gemini


def test_adk_names_are_cairns_adapters() -> None:
    assert cairn.models.Gemini is Gemini
    assert cairn.models.Claude is Claude and issubclass(Claude, AnthropicLlm)
    assert cairn.models.ServiceTier is RunConfigServiceTier
    assert cairn.models.ServiceTier("flex") == "flex"


def test_claude_goes_to_vertex_ai_when_google_cloud_is_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "demo-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-east5")
    client = Claude()._sdk_client()
    assert isinstance(client, anthropic.AsyncAnthropicVertex)
    assert "us-east5-aiplatform.googleapis.com" in str(client.base_url)
    assert Claude().model == "claude-3-5-sonnet-v2@20241022"


def test_claude_without_google_cloud_is_anthropics_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_LOCATION", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    client = Claude(model="claude-sonnet-4-5")._sdk_client()
    assert type(client) is anthropic.AsyncAnthropic
