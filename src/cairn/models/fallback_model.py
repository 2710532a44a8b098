"""A model that tries other models when one fails with a retryable status (ADK's
``FallbackModel``): ``FallbackModel(models=["gemini-2.5-pro", "ollama_chat/llama3.2"])``."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncGenerator
from typing import ClassVar

from google.genai import errors as genai_errors
from google.genai import types
from pydantic import Field, PrivateAttr, model_validator

from cairn.models.base_llm import BaseLlm
from cairn.models.errors import ModelCallError
from cairn.models.llm_capabilities import LlmCapabilities
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.registry import LLMRegistry

logger = logging.getLogger(__name__)


def _name_of(entry: str | BaseLlm) -> str:
    return entry if isinstance(entry, str) else entry.model


def status_code_of(error: BaseException) -> int | None:
    """The HTTP status a failed model call carries, whichever library raised it: cairn's
    ``ModelCallError``, google-genai (``code``), litellm/openai/anthropic (``status_code``)
    or httpx (``response.status_code``). None when the call never got an answer."""
    if isinstance(error, ModelCallError):
        return error.status_code
    if isinstance(error, genai_errors.APIError):
        return error.code
    if _is_litellm_error_without_status(error):
        return None
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status
    status = getattr(getattr(error, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _is_litellm_error_without_status(error: BaseException) -> bool:
    """litellm gives a refused connection, and a response its own checks rejected, status
    500: neither is the server's answer (and the second may have been charged and acted on)."""
    exceptions = getattr(sys.modules.get("litellm"), "exceptions", None)
    kinds = tuple(
        kind
        for name in ("APIConnectionError", "APIResponseValidationError")
        if isinstance(kind := getattr(exceptions, name, None), type)
    )
    return bool(kinds) and isinstance(error, kinds)


class FallbackModel(BaseLlm):
    """Tries ``models`` in order, each once, moving on when one fails with a status in
    ``retriable_status_codes`` (by default 429, 500, 502, 503, 504).

    Entries are model strings (resolved by ``LLMRegistry``) or model instances, which is
    how an entry gets settings of its own. Retrying one model is that model's business
    (cairn's adapters retry rate limits and server errors themselves); this moves to the
    next model once those retries are spent. Any other failure — a rejected request, or a
    call that got no answer at all (it may have been processed) — reaches the caller as
    it is, and so does the last model's failure. Once a model has yielded a response the
    turn is its own: a later failure is raised rather than splicing a second model's
    output onto the first's.
    """

    DEFAULT_STATUS_CODES: ClassVar[frozenset[int]] = frozenset({429, 500, 502, 503, 504})
    """The statuses that move a call on to the next model. Not 408: a timed-out request may
    have been processed, and another model would answer it a second time."""

    models: list[str | BaseLlm] = Field(min_length=1)
    """The models to try, in order; the first is the primary."""
    retriable_status_codes: frozenset[int] = DEFAULT_STATUS_CODES
    """The HTTP statuses on which the next model is tried."""
    model: str = ""
    """The primary model's name, derived from ``models``; passing another one is an error."""

    _resolved: dict[str, BaseLlm] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _model_is_the_primary(self) -> FallbackModel:
        primary = _name_of(self.models[0])
        if self.model and self.model != primary:
            raise ValueError(
                f"FallbackModel's model is its first entry of models ({primary!r}) and cannot "
                f"be set to {self.model!r}: list the models to try, in order, in models="
            )
        self.model = primary
        return self

    @property
    def capabilities(self) -> LlmCapabilities:
        """The primary's: the request is built before it is known which model answers."""
        return self._delegate(self.models[0]).capabilities

    def _delegate(self, entry: str | BaseLlm) -> BaseLlm:
        if isinstance(entry, BaseLlm):
            return entry
        if entry not in self._resolved:
            self._resolved[entry] = LLMRegistry.new_llm(entry)
        return self._resolved[entry]

    def _falls_back_on(self, error: BaseException) -> bool:
        status = status_code_of(error)
        return status is not None and status in self.retriable_status_codes

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = len(self.models) - 1
        for index, entry in enumerate(self.models):
            delegate = self._delegate(entry)  # a model that cannot be built is loud, not skipped
            # A model may edit the request before sending it; the next one gets it unedited.
            snapshot = _Snapshot.of(llm_request) if index < last else None
            llm_request.model = delegate.model
            answered = False
            try:
                async with contextlib.aclosing(
                    delegate.generate_content_async(llm_request, stream)
                ) as responses:
                    async for response in responses:
                        answered = True
                        yield response
                return
            except Exception as error:
                if answered or index == last or not self._falls_back_on(error):
                    raise
                logger.warning(
                    "model %r failed with HTTP %s; trying the next model, %r",
                    delegate.model,
                    status_code_of(error),
                    _name_of(self.models[index + 1]),
                )
                if snapshot is not None:
                    snapshot.restore(llm_request)


class _Snapshot:
    """What a model may change in a request (its contents and config), kept to undo it."""

    def __init__(self, contents: list[types.Content], config: types.GenerateContentConfig):
        self.contents = contents
        self.config = config

    @classmethod
    def of(cls, llm_request: LlmRequest) -> _Snapshot:
        # Tools are left out: they are live objects the models read and never change.
        return cls(
            [content.model_copy(deep=True) for content in llm_request.contents],
            llm_request.config.model_copy(deep=True),
        )

    def restore(self, llm_request: LlmRequest) -> None:
        llm_request.contents = self.contents
        llm_request.config = self.config
