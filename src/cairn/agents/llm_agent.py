"""LlmAgent (alias Agent): a model that talks, calls tools and hands over to other agents."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import uuid
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, ClassVar, Literal

from google.genai import types
from pydantic import BaseModel, Field, PrivateAttr, ValidationError

import cairn.telemetry as telemetry
from cairn.agents import code_execution, planning
from cairn.agents.base_agent import BaseAgent
from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.branches import call_branch, parent_branch
from cairn.agents.built_in_tools import offered_tool, offered_transfer_targets
from cairn.agents.callback_chain import plugins_then_callbacks
from cairn.agents.callback_hook import CallbackHook
from cairn.agents.callbacks import (
    AfterModelCallback,
    AfterToolCallback,
    BeforeModelCallback,
    BeforeToolCallback,
    OnModelErrorCallback,
    OnToolErrorCallback,
)
from cairn.agents.contents import ContentsCache, build_contents, current_turn_start
from cairn.agents.context import Context
from cairn.agents.context_caching import apply_context_cache
from cairn.agents.grounding import grounding_to_propagate
from cairn.agents.instructions import inject_session_state
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.llm_agent_config import LlmAgentConfig
from cairn.agents.readonly_context import ReadonlyContext
from cairn.agents.run_config import RunConfig, StreamingMode
from cairn.agents.sub_agent_runs import marker, waiting_since
from cairn.agents.tool_calls import resume_point, run_calls, settle
from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.code_executors.built_in_code_executor import BuiltInCodeExecutor
from cairn.errors import LiveStreamingNotSupportedError
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.llm_response_fields import LlmResponseFields
from cairn.models.base_llm import BaseLlm
from cairn.models.errors import ModelCallError
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.registry import LLMRegistry
from cairn.planners.base_planner import BasePlanner
from cairn.planners.built_in_planner import BuiltInPlanner
from cairn.tools.base_tool import BaseTool, BaseToolset
from cairn.tools.function_tool import FunctionTool
from cairn.tools.set_model_response_tool import SetModelResponseTool
from cairn.tools.tool_provider import ToolProvider
from cairn.tools.transfer_to_agent_tool import TransferToAgentTool
from cairn.user_code import call_user_code

logger = logging.getLogger(__name__)

Mode = Literal["chat", "task", "single_turn"]
InstructionProvider = Callable[[ReadonlyContext], "str | Awaitable[str]"]
ToolUnion = Callable[..., Any] | BaseTool | BaseToolset
StaticInstruction = str | types.Content | types.Part | list[str | types.Part]
"""What ``static_instruction`` takes (ADK's ``types.ContentUnion`` without images/files)."""

TRANSFER_TOOL = "transfer_to_agent"


_BLANK_CONFIG = types.GenerateContentConfig()
"""Copied (never changed) for an agent without a config of its own: every field is None, so
a shallow copy is a new ``GenerateContentConfig()``, made without genai's validators."""


def _apply_run_config(config: types.GenerateContentConfig, run_config: RunConfig) -> None:
    """Add the invocation's ``labels`` and ``http_options`` to a request's config (the
    agent's own headers and labels stay unless the run names the same ones)."""
    if run_config.labels:
        config.labels = {**(config.labels or {}), **run_config.labels}
    options = run_config.http_options
    if options is None:
        return
    if config.http_options is None:
        config.http_options = options.model_copy(deep=True)
        return
    merged = config.http_options
    for field in type(options).model_fields:
        value = getattr(options, field)
        if value is None:
            continue
        if field == "headers":
            merged.headers = {**(merged.headers or {}), **value}
        else:
            setattr(merged, field, value)


def static_instruction_text(value: StaticInstruction | None) -> str:
    """The text of a ``static_instruction``: a str, or the text parts of a Content, a Part
    or a list of them, joined by newlines."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, types.Content):
        parts: list[Any] = list(value.parts or [])
    elif isinstance(value, list):
        parts = value
    else:
        parts = [value]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, types.Part) and part.text:
            texts.append(part.text)
    return "\n".join(texts)


class LlmAgent(BaseAgent):
    """An agent driven by a model.

    Each step builds an ``LlmRequest`` from the session history as this agent
    sees it, calls the model, commits its reply, runs the function calls it
    asked for (concurrently) and commits their results, until the model gives
    a final answer, hands over with ``transfer_to_agent``, or waits on a
    long-running tool.
    """

    DEFAULT_MODEL: ClassVar[str] = "gemini-3.5-flash"
    """The model an agent calls when neither it nor an ancestor names one (ADK's default)."""
    DEFAULT_LIVE_MODEL: ClassVar[str] = "gemini-live-2.5-flash-native-audio"
    """ADK's default model for live (bidirectional streaming) runs."""
    _default_model: ClassVar[str | BaseLlm] = DEFAULT_MODEL
    config_type: ClassVar[type[BaseAgentConfig]] = LlmAgentConfig

    model: str | BaseLlm = ""
    """A model string (``gemini-2.5-flash``, ``openai/gpt-4o-mini``, ``anthropic/...``) or a
    ``BaseLlm``; empty inherits the nearest ancestor's, else the default model
    (``DEFAULT_MODEL`` unless changed with ``set_default_model``)."""
    instruction: str | InstructionProvider = ""
    global_instruction: str | InstructionProvider = ""
    static_instruction: StaticInstruction | None = None
    """Instruction text sent as is, before the others, never with state filled in: a str,
    a ``types.Content``, a ``types.Part`` or a list of them (their text parts are used)."""
    tools: list[Any] = Field(default_factory=list)
    generate_content_config: types.GenerateContentConfig | None = None
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    include_contents: Literal["default", "none"] = "default"
    input_schema: type[BaseModel] | None = None
    output_schema: type[BaseModel] | None = None
    output_key: str | None = None
    mode: Mode | None = None
    planner: BasePlanner | None = None
    """How the model plans before it acts: ``BuiltInPlanner(thinking_config=...)`` (the
    model's own thinking) or ``PlanReActPlanner()`` (tagged plan, actions, reasoning and
    answer, for any model); see ``cairn.planners``."""
    code_executor: BaseCodeExecutor | None = None
    """What runs the code blocks the model writes (``UnsafeLocalCodeExecutor``,
    ``ContainerCodeExecutor``), or ``BuiltInCodeExecutor`` for Gemini's own code
    execution; see ``cairn.code_executors``."""
    before_model_callback: BeforeModelCallback | None = None
    after_model_callback: AfterModelCallback | None = None
    on_model_error_callback: OnModelErrorCallback | None = None
    before_tool_callback: BeforeToolCallback | None = None
    after_tool_callback: AfterToolCallback | None = None
    on_tool_error_callback: OnToolErrorCallback | None = None

    _wrapped: dict[int, FunctionTool] = PrivateAttr(default_factory=dict)
    _provided: dict[int, tuple[ToolProvider, BaseTool]] = PrivateAttr(default_factory=dict)
    _contents: ContentsCache = PrivateAttr(default_factory=ContentsCache)

    # -- configuration ----------------------------------------------------------------------
    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        config = self.generate_content_config
        if (
            config is not None
            and config.thinking_config is not None
            and isinstance(self.planner, BuiltInPlanner)
            and self.planner.thinking_config is not None
        ):
            warnings.warn(
                f"agent {self.name!r} has a thinking_config in generate_content_config and a "
                "BuiltInPlanner with one: the planner's is sent",
                UserWarning,
                stacklevel=3,
            )

    def _function_tool(self, func: Callable[..., Any]) -> FunctionTool:
        """The FunctionTool for a plain function, built once (reading a signature is not free)."""
        tool = self._wrapped.get(id(func))
        if tool is None or tool.func is not func:
            tool = self._wrapped[id(func)] = FunctionTool(func)
        return tool

    def _provided_tool(self, provider: ToolProvider) -> BaseTool:
        """The tool a workflow or a node makes of itself, made once."""
        known = self._provided.get(id(provider))
        if known is None or known[0] is not provider:
            known = self._provided[id(provider)] = (provider, provider.as_tool())
        return known[1]

    @classmethod
    def set_default_model(cls, model: str | BaseLlm) -> None:
        """Use ``model`` for every agent (of this class) that has no model of its own and no
        ancestor with one."""
        if not isinstance(model, str | BaseLlm):
            raise TypeError(
                "set_default_model() takes a model string such as 'gemini-2.5-flash' or a "
                f"BaseLlm instance; got {type(model).__name__}"
            )
        if isinstance(model, str) and not model:
            raise ValueError("set_default_model() needs a model name, e.g. 'gemini-2.5-flash'")
        cls._default_model = model

    @property
    def canonical_model(self) -> BaseLlm:
        """The model instance this agent calls: its own, the nearest ancestor's, or the
        default model."""
        agent: BaseAgent | None = self
        while agent is not None:
            model = getattr(agent, "model", "")
            if isinstance(model, BaseLlm):
                return model
            if model:
                return LLMRegistry.new_llm(model)
            agent = agent.parent_agent
        default = self._default_model
        return default if isinstance(default, BaseLlm) else LLMRegistry.new_llm(default)

    def transfer_targets(self) -> list[BaseAgent]:
        """Chat agents this one may hand the conversation to (a task or single_turn agent
        hands back its result instead, and is called by its parent like a tool)."""
        if self.mode in _DELEGATED:
            return []
        targets: list[BaseAgent] = [a for a in self.sub_agents if not _is_delegated(a)]
        parent = self.parent_agent
        if not isinstance(parent, LlmAgent):
            # Under a sequential, parallel or loop agent (or at the root) there is no parent
            # to hand back to and no peer to hand over to: the shell agent decides who runs.
            return targets
        if not self.disallow_transfer_to_parent:
            targets.append(parent)
        if not self.disallow_transfer_to_peers:
            targets.extend(
                peer for peer in parent.sub_agents if peer is not self and not _is_delegated(peer)
            )
        return targets

    def _offered_transfer_targets(self) -> list[BaseAgent]:
        """The transfer targets its model is offered (none when its built-in search tools
        cannot go with the transfer function; see ``cairn.agents.built_in_tools``)."""
        return offered_transfer_targets(self, self.transfer_targets())

    def _delegates(self) -> dict[str, LlmAgent]:
        """Sub-agents in task or single_turn mode, offered to the model as tools."""
        return {a.name: a for a in self.sub_agents if isinstance(a, LlmAgent) and _is_delegated(a)}

    async def _resolved_tools(self, ctx: Context) -> list[BaseTool]:
        tools: list[BaseTool] = []
        if self.output_schema is not None and self.tools and self.mode != "task":
            # A response schema cannot hold a model that may call tools: it answers
            # through this tool instead (offered first, as ADK offers it).
            tools.append(SetModelResponseTool(self.output_schema))
        crowded = len(self.tools) > 1 or bool(self.transfer_targets())
        for entry in self.tools:
            if isinstance(entry, BaseTool):
                tools.append(offered_tool(entry, agent=self, crowded=crowded))
            elif isinstance(entry, BaseToolset):
                try:
                    listed = await entry.get_tools_with_prefix(ctx)
                except Exception as error:
                    fallback = await entry.fallback_tools(error, ctx)
                    if fallback:  # the toolset's own answer to the failure
                        tools.extend(fallback)
                        continue
                    # As in ADK, the agent runs on without them; its model is told why.
                    logger.exception(
                        "agent %r runs without the tools of %s, which failed to load",
                        self.name,
                        type(entry).__name__,
                    )
                    tools.append(_UnavailableTools(entry, error))
                    continue
                tools.extend(listed)
            elif isinstance(entry, ToolProvider):  # a workflow or a workflow node
                tools.append(self._provided_tool(entry))
            elif callable(entry):
                tools.append(self._function_tool(entry))
            else:
                raise TypeError(
                    f"agent {self.name!r} has a tool of type {type(entry).__name__}; tools are "
                    "functions, BaseTool or BaseToolset instances, workflows or workflow nodes"
                )
        targets = self._offered_transfer_targets()
        if targets and not any(tool.name == TRANSFER_TOOL for tool in tools):
            # A tool of the user's own by that name is the one the model calls, as in ADK.
            tools.append(TransferToAgentTool([target.name for target in targets]))
        tools.extend(_DelegateTool(agent) for agent in self._delegates().values())
        if self.mode == "task":
            tools.append(self._function_tool(finish_task))
        return tools

    async def _instruction_text(self, value: Any, ctx: ReadonlyContext) -> str:
        if callable(value):
            return str(await call_user_code(value, ctx))
        if not value:
            return ""
        return await inject_session_state(str(value), ctx, agent_name=self.name)

    async def _build_request(self, ctx: InvocationContext, tools: list[BaseTool]) -> LlmRequest:
        readonly = ReadonlyContext(ctx)
        model = self.canonical_model
        config = (
            self.generate_content_config.model_copy(deep=True)
            if self.generate_content_config
            else _BLANK_CONFIG.model_copy()
        )
        _apply_run_config(config, ctx.run_config)
        request = LlmRequest(model=model.model, config=config)
        root = self.root_agent
        instructions = []
        static = static_instruction_text(self.static_instruction)
        if static:
            instructions.append(static)
        if isinstance(root, LlmAgent) and root.global_instruction:
            instructions.append(await root._instruction_text(root.global_instruction, readonly))
        instructions.append(await self._instruction_text(self.instruction, readonly))
        targets = self._offered_transfer_targets()
        if targets:
            listing = "\n".join(
                f"- {t.name}: {t.description or '(no description)'}" for t in targets
            )
            instructions.append(
                f"You are agent {self.name!r}. If another agent is better suited to answer, "
                f"call transfer_to_agent with its name. Agents you can transfer to:\n{listing}"
            )
        request.append_instructions(instructions)
        if self.output_schema is not None and not tools:
            request.config.response_mime_type = "application/json"
            request.config.response_json_schema = self.output_schema.model_json_schema()
        session = ctx.session
        if self.include_contents == "none":
            # As in ADK: only the current turn, from the newest message of the user or reply
            # of another agent (a later agent of a sequence sees what the one before said).
            turn = session.events[current_turn_start(session.events, self.name, ctx.branch) :]
            request.contents = build_contents(
                turn,
                agent_name=self.name,
                branch=ctx.branch,
                invocation_id=ctx.invocation_id,
                isolated=ctx.isolated,
            )
        else:
            request.contents = self._contents.contents(
                (session.app_name, session.user_id, session.id),
                session.events,
                agent_name=self.name,
                branch=ctx.branch,
                # A single_turn agent sees only its invocation (in which it got its request).
                invocation_id=ctx.invocation_id
                if self.mode == "single_turn" or ctx.isolated
                else None,
                isolated=ctx.isolated,
            )
        extra = ctx.run_config.model_input_context
        if extra:  # transient: before the invocation's request, never stored
            contents = list(request.contents)
            at = next(
                (i for i in range(len(contents) - 1, -1, -1) if contents[i] == ctx.user_content),
                0,
            )
            contents[at:at] = [content.model_copy(deep=True) for content in extra]
            request.contents = contents
        # As ADK: the planner and the code executor after the contents, before the tools.
        if self.planner is not None:
            await planning.prepare_request(self.planner, ctx, request)
        if self.code_executor is not None:
            code_execution.prepare_request(self.code_executor, request)
        # Tools see the finished contents (and may add to them, as ADK's do).
        tool_context = Context(ctx)
        for entry in self.tools:  # as ADK: each toolset before the tools
            if isinstance(entry, BaseToolset):
                await entry.process_llm_request(tool_context=tool_context, llm_request=request)
        for tool in tools:
            await tool.process_llm_request(tool_context=tool_context, llm_request=request)
        apply_context_cache(request, ctx, agent_name=self.name)
        return request

    # -- the loop -----------------------------------------------------------------------------
    async def _run_live_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """An LlmAgent cannot run live: cairn has no Gemini Live (bidirectional) mode."""
        raise LiveStreamingNotSupportedError(what=f"agent {self.name!r} was asked to run live")
        yield  # pragma: no cover - makes this an async generator

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        # A resumed invocation: go on from where this agent's events say it stopped.
        point = resume_point(ctx, self.name, set(self._delegates()))
        if point.finished:
            return  # it answered already in this invocation: nothing runs twice
        if point.code_run is not None:
            open_run = point.code_run
            settled_run = await code_execution.settle_code_run(
                self, ctx, open_run.code, open_run.interrupt, open_run.answers
            )
            for event in settled_run.events:
                yield event
            if settled_run.pending:
                return  # waiting for the caller's decision
        if point.turn is not None:
            tools = await self._resolved_tools(Context(ctx))
            in_invocation = _agent_tools(tools)
            others = [c for c in point.turn.calls if c.name not in in_invocation]
            resumed = _Turn()
            if others:
                settled = await settle(
                    self, ctx, dataclasses.replace(point.turn, calls=others), tools
                )
                for event in settled.events:
                    yield event
                resumed.pending = bool(settled.pending)
            async with contextlib.aclosing(
                self._run_agent_tools(ctx, point.turn.calls, in_invocation, resumed)
            ) as agent_events:
                async for event in agent_events:
                    yield event
            if resumed.pending:
                return  # still waiting for other answers
        while True:
            final: Event | None = None
            turn = _Turn()
            async with contextlib.aclosing(self._step(ctx, turn)) as step:
                async for event in step:
                    yield event
                    final = event
            if final is None or ctx.end_invocation or turn.pending:
                return
            actions = final.actions
            if actions.transfer_to_agent:
                target = self.root_agent.find_agent(actions.transfer_to_agent)
                if target is None:
                    return
                if target is self or self.find_sub_agent(target.name) is None:
                    # Its parent or a peer: the agents running return and the Runner runs
                    # it, so an agent that is running is never run again inside itself.
                    if ctx.is_resumable:
                        yield marker(ctx, self, end=True)  # its part is done
                    ctx.flags.transfer_to = target.name
                    return
                begun = len(ctx.session.events)
                async with contextlib.aclosing(target.run_async(ctx)) as handed_over:
                    async for event in handed_over:
                        yield event
                # As in ADK, an agent that handed over to its sub-agent is done when that
                # sub-agent is: not while it waits for an answer.
                paused = waiting_since(ctx.session.events, begun, ctx.invocation_id, ctx.branch)
                if ctx.is_resumable and not paused and not ctx.end_invocation:
                    yield marker(ctx, self, end=True)
                return
            done = final.is_final_response() and not final.partial
            if ctx.is_resumable and (done or (actions.end_of_agent and self.mode == "task")):
                yield marker(ctx, self, end=True)  # ADK's end-of-agent marker
            if actions.end_of_agent and self.mode == "task":
                if ctx.delegation is None:  # resumed on a later turn: report to the parent
                    async with contextlib.aclosing(self._report_to_parent(ctx, final)) as rest:
                        async for event in rest:
                            yield event
                return
            if final.is_final_response() or final.partial:
                return

    async def _step(self, ctx: InvocationContext, turn: _Turn) -> AsyncGenerator[Event, None]:
        """One model call and, if it asked for any, the function calls it made.

        ``turn.pending`` is set if some call has no result yet (the invocation pauses).
        """
        limit = ctx.run_config.max_llm_calls
        if 0 < limit <= ctx.flags.llm_calls:
            yield Event(
                author=self.name,
                error_code="MAX_LLM_CALLS_EXCEEDED",
                error_message=(
                    f"agent {self.name!r} stopped: the invocation reached "
                    f"RunConfig.max_llm_calls={limit} model calls. Raise the limit, or check why "
                    "the model keeps calling tools without answering."
                ),
            )
            return
        tool_context = Context(ctx)
        tools = await self._resolved_tools(tool_context)
        request = await self._build_request(ctx, tools)
        callback_context = Context(ctx)
        response = await plugins_then_callbacks(
            ctx,
            CallbackHook.BEFORE_MODEL,
            self.before_model_callback,
            callback_context=callback_context,
            llm_request=request,
        )
        # As in ADK, a tool a callback added to the request (its tools_dict) can be called.
        known = {tool.name for tool in tools}
        tools = tools + [
            tool
            for name, tool in request.tools_dict.items()
            if name not in known and isinstance(tool, BaseTool)
        ]
        responses: list[LlmResponse] = []
        reply_id = ""
        if response is not None:
            responses = [response]
        else:
            ctx.flags.llm_calls += 1
            stream = ctx.run_config.streaming_mode == StreamingMode.SSE
            try:
                model = self.canonical_model
                model_name = request.model or model.model
                with telemetry.model_span(ctx, model_name) as span:
                    telemetry.record_request(span, request.config, request.contents)
                    chunks = model.generate_content_async(request, stream)
                    planned = (
                        planning.PlannedStream(self.planner, ctx)
                        if self.planner is not None
                        else None
                    )
                    async with telemetry.in_span(span, chunks) as steps:
                        async for chunk in steps:
                            if chunk.partial:
                                if planned is not None:
                                    chunk = await planned.chunk(chunk)
                                yield self._event_from(ctx, chunk, EventActions())
                            else:
                                responses.append(chunk)
                    if responses:
                        reply_id = Event.new_id()
                        telemetry.record_response(
                            span, responses[-1], model=model_name, event_id=reply_id
                        )
            except Exception as error:
                handled = await plugins_then_callbacks(
                    ctx,
                    CallbackHook.ON_MODEL_ERROR,
                    self.on_model_error_callback,
                    callback_context=callback_context,
                    llm_request=request,
                    error=error,
                )
                if handled is None:
                    if isinstance(error, ModelCallError):
                        # Expected (a refusal, an outage): the error event says it; no traceback.
                        logger.info("model call of agent %r failed: %s", self.name, error)
                    else:
                        logger.exception("model call of agent %r failed", self.name)
                    yield Event(
                        author=self.name,
                        error_code=type(error).__name__,
                        error_message=f"the model call of agent {self.name!r} failed: {error}",
                        actions=callback_context.actions,
                    )
                    return
                responses = [handled]
        # As ADK: a reply a before_model_callback gave is final; after_model_callback edits
        # only what the model (or an on_model_error_callback) answered.
        from_callback = response is not None
        for model_response in responses:
            replaced = (
                None
                if from_callback
                else await plugins_then_callbacks(
                    ctx,
                    CallbackHook.AFTER_MODEL,
                    self.after_model_callback,
                    callback_context=callback_context,
                    llm_response=model_response,
                )
            )
            reply = replaced or model_response
            if self.planner is not None:
                reply = await planning.process_reply(self.planner, callback_context, reply)
            if isinstance(self.code_executor, BuiltInCodeExecutor):
                await code_execution.save_model_images(ctx, reply, callback_context)
            code = code_execution.code_to_run(self, ctx, reply)
            if code is not None:
                # The code and its result are this reply's events; the model goes on next.
                async with contextlib.aclosing(
                    code_execution.run_code(self, ctx, code, callback_context.actions)
                ) as ran_code:
                    async for code_event in ran_code:
                        yield code_event
                callback_context = Context(ctx)
                continue
            grounding = grounding_to_propagate(ctx.session.state, tools)
            if grounding is not None:  # a search an agent tool did grounds this reply
                reply = reply.model_copy(update={"grounding_metadata": grounding})
            event = self._event_from(ctx, reply, callback_context.actions)
            if reply_id and model_response is responses[-1]:
                event.id = reply_id  # the id its chat span names (GET /debug/trace/{event_id})
            callback_context = Context(ctx)
            calls = event.get_function_calls()
            for call in calls:
                call.id = call.id or f"cairn-{uuid.uuid4()}"
            long_running = {
                call.id for call in calls if call.id and self._is_long_running(tools, call.name)
            }
            if long_running:
                event.long_running_tool_ids = long_running
            if not calls and event.is_final_response():
                self._record_output(event)
            yield event
            if calls:
                delegates = self._delegates()
                in_invocation = _agent_tools(tools)
                ordinary = [
                    call
                    for call in calls
                    if call.name not in delegates and call.name not in in_invocation
                ]
                answer: Event | None = None
                if ordinary:
                    ran = await run_calls(self, ctx, ordinary, tools)
                    turn.pending = turn.pending or bool(ran.pending)
                    for response_event in ran.events:
                        yield response_event
                    answer = self._structured_answer(ctx, ran.events)
                async with contextlib.aclosing(
                    self._run_agent_tools(ctx, calls, in_invocation, turn)
                ) as agent_events:
                    async for agent_event in agent_events:
                        yield agent_event
                for call in calls:
                    if call.name in delegates:
                        async with contextlib.aclosing(
                            self._delegate(ctx, delegates[call.name], call)
                        ) as delegated:
                            async for delegated_event in delegated:
                                yield delegated_event
                if answer is not None:
                    yield answer

    async def _run_agent_tools(
        self,
        ctx: InvocationContext,
        calls: list[types.FunctionCall],
        agent_tools: dict[str, Any],
        turn: _Turn,
    ) -> AsyncGenerator[Event, None]:
        """Run the calls of agent tools (one after another, inside this invocation); a call
        whose agent paused stays unanswered and the turn waits."""
        for call in calls:
            tool = agent_tools.get(call.name or "")
            if tool is None:
                continue
            answered = False
            async with contextlib.aclosing(tool.run_in_invocation(ctx, call, self.name)) as run:
                async for event in run:
                    answered = answered or any(
                        r.id == call.id for r in event.get_function_responses()
                    )
                    yield event
            turn.pending = turn.pending or not answered

    async def _delegate(
        self, ctx: InvocationContext, child: LlmAgent, call: types.FunctionCall
    ) -> AsyncGenerator[Event, None]:
        """Run a task or single_turn sub-agent on its own branch, then answer the call with its
        result; a task agent that stops to ask the user leaves the call pending."""
        args = dict(call.args or {})
        request = args.get("request") if child.input_schema is None else None
        child_branch = call_branch(ctx.branch, child.name, call.id)
        yield Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            branch=child_branch,
            content=types.Content(
                role="user",
                parts=[types.Part(text=str(request) if request is not None else json.dumps(args))],
            ),
        )
        produced: list[Event] = []
        child_ctx = dataclasses.replace(ctx, branch=child_branch, delegation=call.id)
        async with contextlib.aclosing(child.run_async(child_ctx)) as events:
            async for event in events:
                yield event
                if not event.partial:
                    produced.append(event)
        finished = child.mode == "single_turn" or any(
            e.actions.end_of_agent and e.content is not None for e in produced
        )
        if finished:
            yield self._answer_call(ctx, call.id, child.name, _delegation_result(child, produced))

    def _answer_call(
        self, ctx: InvocationContext, call_id: str | None, name: str, result: Any
    ) -> Event:
        return Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            branch=ctx.branch,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call_id, name=name, response={"result": result}
                        )
                    )
                ],
            ),
        )

    async def _report_to_parent(
        self, ctx: InvocationContext, finished: Event
    ) -> AsyncGenerator[Event, None]:
        """A task finished on a later turn: answer the parent's pending call, let it go on."""
        parent = self.parent_agent
        if not isinstance(parent, LlmAgent):
            return
        answered = {r.id for e in ctx.session.events for r in e.get_function_responses() if r.id}
        pending = next(
            (
                call.id
                for event in reversed(ctx.session.events)
                if event.author == parent.name
                for call in event.get_function_calls()
                if call.name == self.name and call.id not in answered
            ),
            None,
        )
        if pending is None:
            return
        parent_ctx = dataclasses.replace(ctx, branch=parent_branch(ctx.branch))
        yield parent._answer_call(
            parent_ctx, pending, self.name, _delegation_result(self, [finished])
        )
        async with contextlib.aclosing(parent.run_async(parent_ctx)) as events:
            async for event in events:
                yield event

    async def _callback_event(self, ctx: InvocationContext, *, before: bool) -> Event | None:
        event = await super()._callback_event(ctx, before=before)
        if before and event is not None and event.content is not None:
            self._record_output(event)  # a before-callback's reply is the agent's answer
        return event

    def _is_long_running(self, tools: list[BaseTool], name: str | None) -> bool:
        return any(tool.name == name and tool.is_long_running for tool in tools)

    def _event_from(
        self, ctx: InvocationContext, response: LlmResponse, actions: EventActions
    ) -> Event:
        fields = {name: getattr(response, name) for name in LlmResponseFields.model_fields}
        return Event(
            **fields,
            invocation_id=ctx.invocation_id,
            author=self.name,
            branch=ctx.branch,
            actions=actions,
        )

    def _structured_answer(self, ctx: InvocationContext, events: list[Event]) -> Event | None:
        """The final answer given through ``set_model_response``, as the model event it
        stands for (the JSON text, saved to ``output_key``); None if it was not given."""
        for event in events:
            answer = event.actions.set_model_response
            if answer is None or not any(
                r.name == SetModelResponseTool.NAME for r in event.get_function_responses()
            ):
                continue
            final = Event(
                invocation_id=ctx.invocation_id,
                author=self.name,
                branch=ctx.branch,
                content=types.Content(
                    role="model",
                    parts=[types.Part(text=json.dumps(answer, ensure_ascii=False))],
                ),
            )
            self._record_output(final)
            return final
        return None

    def _record_output(self, event: Event) -> None:
        if not self.output_key and not self.output_schema:
            return
        text = "".join(
            part.text or ""
            for part in (event.content.parts if event.content and event.content.parts else [])
            if not part.thought
        )
        value: Any = text
        if self.output_schema is not None:
            try:
                value = self.output_schema.model_validate_json(text).model_dump(
                    mode="json", exclude_none=True
                )
            except ValidationError as error:
                event.error_code = "OUTPUT_SCHEMA_MISMATCH"
                event.error_message = (
                    f"agent {self.name!r} answered with output that does not match "
                    f"{self.output_schema.__name__}: {error.errors()[0]['msg']}"
                )
                return
        if self.output_key:
            event.actions.state_delta[self.output_key] = value

    def tool_names(self) -> list[str]:
        """Names of the tools this agent offers its model (for error messages)."""
        names = [getattr(t, "name", getattr(t, "__name__", "")) for t in self.tools]
        if self.output_schema is not None and self.tools and self.mode != "task":
            names.insert(0, SetModelResponseTool.NAME)
        names = [n for n in names if n]
        return names + (
            [TRANSFER_TOOL] if self.transfer_targets() and TRANSFER_TOOL not in names else []
        )


