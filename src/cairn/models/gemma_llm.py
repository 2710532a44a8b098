"""Gemma 3 on the Gemini API (ADK's ``Gemma``): function calling for a model that has none.

Gemma 3 takes neither function declarations nor a system instruction, so the tools are
described in the prompt, earlier calls and results are written out as text, and a reply
that is a JSON call (``{"name": ..., "parameters": {...}}``) becomes a function call.
Gemma 4 and later call functions natively: use ``Gemini(model="gemma-4-...")`` for them.
The same workaround over Ollama is :class:`~cairn.models.gemma3_ollama.Gemma3Ollama`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.genai import types
from pydantic import AliasChoices, BaseModel, Field, ValidationError

from cairn.models.google_llm import Gemini
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse

logger = logging.getLogger(__name__)

_CODE_BLOCK = re.compile(r"```(?:json|tool_code)?\s*(.*?)\s*```", re.DOTALL)


class GemmaFunctionCallModel(BaseModel):
    """A function call as Gemma writes it: ``name`` (or ``function``) and ``parameters``
    (or ``args``)."""

    name: str = Field(validation_alias=AliasChoices("name", "function"))
    parameters: dict[str, Any] = Field(validation_alias=AliasChoices("parameters", "args"))


class GemmaFunctionCallingMixin:
    """Function calling in text, for Gemma 3 models (shared by ``Gemma`` and
    ``Gemma3Ollama``): tools go into the instructions, calls come back out of the text."""

    def _move_function_calls_into_system_instruction(self, llm_request: LlmRequest) -> None:
        """Write calls and results in ``llm_request`` as text, and its function declarations
        into its system instruction (the request then declares no tools)."""
        llm_request.contents = [_as_text_turn(content) for content in llm_request.contents]
        llm_request.contents = [content for content in llm_request.contents if content.parts]
        declarations = llm_request.function_declarations
        if declarations:
            llm_request.append_instructions([_tool_instructions(declarations)])
        if llm_request.config.tools:
            llm_request.config.tools = [
                tool
                for tool in llm_request.config.tools
                if not (isinstance(tool, types.Tool) and tool.function_declarations)
            ]

    def _extract_function_calls_from_response(self, llm_response: LlmResponse) -> None:
        """Turn a final reply that is one JSON function call into that call, in place."""
        if llm_response.partial or llm_response.content is None:
            return
        parts = llm_response.content.parts or []
        if len(parts) != 1 or not parts[0].text:
            return
        candidate = _json_candidate(parts[0].text)
        if candidate is None:
            return
        try:
            call = GemmaFunctionCallModel.model_validate_json(candidate)
        except (ValidationError, ValueError):
            logger.debug("Gemma's reply holds JSON that is not a function call; kept as text")
            return
        llm_response.content.parts = [
            types.Part(function_call=types.FunctionCall(name=call.name, args=call.parameters))
        ]


class Gemma(GemmaFunctionCallingMixin, Gemini):
    """Gemma 3 (``gemma-3-27b-it``, ``gemma-3-12b-it``...) on the Gemini API, with its
    tools described in the prompt and its system instruction sent as the first user turn."""

    model: str = "gemma-3-27b-it"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"gemma-.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        model = llm_request.model or self.model
        if not model.startswith("gemma-"):
            raise ValueError(
                f"Gemma serves Gemma models (gemma-...), not {model!r}: use Gemini(model=...) "
                "or a model string the registry resolves"
            )
        self._move_function_calls_into_system_instruction(llm_request)
        instruction = llm_request.system_instruction_text
        if instruction:
            first = types.Content(role="user", parts=[types.Part(text=instruction)])
            if not llm_request.contents or llm_request.contents[0] != first:
                llm_request.contents = [first, *llm_request.contents]
            llm_request.config.system_instruction = None
        async for response in super().generate_content_async(llm_request, stream):
            self._extract_function_calls_from_response(response)
            yield response


def _as_text_turn(content: types.Content) -> types.Content:
    """A turn with its function calls and results written as text; other turns as they are."""
    parts = content.parts or []
    if not any(part.function_call or part.function_response for part in parts):
        return content
    written: list[types.Part] = []
    has_result = False
    for part in parts:
        if part.function_response is not None:
            has_result = True
            result = json.dumps(part.function_response.response, default=str)
            written.append(
                types.Part(text=f"Tool `{part.function_response.name}` returned: {result}")
            )
        elif part.function_call is not None:
            call = part.function_call
            written.append(
                types.Part(text=json.dumps({"name": call.name, "parameters": call.args or {}}))
            )
        else:
            written.append(part)
    return types.Content(role="user" if has_result else "model", parts=written)


def _tool_instructions(declarations: list[types.FunctionDeclaration]) -> str:
    described = ",\n".join(d.model_dump_json(exclude_none=True) for d in declarations)
    return (
        f"These functions are available to you:\n[\n{described}\n]\n"
        "To call one, reply with nothing but a JSON object of the form "
        '{"name": "<function name>", "parameters": {<argument name>: <value>, ...}}.'
    )


def _json_candidate(text: str) -> str | None:
    """The JSON in a fenced block of ``text``, else the last JSON object in it."""
    block = _CODE_BLOCK.search(text)
    if block:
        return block.group(1).strip() or None
    decoder = json.JSONDecoder()
    found: str | None = None
    position = text.find("{")
    while position != -1:
        try:
            _, length = decoder.raw_decode(text[position:])
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        found = text[position : position + length]
        position = text.find("{", position + length)
    return found
