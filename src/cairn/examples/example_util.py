"""Few-shot examples as text for a system instruction.

Each example shows the user's message, then the model's turns: its text, its function
calls written as Python-like calls (``add(a=2, b=3)``) and their results as JSON. For
Gemini models the calls and results sit in plain code fences (fences labelled
``tool_code`` invite Gemini to answer with code instead of function calls, as ADK notes);
other models get ``tool_code`` / ``tool_outputs`` fences.
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from cairn.examples.base_example_provider import BaseExampleProvider
from cairn.examples.example import Example

_OPENING = (
    "<EXAMPLES>\n"
    "The examples below show user messages and how the model answers them, calling the "
    "tools it has where they help. Answer in the same way.\n\n"
)
_CLOSING = "</EXAMPLES>"


def _is_gemini(model: str | None) -> bool:
    # A vendor-prefixed id ("google.gemini-2.5-flash", "vertex_ai/gemini-...") is Gemini too.
    return model is None or "gemini-" in model


def _call_text(call: types.FunctionCall) -> str:
    args = call.args if isinstance(call.args, dict) else {}
    rendered = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return f"{call.name}({rendered})"


def _response_text(response: types.FunctionResponse) -> str:
    return json.dumps(
        {"name": response.name, "response": response.response}, ensure_ascii=False, default=str
    )


def _content_text(content: types.Content, fences: tuple[str, str]) -> str:
    lines: list[str] = []
    call_fence, result_fence = fences
    for part in content.parts or []:
        if part.function_call is not None:
            lines += [call_fence, _call_text(part.function_call), "```"]
        elif part.function_response is not None:
            lines += [result_fence, _response_text(part.function_response), "```"]
        elif part.text:
            lines.append(part.text)
    return "\n".join(lines)


def convert_examples_to_text(examples: list[Example], model: str | None) -> str:
    """``examples`` as one block of text for the system instruction of a call to ``model``."""
    fences = ("```", "```") if _is_gemini(model) else ("```tool_code", "```tool_outputs")
    blocks: list[str] = []
    for number, example in enumerate(examples, start=1):
        lines = [f"EXAMPLE {number}:", "[user]"]
        lines += [part.text for part in example.input.parts or [] if part.text]
        role: str | None = None
        for content in example.output:
            speaker = "model" if content.role == "model" else "user"
            if speaker != role:
                lines.append(f"[{speaker}]")
                role = speaker
            text = _content_text(content, fences)
            if text:
                lines.append(text)
        lines.append(f"END OF EXAMPLE {number}")
        blocks.append("\n".join(lines) + "\n\n")
    return _OPENING + "".join(blocks) + _CLOSING


def build_example_si(
    examples: list[Example] | BaseExampleProvider, query: str, model: str | None
) -> str:
    """The examples' instruction text: ``examples`` as given, or those a provider gives for
    ``query`` (its ``get_examples`` is called here, synchronously)."""
    if isinstance(examples, BaseExampleProvider):
        picked: Any = examples.get_examples(query)
        return convert_examples_to_text(list(picked), model)
    if isinstance(examples, list):
        return convert_examples_to_text(examples, model)
    raise TypeError(
        "examples must be a list of Example or a BaseExampleProvider, not "
        f"{type(examples).__name__}"
    )


__all__ = ["build_example_si", "convert_examples_to_text"]
