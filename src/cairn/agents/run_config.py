"""Per-invocation settings: every field of ADK's ``RunConfig``.

Fields that steer what cairn implements take effect (``streaming_mode``,
``max_llm_calls``, ``custom_metadata``, ``labels``, ``http_options``,
``session_busy_timeout``, ``multitask_strategy``); the live-audio and
serving-tier fields are accepted and kept, without effect, so ADK code that sets
them runs unchanged (docs/runner.md lists them).
"""

from __future__ import annotations

import enum
import logging
import os
import sys
import warnings
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cairn.models.service_tier import ServiceTier
from cairn.sessions.config import GetSessionConfig

logger = logging.getLogger(__name__)

DEFAULT_MAX_LLM_CALLS = 500


def _default_max_llm_calls() -> int:
    """``ADK_MAX_LLM_CALLS`` from the environment if it is an int, else 500 (as ADK reads it)."""
    raw = os.environ.get("ADK_MAX_LLM_CALLS")
    if raw:
        try:
            return int(raw)
        except ValueError:
            logger.warning(
                "ADK_MAX_LLM_CALLS=%r is not an integer; using %d", raw, DEFAULT_MAX_LLM_CALLS
            )
    return DEFAULT_MAX_LLM_CALLS


class StreamingMode(enum.Enum):
    """How model output reaches the caller: whole events, or partial chunks first (SSE)."""

    NONE = None
    SSE = "sse"
    BIDI = "bidi"


class MultitaskStrategy(enum.StrEnum):
    """What a new invocation does when its session is busy with another (cairn's; LangGraph
    calls this double-texting):

    - ``ENQUEUE`` (the default): wait, in arrival order (among the callers of one process;
      between processes, whoever polls first), and run when the session is free;
    - ``REJECT``: fail at once with ``SessionBusyError``;
    - ``INTERRUPT``: stop the running invocation (what it committed stays, as with a cancel),
      then run;
    - ``ROLLBACK``: stop the running invocation and rewind it away
      (``Runner.rewind_async``), then run.

    ``INTERRUPT`` and ``ROLLBACK`` go ahead of the callers waiting in line.
    """

    REJECT = "reject"
    ENQUEUE = "enqueue"
    INTERRUPT = "interrupt"
    ROLLBACK = "rollback"


class ToolThreadPoolConfig(BaseModel):
    """ADK's thread pool for synchronous tools (``RunConfig.tool_thread_pool_config``).

    cairn always runs a synchronous tool on a worker thread, so this is accepted
    and has no further effect.
    """

    model_config = ConfigDict(extra="forbid")

    max_workers: int = Field(default=4, ge=1)


class RunConfig(BaseModel):
    """Settings for one ``run_async`` call."""

    model_config = ConfigDict(extra="forbid")

    streaming_mode: StreamingMode = StreamingMode.NONE
    max_llm_calls: int = Field(default_factory=_default_max_llm_calls)
    """Model calls allowed in one invocation before it ends with an error event; 0 or less
    means no limit (as in ADK). The default is ``ADK_MAX_LLM_CALLS`` if set, else 500."""
    custom_metadata: dict[str, Any] | None = None
    """Copied under every event's ``custom_metadata`` in this invocation (the event's own
    keys win), and the start of ``Context.custom_metadata``."""
    session_busy_timeout: float | None = Field(default=None, ge=0)
    """Seconds to wait for another invocation on the session to finish before
    ``SessionBusyError`` (0 fails fast); None uses the Runner's setting."""
    multitask_strategy: MultitaskStrategy | None = None
    """What to do when the session is busy (``MultitaskStrategy``); None uses the Runner's
    setting."""
    labels: dict[str, str] | None = None
    """Added to every model request's ``config.labels`` (e.g. for billing)."""
    http_options: types.HttpOptions | None = None
    """Merged into every model request's ``config.http_options`` (headers are added to the
    agent's own)."""

    # -- accepted as in ADK, without effect in cairn (docs/runner.md) --------------------------
    speech_config: types.SpeechConfig | None = None
    service_tier: ServiceTier | str | None = None
    response_modalities: list[types.Modality] | None = None
    avatar_config: types.AvatarConfig | None = None
    save_input_blobs_as_artifacts: bool = False
    support_cfc: bool = False
    output_audio_transcription: types.AudioTranscriptionConfig | None = Field(
        default_factory=types.AudioTranscriptionConfig
    )
    input_audio_transcription: types.AudioTranscriptionConfig | None = Field(
        default_factory=types.AudioTranscriptionConfig
    )
    realtime_input_config: types.RealtimeInputConfig | None = None
    explicit_vad_signal: bool | None = None
    translation_config: types.TranslationConfig | None = None
    enable_affective_dialog: bool | None = None
    proactivity: types.ProactivityConfig | None = None
    session_resumption: types.SessionResumptionConfig | None = None
    history_config: types.HistoryConfig | None = None
    context_window_compression: types.ContextWindowCompressionConfig | None = None
    save_live_blob: bool = False
    save_live_audio: bool = False
    """Deprecated in ADK: sets ``save_live_blob``."""
    tool_thread_pool_config: ToolThreadPoolConfig | None = None
    telemetry: Any = None
    """ADK's per-request ``TelemetryConfig``; cairn's spans follow its own settings."""
    get_session_config: GetSessionConfig | None = None
    """cairn loads the history an agent asks for (``BaseAgent.history_window``) and ignores
    this, so that resuming from the log always sees what it needs."""
    model_input_context: list[types.Content] | None = None
    include_thoughts_from_other_agents: bool = False

    @model_validator(mode="before")
    @classmethod
    def _save_live_audio_means_save_live_blob(cls, data: Any) -> Any:
        if isinstance(data, dict) and "save_live_audio" in data:
            warnings.warn(
                "RunConfig(save_live_audio=...) is deprecated (as in ADK); use save_live_blob",
                DeprecationWarning,
                stacklevel=2,
            )
            if data["save_live_audio"]:
                data = {**data, "save_live_blob": True}
        return data

    @field_validator("max_llm_calls")
    @classmethod
    def validate_max_llm_calls(cls, value: int) -> int:
        """ADK's check of ``max_llm_calls``: below ``sys.maxsize``; zero or less (no limit)
        is allowed, with a warning."""
        if value >= sys.maxsize:
            raise ValueError(
                f"max_llm_calls should be less than {sys.maxsize}. Pass 0 (or less) for no limit."
            )
        if value <= 0:
            logger.warning(
                f"RunConfig(max_llm_calls={value}): no limit on model calls in an invocation; "
                "a model that keeps calling tools will not be stopped"
            )
        return value

    @model_validator(mode="after")
    def _deferred_cannot_stream(self) -> RunConfig:
        if self.service_tier == ServiceTier.DEFERRED and self.streaming_mode == StreamingMode.SSE:
            raise ValueError(
                "RunConfig(service_tier='deferred') cannot be combined with "
                "streaming_mode=StreamingMode.SSE: a deferred request returns no result to "
                "stream. Drop one of the two."
            )
        return self
