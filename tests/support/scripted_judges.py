"""Scripted judge models for the LLM-judged metrics, registered by model name.

An evaluator builds its judge from the model name in its criterion (as in ADK), so a test
registers a ScriptedLlm subclass under a name and reads the requests of the judges built.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from cairn.models.llm_request import LlmRequest
from cairn.models.registry import LLMRegistry
from cairn.testing import ScriptedLlm


def prompt_of(request: LlmRequest) -> str:
    """The text of the single user message a judge request carries."""
    assert len(request.contents) == 1
    return "".join(part.text or "" for part in request.contents[0].parts or [])


def reply_by_prompt(replies: dict[str, list[Any]]) -> Callable[[LlmRequest], Any]:
    """A ``respond`` function: the next reply queued under the first key found in the prompt
    (so replies follow the content judged, whatever order the samples run in)."""
    queues = {key: list(items) for key, items in replies.items()}

    def respond(request: LlmRequest) -> Any:
        prompt = prompt_of(request)
        for key, queue in queues.items():
            if key in prompt:
                assert queue, f"no reply left for prompts containing {key!r}"
                return queue.pop(0)
        raise AssertionError(f"no reply queued for this prompt: {prompt[:500]}")

    return respond


class ScriptedJudges:
    """Registers judge models by name; ``built`` holds every judge an evaluator made."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(LLMRegistry, "_registered", list(LLMRegistry._registered))
        self.built: list[ScriptedLlm] = []

    def add(
        self,
        name: str,
        *script: Any,
        respond: Callable[[LlmRequest], Any] | None = None,
    ) -> None:
        built = self.built

        class Judge(ScriptedLlm):
            @classmethod
            def supported_models(cls) -> list[str]:
                return [re.escape(name)]

            def model_post_init(self, context: Any) -> None:
                super().model_post_init(context)
                self.script = list(script)
                self.respond = respond
                built.append(self)

        LLMRegistry.register(Judge)

    @property
    def requests(self) -> list[LlmRequest]:
        """Every request of every judge built, in order."""
        return [request for judge in self.built for request in judge.requests]
