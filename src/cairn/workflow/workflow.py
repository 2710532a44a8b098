"""Workflow: a graph of nodes run as one agent, resumable from its own events."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import inspect
import json
import random
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from google.genai import types
from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.auth import AuthCredential
from cairn.events.event import Event
from cairn.events.event_actions import EventActions, ToolConfirmation
from cairn.events.interrupts import (
    earlier_call,
    interrupt_calls,
    schema_problem,
    starts_invocation,
    unwrap_answer,
)
from cairn.events.node_info import NodeInfo
from cairn.events.request_input import REQUEST_INPUT_FUNCTION, RequestInput
from cairn.sessions.state import StateSchemaError
from cairn.tools.base_tool import BaseTool
from cairn.user_code import call_user_code, iterate_in_thread
from cairn.workflow.errors import DynamicNodeFailError, NodeInterruptedError, NodeTimeoutError
from cairn.workflow.graph import Graph, as_node, build_graph
from cairn.workflow.join_node import JoinNode
from cairn.workflow.node_auth import node_credential
from cairn.workflow.nodes import (
    DEFAULT_ROUTE,
    START_NAME,
    AgentNode,
    BaseNode,
    FunctionNode,
    Node,
    ParallelNode,
    RetryConfig,
    ToolNode,
    convert,
)
from cairn.workflow.replay import Replay

__all__ = ["AgentNode", "ParallelNode", "ToolNode", "Workflow"]


@dataclasses.dataclass
class _Outcome:
    """How a node run ended: an output and route, or waiting for input."""

    output: Any = None
    route: Any = None
    waiting: bool = False
    escalated: bool = False
    held: Event | None = None
    """The node's own output event, held back until the node finishes."""
    reported: bool = False
    """A node of a nested workflow wrote the error event of the failure on its way up."""


