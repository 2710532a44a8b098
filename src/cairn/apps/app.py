"""An App: the root agent plus app-wide configuration."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context_cache_config import ContextCacheConfig
from cairn.plugins.base_plugin import BasePlugin
from cairn.workflow.nodes import BaseNode

_APP_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]*$")


def validate_app_name(name: str) -> None:
    """Raise ValueError unless ``name`` starts with a letter and has only letters, digits,
    '_' and '-' (and is not 'user', which names the person in a conversation)."""
    if not _APP_NAME.match(name):
        raise ValueError(
            f"app name {name!r} must start with a letter and contain only letters, "
            "digits, '_' and '-', e.g. 'weather' or 'email-review'"
        )
    if name == "user":
        raise ValueError("app name 'user' is reserved; choose another name")


class ResumabilityConfig(BaseModel):
    """As ADK's. In cairn every persisted pause is resumable either way; with
    ``is_resumable=True`` workflows also write ADK's end-of-agent markers and show the
    outputs of the nodes a resume skips, as ADK's resumable apps do."""

    model_config = ConfigDict(extra="forbid")

    is_resumable: bool = True


class EventsCompactionConfig(BaseModel):
    """When to summarise old history (``compaction_interval``/``overlap_size`` and/or
    ``token_threshold``/``event_retention_size``; each pair is set together)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    summarizer: Any = None
    compaction_interval: int | None = Field(default=None, gt=0)
    overlap_size: int | None = Field(default=None, ge=0)
    token_threshold: int | None = Field(default=None, gt=0)
    event_retention_size: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _pairs_set_together(self) -> EventsCompactionConfig:
        interval_pair = (self.compaction_interval, self.overlap_size)
        token_pair = (self.token_threshold, self.event_retention_size)
        for names, pair in (
            ("compaction_interval and overlap_size", interval_pair),
            ("token_threshold and event_retention_size", token_pair),
        ):
            if (pair[0] is None) != (pair[1] is None):
                raise ValueError(f"{names} must be set together")
        if interval_pair[0] is None and token_pair[0] is None:
            raise ValueError(
                "set compaction_interval and overlap_size, or token_threshold and "
                "event_retention_size (or both pairs)"
            )
        return self


class App(BaseModel):
    """A named application: its root agent, plugins and configuration."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    name: str
    root_agent: BaseAgent
    plugins: list[BasePlugin] = Field(default_factory=list)
    events_compaction_config: EventsCompactionConfig | None = None
    context_cache_config: ContextCacheConfig | None = None
    """Context caching for every LLM agent of the app (None: off); see
    docs/built-in-tools-and-caching.md."""
    resumability_config: ResumabilityConfig | None = None

    @field_validator("root_agent", mode="before")
    @classmethod
    def _runnable_root(cls, root: Any) -> Any:
        if isinstance(root, BaseNode):
            raise ValueError(
                f"root_agent {root.name!r} is a single {type(root).__name__}; an App runs an "
                "agent or a Workflow (a Workflow is accepted as is). Wrap the node: "
                f"Workflow(name={root.name!r}, edges=[(START, node)])"
            )
        return root

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        validate_app_name(name)
        return name
