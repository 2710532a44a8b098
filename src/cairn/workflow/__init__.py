"""Workflow graphs: nodes, edges and their validation (execution and resume build on these)."""

from cairn.events.request_input import RequestInput
from cairn.workflow.agents import LoopAgent, ParallelAgent, SequentialAgent
from cairn.workflow.errors import DynamicNodeFailError, NodeTimeoutError
from cairn.workflow.graph import Edge, Graph, WorkflowDefinitionError, build_graph, parse_edges
from cairn.workflow.join_node import JoinNode
from cairn.workflow.nodes import (
    DEFAULT_ROUTE,
    START,
    AgentNode,
    BaseNode,
    FunctionNode,
    Node,
    ParallelNode,
    RetryConfig,
    ToolNode,
    node,
)
from cairn.workflow.workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "AgentNode",
    "BaseNode",
    "DynamicNodeFailError",
    "Edge",
    "FunctionNode",
    "Graph",
    "JoinNode",
    "LoopAgent",
    "Node",
    "NodeTimeoutError",
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