class Workflow(BaseAgent):
    """Nodes connected by edges, run as one agent (so a Runner runs it, and workflows nest).

    A node's output is the input of the nodes after it; ``Event(route=...)``
    picks routed edges; ``Event(state=...)`` (or ``ctx.state``) changes state.
    Every finished node run leaves its output event in the log (``node_info.path`` =
    ``wf@1/node@run``, ``node_info.output_for`` naming that path), so a paused run
    resumes from that invocation's events: finished nodes are not run again.
    """

    edges: list[Any] = Field(default_factory=list)
    max_concurrency: int | None = None
    state_schema: type[BaseModel] | None = None
    """The state keys (unprefixed: ``app:``, ``user:``, ``temp:`` keys are free) its nodes
    may write and read as parameters, and their types; a node's own ``state_schema``
    replaces it for that node. A function parameter read from state that the schema does
    not declare is refused when the workflow is built; a write that does not fit fails the
    node with ``StateSchemaError``."""
    input_schema: type[BaseModel] | None = None
    """The workflow's input (a user message's text as JSON at the root, the predecessor's
    output when nested) is checked against it and handed to the first nodes as JSON."""
    output_schema: type[BaseModel] | None = None
    """The workflow's output is checked against it (and stored as JSON)."""
    timeout: float | None = Field(default=None, gt=0)
    """The whole workflow's run fails with ``NodeTimeoutError`` after this many seconds."""
    retry_config: RetryConfig | None = None
    """A failing run of the whole workflow runs again: the nodes that finished are
    replayed from the log, the others run again."""

    @model_validator(mode="before")
    @classmethod
    def _graph_gives_edges(cls, data: Any) -> Any:
        """``Workflow(graph=Graph(edges=...))``, ADK's other spelling, means those edges."""
        if isinstance(data, dict) and "graph" in data:
            data = dict(data)
            graph = data.pop("graph")
            if graph is not None:
                if data.get("edges"):
                    raise ValueError("give a Workflow edges= or graph=, not both")
                data["edges"] = list(graph.edges)
        return data

    _graph: Graph | None = PrivateAttr(default=None)
    _dynamic_nodes: dict[int, tuple[Any, BaseNode]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        if self.edges:
            self._graph = build_graph(self.name, self.edges, convert=convert)
        if self.state_schema is not None and self._graph is not None:
            _check_state_parameters(self.name, self._graph, self.state_schema)

    @classmethod
    def from_config(cls, config: Any, config_abs_path: str) -> Workflow:
        """This workflow from its YAML config (``agent_class: Workflow``): ``edges`` in ADK's
        syntax (``cairn.workflow.config``), every other key as for any agent."""
        from cairn.workflow.config import workflow_from_config

        return workflow_from_config(cls, config, config_abs_path)

    def dynamic_node(self, value: Any) -> BaseNode:
        """The node ``ctx.run_node`` runs for ``value`` (a node, function, agent or tool),
        built once per value (reading a function's signature is not free)."""
        if isinstance(value, BaseNode):
            return value
        known = self._dynamic_nodes.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        built = as_node(value, convert)
        if len(self._dynamic_nodes) >= 256:  # new lambdas on every call: keep it bounded
            self._dynamic_nodes.clear()
        self._dynamic_nodes[id(value)] = (value, built)
        return built

    def as_tool(self) -> BaseTool:
        """This workflow as a tool an LlmAgent's model calls (``LlmAgent(tools=[workflow])``
        does this): each call runs it, its output is the answer (``NodeTool``)."""
        from cairn.workflow.node_tool import NodeTool

        return NodeTool(self)

    async def run_detached(
        self,
        ctx: InvocationContext,
        node: BaseNode,
        *,
        path: str,
        branch: str | None,
        node_input: Any,
        finished: list[Any],
    ) -> AsyncGenerator[Event, None]:
        """Run ``node`` at ``path`` as one of this workflow's node runs, outside its graph
        (a tool call's node): replayed from the log if it finished, resumed if it waited.
        Its output is appended to ``finished`` once it has one."""
        channel: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        parent, _, run = path.rpartition("/")
        step = _Step(node, run, path, node_input, branch, [], channel)
        replay = Replay.of(ctx, parent)
        outcome = _Outcome()

        async def one() -> None:
            try:
                await _forward(self._run_node(ctx, step, replay, outcome), channel)
            finally:
                await channel.put(("done",))

        task = asyncio.create_task(one())
        try:
            while True:
                message = await channel.get()
                if message[0] != "event":
                    break
                yield message[1]
                message[2].set_result(None)
            await task
        finally:
            task.cancel()
        if not outcome.waiting:
            finished.append(outcome.output)

    @property
    def graph(self) -> Graph | None:
        """The checked graph; None for a workflow without edges (it runs as a no-op)."""
        return self._graph

    def as_node(self) -> AgentNode:
        """This workflow as a node of an enclosing one: its timeout, retries and schemas are
        the node's, so the enclosing workflow applies them as it does any node's."""
        return AgentNode(
            name=self.name,
            description=self.description,
            agent=self,
            timeout=self.timeout,
            retry_config=self.retry_config,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
        )

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """A root workflow with a timeout, retries or schemas runs as a node at its own path
        (``wf@1``), through the code that runs every node; otherwise the graph runs as is."""
        settings = (self.timeout, self.retry_config, self.input_schema, self.output_schema)
        if ctx.node_path or all(value is None for value in settings):
            async with contextlib.aclosing(self._run_graph(ctx)) as events:
                async for event in events:
                    yield event
            return
        path = f"{self.name}@1"
        step = _Step(self.as_node(), path, path, ctx.user_content, ctx.branch, [], asyncio.Queue())
        replay = Replay.of(ctx, "")
        async with contextlib.aclosing(self._run_node(ctx, step, replay, _Outcome())) as events:
            async for event in events:
                yield event

    async def _run_graph(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """Schedule nodes as their inputs arrive; ready nodes run concurrently (at most
        ``max_concurrency`` at once). Each event a node yields is committed before that node
        goes on, exactly as for an agent."""
        my_path = ctx.node_path or f"{self.name}@1"
        graph = self._graph
        if graph is None:
            if ctx.node_path:  # the enclosing workflow reads this run's end from the log
                yield self._end_marker(ctx, my_path)
            return
        replay = Replay.of(ctx, my_path)
        pending: collections.deque[_Trigger] = collections.deque()
        first_input = ctx.node_input if ctx.node_input is not None else ctx.user_content
        start_edges = graph.successors(START_NAME)
        for edge in start_edges:
            pending.append(
                _Trigger(
                    edge.to_node.name, first_input, START_NAME, ctx.branch, len(start_edges) > 1
                )
            )
        runs: collections.Counter[str] = collections.Counter()
        joined: dict[str, dict[str, Any]] = {}
        join_branches: dict[str, list[str | None]] = {}
        terminal_outputs: list[Any] = []
        waiting = stopped = False
        channel: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        running: dict[str, asyncio.Task[None]] = {}
        limit = self.max_concurrency or float("inf")
        terminals = set(graph.terminals)

        async def run_one(step: _Step, outcome: _Outcome) -> None:
            try:
                await _forward(self._run_node(ctx, step, replay, outcome), channel)
            finally:
                await channel.put(("done", step, outcome))

        try:
            while (pending or running) and not stopped:
                deferred: list[_Trigger] = []
                while pending and len(running) < limit:
                    trigger = pending.popleft()
                    name, node_input = trigger.target, trigger.node_input
                    node = graph.nodes[name]
                    branch = trigger.branch
                    if node.wait_for_output and any(r.split("@")[0] == name for r in running):
                        deferred.append(trigger)  # one run at a time: each sees the last's state
                        continue
                    if isinstance(node, JoinNode):
                        arrived = joined.setdefault(name, {})
                        arrived[trigger.sender] = node_input
                        join_branches.setdefault(name, []).append(branch)
                        if set(graph.predecessors(name)) - set(arrived):
                            continue
                        node_input = joined.pop(name)
                        branch = _common_branch(join_branches.pop(name))
                    runs[name] += 1
                    run = f"{name}@{runs[name]}"
                    if trigger.sub_branch:
                        branch = f"{branch}.{run}" if branch else run
                    step = _Step(
                        node=node,
                        run=run,
                        path=f"{my_path}/{run}",
                        node_input=node_input,
                        branch=branch,
                        output_for=[my_path] if name in terminals else [],
                        channel=channel,
                    )
                    running[run] = asyncio.create_task(run_one(step, _Outcome()))
                pending.extendleft(reversed(deferred))
                if not running:
                    break
                message = await channel.get()
                if message[0] == "event":
                    _, event, committed = message
                    yield event
                    committed.set_result(None)
                    continue
                _, step, outcome = message
                await running.pop(step.run)  # re-raises the node's failure: the run stops
                if outcome.escalated:  # a node asked to stop this workflow (e.g. a loop's exit)
                    terminal_outputs, stopped = [outcome.output], True
                    continue
                if outcome.waiting:
                    waiting = True
                    continue
                if step.node.wait_for_output and outcome.output is None and outcome.route is None:
                    continue  # not done yet: its next trigger runs it again
                successors = self._fired(step.node.name, outcome.route)
                if not successors and outcome.output is not None:
                    terminal_outputs.append(outcome.output)
                for target in successors:
                    pending.append(
                        _Trigger(
                            target, outcome.output, step.node.name, step.branch, len(successors) > 1
                        )
                    )
        finally:
            for task in running.values():
                task.cancel()
            for task in running.values():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if waiting and not stopped:
            return
        if ctx.node_path or ctx.is_resumable:
            output = terminal_outputs[0] if len(terminal_outputs) == 1 else terminal_outputs or None
            # The marker carries the output only where no output event does (a loop's exit).
            yield self._end_marker(ctx, my_path, output if stopped else None)

    def _end_marker(self, ctx: InvocationContext, path: str, output: Any = None) -> Event:
        """ADK's end-of-agent marker: this workflow run finished (nested runs carry their
        path, so the enclosing workflow's replay finds it)."""
        marker = Event(
            author=self.name,
            branch=ctx.branch,
            output=output,
            actions=EventActions(end_of_agent=True),
        )
        if ctx.node_path:
            marker.node_info = NodeInfo(path=path)
        return marker

    def _fired(self, name: str, route: Any) -> list[str]:
        """Targets of the edges from ``name`` that fire for the emitted ``route``."""
        assert self._graph is not None
        emitted = route if isinstance(route, list) else ([] if route is None else [route])
        emitted_keys = {_route_key(r) for r in emitted}
        targets: list[str] = []
        defaults: list[str] = []
        specific = False
        for edge in self._graph.successors(name):
            if edge.route is None:
                targets.append(edge.to_node.name)
                continue
            routes = edge.route if isinstance(edge.route, list) else [edge.route]
            if DEFAULT_ROUTE in routes:
                defaults.append(edge.to_node.name)
            if emitted_keys & {_route_key(r) for r in routes if r != DEFAULT_ROUTE}:
                targets.append(edge.to_node.name)
                specific = True
        return targets if specific else targets + defaults

    async def _run_node(
        self,
        ctx: InvocationContext,
        step: _Step,
        replay: Replay,
        outcome: _Outcome,
    ) -> AsyncGenerator[Event, None]:
        node, path = step.node, step.path
        record = replay.run(step.run)
        if record is not None and not record.completed and record.outputs:
            nested = isinstance(node, AgentNode) and isinstance(node.agent, Workflow)
            if not nested:  # a child it ran with use_as_output recorded its output
                record.completed, record.output = True, record.outputs[-1]
        if record is not None and record.completed:  # done before: never run again
            outcome.output, outcome.route = record.output, record.route
            outcome.escalated = record.escalated
            if ctx.is_resumable and outcome.output is not None:  # ADK re-surfaces it
                yield self._replayed(ctx, step, outcome.output)
            return
        resume_inputs: dict[str, Any] = {}
        interrupts = [] if record is None else list(record.interrupts)
        if record is not None and not isinstance(node, AgentNode):  # agents resume themselves
            interrupts += record.calls
        if record is not None and interrupts:
            answered = {i: replay.answers[i] for i in interrupts if i in replay.answers}
            if len(answered) < len(interrupts):
                outcome.waiting = True
                return
            for interrupt_id, given in answered.items():
                problem = schema_problem(replay.schemas.get(interrupt_id), unwrap_answer(given))
                if problem is not None:
                    outcome.waiting = True
                    yield Event(
                        author=self.name,
                        node_path=path,
                        branch=step.branch,
                        error_code="INVALID_INPUT",
                        error_message=f"the answer to input request {interrupt_id!r} of node "
                        f"{node.name!r} does not match its response_schema: {problem}. The node "
                        "is still waiting; answer again.",
                    )
                    return
            if not node.rerun_on_resume:
                # The answer is the node's output: its output event records the node finished.
                outcome.output = unwrap_answer(answered[interrupts[-1]])
                outcome.route = record.route
                yield self._output_event(step, outcome, EventActions())
                return
            resume_inputs = {i: unwrap_answer(a) for i, a in answered.items()}
        attempt = (record.failures if record else 0) + 1
        retry = node.retry_config
        while True:
            # Each attempt counts its dynamic children from 1 again: a retry (or a rerun on
            # resume) gets the same paths, so the children that finished are not run again.
            dynamic = _DynamicRuns(self, ctx, step)
            credentials: dict[str, AuthCredential] = {}  # a function node's auth_config's
            node_ctx = Context(
                dataclasses.replace(ctx, node_path=path, branch=step.branch, node_input=None),
                node_path=path,
                attempt_count=attempt,
                resume_inputs=resume_inputs,
                auth_responses=credentials,
                node_runner=dynamic,
            )
            timer = asyncio.timeout(node.timeout)
            try:
                async with (
                    contextlib.aclosing(
                        self._node_events(
                            ctx, step, node_ctx, outcome, dynamic, record is not None, credentials
                        )
                    ) as events,
                    timer,
                ):
                    async for event in events:
                        yield event
            except Exception as raised:
                error = raised
                if (
                    node.timeout is not None
                    and isinstance(raised, TimeoutError)
                    and timer.expired()
                ):
                    error = NodeTimeoutError(node_name=node.name, timeout=node.timeout)
                node_ctx.state.discard()  # this attempt's uncommitted writes never happened
                if isinstance(error, DynamicNodeFailError):
                    # The child's error event is the record; the node fails with its error.
                    raise error.error from error
                if outcome.reported and retry is None:  # written where it happened
                    raise
                yield Event(
                    author=self.name,
                    node_path=path,
                    branch=step.branch,
                    error_code=type(error).__name__,
                    error_message=str(error) or f"node {node.name!r} failed",
                )
                if retry is not None and attempt < retry.max_attempts and retry.retries(error):
                    await asyncio.sleep(_delay(retry, attempt))
                    attempt += 1
                    outcome.output = outcome.route = outcome.held = None
                    outcome.reported = False
                    continue
                if error is raised:
                    raise
                raise error from raised
            return

    def _replayed(self, ctx: InvocationContext, step: _Step, output: Any) -> Event:
        """A finished node's output shown again on resume (a resumable app's stream, as
        ADK's); it records nothing new."""
        return Event(author=self.name, node_path=step.path, branch=step.branch, output=output)

    async def _node_events(
        self,
        ctx: InvocationContext,
        step: _Step,
        node_ctx: Context,
        outcome: _Outcome,
        dynamic: _DynamicRuns,
        resuming: bool = False,
        credentials: dict[str, AuthCredential] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run one node; set ``outcome``; yield the events it produced (path and author set),
        ending with its output event (unless it waits for input).

        The node's schemas are enforced here: the input is parsed into ``input_schema``, the
        output must match ``output_schema`` (and is stored as JSON), state writes must fit
        ``state_schema``. A mismatch fails the node like any other error.
        """
        node, path, node_input = step.node, step.path, step.node_input
        if isinstance(node, JoinNode) and node.input_schema is not None:
            for sender, given in node_input.items():  # each predecessor's output, as in ADK
                if given is not None and not isinstance(given, node.input_schema):
                    _conform(node, f"input from {sender!r}", node.input_schema, given)
        elif node.input_schema is not None and not isinstance(node_input, node.input_schema):
            node_input = _conform(node, "input", node.input_schema, node_input)
        if isinstance(node, AgentNode) and node.input_schema is not None:
            # a workflow's checked input reaches its first nodes as JSON, as in ADK
            node_input = node_input.model_dump(mode="json")
        recorded = False  # an event passed on already carries this run's output
        if isinstance(node, FunctionNode):
            items = _call_function(node, node_ctx, node_input, credentials)
        elif isinstance(node, AgentNode):
            items = self._run_agent(ctx, step, node, node_input, outcome, resuming)
        elif isinstance(node, ToolNode):
            items = _call_tool(node, node_ctx, node_input)
        elif isinstance(node, JoinNode):
            items = _single(node_input)
        elif isinstance(node, ParallelNode):
            child = as_node(node.node, convert)
            items = self._run_parallel(ctx, step, child, node_input, node.max_parallel_workers)
        elif isinstance(node, Node) and node.parallel_worker:
            child = node.model_copy(update={"parallel_worker": False})
            items = self._run_parallel(ctx, step, child, node_input, node.max_parallel_workers)
        else:  # a node of the app's own class
            items = node.run(ctx=node_ctx, node_input=node_input)
        async for item in _until_a_child_waits(items, outcome):
            if isinstance(item, RequestInput):
                _check_new_interrupt_id(ctx, node, item)
                outcome.waiting = True
                yield _input_request(self.name, step, item, node_ctx)
            elif isinstance(item, types.Content):
                # Content is what the node says, not its output (as in ADK): written as the
                # node's event; it carries the run's record when the node ends.
                said = Event(author=self.name, node_path=path, branch=step.branch, content=item)
                if outcome.held is not None:
                    yield outcome.held
                outcome.held = said
            elif isinstance(item, Event):
                _check_state(node, item.actions.state_delta, self.state_schema)
                if interrupt_calls(item) and item.node_info.path in ("", path):
                    # the node pauses on a call of its own: what it wrote so far goes with it
                    outcome.waiting = True
                    pending = node_ctx.actions
                    item.actions.state_delta = {**pending.state_delta, **item.actions.state_delta}
                    pending.state_delta.clear()
                    if node_ctx.route is not None and item.actions.route is None:
                        item.actions.route = node_ctx.route
                if not item.node_info.path:
                    item.node_info = item.node_info.model_copy(update={"path": path})
                if not item.author:
                    item.author = self.name
                if item.branch is None:
                    item.branch = step.branch
                if item.actions.escalate:
                    outcome.escalated = True
                if item.error_code and item.node_info.path.startswith(path + "/"):
                    outcome.reported = True
                output_for = item.node_info.output_for or []
                if path in output_for:  # a nested agent's or workflow's output event
                    recorded = True
                    outcome.output = item.output
                    _extend_output_for(item, step.output_for)
                    yield item
                elif (
                    item.node_info.path == path
                    and not item.actions.end_of_agent
                    and (item.output is not None or item.actions.route is not None)
                ):
                    # The node's own output (and route): its output event, written when the
                    # node finishes. A node has at most one output, as in ADK.
                    if outcome.held is not None:
                        if outcome.held.output is not None and item.output is not None:
                            raise ValueError(
                                f"node {node.name!r} yielded a second output ({item.output!r} "
                                f"after {outcome.held.output!r}); a node has at most one "
                                "output: yield one combined value, or the rest as events "
                                "without output"
                            )
                        yield outcome.held
                    outcome.held = item
                    if item.output is not None:
                        outcome.output = item.output
                    if item.actions.route is not None:
                        outcome.route = item.actions.route
                else:
                    yield item
            elif isinstance(item, _AgentResult):
                outcome.output = item.output
                recorded = recorded or item.recorded
            elif isinstance(item, _Waiting):
                outcome.waiting = True
            else:
                outcome.output = item
        if outcome.waiting:
            if dynamic.waiting:  # it runs again when the answer comes, and writes these again
                node_ctx.state.discard()
            if outcome.held is not None:
                yield outcome.held
            return
        if dynamic.delegated:  # a child's output event (use_as_output) is this run's too
            outcome.output = dynamic.output
            recorded = True
        if outcome.output is None and node_ctx.output is not None:
            outcome.output = node_ctx.output  # set as ctx.output instead of yielded
        if outcome.route is None and node_ctx.route is not None:
            outcome.route = node_ctx.route
        _check_state(node, node_ctx.actions.state_delta, self.state_schema)
        if node.output_schema is not None:
            outcome.output = _conform(node, "output", node.output_schema, outcome.output)
        if isinstance(outcome.output, BaseModel):  # stored as JSON, so replay sees the same
            outcome.output = outcome.output.model_dump(mode="json")
        if node_ctx.actions.escalate:
            outcome.escalated = True
        if (
            recorded
            and outcome.held is None
            and node.output_schema is None  # else the checked output is the record
            and not _has_actions(node_ctx.actions)
        ):
            return
        yield self._output_event(step, outcome, node_ctx.actions)

    def _output_event(self, step: _Step, outcome: _Outcome, actions: EventActions) -> Event:
        """The event that records a node run as finished: its output, route and state
        changes, ``node_info.output_for`` naming the run (and the workflows whose output
        it is)."""
        event = outcome.held or Event(author=self.name, node_path=step.path, branch=step.branch)
        merged = event.actions.model_copy(deep=True)
        for name in type(actions).model_fields:
            value = getattr(actions, name)
            if name == "state_delta":
                merged.state_delta = {**merged.state_delta, **value}
            elif name == "artifact_delta":
                merged.artifact_delta = {**merged.artifact_delta, **value}
            elif value not in (None, False, {}, []) and getattr(merged, name) in (None, False):
                setattr(merged, name, value)
        merged.route = outcome.route
        event.actions = merged
        event.output = outcome.output
        ancestors = step.output_for if outcome.output is not None else []
        event.node_info = event.node_info.model_copy(update={"output_for": [step.path, *ancestors]})
        return event

    async def _run_parallel(
        self,
        ctx: InvocationContext,
        parent: _Step,
        child: BaseNode,
        node_input: Any,
        max_workers: int | None,
    ) -> AsyncIterator[Any]:
        """One run of ``child`` per item, each on a branch of its own (``child@3``), at most
        ``max_workers`` at once; the outputs in input order."""
        path = parent.path
        if not isinstance(node_input, list):
            raise TypeError(
                f"parallel node {parent.node.name!r} needs a list input (one run per item); "
                f"got {type(node_input).__name__}"
            )
        replay = Replay.of(ctx, path)
        outcomes = [_Outcome() for _ in node_input]
        channel: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        slots = asyncio.Semaphore(max_workers or len(node_input) or 1)

        async def one(index: int, item: Any) -> None:
            run = f"{child.name}@{index + 1}"
            step = _Step(
                node=child,
                run=run,
                path=f"{path}/{run}",
                node_input=item,
                branch=f"{parent.branch}.{run}" if parent.branch else run,
                output_for=[],
                channel=channel,
            )
            try:
                async with slots:
                    await _forward(self._run_node(ctx, step, replay, outcomes[index]), channel)
            finally:
                await channel.put(("done",))

        tasks = [asyncio.create_task(one(i, item)) for i, item in enumerate(node_input)]
        remaining = len(tasks)
        try:
            while remaining:
                message = await channel.get()
                if message[0] == "event":
                    yield message[1]
                    message[2].set_result(None)
                else:
                    remaining -= 1
            for task in tasks:
                await task
        finally:
            for task in tasks:
                task.cancel()
        if any(o.waiting for o in outcomes):
            yield _Waiting()
            return
        yield [o.output for o in outcomes]

    async def _run_agent(
        self,
        ctx: InvocationContext,
        step: _Step,
        node: AgentNode,
        node_input: Any,
        outcome: _Outcome,
        resuming: bool,
    ) -> AsyncIterator[Any]:
        """Run an agent as a node; on resume it goes on from its own events (its input is
        already in the log, and it finishes the turn it paused in).

        A nested workflow starts from ``node_input`` and its end marker ends the node; an
        agent's last model answer (text, no calls) is its output event, as in ADK."""
        agent, path = node.agent, step.path
        nested = isinstance(agent, Workflow)
        # A nested workflow stays on the node's branch, as in ADK; an agent gets a branch of
        # its own run, so its turn is told apart from its earlier runs' (a loop's rounds).
        branch = step.branch if nested else path.replace("/", ".")
        # As in ADK, an agent node sees only its own run: its input and what it does with it,
        # not the session's conversation nor its own earlier runs.
        child = dataclasses.replace(
            ctx,
            node_path=path,
            branch=branch,
            node_input=node_input if nested else None,
            isolated=ctx.isolated or not nested,
        )
        if not nested and not resuming:
            content = (
                node_input
                if isinstance(node_input, types.Content)
                else types.Content(role="user", parts=[types.Part(text=_as_text(node_input))])
            )
            yield Event(
                author="user",
                node_path=path,
                branch=branch,
                content=content.model_copy(update={"role": "user"}),
            )
        outputs: list[Any] = []
        recorded = False  # an event of the agent's records the node's output
        task_mode = getattr(agent, "mode", None) == "task"
        # A root workflow run as a node (for its timeout or retries) runs its own graph.
        runs = self._run_graph(child) if agent is self else agent.run_async(child)
        async with contextlib.aclosing(runs) as events:
            async for event in events:
                if not event.node_info.path:
                    event.node_info = event.node_info.model_copy(update={"path": path})
                if nested and event.node_info.path == path and event.actions.end_of_agent:
                    recorded = True
                    if event.output is not None:  # a loop's escalation: its output
                        outputs = [event.output]
                elif nested and path in (event.node_info.output_for or []):
                    outputs.append(event.output)
                elif not nested and event.node_info.path == path and _is_answer(event):
                    if not task_mode:
                        event.output = _answer_text(event)
                        event.node_info = event.node_info.model_copy(
                            update={"output_for": [path], "message_as_output": True}
                        )
                        recorded = True
                    outputs = [_answer_text(event)]
                if event.long_running_tool_ids:
                    outcome.waiting = True
                yield event
        if not outcome.waiting and _waiting_at(ctx.session.events, ctx.invocation_id, path):
            outcome.waiting = True  # resumed with some answers, still waiting for others
        if not outcome.waiting:
            output = outputs[0] if len(outputs) == 1 else outputs or None
            yield _AgentResult(output, recorded=recorded)


class _DynamicRuns:
    """``ctx.run_node`` for one attempt of one node run: its children's paths (counted per
    name, so the same calls in the same order get the same paths every time the node runs)
    and what this invocation's log recorded of them (read once, at the first call)."""

    def __init__(self, workflow: Workflow, ctx: InvocationContext, parent: _Step) -> None:
        self._workflow = workflow
        self._ctx = ctx
        self._parent = parent
        self._counts: collections.Counter[str] = collections.Counter()
        self._replay: Replay | None = None
        self._nodes: dict[int, tuple[Any, BaseNode]] = {}
        """The nodes this attempt's calls named, by the id of what was passed."""
        self._finished: dict[str, Any] = {}
        """Output by run, of the children this attempt ran or replayed (a second call with
        the same ``run_id`` gets the first one's output)."""
        self.waiting = False
        """A child waits for input: the parent waits too, and runs again on the answer."""
        self.delegated = False
        self.output: Any = None
        """The output of the child run with ``use_as_output`` (when ``delegated``)."""

    async def __call__(
        self,
        node: Any,
        node_input: Any,
        *,
        use_as_output: bool,
        run_id: str | None,
        use_sub_branch: bool,
        override_branch: str | None,
        raise_on_wait: bool,
    ) -> Any:
        parent = self._parent
        if not parent.node.rerun_on_resume:
            raise ValueError(
                f"node {parent.node.name!r} calls ctx.run_node but has rerun_on_resume=False; "
                "a node that runs others needs rerun_on_resume=True (a child may wait for "
                "input, and the node then runs again on the answer to get its output), e.g. "
                "@node(rerun_on_resume=True)"
            )
        known = self._nodes.get(id(node))
        if known is None or known[0] is not node:
            known = self._nodes[id(node)] = (node, self._workflow.dynamic_node(node))
        child = known[1]
        if run_id is None:
            self._counts[child.name] += 1
            run_id = str(self._counts[child.name])
        elif not run_id or run_id.isdigit() or any(c in run_id for c in "/@."):
            raise ValueError(
                f"run_id {run_id!r} for node {child.name!r} must contain a non-digit and no "
                "'/', '@' or '.' (numbers are the automatic run ids; the others separate "
                "paths and branches), e.g. run_id='summary'"
            )
        run = f"{child.name}@{run_id}"
        if use_as_output and self.delegated:
            raise ValueError(
                f"node {parent.node.name!r} already took a child's output as its own "
                "(use_as_output=True); only one child run can be its output"
            )
        if run in self._finished:
            output = self._finished[run]
        else:
            output = await self._run(
                child, run, node_input, use_as_output, use_sub_branch, override_branch
            )
        if use_as_output:
            self.delegated, self.output = True, output
        if raise_on_wait and output is None and _may_wait(child):
            self.waiting = True
            raise NodeInterruptedError(f"{parent.path}/{run} has no output yet")
        return output

    async def _run(
        self,
        child: BaseNode,
        run: str,
        node_input: Any,
        use_as_output: bool,
        use_sub_branch: bool,
        override_branch: str | None,
    ) -> Any:
        parent = self._parent
        if self._replay is None:
            self._replay = Replay.of(self._ctx, parent.path)
        record = self._replay.run(run)
        if record is not None and record.completed and not self._ctx.is_resumable:
            # Finished before (the common case on resume): its recorded output, at once.
            self._finished[run] = record.output
            return record.output
        assert parent.channel is not None
        branch = override_branch if override_branch is not None else parent.branch
        if use_sub_branch:
            branch = f"{branch}.{run}" if branch else run
        step = _Step(
            node=child,
            run=run,
            path=f"{parent.path}/{run}",
            node_input=node_input,
            branch=branch,
            output_for=[parent.path, *parent.output_for] if use_as_output else [],
            channel=parent.channel,
        )
        outcome = _Outcome()
        try:
            await _forward(
                self._workflow._run_node(self._ctx, step, self._replay, outcome), parent.channel
            )
        except Exception as error:
            raise DynamicNodeFailError(
                message=f"dynamic node {step.path!r} failed: {type(error).__name__}: {error}",
                error=error,
                error_node_path=step.path,
            ) from error
        if outcome.waiting:
            self.waiting = True
            raise NodeInterruptedError(f"{step.path} waits for input")
        self._finished[run] = outcome.output
        return outcome.output


def _may_wait(node: BaseNode) -> bool:
    """A node whose run can end without output and go on later (``raise_on_wait``)."""
    nested = isinstance(node, AgentNode) and isinstance(node.agent, Workflow)
    return nested or node.wait_for_output


async def _until_a_child_waits(items: AsyncIterator[Any], outcome: _Outcome) -> AsyncIterator[Any]:
    """A node's items, until a child it runs with ``ctx.run_node`` waits for input (then the
    node waits too)."""
    try:
        async for item in items:
            yield item
    except NodeInterruptedError:
        outcome.waiting = True


async def _forward(events: AsyncGenerator[Event, None], channel: asyncio.Queue[Any]) -> None:
    """Hand a concurrently running node's events to the workflow's single consumer, one at a
    time: the node goes on only once its event has been committed and passed on."""
    async with contextlib.aclosing(events) as running:
        async for event in running:
            committed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            await channel.put(("event", event, committed))
            await committed


@dataclasses.dataclass
class _AgentResult:
    output: Any
    recorded: bool = False
    """An event the agent wrote already records the node's output (no extra event)."""


@dataclasses.dataclass
class _Trigger:
    """An input on its way to ``target``: who sent it, on which branch."""

    target: str
    node_input: Any
    sender: str
    branch: str | None
    sub_branch: bool
    """The sender fans out (several targets fire): each gets a branch of its own."""


@dataclasses.dataclass
class _Step:
    """One node run about to start."""

    node: BaseNode
    run: str
    path: str
    node_input: Any
    branch: str | None
    output_for: list[str]
    """The enclosing workflow paths this run's output is also the output of."""
    channel: asyncio.Queue[Any] | None = None
    """Where this run's events go to be committed (what its dynamic children write too)."""


def _common_branch(branches: list[str | None]) -> str | None:
    """The longest dotted prefix the branches share (a join goes on there)."""
    split = [b.split(".") if b else [] for b in branches]
    common: list[str] = []
    for segments in zip(*split, strict=False):
        if len(set(segments)) != 1:
            break
        common.append(segments[0])
    return ".".join(common) or None


def _extend_output_for(event: Event, ancestors: list[str]) -> None:
    """A terminal node's output is also its workflow's: name the workflow's path too."""
    current = list(event.node_info.output_for or [])
    extra = [a for a in ancestors if a not in current]
    if extra:
        event.node_info = event.node_info.model_copy(update={"output_for": current + extra})


def _has_actions(actions: EventActions) -> bool:
    return bool(actions.state_delta or actions.artifact_delta or actions.escalate)


def _is_answer(event: Event) -> bool:
    """A model's answer that ends its turn: text, no calls, not partial (nor code the agent's
    executor runs next or its result: the model goes on after them)."""
    content = event.content
    if event.partial or content is None or content.role != "model" or not content.parts:
        return False
    last = content.parts[-1]
    return (
        not event.get_function_calls()
        and not event.get_function_responses()
        and last.executable_code is None
        and last.code_execution_result is None
    )


def _answer_text(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text or "" for p in parts if not p.thought)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, types.Content):
        return "".join(p.text or "" for p in value.parts or [])
    return json.dumps(value, default=str)


def _waiting_at(events: Sequence[Event], invocation_id: str, path: str) -> bool:
    """Whether a call made under node ``path`` in this invocation still waits for an answer."""
    answered: set[str] = set()
    for event in reversed(events):
        if event.invocation_id != invocation_id:
            continue
        own = event.node_info.path
        if (own == path or own.startswith(path + "/")) and any(
            call.id not in answered for call in interrupt_calls(event)
        ):
            return True
        answered.update(r.id for r in event.get_function_responses() if r.id)
        if starts_invocation(event):
            return False
    return False


class _Waiting:
    """Some part of a composite node waits for input."""


async def _single(value: Any) -> AsyncIterator[Any]:
    yield value


def _route_key(route: Any) -> tuple[str, Any]:
    # True == 1 in Python; a bool route must not match an int edge (or the reverse).
    return (type(route).__name__, route)


def _delay(config: RetryConfig, attempt: int) -> float:
    delay = min(config.initial_delay * config.backoff_factor ** (attempt - 1), config.max_delay)
    spread = delay * config.jitter
    return float(max(0.0, delay + random.uniform(-spread, spread)) if spread else delay)


def _check_new_interrupt_id(ctx: InvocationContext, node: BaseNode, request: RequestInput) -> None:
    """Refuse an ``interrupt_id`` this invocation used already: its answer is in the log, so
    the new request could never be told apart from the answered one."""
    earlier = earlier_call(ctx.session.events, ctx.invocation_id, request.interrupt_id)
    if earlier is not None:
        raise ValueError(
            f"node {node.name!r} asks for input with interrupt_id {request.interrupt_id!r}, "
            f"which {earlier.node_info.path or earlier.author!r} used already in this "
            "invocation; an interrupt id names one request, so leave interrupt_id out (a "
            "fresh one is made for each request) or make it unique, e.g. from ctx.node_path"
        )


def _input_request(author: str, step: _Step, request: RequestInput, ctx: Context) -> Event:
    args = {
        "interruptId": request.interrupt_id,
        "payload": request.payload,
        "message": request.message,
        "response_schema": request.response_schema,
    }
    call = types.FunctionCall(id=request.interrupt_id, name=REQUEST_INPUT_FUNCTION, args=args)
    return Event(
        author=author,
        node_path=step.path,
        branch=step.branch,
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        long_running_tool_ids={request.interrupt_id},
        actions=ctx.actions,
    )


async def _call_function(
    node: FunctionNode,
    ctx: Context,
    node_input: Any,
    credentials: dict[str, AuthCredential] | None = None,
) -> AsyncIterator[Any]:
    """Run a function node: its approval first, then its credential (``node_auth``), as
    ADK; ``credentials`` are what its ``ctx.get_auth_response`` reads."""
    kwargs = _bind(node, ctx, node_input)
    if node.require_confirmation:
        asked = confirmation_interrupt_id(ctx.node_path)
        arguments = {k: v for k, v in kwargs.items() if not isinstance(v, Context)}
        if asked in ctx.resume_inputs:
            answer = ctx.resume_inputs[asked]
            approval = ToolConfirmation.model_validate(answer if isinstance(answer, dict) else {})
            if not approval.confirmed:
                yield Event(output={"error": "This tool call is rejected."})
                return
        elif await _needs_confirmation(node, ctx, node_input, arguments):
            yield RequestInput(
                interrupt_id=asked,
                message=f"Please approve or reject the tool call {node.name}().",
                payload={"tool_name": node.name, "args": _json_args(arguments)},
                response_schema=ToolConfirmation.model_json_schema(),
            )
            return
    if node.auth_config is not None:
        credential = await node_credential(ctx, node.name, node.auth_config)
        if isinstance(credential, Event):
            yield credential  # the node waits for the user's answer
            return
        if credentials is not None:
            credentials[node.auth_config.key] = credential
    result = await call_user_code(node.func, **kwargs)
    if inspect.isasyncgen(result):
        async for item in result:
            yield item
    elif inspect.isgenerator(result):
        async for item in iterate_in_thread(result):
            yield item
    elif result is not None:
        yield result


def confirmation_interrupt_id(node_path: str) -> str:
    """The interrupt id of a node run's approval request (ADK's)."""
    return f"wf_tool_confirmation:{node_path}"


async def _needs_confirmation(
    node: FunctionNode, ctx: Context, node_input: Any, arguments: dict[str, Any]
) -> bool:
    """``require_confirmation`` for this run: a bool, or what its predicate says of the
    run's arguments (and ``ctx``, ``node_input`` or state keys it names)."""
    check = node.require_confirmation
    if not callable(check):
        return bool(check)
    parameters = inspect.signature(check).parameters
    takes_all = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    given: dict[str, Any] = dict(arguments)
    for name in parameters:
        if name in ("ctx", "tool_context"):
            given[name] = ctx
        elif name == "node_input":
            given.setdefault(name, node_input)
        elif name not in given and name in ctx.state:
            given[name] = ctx.state[name]
    if not takes_all:
        given = {k: v for k, v in given.items() if k in parameters}
    return bool(await call_user_code(check, **given))


def _json_args(arguments: dict[str, Any]) -> dict[str, Any]:
    """The run's arguments as JSON (what the approval request shows)."""
    return {
        k: json.loads(
            json.dumps(v.model_dump(mode="json") if isinstance(v, BaseModel) else v, default=str)
        )
        for k, v in arguments.items()
    }


def _bind(node: FunctionNode, ctx: Context, node_input: Any) -> dict[str, Any]:
    """Parameters by name: ``node_input``, ``ctx`` (or a Context annotation), else state."""
    kwargs: dict[str, Any] = {}
    for name, source, has_default in node.parameters():
        if source == "node_input":
            kwargs[name] = node_input
        elif source == "node_input_text":
            text = isinstance(node_input, types.Content)
            kwargs[name] = _as_text(node_input) if text else node_input
        elif source == "ctx":
            kwargs[name] = ctx
        elif node.parameter_binding == "node_input":
            if isinstance(node_input, dict) and name in node_input:
                kwargs[name] = node_input[name]
            elif not has_default:
                raise KeyError(
                    f"node {node.name!r} reads {name!r} from its input "
                    "(parameter_binding='node_input'), which has no such key; give it a "
                    "default or send a dict input with that key"
                )
        elif name in ctx.state:
            kwargs[name] = ctx.state[name]
        elif not has_default:
            raise KeyError(
                f"node {node.name!r} needs {name!r}, which is neither node_input, ctx "
                "nor a key in the session state; give it a default or set that state key first"
            )
    return kwargs


async def _call_tool(node: ToolNode, ctx: Context, node_input: Any) -> AsyncIterator[Any]:
    args = _tool_args(node, ctx, node_input)
    yield await node.tool.run_async(args=args, tool_context=ctx)


def _tool_args(node: ToolNode, ctx: Context, node_input: Any) -> dict[str, Any]:
    """A tool node's arguments, read from its input as ADK reads them: a dict, a model, JSON
    text (or a Content holding it), nothing (no arguments). A required parameter of the
    tool's declaration that the input lacks is taken from the state key of that name."""
    value = node_input
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, types.Content):
        value = _as_text(value)
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else None
        except ValueError:
            value = node_input  # not JSON: refused below
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise TypeError(
            f"The input to ToolNode must be a dictionary (or JSON text of one): node "
            f"{node.name!r} got {type(node_input).__name__} {node_input!r}"
        )
    args = dict(value)
    for name in _required_parameters(node.tool):
        if name not in args and name in ctx.state:
            args[name] = ctx.state[name]
    return args


def _required_parameters(tool: BaseTool) -> list[str]:
    declaration = tool.declaration()
    if declaration is None:
        return []
    if declaration.parameters is not None:
        return list(declaration.parameters.required or [])
    schema = declaration.parameters_json_schema
    return list(schema.get("required") or []) if isinstance(schema, dict) else []


def _conform(node: BaseNode, what: str, schema: type[BaseModel], value: Any) -> Any:
    """``value`` parsed into ``schema`` (inputs) or checked and dumped to JSON (outputs)."""
    try:
        if isinstance(value, types.Content):  # a user message: its text is the JSON
            text = "".join(part.text or "" for part in value.parts or ())
            parsed = schema.model_validate_json(text)
        else:
            parsed = schema.model_validate(value)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in issue['loc']) or '(value)'}: {issue['msg']}"
            for issue in error.errors()
        )
        nested = isinstance(node, AgentNode) and isinstance(node.agent, Workflow)
        kind = "workflow" if nested else "node"
        raise ValueError(
            f"the {what} of {kind} {node.name!r} does not match {schema.__name__}: {problems}"
        ) from None
    return parsed if what.startswith("input") else parsed.model_dump(mode="json")


