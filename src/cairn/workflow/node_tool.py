"""A workflow node, or a whole workflow, offered to an LlmAgent's model as a tool."""

from __future__ import annotations

import inspect
import typing
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from cairn.agents.branches import call_branch
from cairn.events.event import Event
from cairn.tools.base_tool import BaseTool
from cairn.tools.function_tool import invalid_arguments_result, to_json_result
from cairn.workflow.join_node import JoinNode
from cairn.workflow.nodes import START_NAME, AgentNode, BaseNode, FunctionNode, ParallelNode

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext
    from cairn.workflow.workflow import Workflow

_REQUEST = "request"
_SKIPPED = {"ctx", "node_input", "self"}


class NodeTool(BaseTool):
    """Runs a node (or a workflow) for each call of the model, as ADK's node-as-tool does.

    ``LlmAgent(tools=[a_node, a_workflow])`` wraps each in one. The call's arguments are
    the node's input: a ``FunctionNode``'s parameters (bound from the arguments), its
    ``input_schema``, its ``node_input`` annotation, or (a workflow) those of the nodes
    after START; a str, int... input is the argument ``request``. The node runs inside
    the caller's invocation at ``<caller path>/<tool>@<call id>`` on the branch
    ``<tool>@<call id>``: its events are committed like any node's, a pause inside it
    leaves the call open until the answer comes, and a node that finished is not run
    again on resume. Its output is the call's response (a dict as it is, anything else
    as ``{"result": ...}``).
    """

    runs_in_invocation = True
    """The calling LLM agent runs the node inside its own invocation (its events stored)."""

    def __init__(self, node: Any, name: str | None = None, description: str | None = None):
        from cairn.workflow.workflow import Workflow

        if isinstance(node, Workflow):
            target: BaseNode = node.as_node()  # its timeout, retries and schemas apply
            entry = [[target] if node.input_schema is not None else _start_entries(node)]
        elif isinstance(node, BaseNode):
            target, entry = node, [[node]]
        else:
            raise TypeError(
                f"NodeTool wraps a workflow node or a Workflow; got {type(node).__name__} "
                "(an agent is a sub-agent or an AgentTool, a function a FunctionTool)"
            )
        self.node = node
        tool_name = name or target.name
        super().__init__(
            name=tool_name,
            description=description or target.description or f"Executes the node: {tool_name}",
        )
        self._target = target
        self._input = _tool_input(tool_name, entry[0])
        self._host = Workflow(name=tool_name)

    def declaration(self) -> types.FunctionDeclaration:
        schema = self._input.model.model_json_schema()
        schema.pop("title", None)
        declared = types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )
        output_schema = self._target.output_schema
        if output_schema is not None:
            declared.response_json_schema = output_schema.model_json_schema()
        return declared

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        raise TypeError(
            f"NodeTool {self.name!r} runs its node inside the calling LLM agent's invocation "
            "(so the node's events are stored and a pause can resume); give it to an "
            "LlmAgent's tools, or use the node itself in a workflow"
        )

    async def run_in_invocation(
        self, ctx: InvocationContext, call: types.FunctionCall, caller: str
    ) -> AsyncGenerator[Event, None]:
        """Run the node for ``call``; answer the call with its output once it finished."""
        try:
            node_input = self._input.node_input(dict(call.args or {}))
        except ValidationError as error:
            yield self._answer(ctx, call, caller, invalid_arguments_result(self.name, error))
            return
        segment = call_branch(None, self.name, call.id)
        path = f"{ctx.node_path or f'{caller}@1'}/{segment}"
        finished: list[Any] = []
        async for event in self._host.run_detached(
            ctx,
            self._input.bound(self._target),
            path=path,
            branch=call_branch(ctx.branch, self.name, call.id),
            node_input=node_input,
            finished=finished,
        ):
            yield event
        if finished:
            yield self._answer(ctx, call, caller, to_json_result(finished[0]))

    def _answer(
        self, ctx: InvocationContext, call: types.FunctionCall, caller: str, result: Any
    ) -> Event:
        response = types.FunctionResponse(id=call.id, name=call.name, response=result)
        return Event(
            invocation_id=ctx.invocation_id,
            author=caller,
            branch=ctx.branch,
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
        )


