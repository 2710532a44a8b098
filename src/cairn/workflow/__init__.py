"""Workflow graphs: nodes, edges and their validation (execution and resume build on these)."""

from cairn.workflow.graph import Edge, Graph, WorkflowDefinitionError, build_graph, parse_edges
from cairn.workflow.nodes import DEFAULT_ROUTE, START, BaseNode, FunctionNode, RetryConfig, node

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "BaseNode",
    "Edge",
    "FunctionNode",
    "Graph",
    "RetryConfig",
    "WorkflowDefinitionError",
    "build_graph",
    "node",
    "parse_edges",
]
