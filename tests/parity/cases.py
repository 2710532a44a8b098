"""The parity apps: the feature each one exercises, and how cairn differs from ADK today.

``DIFFERS[app]`` is the difference the app shows now (its test is a strict xfail with that
reason, so a fix turns the mark into a failure: then delete the entry). Keep each reason
precise: what ADK does, what cairn does instead.
"""

from __future__ import annotations

FEATURES: dict[str, str] = {
    "tools_sync": "LlmAgent with a synchronous function tool",
    "tools_async": "async function tool, two calls in one response",
    "tool_state": "tool_context.state writes (cairn.tools.tool_context.ToolContext)",
    "output_key_templating": "output_key read as {key} by the next agent",
    "instruction_provider": "instruction provider of a ReadonlyContext",
    "before_agent_skip": "before_agent_callback returns content; saved to output_key",
    "after_agent_callback": "after_agent_callback adds content and state",
    "model_callbacks": "before_model_callback short-circuits; after_model_callback edits",
    "tool_callbacks": "before_tool_callback short-circuits; after_tool_callback edits",
    "transfer_to_child": "transfer_to_agent from the root to a sub-agent",
    "transfer_back_to_parent": "transfer_to_agent from a sub-agent back to its parent",
    "transfer_to_peer": "transfer_to_agent from a sub-agent to a sibling",
    "agent_tool": "AgentTool (cairn.tools.agent_tool)",
    "sequential_history": "SequentialAgent: a later agent sees the whole history",
    "parallel_branches": "ParallelAgent branches, then a merger",
    "loop_escalate": "LoopAgent ended by exit_loop (escalate)",
    "loop_max_iterations": "LoopAgent ended by max_iterations",
    "output_schema": "output_schema alone, with output_key",
    "output_schema_tools": "output_schema with tools (set_model_response)",
    "include_contents_none": "include_contents='none'",
    "long_running_tool": "LongRunningFunctionTool paused, resumed by a FunctionResponse",
    "confirmation_bool": "FunctionTool(require_confirmation=True) answered",
    "confirmation_callable": "require_confirmation callable of the tool's arguments",
    "workflow_chain": "Workflow: a chain of FunctionNodes",
    "workflow_routes": "Workflow: routes with a dict of edges",
    "workflow_fanout_join": "Workflow: fan-out and JoinNode",
    "workflow_nested": "Workflow: a nested Workflow",
    "workflow_request_input": "Workflow: RequestInput paused and answered",
    "workflow_failing_node": "Workflow: a failing node",
    "workflow_runner_node": "Runner(node=workflow) with an LlmAgent node",
    "workflow_agent_node": "Workflow with an LlmAgent node, as the root agent",
    "workflow_function_node": "FunctionNode(func=f) named after the function",
    "app_workflow_root": "App whose root_agent is a Workflow",
    "model_inheritance": "a sub-agent without model uses its parent's",
    "callback_state": "callback_context.state written before the agent, read by its tool",
    "static_instruction": "static_instruction as types.Content beside an instruction",
    "app_wrapping": "App(name=..., root_agent=...) given to the Runner",
    "state_scopes": "state scopes user:, app:, temp: across two sessions",
    "load_memory": "load_memory with InMemoryMemoryService",
    "preload_memory": "preload_memory with InMemoryMemoryService",
    "artifacts": "artifacts saved and loaded by tools",
    "default_model": "an agent that omits model (ADK's default)",
}

NO_TOOL_CONTEXT = "cairn has no module cairn.tools.tool_context"
NO_CALLBACK_CONTEXT = "cairn has no module cairn.agents.callback_context"
PATH_ONLY = " (import paths only: with them served the app matches)"
SUB_AGENT_TURNS = (
    "each sub-agent's run starts with an extra user event repeating its input on its branch "
    "(the model sees the user message twice), "
)
ENDS = "marks node outputs end_of_agent=True and adds a final workflow output event"

DIFFERS: dict[str, str] = {
    "state_scopes": NO_TOOL_CONTEXT + "; with it served: the tool event cairn yields keeps "
    "temp:scratch in its state_delta, ADK's yielded event has no temp: key (stored events and "
    "state agree)",
    "agent_tool": "cairn has no module cairn.tools.agent_tool; with it served: cairn stores the "
    "AgentTool's inner run in the session (a user event with the request and the translator's "
    "reply, branch translator@cairn-<uuid>) between the call and the response; ADK stores only "
    "the function call and its response",
    "parallel_branches": "cairn.agents has no ParallelAgent nor SequentialAgent; with them "
    "served: "
    + SUB_AGENT_TURNS
    + "the merger sees one user text holding a JSON list of both outputs instead of each "
    "researcher's turn, transfer_to_agent is offered, and end_of_agent output events are "
    "stored (12 events, ADK 4)",
    "include_contents_none": "cairn.agents has no SequentialAgent; with it served: with "
    "include_contents='none' ADK shows the agent only the latest other agent's turn (the "
    "collector's), cairn shows the current user message and the collector's output as user "
    "texts; " + SUB_AGENT_TURNS + "transfer_to_agent is offered",
    "long_running_tool": "cairn takes the long-running tool's first return as the call's "
    "answer, so the client's later FunctionResponse for that id is refused "
    "(InterruptNotPendingError: it has been answered already); ADK stores it and calls the "
    "model again. cairn also casts amount=250 to 250.0 (the float annotation); ADK passes 250",
    "load_memory": "load_memory's answer: ADK {'result': {'memories': [...]}}, each memory's "
    "content without null fields and with custom_metadata; cairn {'memories': [...]} with every "
    "null Part field and customMetadata",
    "workflow_nested": "cairn gives the nested workflow's node events branch "
    "outer@1.transform@1 (ADK none), adds an output event for the nested workflow itself, and "
    + ENDS,
    "workflow_request_input": "the adk_request_input call's args: ADK has response_schema: "
    "null, cairn omits it; on resume cairn stores an output event for the answered node "
    "(output 'approve') that ADK does not, and " + ENDS,
    "static_instruction": "LlmAgent(static_instruction=types.Content(...)) is refused: "
    "ValidationError, static_instruction Input should be a valid string",
    "workflow_runner_node": "Runner(node=...) is refused: TypeError: Runner.__init__() got an "
    "unexpected keyword argument 'node'",
    "workflow_agent_node": "cairn stores a user event with the agent node's input on branch "
    "quiz@1.answerer@1 (the model sees the user message and the node input), gives the agent's "
    "reply that branch (ADK none), adds an output event for the agent node, and " + ENDS,
}
