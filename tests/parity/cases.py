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
    "config_agent": "Agent Config: YAML with sub-agents by path, tools by name and reference",
    "config_workflow": "Agent Config: a Workflow in YAML (chain, fan-out, inline JoinNode, routes)",
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
    "workflow_dynamic_nodes": "ctx.run_node from a node: counted run ids, a run_id of its own",
    "workflow_node_as_tool": "an LlmAgent calls a FunctionNode and a Workflow as tools",
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
    "planner_plan_react": "PlanReActPlanner: plan and reasoning as thoughts, a tool call",
    "code_executor_local": "UnsafeLocalCodeExecutor: code run, result, a failed run",
    "plugin_hooks": "a plugin before the agent's callbacks: tool answer, result edit, model block",
    "plugin_shipped": "GlobalInstructionPlugin, ReflectAndRetryToolPlugin, ContextFilterPlugin",
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
    "code_executor_local": (
        "deliberate (docs/porting-from-adk.md): with output_key, ADK saves the text before the "
        "code block on the code's event and joins it to the final answer; cairn saves only "
        "the final answer"
    ),
    "state_scopes": (
        "deliberate (docs/porting-from-adk.md): the event cairn yields to the in-process "
        "caller keeps temp:scratch in its state_delta; ADK trims temp: keys off the event "
        "itself (stored events and state agree)"
    ),
    "agent_tool": (
        "deliberate (docs/porting-from-adk.md): the stored session keeps the AgentTool's "
        "inner run (branch translator@cairn-<uuid>: the request and the translator's reply) "
        "between the call and its response, so a pause inside it can resume from the log; "
        "ADK runs it in a throwaway session (what the caller is given is the same)"
    ),
    "workflow_nested": (
        "deliberate (docs/porting-from-adk.md, Workflows): cairn writes an end_of_agent "
        "marker for the nested workflow (author transform, at outer@1/transform@1) after its "
        "last node, which the enclosing workflow's resume reads; ADK writes none without a "
        "resumable App"
    ),
    "workflow_node_as_tool": (
        "deliberate (docs/porting-from-adk.md, Workflows): a workflow called as a tool ends "
        "with cairn's end_of_agent marker for it (author stock, on the call's branch), as a "
        "nested workflow does; ADK writes none"
    ),
    "workflow_request_input": (
        "on resume cairn stores the answered node's output event (deliberate, docs/porting- "
        "from-adk.md) before the next node's; ADK goes straight to send_reply"
    ),
    "static_instruction": (
        "deliberate (docs/porting-from-adk.md): with a static_instruction, ADK moves the "
        "agent's instruction into a user turn; cairn keeps both in the system instruction"
    ),
    "workflow_runner_node": (
        "deliberate (docs/porting-from-adk.md, Workflows): cairn stores an LlmAgent node's "
        "input as a user event on the node's branch (what the agent's prompt is rebuilt from "
        "on resume) and its answer as the node's output event; ADK stores neither (the model "
        "sees the same on both)"
    ),
    "workflow_agent_node": (
        "deliberate (docs/porting-from-adk.md, Workflows): cairn stores an LlmAgent node's "
        "input as a user event on the node's branch (what the agent's prompt is rebuilt from "
        "on resume) and its answer as the node's output event; ADK stores neither (the model "
        "sees the same on both)"
    ),
}