@dataclasses.dataclass
class _Turn:
    pending: bool = False


class _UnavailableTools(BaseTool):
    """A toolset whose tools could not be listed (an MCP server that is down): nothing is
    declared, and the model is told which tools are missing and why."""

    def __init__(self, toolset: BaseToolset, error: Exception) -> None:
        super().__init__(name=f"({type(toolset).__name__} unavailable)", description="")
        self.note = (
            f"The tools of a {type(toolset).__name__} could not be loaded, so you cannot use "
            f"them now ({type(error).__name__}: {error}). If the request needs them, say so."
        )

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        llm_request.append_instructions([self.note])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        return {"error": self.note}


def _agent_tools(tools: list[BaseTool]) -> dict[str, Any]:
    """Tools that run an agent inside this invocation (``AgentTool``), by name."""
    return {tool.name: tool for tool in tools if getattr(tool, "runs_in_invocation", False)}


_DELEGATED = ("task", "single_turn")


def _is_delegated(agent: BaseAgent) -> bool:
    return getattr(agent, "mode", None) in _DELEGATED


def finish_task(result: str, tool_context: Context) -> dict[str, str]:
    """Finish the task you were given and hand its result back to the agent that asked for it.

    Args:
        result: the outcome of the task, as the requesting agent should see it.
    """
    tool_context.actions.end_of_agent = True
    return {"result": result}


