"""Workflow nodes: a name, how to retry and time out, and what goes in and out."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

DEFAULT_ROUTE = "__DEFAULT__"
"""A route label that fires only when no other route of the node matched."""


class RetryConfig(BaseModel):
    """How often a failing node runs again, and how long it waits in between.

    The n-th retry waits ``min(initial_delay * backoff_factor ** (n - 1), max_delay)``
    seconds plus up to ``jitter`` seconds; only ``exceptions`` (all when None) retry.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    max_attempts: int = Field(default=5, ge=1)
    initial_delay: float = Field(default=1.0, ge=0)
    max_delay: float = Field(default=60.0, ge=0)
    backoff_factor: float = Field(default=2.0, ge=1)
    jitter: float = Field(default=1.0, ge=0)
    exceptions: list[type[BaseException]] | None = None


class BaseNode(BaseModel):
    """One step of a workflow."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    name: str
    description: str = ""
    rerun_on_resume: bool = False
    """On resume after a pause, run again (with ``ctx.resume_inputs``) instead of taking
    the answer as this node's output."""
    retry_config: RetryConfig | None = None
    timeout: float | None = Field(default=None, gt=0)
    input_schema: type[BaseModel] | None = None
    output_schema: type[BaseModel] | None = None
    state_schema: type[BaseModel] | None = None

    @field_validator("name")
    @classmethod
    def _identifier(cls, name: str) -> str:
        if not name.isidentifier() and name != START_NAME:
            raise ValueError(
                f"node name {name!r} must be a Python identifier (letters, digits and "
                "underscores, not starting with a digit), e.g. 'draft_email'"
            )
        return name

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


START_NAME = "__START__"
START = BaseNode(name=START_NAME, description="Where every workflow begins.")
"""The entry of every workflow; ``"START"`` in an edge means the same."""


class FunctionNode(BaseNode):
    """A plain function (sync, async, generator or async generator) as a node."""

    func: Callable[..., Any]

    _parameters: tuple[tuple[str, str, bool], ...] | None = PrivateAttr(default=None)

    def parameters(self) -> tuple[tuple[str, str, bool], ...]:
        """(name, source, has_default) per parameter of ``func``, read once.

        ``source`` says where the value comes from: ``node_input``, ``ctx`` (a
        parameter named ctx or annotated with a context class) or ``state``.
        """
        if self._parameters is None:
            found = []
            for parameter in inspect.signature(self.func).parameters.values():
                annotation = parameter.annotation
                annotation_name = getattr(annotation, "__name__", str(annotation))
                if parameter.name == "node_input":
                    source = "node_input"
                elif parameter.name == "ctx" or annotation_name.split(".")[-1] in _CONTEXTS:
                    source = "ctx"
                else:
                    source = "state"
                has_default = parameter.default is not inspect.Parameter.empty
                found.append((parameter.name, source, has_default))
            self._parameters = tuple(found)
        return self._parameters


_CONTEXTS = {"Context", "ToolContext", "CallbackContext"}


@overload
def node(func: Callable[..., Any], /) -> FunctionNode: ...


@overload
def node(func: None = None, /, **settings: Any) -> Callable[[Callable[..., Any]], FunctionNode]: ...


def node(
    func: Callable[..., Any] | None = None, /, **settings: Any
) -> FunctionNode | Callable[[Callable[..., Any]], FunctionNode]:
    """Make a function a node: ``@node`` or ``@node(name=..., retry_config=..., timeout=...)``."""

    def wrap(target: Callable[..., Any]) -> FunctionNode:
        settings.setdefault("name", getattr(target, "__name__", "node"))
        settings.setdefault("description", (target.__doc__ or "").strip())
        return FunctionNode(func=target, **settings)

    return wrap(func) if func is not None else wrap
