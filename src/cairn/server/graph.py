"""What an app is: an agent, or a workflow with its graph of nodes and edges."""

from __future__ import annotations

from cairn.agents.base_agent import BaseAgent
from cairn.server.models import AppInfo, GraphEdge, GraphNode, WorkflowGraph
from cairn.workflow import (
    AgentNode,
    BaseNode,
    FunctionNode,
    JoinNode,
    ParallelNode,
    ToolNode,
    Workflow,
)
from cairn.workflow.nodes import START_NAME


def node_kind(node: BaseNode) -> str:
    """start, function, agent, workflow (a nested one), tool, join, parallel, or node."""
    if node.name == START_NAME:
        return "start"
    if isinstance(node, AgentNode):
        return "workflow" if isinstance(node.agent, Workflow) else "agent"
    kinds: list[tuple[type[BaseNode], str]] = [
        (FunctionNode, "function"),
        (ToolNode, "tool"),
        (JoinNode, "join"),
        (ParallelNode, "parallel"),
    ]
    return next((kind for cls, kind in kinds if isinstance(node, cls)), "node")


def workflow_graph(workflow: Workflow) -> WorkflowGraph:
    graph = workflow.graph
    if graph is None:  # a workflow without edges
        return WorkflowGraph(nodes=[], edges=[])
    return WorkflowGraph(
        nodes=[GraphNode(name=name, kind=node_kind(node)) for name, node in graph.nodes.items()],
        edges=[
            GraphEdge(from_node=edge.from_node.name, to_node=edge.to_node.name, route=edge.route)
            for edge in graph.edges
        ],
    )


def app_info(name: str, root: BaseAgent) -> AppInfo:
    if isinstance(root, Workflow):
        return AppInfo(name=name, kind="workflow", graph=workflow_graph(root))
    return AppInfo(name=name, kind="agent")