class _DelegateTool(BaseTool):
    """A task or single_turn sub-agent as its parent's model sees it: a function to call."""

    def __init__(self, agent: LlmAgent) -> None:
        kind = (
            "It works on the request, possibly asking the user questions over several turns, "
            "and returns its result."
            if agent.mode == "task"
            else "It answers the request in one go and returns its result."
        )
        super().__init__(name=agent.name, description=f"{agent.description} {kind}".strip())
        self.agent = agent

    def declaration(self) -> types.FunctionDeclaration:
        if self.agent.input_schema is not None:
            schema = self.agent.input_schema.model_json_schema()
        else:
            schema = {
                "type": "object",
                "properties": {"request": {"type": "string", "description": "What to do."}},
                "required": ["request"],
            }
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        raise RuntimeError("delegated agents are run by their parent's loop, not as tools")


def _delegation_result(agent: LlmAgent, events: list[Event]) -> Any:
    """The result a delegated agent hands back: finish_task's argument, else its last answer."""
    for event in reversed(events):
        if event.actions.end_of_agent:
            for response in event.get_function_responses():
                if response.name == "finish_task" and response.response is not None:
                    return response.response.get("result")
        if event.is_final_response() and event.content and event.content.parts:
            text = "".join(p.text or "" for p in event.content.parts if not p.thought)
            if agent.output_schema is not None:
                try:
                    return agent.output_schema.model_validate_json(text).model_dump(mode="json")
                except ValidationError:
                    return text
            return text
    return None


Agent = LlmAgent
"""ADK's short name for LlmAgent."""

__all__ = [
    "AfterModelCallback",
    "AfterToolCallback",
    "Agent",
    "BeforeModelCallback",
    "BeforeToolCallback",
    "LlmAgent",
    "OnModelErrorCallback",
    "OnToolErrorCallback",
]
