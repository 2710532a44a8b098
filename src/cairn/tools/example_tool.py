"""``ExampleTool``: few-shot examples in the system instruction of every model call."""

from __future__ import annotations

from typing import Any, Self

from pydantic import TypeAdapter, ValidationError

from cairn.examples.base_example_provider import BaseExampleProvider
from cairn.examples.example import Example
from cairn.examples.example_util import convert_examples_to_text
from cairn.models.llm_request import LlmRequest
from cairn.tools.base_tool import BaseTool
from cairn.tools.code_references import resolve_fully_qualified_name
from cairn.tools.tool_configs import BaseToolConfig, ToolArgsConfig
from cairn.user_code import call_user_code


class ExampleTool(BaseTool):
    """Shows the model worked examples: a list of ``Example`` (dicts of the same shape are
    accepted), or a ``BaseExampleProvider`` asked for the examples that fit the user's
    message at each model call.

    The model never calls it (nothing is declared): it only adds the examples to the
    system instruction. With a provider, a user message without text adds nothing.
    """

    def __init__(self, examples: list[Example] | BaseExampleProvider) -> None:
        super().__init__(name="example_tool", description="example tool")
        if isinstance(examples, BaseExampleProvider):
            self.examples: list[Example] | BaseExampleProvider = examples
            return
        if not isinstance(examples, list):
            raise TypeError(
                "ExampleTool takes a list of Example (or dicts with 'input' and 'output') or "
                f"a BaseExampleProvider, not {type(examples).__name__}"
            )
        try:
            self.examples = TypeAdapter(list[Example]).validate_python(examples)
        except ValidationError as error:
            raise ValueError(
                f"ExampleTool got examples that are not Examples: {error}. Each needs "
                "'input' (a Content) and 'output' (a list of Content)."
            ) from None

    def declaration(self) -> None:
        return None

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> Self:
        """``- name: ExampleTool`` with ``args: {examples: [...]}`` (a list of examples) or
        ``args: {examples: my_agent.examples.provider}`` (a ``BaseExampleProvider`` object)."""
        parsed = ExampleToolConfig.model_validate(config.model_dump())
        if isinstance(parsed.examples, list):
            return cls(parsed.examples)
        provider = resolve_fully_qualified_name(parsed.examples)
        if not isinstance(provider, BaseExampleProvider):
            raise ValueError(
                f"examples: {parsed.examples!r} is a {type(provider).__name__}, not a "
                "BaseExampleProvider object"
            )
        return cls(provider)

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        user_content = getattr(tool_context, "user_content", None)
        if user_content is None or not user_content.parts:
            return
        query = " ".join(part.text for part in user_content.parts if part.text)
        examples = self.examples
        if isinstance(examples, BaseExampleProvider):
            if not query:
                return
            picked = await call_user_code(examples.get_examples, query)
            examples = TypeAdapter(list[Example]).validate_python(list(picked))
        llm_request.append_instructions([convert_examples_to_text(examples, llm_request.model)])


__all__ = ["ExampleTool"]


class ExampleToolConfig(BaseToolConfig):
    """The ``args`` of ``- name: ExampleTool`` in an agent config."""

    examples: list[Example] | str
    """The examples, or the fully qualified name of a ``BaseExampleProvider`` object."""
