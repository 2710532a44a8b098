"""How every model adapter turns a provider's stream into responses.

A provider streams chunks of its own kind (Gemini's responses, Anthropic's and OpenAI's
events). An adapter's assembler takes them one at a time (``add``), returning the partial
response a chunk makes, if any, and once the stream has ended gives the final response
(``final``), or raises when the stream did not complete. ``assembled`` drives one.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any, Protocol, TypeVar

from cairn.models.llm_response import LlmResponse

_Chunk_contra = TypeVar("_Chunk_contra", contravariant=True)
_Chunk = TypeVar("_Chunk")


class StreamAssembler(Protocol[_Chunk_contra]):
    """Collects a stream's chunks into partial responses and a final one."""

    def add(self, chunk: _Chunk_contra, /) -> LlmResponse | None:
        """Take one chunk; the partial response it makes, if any."""
        ...

    def final(self) -> LlmResponse:
        """The whole response, once the stream has ended; raises if it did not complete."""
        ...


async def assembled(
    chunks: AsyncIterable[_Chunk], assembler: StreamAssembler[_Chunk]
) -> AsyncGenerator[LlmResponse, None]:
    """The partial responses ``assembler`` makes of ``chunks``, then its final one; the
    stream is closed however the reading ends."""
    try:
        async for chunk in chunks:
            partial = assembler.add(chunk)
            if partial is not None:
                yield partial
    finally:
        await _close(chunks)
    yield assembler.final()


async def _close(chunks: Any) -> None:
    """An SDK stream's ``aclose`` or ``close``, whichever it has (awaited when async)."""
    close = getattr(chunks, "aclose", None) or getattr(chunks, "close", None)
    if close is not None and inspect.isawaitable(closing := close()):
        await closing
