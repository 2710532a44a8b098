"""Helpers for testing agents: a scripted model that needs no provider."""

from cairn.testing.scripted_llm import Call, ScriptedLlm, Stream

__all__ = ["Call", "ScriptedLlm", "Stream"]
