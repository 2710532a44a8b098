"""Workflow nodes: a name, how to retry and time out, and what goes in and out."""

from __future__ import annotations

import inspect
import typing
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from cairn.agents.base_agent import BaseAgent
from cairn.auth import AuthConfig
from cairn.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from cairn.agents.context import Context

DEFAULT_ROUTE = "__DEFAULT__"
"""A route label that fires only when no other route of the node matched."""


class RetryConfig(BaseModel):
    """How often a failing node runs again, and how long it waits in between.

    The n-th retry waits ``d = min(initial_delay * backoff_factor ** (n - 1), max_delay)``
    seconds, moved by up to ``jitter * d`` either way (ADK's jitter: a fraction of the
    delay). Only the ``exceptions`` listed retry (all when None): exception classes or
    their names (``["ValueError"]``), subclasses included.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    max_attempts: int = Field(default=5, ge=0)
    """Attempts in all, the first included (0 and 1 both mean no retry)."""
    initial_delay: float = Field(default=1.0, ge=0)
    max_delay: float = Field(default=60.0, ge=0)
    backoff_factor: float = Field(default=2.0, ge=1)
    jitter: float = Field(default=1.0, ge=0)
    exceptions: list[str] | None = None

    @field_validator("exceptions", mode="before")
    @classmethod
    def _exception_names(cls, value: Any) -> Any:
        """Classes become their names, so a config reads the same from code and from JSON."""
        if value is None or not isinstance(value, (list, tuple)):
            return value
        names = []
        for item in value:
            if isinstance(item, type) and issubclass(item, BaseException):
                names.append(item.__name__)
            elif isinstance(item, str):
                names.append(item)
            else:
                raise ValueError(
                    "RetryConfig.exceptions takes exception classes or exception class names, "
                    f"e.g. [ValueError] or ['ValueError']; got {item!r}"
                )
        return names

    def retries(self, error: BaseException) -> bool:
        """Whether ``error`` is one of ``exceptions`` (by its class's or a base class's name)."""
        if self.exceptions is None:
            return True
        names = {klass.__name__ for klass in type(error).__mro__ if klass is not object}
        return not names.isdisjoint(self.exceptions)


class BaseNode(BaseModel):
    """One step of a workflow."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    name: str
    description: str = ""
    rerun_on_resume: bool = False
    """On resume after a pause, run again (with ``ctx.resume_inputs``) instead of taking
    the answer as this node's output."""
    wait_for_output: bool = False
    """A run that ends without output or route triggers nothing after it; the node runs
    again on its next trigger (a gate that opens once enough inputs have come)."""
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

    async def run(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        """What a node of your own class does, as in ADK: override ``run`` or ``_run_impl``.

        It yields what the node produces: a plain value is its output (as is
        ``ctx.output`` when it yields none); an ``Event(output=..., route=...,
        state=...)`` its output event; other events are written as they come; a
        ``RequestInput`` pauses it for an answer.
        """
        async for item in self._run_impl(ctx=ctx, node_input=node_input):
            yield item

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError(
            f"node {self.name!r} ({type(self).__name__}) does nothing: a BaseNode subclass "
            "overrides `async def _run_impl(self, *, ctx, node_input)` (or `run`) and yields "
            "its output"
        )
        yield  # pragma: no cover  (an async generator)

    def as_tool(self) -> BaseTool:
        """This node as a tool an LlmAgent's model calls (``LlmAgent(tools=[node])`` does
        this): each call runs the node, its output is the answer (``NodeTool``)."""
        from cairn.workflow.node_tool import NodeTool

        return NodeTool(self)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


START_NAME = "__START__"
START = BaseNode(name=START_NAME, description="Where every workflow begins.")
"""The entry of every workflow; ``"START"`` in an edge means the same."""


class FunctionNode(BaseNode):
    """A plain function (sync, async, generator or async generator) as a node.

    ``FunctionNode(func=f)`` is named after the function and described by its docstring
    unless ``name``/``description`` are given.
    """

    func: Callable[..., Any]
    parameter_binding: Literal["state", "node_input"] = "state"
    """Where parameters other than ``node_input`` and ``ctx`` come from: session state
    (ADK's default), or the keys of a dict ``node_input`` (a node called as a tool)."""
    require_confirmation: bool | Callable[..., Any] = False
    """Ask a human to approve each run before the function runs (or a predicate of the
    run's arguments, ``ctx``, ``node_input`` or state keys, by name, saying when to ask).
    Needs ``rerun_on_resume=True`` (``node(...)`` sets it): the node runs again on the
    answer, and a rejection is its output ``{"error": "This tool call is rejected."}``."""
    auth_config: AuthConfig | None = None
    """The credential the function needs before it runs: one saved in the credential
    service is used, else the user is asked (an ``adk_request_credential`` call, as a
    tool's request) and the node runs again on the answer. The function reads it with
    ``ctx.get_auth_response(auth_config)``. Needs ``rerun_on_resume=True`` (``node(...)``
    sets it)."""

    @model_validator(mode="after")
    def _confirmation_reruns(self) -> FunctionNode:
        for setting in ("require_confirmation", "auth_config"):
            if getattr(self, setting) and not self.rerun_on_resume:
                raise ValueError(
                    f"node {self.name!r} has {setting} but rerun_on_resume=False; it runs "
                    "again once answered, so set rerun_on_resume=True (node(...) does)"
                )
        return self

    @model_validator(mode="before")
    @classmethod
    def _named_after_func(cls, data: Any) -> Any:
        if isinstance(data, dict) and callable(data.get("func")):
            func = data["func"]
            if not data.get("name"):
                name = getattr(func, "__name__", None)
                if not name:
                    raise ValueError(
                        f"FunctionNode(func={func!r}) needs name=...: the callable has no "
                        "__name__ to name the node after"
                    )
                data = {**data, "name": name}
            if "description" not in data:
                data = {**data, "description": (getattr(func, "__doc__", None) or "").strip()}
        return data

    _parameters: tuple[tuple[str, str, bool], ...] | None = PrivateAttr(default=None)

    def parameters(self) -> tuple[tuple[str, str, bool], ...]:
        """(name, source, has_default) per parameter of ``func``, read once.

        ``source`` says where the value comes from: ``node_input`` (``node_input_text``
        when annotated ``str``: a Content input is handed over as its text, as ADK does),
        ``ctx`` (a parameter named ctx or annotated with a context class) or ``state``.
        """
        if self._parameters is None:
            found = []
            for parameter in _signature(self.func).parameters.values():
                annotation = parameter.annotation
                annotation_name = getattr(annotation, "__name__", str(annotation))
                if parameter.name == "node_input":
                    source = "node_input_text" if _names_str(annotation) else "node_input"
                elif parameter.name == "ctx" or annotation_name.split(".")[-1] in _CONTEXTS:
                    source = "ctx"
                else:
                    source = "state"
                has_default = parameter.default is not inspect.Parameter.empty
                found.append((parameter.name, source, has_default))
            self._parameters = tuple(found)
        return self._parameters


_CONTEXTS = {"Context", "ToolContext", "CallbackContext"}


def _signature(func: Callable[..., Any]) -> inspect.Signature:
    """The signature with postponed (string) annotations resolved where they can be."""
    try:
        return inspect.signature(func, eval_str=True)
    except Exception:  # an annotation naming what the module cannot resolve: keep the text
        return inspect.signature(func)


def _names_str(annotation: Any) -> bool:
    """``str`` or a union with ``str`` in it (``str | None``, ``str | dict``)."""
    if annotation is str:
        return True
    if isinstance(annotation, str):  # unresolved: read the text
        cleaned = annotation.replace(" ", "").removeprefix("Optional[").rstrip("]")
        return "str" in cleaned.split("|") or cleaned == "str"
    return str in typing.get_args(annotation)


class Node(BaseNode):
    """A node class to subclass (ADK's ``Node``): override ``run_node_impl``.

    With ``parallel_worker=True`` the node runs once per item of its (list) input, at most
    ``max_parallel_workers`` at once (no limit when None), each item a run of its own on a
    branch of its own; its output is the list of their outputs, in input order.
    """

    parallel_worker: bool = Field(default=False, frozen=True)
    max_parallel_workers: int | None = Field(default=None, frozen=True)

    @model_validator(mode="after")
    def _workers_need_parallel_worker(self) -> Node:
        _check_workers(self.parallel_worker, self.max_parallel_workers)
        if self.parallel_worker:
            self.rerun_on_resume = True  # the items that finished are kept, the others run
        return self

    async def run_node_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        """What the node does with one input: yield its output (as ``_run_impl`` would)."""
        raise NotImplementedError(
            f"node {self.name!r} ({type(self).__name__}) does nothing: a Node subclass "
            "overrides `async def run_node_impl(self, *, ctx, node_input)` and yields its output"
        )
        yield  # pragma: no cover  (an async generator)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        async for item in self.run_node_impl(ctx=ctx, node_input=node_input):
            yield item


class AgentNode(BaseNode):
    """An agent (or a nested workflow) as a node: its input arrives as a user turn on its own
    branch; its output is a nested workflow's output, or the agent's last answer."""

    agent: BaseAgent


class ParallelNode(BaseNode):
    """Runs ``node`` once per item of its (list) input, concurrently (at most
    ``max_parallel_workers`` at once); outputs the results in input order. Each item is a
    run of its own (``name@1``, ``name@2``, ...) on a branch of its own, so on resume the
    finished ones are not run again. ``node(f, parallel_worker=True)`` makes one."""

    node: Any
    max_parallel_workers: int | None = Field(default=None, ge=1)


class ToolNode(BaseNode):
    """A tool as a node: a dict input is its arguments; its result is the output."""

    tool: BaseTool


def convert(value: Any) -> BaseNode | None:
    """The node for an agent or a tool (None for anything else)."""
    if isinstance(value, BaseAgent):
        as_node = getattr(value, "as_node", None)  # a Workflow: its timeout, retries, schemas
        if callable(as_node):
            converted: BaseNode = as_node()
            return converted
        return AgentNode(name=value.name, description=value.description, agent=value)
    if isinstance(value, BaseTool):
        return ToolNode(name=value.name, description=value.description, tool=value)
    return None


def _check_workers(parallel_worker: bool, max_parallel_workers: int | None) -> None:
    if max_parallel_workers is None:
        return
    if not parallel_worker:
        raise ValueError(
            "max_parallel_workers is set but parallel_worker is not: set parallel_worker=True "
            "too (it limits how many items of a parallel worker run at once)"
        )
    if max_parallel_workers < 1:
        raise ValueError(f"max_parallel_workers must be 1 or more; got {max_parallel_workers}")


@overload
def node(func: Any, /, **settings: Any) -> BaseNode: ...


@overload
def node(func: None = None, /, **settings: Any) -> Callable[[Any], BaseNode]: ...


def node(func: Any = None, /, **settings: Any) -> BaseNode | Callable[[Any], BaseNode]:
    """Make a node, as ADK's ``node`` does: ``@node``, ``@node(name=..., retry_config=...,
    timeout=..., rerun_on_resume=..., parameter_binding=...)``, or ``node(x, ...)`` for a
    function, node, agent or tool (a node's settings are overridden on a copy).

    ``parallel_worker=True`` wraps the node in a ``ParallelNode`` of the same name: it runs
    once per item of a list input (``max_parallel_workers`` at once, no limit when None).
    """
    parallel_worker = bool(settings.pop("parallel_worker", False))
    max_workers = settings.pop("max_parallel_workers", None)
    _check_workers(parallel_worker, max_workers)

    def wrap(target: Any) -> BaseNode:
        built = _build(target, settings)
        if not parallel_worker:
            return built
        return ParallelNode(
            name=built.name,
            description=built.description,
            node=built,
            max_parallel_workers=max_workers,
            rerun_on_resume=True,
        )

    return wrap(func) if func is not None else wrap


def _build(target: Any, settings: dict[str, Any]) -> BaseNode:
    given = {key: value for key, value in settings.items() if value is not None}
    if "auth_config" in given:
        if isinstance(target, FunctionNode):
            given.setdefault("rerun_on_resume", True)  # it runs again once answered
            return FunctionNode.model_validate({**dict(target), **given})
        if isinstance(target, BaseNode) or convert(target) is not None or not callable(target):
            raise TypeError(
                f"node(..., auth_config=...) takes a function; got {type(target).__name__}. "
                "Wrap what it runs in a function (a tool asks for its own credential with "
                "ctx.request_credential) to gate it"
            )
    if isinstance(target, BaseNode):
        return target.model_copy(update=given) if given else target
    converted = convert(target)
    if converted is not None:
        return converted.model_copy(update=given) if given else converted
    if not callable(target):
        raise TypeError(
            f"node() takes a function, a node, an agent or a tool; got {type(target).__name__}"
        )
    if given.get("require_confirmation") or given.get("auth_config"):
        given.setdefault("rerun_on_resume", True)  # it runs again once answered
    given.setdefault("name", getattr(target, "__name__", "node"))
    given.setdefault("description", (target.__doc__ or "").strip())
    return FunctionNode(func=target, **given)
