"""OpenAI's reasoning settings: ``OpenAIGenerateContentConfig(effort=...)`` and which models
take which effort, shared by the chat completions and Responses adapters.

As in ADK's OpenAI integration, the effort is an OpenAI tier (``"minimal"`` ... ``"max"``)
set on the config, not genai's ``thinking_config``, whose levels cannot name all of them.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, Literal

from google.genai import types
from pydantic import Field, model_validator

from cairn.errors import CairnError

if TYPE_CHECKING:
    # The pydantic plugin writes the subclass's __init__ with genai's own annotations, one
    # of which names this (genai's alias for a PIL image, Any without Pillow).
    from google.genai.types import PIL_Image  # noqa: F401

logger = logging.getLogger(__name__)

OpenAIReasoningEffort = Literal["minimal", "low", "medium", "high", "xhigh", "max"]
"""OpenAI's reasoning effort tiers, least to most; which a model takes depends on the model
and on the API (:func:`supported_efforts`)."""

ApiSurface = Literal["chat", "responses"]

_REASONING_MODEL = re.compile(r"(?:^|/)(?:o\d+|gpt-[56](?!.*-chat))(?:[.-].*)?$", re.IGNORECASE)
"""The o-series and gpt-5 / gpt-6 families, optionally after a ``provider/`` prefix; the
``-chat`` variants of gpt-5 are chat models, not reasoning ones."""
_FLAGSHIP = re.compile(r"(?:^|/)(?:gpt-6|gpt-5\.[56])(?:[.-]|$)", re.IGNORECASE)
_PLAIN_GPT5 = re.compile(r"(?:^|/)gpt-5(?![.\d])", re.IGNORECASE)
_NO_EFFORT = re.compile(r"(?:^|/)o1-(?:mini|preview)(?:[.-]|$)", re.IGNORECASE)
"""o1-mini and o1-preview came before the effort parameter and refuse it."""

_EFFORTS: dict[str, frozenset[str]] = {
    "flagship-chat": frozenset({"low", "medium", "high", "xhigh"}),
    "flagship-responses": frozenset({"low", "medium", "high", "xhigh", "max"}),
    "gpt-5": frozenset({"minimal", "low", "medium", "high"}),
    "o-series": frozenset({"low", "medium", "high"}),
}


class UnsupportedReasoningEffortError(CairnError, ValueError):
    """The configured reasoning effort is not one the model takes on this API."""


class OpenAIGenerateContentConfig(types.GenerateContentConfig):
    """A ``GenerateContentConfig`` with OpenAI's reasoning ``effort``.

    ``Agent(generate_content_config=OpenAIGenerateContentConfig(effort="high"))`` sends
    ``reasoning_effort`` (chat completions) or ``reasoning.effort`` (Responses). A
    ``thinking_config`` with a level or budget is refused here: set ``effort`` instead.
    """

    effort: OpenAIReasoningEffort | None = Field(
        default=None, description="OpenAI's reasoning effort tier for reasoning models."
    )

    @model_validator(mode="after")
    def _no_thinking_config(self) -> OpenAIGenerateContentConfig:
        thinking = self.thinking_config
        if thinking is not None and (
            thinking.thinking_level is not None or thinking.thinking_budget is not None
        ):
            raise ValueError(
                "OpenAIGenerateContentConfig takes no thinking_config (thinking_level / "
                "thinking_budget): OpenAI models are told how hard to reason by effort=, e.g. "
                "OpenAIGenerateContentConfig(effort='high')"
            )
        return self


def is_reasoning_model(model: str | None) -> bool:
    """Whether ``model`` is one of OpenAI's reasoning models (o-series, gpt-5, gpt-6), which
    take only the default ``temperature`` / ``top_p`` and, on chat completions, an output
    limit as ``max_completion_tokens``."""
    return bool(model) and bool(_REASONING_MODEL.search(model or ""))


def supported_efforts(model: str | None, api: ApiSurface) -> frozenset[str]:
    """The effort tiers ``model`` takes on ``api`` (empty: it takes no effort at all)."""
    if api not in ("chat", "responses"):
        raise ValueError(f"api must be 'chat' or 'responses', not {api!r}")
    if not is_reasoning_model(model) or _NO_EFFORT.search(model or ""):
        return frozenset()
    if _FLAGSHIP.search(model or ""):
        return _EFFORTS[f"flagship-{api}"]
    if _PLAIN_GPT5.search(model or ""):
        return _EFFORTS["gpt-5"]
    return _EFFORTS["o-series"]


def reasoning_effort(
    config: types.GenerateContentConfig | None,
    model: str | None,
    api: ApiSurface,
    *,
    validate: bool,
) -> str | None:
    """The effort to send: ``config.effort`` of an :class:`OpenAIGenerateContentConfig`,
    checked against the model when ``validate`` (calls to api.openai.com; a compatible
    server's model names say nothing about what it takes, so its own answer decides).

    A plain config's ``thinking_config`` is not sent, with a warning saying what to use.
    """
    if config is None:
        return None
    effort = config.effort if isinstance(config, OpenAIGenerateContentConfig) else None
    if effort is None:
        thinking = config.thinking_config
        if thinking is not None and (
            thinking.thinking_level is not None or thinking.thinking_budget is not None
        ):
            logger.warning(
                "OpenAI model %r: thinking_config is not sent to OpenAI models; use "
                "OpenAIGenerateContentConfig(effort=...) to set the reasoning effort",
                model,
            )
        return None
    if not validate:
        return effort
    accepted = supported_efforts(model, api)
    if not accepted:
        raise UnsupportedReasoningEffortError(
            f"OpenAI model {model!r} takes no reasoning effort, but the config sets "
            f"effort={effort!r}: remove effort= from its OpenAIGenerateContentConfig"
        )
    if effort not in accepted:
        raise UnsupportedReasoningEffortError(
            f"OpenAI model {model!r} does not take effort={effort!r} on the {api} API; it "
            f"takes {', '.join(sorted(accepted))}"
        )
    return effort


def drop_unsupported_sampling(params: dict[str, Any], model: str | None) -> None:
    """Leave out a ``temperature`` / ``top_p`` other than 1 for a reasoning model (it refuses
    them with a 400), saying so in the log."""
    if not is_reasoning_model(model):
        return
    for name in ("temperature", "top_p"):
        value = params.get(name)
        if value is not None and value != 1:
            del params[name]
            logger.warning(
                "OpenAI model %r is a reasoning model and takes only %s=1; %s=%r was not "
                "sent (remove it from generate_content_config)",
                model,
                name,
                name,
                value,
            )
