"""Constants shared by the evaluation modules."""

from __future__ import annotations

MISSING_EVAL_DEPENDENCIES_MESSAGE = (
    "The evaluation extra is not installed: install it with `pip install 'cairn[eval]'`."
)

DEFAULT_LIVE_TIMEOUT_SECONDS = 300