class _Input:
    """How a call's arguments become the node's input: the model validating them, and
    whether the input is that model, its ``request`` field, or the arguments by name."""

    def __init__(self, model: type[BaseModel], kind: str) -> None:
        self.model = model
        self.kind = kind  # "model", "request" or "parameters"

    def node_input(self, args: dict[str, Any]) -> Any:
        parsed = self.model.model_validate(args)
        if self.kind == "model":
            return parsed
        if self.kind == "request":
            return getattr(parsed, _REQUEST)
        return {name: getattr(parsed, name) for name in type(parsed).model_fields}

    def bound(self, node: BaseNode) -> BaseNode:
        """``node`` reading its parameters from the arguments (a function's, by name)."""
        if self.kind == "parameters" and isinstance(node, FunctionNode):
            return node.model_copy(update={"parameter_binding": "node_input"})
        return node


def _start_entries(workflow: Workflow) -> list[BaseNode]:
    graph = workflow.graph
    if graph is None:
        return []
    return [
        e.to_node
        for e in graph.successors(START_NAME)
        if not isinstance(e.to_node, JoinNode)  # a join waits: START is one of its inputs
    ]


def _tool_input(name: str, entries: list[BaseNode]) -> _Input:
    """The arguments the tool takes: those of the node (or the workflow's first nodes, which
    must agree)."""
    found = [_node_input(node) for node in entries]
    if not found or any(f is None for f in found):
        raise ValueError(
            f"node {name!r} cannot be a tool: its input is not declared. Give it (or, for a "
            "workflow, the nodes after START) an input_schema=SomeModel, or a FunctionNode "
            "whose parameters or node_input annotation say what it takes"
        )
    first = found[0]
    assert first is not None
    for other in found[1:]:
        assert other is not None
        if other.model.model_json_schema() != first.model.model_json_schema():
            raise ValueError(
                f"workflow {name!r} cannot be a tool: the nodes after START take different "
                "inputs; give the workflow an input_schema=SomeModel"
            )
    return first


def _node_input(node: BaseNode) -> _Input | None:
    if node.input_schema is not None:
        return _Input(node.input_schema, "model")
    if isinstance(node, ParallelNode) and isinstance(node.node, BaseNode):
        inner = _node_input(node.node)
        if inner is None:
            return None
        return _Input(_request_model(node.name, list[inner.model]), "request")  # type: ignore[name-defined]
    if isinstance(node, AgentNode):
        return _Input(_request_model(node.name, str), "request")
    if not isinstance(node, FunctionNode):
        return None
    signature = inspect.signature(node.func)
    try:
        hints = typing.get_type_hints(node.func)
    except Exception:  # unresolvable annotations: read what is there
        hints = {}
    if "node_input" in signature.parameters:
        hint = hints.get("node_input", inspect.Parameter.empty)
        if hint in (inspect.Parameter.empty, Any, object):
            return None
        if isinstance(hint, type) and issubclass(hint, BaseModel):
            return _Input(hint, "model")
        return _Input(_request_model(node.name, hint), "request")
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.name in _SKIPPED or parameter.kind in (
            parameter.VAR_POSITIONAL,
            parameter.VAR_KEYWORD,
        ):
            continue
        annotation = hints.get(parameter.name, parameter.annotation)
        if annotation is inspect.Parameter.empty:
            annotation = Any
        if getattr(annotation, "__name__", "") in {"Context", "ToolContext", "CallbackContext"}:
            continue
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    return _Input(
        create_model(f"{node.name}_arguments", __config__=ConfigDict(extra="forbid"), **fields),
        "parameters",
    )


def _request_model(name: str, annotation: Any) -> type[BaseModel]:
    fields: dict[str, Any] = {_REQUEST: (annotation, ...)}
    model: type[BaseModel] = create_model(f"{name}_arguments", **fields)
    return model
