"""The interface every model adapter implements."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from pydantic import BaseModel, ConfigDict

from cairn.models.llm_capabilities import LlmCapabilities
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse


class BaseLlm(BaseModel):
    """A model: turns an ``LlmRequest`` into one or more ``LlmResponse``.

    ``generate_content_async(request, stream=False)`` yields one non-partial
    response; with ``stream=True`` it yields partial chunks (``partial=True``)
    and then one aggregated non-partial response. Errors a caller can act on
    (quota, bad request) are raised as exceptions; the agent turns them into
    error events.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    model: str

    @property
    def capabilities(self) -> LlmCapabilities:
        """What this model can do (ADK's ``BaseLlm.capabilities``): by default nothing beyond
        the basics; a model class that can do more overrides this."""
        return LlmCapabilities()

    @classmethod
    def supported_models(cls) -> list[str]:
        """Regular expressions of the model strings this class serves (for the registry)."""
        return []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        raise NotImplementedError(
            f"{type(self).__name__} does not implement generate_content_async(llm_request, "
            "stream=False); override it as an async generator of LlmResponse"
        )
        yield  # pragma: no cover - makes this an async generator