def _check_state_parameters(name: str, graph: Graph, schema: type[BaseModel]) -> None:
    """Each function node's parameters read from state must be fields of ``schema``."""
    for graph_node in graph.nodes.values():
        if not isinstance(graph_node, FunctionNode) or graph_node.parameter_binding != "state":
            continue
        for parameter, source, _ in graph_node.parameters():
            if source == "state" and parameter not in schema.model_fields:
                raise StateSchemaError(
                    f"node {graph_node.name!r} of workflow {name!r} reads state key "
                    f"{parameter!r}, which its state_schema {schema.__name__} does not "
                    f"declare (declared: {', '.join(sorted(schema.model_fields))}); add the "
                    "field or rename the parameter"
                )


def _check_state(
    node: BaseNode, delta: dict[str, Any], workflow_schema: type[BaseModel] | None
) -> None:
    """Unprefixed state keys a node writes must be fields of its ``state_schema`` (or, when
    it has none, of its workflow's)."""
    schema = node.state_schema or workflow_schema
    if schema is None:
        return
    for key, value in delta.items():
        if ":" in key:
            continue  # scoped keys (app:, user:, temp:) are not the node's own state
        field = schema.model_fields.get(key)
        if field is None:
            raise StateSchemaError(
                f"node {node.name!r} wrote state key {key!r}, which its state_schema "
                f"{schema.__name__} does not declare (declared: {', '.join(schema.model_fields)})"
            )
        try:
            TypeAdapter(field.annotation or Any).validate_python(value)
        except ValidationError as error:
            raise StateSchemaError(
                f"node {node.name!r} wrote {key!r} = {value!r}, which does not fit "
                f"{schema.__name__}.{key}: {error.errors()[0]['msg']}"
            ) from None
