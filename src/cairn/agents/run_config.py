"""Per-invocation settings."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class StreamingMode(enum.Enum):
    """How model output reaches the caller: whole events, or partial chunks first (SSE)."""

    NONE = None
    SSE = "sse"
    BIDI = "bidi"


class RunConfig(BaseModel):
    """Settings for one ``run_async`` call."""

    model_config = ConfigDict(extra="forbid")

    streaming_mode: StreamingMode = StreamingMode.NONE
    max_llm_calls: int = Field(default=500, gt=0)
    """Model calls allowed in one invocation before it ends with an error event."""
    custom_metadata: dict[str, Any] | None = None
    session_busy_timeout: float | None = Field(default=None, ge=0)
    """Seconds to wait for another invocation on the session to finish before
    ``SessionBusyError`` (0 fails fast); None uses the Runner's setting."""
