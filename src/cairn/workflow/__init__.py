"""Workflow graphs: nodes, edges and their validation (execution and resume build on these)."""

from cairn.events.request_input import RequestInput
from cairn.workflow.agents import LoopAgent, ParallelAgent, SequentialAgent
from cairn.workflow.graph import Edge, Graph, WorkflowDefinitionError, build_graph, parse_edges
from cairn.workflow.join_node import JoinNode
from cairn.workflow.nodes import DEFAULT_ROUTE, START, BaseNode, FunctionNode, RetryConfig, node
from cairn.workflow.workflow import AgentNode, ParallelNode, ToolNode, Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "AgentNode",
    "BaseNode",
    "Edge",
    "FunctionNode",
    "Graph",
    "JoinNode",
    "LoopAgent",
    "ParallelAgent",
    "ParallelNode",
    "RequestInput",
    "RetryConfig",
    "SequentialAgent",
    "ToolNode",
    "Workflow",
    "WorkflowDefinitionError",
    "build_graph",
    "node",
    "parse_edges",
]
