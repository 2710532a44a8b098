"""Workflow: a graph of nodes run as one agent, resumable from its own events."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import inspect
import json
import random
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from google.genai import types
from pydantic import BaseModel, PrivateAttr, TypeAdapter, ValidationError

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.interrupts import earlier_call, schema_problem, unwrap_answer, waiting_under
from cairn.events.request_input import REQUEST_INPUT_FUNCTION, RequestInput
from cairn.tools.base_tool import BaseTool
from cairn.user_code import call_user_code, iterate_in_thread
from cairn.workflow.graph import Graph, as_node, build_graph
from cairn.workflow.join_node import JoinNode
from cairn.workflow.nodes import DEFAULT_ROUTE, START_NAME, BaseNode, FunctionNode, RetryConfig
from cairn.workflow.replay import Replay


class AgentNode(BaseNode):
    """An agent (or a nested workflow) as a node: its input arrives as a user turn on its own
    branch; its output is a nested workflow's output, or the agent's last answer."""

    agent: BaseAgent


class ParallelNode(BaseNode):
    """Runs ``node`` once per item of its (list) input, concurrently; outputs the results in
    input order. Each item is a run of its own (``name@1``, ``name@2``, ...), so on resume
    the finished ones are not run again."""

    node: Any


class ToolNode(BaseNode):
    """A tool as a node: a dict input is its arguments; its result is the output."""

    tool: BaseTool


def _convert(value: Any) -> BaseNode | None:
    if isinstance(value, BaseAgent):
        return AgentNode(name=value.name, description=value.description, agent=value)
    if isinstance(value, BaseTool):
        return ToolNode(name=value.name, description=value.description, tool=value)
    return None


@dataclasses.dataclass
class _Outcome:
    """How a node run ended: an output and route, or waiting for input, or failed."""

    output: Any = None
    route: Any = None
    waiting: bool = False
    failed: bool = False
    escalated: bool = False


class Workflow(BaseAgent):
    """Nodes connected by edges, run as one agent (so a Runner runs it, and workflows nest).

    A node's output is the input of the nodes after it; ``Event(route=...)``
    picks routed edges; ``Event(state=...)`` (or ``ctx.state``) changes state.
    Every node run is recorded in the log (``node_info.path`` = ``wf@1/node@run``),
    so a paused run resumes from that invocation's events: finished nodes are
    not run again.
    """

    edges: list[Any]
    max_concurrency: int | None = None

    _graph: Graph = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self._graph = build_graph(self.name, self.edges, convert=_convert)

    @property
    def graph(self) -> Graph:
        return self._graph

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """Schedule nodes as their inputs arrive; ready nodes run concurrently (at most
        ``max_concurrency`` at once). Each event a node yields is committed before that node
        goes on, exactly as for an agent."""
        my_path = ctx.node_path or f"{self.name}@1"
        replay = Replay.scan(ctx.session.events, ctx.invocation_id, my_path, self.name)
        graph = self._graph
        pending: collections.deque[tuple[str, Any, str | None]] = collections.deque()
        first_input = _user_input(ctx)
        for edge in graph.successors(START_NAME):
            pending.append((edge.to_node.name, first_input, START_NAME))
        runs: collections.Counter[str] = collections.Counter()
        joined: dict[str, dict[str, Any]] = {}
        terminal_outputs: list[tuple[int, int, Any]] = []  # (node order, run, output)
        order = {name: index for index, name in enumerate(graph.nodes)}
        waiting = stopped = False
        channel: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        running: dict[str, asyncio.Task[None]] = {}
        limit = self.max_concurrency or float("inf")

        async def run_one(name: str, node: BaseNode, path: str, node_input: Any, run: str) -> None:
            outcome = _Outcome()
            try:
                await _forward(
                    self._run_node(ctx, node, path, node_input, replay, run, outcome), channel
                )
            finally:
                await channel.put(("done", run, name, outcome))

        try:
            while (pending or running) and not stopped:
                while pending and len(running) < limit:
                    name, node_input, sender = pending.popleft()
                    node = graph.nodes[name]
                    if isinstance(node, JoinNode):
                        arrived = joined.setdefault(name, {})
                        arrived[sender or START_NAME] = node_input
                        if set(graph.predecessors(name)) - set(arrived):
                            continue
                        node_input = joined.pop(name)
                    runs[name] += 1
                    run = f"{name}@{runs[name]}"
                    running[run] = asyncio.create_task(
                        run_one(name, node, f"{my_path}/{run}", node_input, run)
                    )
                if not running:
                    break
                message = await channel.get()
                if message[0] == "event":
                    _, event, committed = message
                    yield event
                    committed.set_result(None)
                    continue
                _, run, name, outcome = message
                await running.pop(run)  # re-raises what the node's task could not handle
                if outcome.failed:
                    return
                if outcome.escalated:  # a node asked to stop this workflow (e.g. a loop's exit)
                    terminal_outputs, stopped = [(0, 0, outcome.output)], True
                    continue
                if outcome.waiting:
                    waiting = True
                    continue
                successors = self._fired(name, outcome.route)
                if not successors:
                    terminal_outputs.append((order[name], runs[name], outcome.output))
                for target in successors:
                    pending.append((target, outcome.output, name))
        finally:
            for task in running.values():
                task.cancel()
            for task in running.values():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if waiting and not stopped:
            return
        # Several terminal nodes: all their outputs, in the order the graph lists the nodes
        # (not the order they happened to finish in, which a resume may change).
        outputs = [output for _, _, output in sorted(terminal_outputs, key=lambda t: t[:2])]
        output = outputs[0] if len(outputs) == 1 else outputs or None
        yield Event(
            author=self.name,
            node_path=my_path,
            output=output,
            actions=EventActions(end_of_agent=True),
        )

    def _fired(self, name: str, route: Any) -> list[str]:
        """Targets of the edges from ``name`` that fire for the emitted ``route``."""
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
        node: BaseNode,
        path: str,
        node_input: Any,
        replay: Replay,
        run_name: str,
        outcome: _Outcome,
    ) -> AsyncGenerator[Event, None]:
        record = replay.runs.get(run_name)
        if record is not None and record.completed:  # done before: never run again
            outcome.output, outcome.route = record.output, record.route
            outcome.escalated = record.escalated
            return
        resume_inputs: dict[str, Any] = {}
        if record is not None and record.interrupts:
            answered = {i: replay.answers[i] for i in record.interrupts if i in replay.answers}
            if len(answered) < len(record.interrupts):
                outcome.waiting = True
                return
            for interrupt_id, given in answered.items():
                problem = schema_problem(replay.schemas.get(interrupt_id), unwrap_answer(given))
                if problem is not None:
                    outcome.waiting = True
                    yield Event(
                        author=self.name,
                        node_path=path,
                        error_code="INVALID_INPUT",
                        error_message=f"the answer to input request {interrupt_id!r} of node "
                        f"{node.name!r} does not match its response_schema: {problem}. The node "
                        "is still waiting; answer again.",
                    )
                    return
            if not node.rerun_on_resume:
                outcome.output = unwrap_answer(answered[record.interrupts[-1]])
                yield self._completion(path, outcome.output, None, EventActions())
                return
            resume_inputs = {i: unwrap_answer(a) for i, a in answered.items()}
        attempt = (record.failures if record else 0) + 1
        retry = node.retry_config
        while True:
            node_ctx = Context(
                dataclasses.replace(ctx, node_path=path),
                node_path=path,
                attempt_count=attempt,
                resume_inputs=resume_inputs,
            )
            try:
                async with contextlib.aclosing(
                    self._node_events(
                        ctx, node, node_ctx, path, node_input, outcome, record is not None
                    )
                ) as events:
                    async with asyncio.timeout(node.timeout):
                        async for event in events:
                            yield event
            except Exception as error:
                node_ctx.state.discard()  # this attempt's uncommitted writes never happened
                reason = "timed out" if isinstance(error, TimeoutError) else "failed"
                yield Event(
                    author=self.name,
                    node_path=path,
                    error_code=type(error).__name__,
                    error_message=f"node {node.name!r} of workflow {self.name!r} {reason} "
                    f"(attempt {attempt}): {error}",
                )
                if retry is not None and attempt < retry.max_attempts and _retries(retry, error):
                    await asyncio.sleep(_delay(retry, attempt))
                    attempt += 1
                    outcome.output = outcome.route = None
                    continue
                outcome.failed = True
                yield Event(
                    author=self.name,
                    node_path=path.rsplit("/", 1)[0],
                    error_code="NODE_FAILED",
                    error_message=f"workflow {self.name!r} stopped: node {node.name!r} "
                    f"failed after {attempt} attempt(s): {error}",
                )
                return
            if outcome.waiting:
                return
            actions = node_ctx.actions
            if actions.escalate:
                outcome.escalated = True
            yield self._completion(path, outcome.output, outcome.route, actions)
            return

    def _completion(self, path: str, output: Any, route: Any, actions: EventActions) -> Event:
        """The event that records a node run as finished, with its output and route."""
        actions.end_of_agent = True
        actions.route = route
        return Event(author=self.name, node_path=path, output=output, actions=actions)

    async def _node_events(
        self,
        ctx: InvocationContext,
        node: BaseNode,
        node_ctx: Context,
        path: str,
        node_input: Any,
        outcome: _Outcome,
        resuming: bool = False,
    ) -> AsyncGenerator[Event, None]:
        """Run one node; set ``outcome``; yield the events it produced (path and author set).

        The node's schemas are enforced here: the input is parsed into ``input_schema``, the
        output must match ``output_schema`` (and is stored as JSON), state writes must fit
        ``state_schema``. A mismatch fails the node like any other error.
        """
        if node.input_schema is not None and not isinstance(node_input, node.input_schema):
            node_input = _conform(node, "input", node.input_schema, node_input)
        if isinstance(node, FunctionNode):
            items = _call_function(node, node_ctx, node_input)
        elif isinstance(node, AgentNode):
            items = self._run_agent(ctx, node, path, node_input, outcome, resuming)
        elif isinstance(node, ToolNode):
            items = _call_tool(node, node_ctx, node_input)
        elif isinstance(node, JoinNode):
            items = _single(node_input)
        elif isinstance(node, ParallelNode):
            items = self._run_parallel(ctx, node, path, node_input)
        else:
            raise TypeError(f"node {node.name!r} of type {type(node).__name__} cannot run")
        async for item in items:
            if isinstance(item, RequestInput):
                _check_new_interrupt_id(ctx, node, item)
                outcome.waiting = True
                yield _input_request(self.name, path, item, node_ctx)
            elif isinstance(item, Event):
                _check_state(node, item.actions.state_delta)
                if not item.node_info.path:
                    item.node_info = item.node_info.model_copy(update={"path": path})
                if not item.author:
                    item.author = self.name
                if item.output is not None:
                    outcome.output = item.output
                if item.actions.route is not None:
                    outcome.route = item.actions.route
                if item.actions.escalate:
                    outcome.escalated = True
                yield item
            elif isinstance(item, _AgentResult):
                outcome.output = item.output
            elif isinstance(item, _Waiting):
                outcome.waiting = True
            else:
                outcome.output = item
        if outcome.waiting:
            return
        _check_state(node, node_ctx.actions.state_delta)
        if node.output_schema is not None:
            outcome.output = _conform(node, "output", node.output_schema, outcome.output)
        if isinstance(outcome.output, BaseModel):  # stored as JSON, so replay sees the same
            outcome.output = outcome.output.model_dump(mode="json")

    async def _run_parallel(
        self, ctx: InvocationContext, node: ParallelNode, path: str, node_input: Any
    ) -> AsyncIterator[Any]:
        if not isinstance(node_input, list):
            raise TypeError(
                f"parallel node {node.name!r} needs a list input (one run per item); got "
                f"{type(node_input).__name__}"
            )
        child = as_node(node.node, _convert)
        replay = Replay.scan(ctx.session.events, ctx.invocation_id, path, self.name)
        outcomes = [_Outcome() for _ in node_input]
        channel: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

        async def one(index: int, item: Any) -> None:
            run = f"{child.name}@{index + 1}"
            try:
                await _forward(
                    self._run_node(ctx, child, f"{path}/{run}", item, replay, run, outcomes[index]),
                    channel,
                )
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
        failed = [i + 1 for i, o in enumerate(outcomes) if o.failed]
        if failed:
            raise RuntimeError(f"item(s) {failed} of parallel node {node.name!r} failed")
        if any(o.waiting for o in outcomes):
            yield _Waiting()
            return
        yield [o.output for o in outcomes]

    async def _run_agent(
        self,
        ctx: InvocationContext,
        node: AgentNode,
        path: str,
        node_input: Any,
        outcome: _Outcome,
        resuming: bool,
    ) -> AsyncIterator[Any]:
        """Run an agent as a node; on resume it goes on from its own events (its input is
        already in the log, and it finishes the turn it paused in)."""
        agent = node.agent
        child = dataclasses.replace(ctx, node_path=path, branch=path.replace("/", "."))
        if not isinstance(agent, Workflow) and not resuming:
            text = node_input if isinstance(node_input, str) else json.dumps(node_input)
            yield Event(
                author=self.name,
                node_path=path,
                branch=child.branch,
                content=types.Content(role="user", parts=[types.Part(text=text)]),
            )
        result: Any = None
        async with contextlib.aclosing(agent.run_async(child)) as events:
            async for event in events:
                if isinstance(agent, Workflow) and event.node_info.path == path:
                    if event.actions.end_of_agent:
                        result = event.output
                        continue  # this node's own completion event is written by us
                elif event.is_final_response() and event.content and event.content.parts:
                    result = "".join(p.text or "" for p in event.content.parts if not p.thought)
                if event.long_running_tool_ids:
                    outcome.waiting = True
                yield event
        if not outcome.waiting and waiting_under(
            ctx.session.events, ctx.invocation_id, child.branch
        ):
            outcome.waiting = True  # resumed with some answers, still waiting for others
        if not outcome.waiting:
            yield _AgentResult(result)


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


class _Waiting:
    """Some part of a composite node waits for input."""


async def _single(value: Any) -> AsyncIterator[Any]:
    yield value


def _user_input(ctx: InvocationContext) -> Any:
    content = ctx.user_content
    if content is None or not content.parts:
        return None
    texts = [p.text for p in content.parts if p.text]
    return "".join(texts) if texts else content


def _route_key(route: Any) -> tuple[str, Any]:
    # True == 1 in Python; a bool route must not match an int edge (or the reverse).
    return (type(route).__name__, route)


def _retries(config: RetryConfig, error: BaseException) -> bool:
    return config.exceptions is None or isinstance(error, tuple(config.exceptions))


def _delay(config: RetryConfig, attempt: int) -> float:
    delay = min(config.initial_delay * config.backoff_factor ** (attempt - 1), config.max_delay)
    return float(delay + random.uniform(0, config.jitter))


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


def _input_request(author: str, path: str, request: RequestInput, ctx: Context) -> Event:
    args = {
        "interruptId": request.interrupt_id,
        "message": request.message,
        "payload": request.payload,
        "responseSchema": request.response_schema,
    }
    call = types.FunctionCall(
        id=request.interrupt_id,
        name=REQUEST_INPUT_FUNCTION,
        args={k: v for k, v in args.items() if v is not None},
    )
    return Event(
        author=author,
        node_path=path,
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        long_running_tool_ids={request.interrupt_id},
        actions=ctx.actions,
    )


async def _call_function(node: FunctionNode, ctx: Context, node_input: Any) -> AsyncIterator[Any]:
    kwargs = _bind(node, ctx, node_input)
    result = await call_user_code(node.func, **kwargs)
    if inspect.isasyncgen(result):
        async for item in result:
            yield item
    elif inspect.isgenerator(result):
        async for item in iterate_in_thread(result):
            yield item
    elif result is not None:
        yield result


def _bind(node: FunctionNode, ctx: Context, node_input: Any) -> dict[str, Any]:
    """Parameters by name: ``node_input``, ``ctx`` (or a Context annotation), else state."""
    kwargs: dict[str, Any] = {}
    for name, source, has_default in node.parameters():
        if source == "node_input":
            kwargs[name] = node_input
        elif source == "ctx":
            kwargs[name] = ctx
        elif name in ctx.state:
            kwargs[name] = ctx.state[name]
        elif not has_default:
            raise KeyError(
                f"node {node.name!r} needs {name!r}, which is neither node_input, ctx "
                "nor a key in the session state; give it a default or set that state key first"
            )
    return kwargs


async def _call_tool(node: ToolNode, ctx: Context, node_input: Any) -> AsyncIterator[Any]:
    args = node_input if isinstance(node_input, dict) else {"input": node_input}
    yield await node.tool.run_async(args=args, tool_context=ctx)


def _conform(node: BaseNode, what: str, schema: type[BaseModel], value: Any) -> Any:
    """``value`` parsed into ``schema`` (inputs) or checked and dumped to JSON (outputs)."""
    try:
        parsed = schema.model_validate(value)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in issue['loc']) or '(value)'}: {issue['msg']}"
            for issue in error.errors()
        )
        raise ValueError(
            f"the {what} of node {node.name!r} does not match {schema.__name__}: {problems}"
        ) from None
    return parsed if what == "input" else parsed.model_dump(mode="json")


def _check_state(node: BaseNode, delta: dict[str, Any]) -> None:
    """Unprefixed state keys a node writes must be fields of its ``state_schema``."""
    schema = node.state_schema
    if schema is None:
        return
    for key, value in delta.items():
        if ":" in key:
            continue  # scoped keys (app:, user:, temp:) are not the node's own state
        field = schema.model_fields.get(key)
        if field is None:
            raise ValueError(
                f"node {node.name!r} wrote state key {key!r}, which its state_schema "
                f"{schema.__name__} does not declare (declared: {', '.join(schema.model_fields)})"
            )
        try:
            TypeAdapter(field.annotation or Any).validate_python(value)
        except ValidationError as error:
            raise ValueError(
                f"node {node.name!r} wrote {key!r} = {value!r}, which does not fit "
                f"{schema.__name__}.{key}: {error.errors()[0]['msg']}"
            ) from None
