"""What a model string says about the model: whether it is Gemini, and which generation.

Gemini is named ``gemini-<version>-...``, alone or at the end of a path
(``models/gemini-2.5-flash``, ``projects/p/locations/l/publishers/google/models/gemini-2.5-pro``,
``gemini/gemini-2.5-flash`` as LiteLLM writes it).
"""

from __future__ import annotations

import os
import re

_GEMINI = re.compile(r"^gemini-")
_VERSION = re.compile(r"^gemini-(\d+)(?:\.\d+)*(?:-|$)")
_PATH = re.compile(r"^projects/[^/]+/locations/[^/]+/publishers/[^/]+/models/(.+)$")

DISABLE_GEMINI_MODEL_ID_CHECK = "ADK_DISABLE_GEMINI_MODEL_ID_CHECK"
"""Set to true to let Gemini built-in tools go to a model whose name is not ``gemini-*``
(a tuned or proxied Gemini model), as ADK's variable of that name does."""


def model_name(model: str) -> str:
    """The model's own name: ``gemini-2.5-pro`` out of any of the paths above."""
    found = _PATH.match(model)
    if found:
        return found.group(1)
    if model.startswith("models/"):
        return model.removeprefix("models/")
    if "/" in model and not model.startswith("projects/"):
        last = model.rsplit("/", 1)[1]
        if last.startswith("gemini-"):
            return last
    return model


def is_gemini_model(model: str | None) -> bool:
    """Whether ``model`` names a Gemini model."""
    return bool(model) and _GEMINI.match(model_name(model or "")) is not None


def gemini_model_check_disabled() -> bool:
    """Whether ``ADK_DISABLE_GEMINI_MODEL_ID_CHECK`` says to treat any model as Gemini."""
    return os.environ.get(DISABLE_GEMINI_MODEL_ID_CHECK, "").strip().lower() in ("true", "1")


def gemini_major_version(model: str | None) -> int | None:
    """The generation of a Gemini model (``2`` for ``gemini-2.5-flash``), None if unknown."""
    found = _VERSION.match(model_name(model or ""))
    return int(found.group(1)) if found else None


def accepts_built_in_tools_with_functions(model: str | None) -> bool:
    """Whether the model takes built-in tools (Google Search...) in the same request as
    function declarations: Gemini 3 and later do; earlier ones answer HTTP 400."""
    version = gemini_major_version(model)
    return version is not None and version >= 3
