"""A model that replays a script: for tests of agents, tools and flows without a provider."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.genai import types
from pydantic import Field

from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse


@dataclasses.dataclass
class Call:
    """A function call the model makes: ``Call("get_weather", city="Hangzhou")``."""

    name: str
    args: dict[str, Any]
    id: str | None = None

    def __init__(self, name: str, id: str | None = None, **args: Any) -> None:
        self.name, self.args, self.id = name, args, id

    def part(self) -> types.Part:
        return types.Part(
            function_call=types.FunctionCall(
                id=self.id or f"call-{uuid.uuid4().hex[:12]}", name=self.name, args=self.args
            )
        )


@dataclasses.dataclass
class Stream:
    """A streamed reply: each chunk is yielded as a partial response, then the whole one."""

    chunks: list[str]
    calls: list[Call] = dataclasses.field(default_factory=list)


ScriptItem = str | Call | list[Call] | Stream | LlmResponse | types.Content | Exception
"""One model reply: text, one or several calls, a stream, a full response, or an error."""


def _response(item: ScriptItem) -> LlmResponse:
    if isinstance(item, LlmResponse):
        return item
    if isinstance(item, types.Content):
        return LlmResponse(content=item)
    if isinstance(item, str):
        parts = [types.Part(text=item)]
    elif isinstance(item, Call):
        parts = [item.part()]
    elif isinstance(item, list):
        parts = [call.part() for call in item]
    else:
        raise TypeError(f"not a ScriptedLlm reply: {item!r}")
    return LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)


class ScriptedLlm(BaseLlm):
    """Replies with ``script`` items in order and records every request in ``requests``.

    Items: a str (a text reply), a ``Call`` or a list of them (function calls),
    a ``Stream`` (partial chunks, then the whole reply), an ``LlmResponse`` or
    ``Content`` (as is), or an ``Exception`` (raised, as a failing provider would).

    ``respond=lambda request: item`` computes each reply from the request
    instead (after the script, if both are given): a model whose behaviour
    depends only on what it is shown, so it acts the same in any process.
    """

    model: str = "scripted"
    script: list[Any] = Field(default_factory=list)
    respond: Callable[[LlmRequest], Any] | None = None
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        if len(self.requests) > len(self.script) and self.respond is not None:
            item = self.respond(llm_request)
        elif len(self.requests) > len(self.script):
            raise AssertionError(
                f"ScriptedLlm ran out of replies: call {len(self.requests)} but the script has "
                f"{len(self.script)}. The last request's contents: {llm_request.contents[-1:]}"
            )
        else:
            item = self.script[len(self.requests) - 1]
        if isinstance(item, Exception):
            raise item
        if isinstance(item, Stream):
            if stream:
                for chunk in item.chunks:
                    yield LlmResponse(
                        content=types.Content(role="model", parts=[types.Part(text=chunk)]),
                        partial=True,
                    )
            parts = [types.Part(text="".join(item.chunks))] if item.chunks else []
            parts += [call.part() for call in item.calls]
            yield LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)
            return
        yield _response(item)
