"""Edges in ADK's syntax, turned into a checked graph of nodes."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cairn.errors import CairnError
from cairn.events.event_actions import RouteValue
from cairn.workflow.nodes import START, START_NAME, BaseNode, FunctionNode


class WorkflowDefinitionError(CairnError, ValueError):
    """A workflow's edges or nodes do not make a valid graph; the message names the nodes."""


@dataclasses.dataclass(frozen=True)
class Edge:
    """``from_node`` hands its output to ``to_node`` — always, or when it emits ``route``."""

    from_node: Any
    to_node: Any
    route: RouteValue | list[RouteValue] | None = None


def as_node(value: Any, convert: Callable[[Any], BaseNode | None] | None = None) -> BaseNode:
    """A node for an edge endpoint: a node, ``"START"``, or a function (made a FunctionNode).

    ``convert`` may turn other objects (agents, tools) into nodes first.
    """
    if isinstance(value, BaseNode):
        return value
    if value == "START" or value == START_NAME:
        return START
    if convert is not None:
        converted = convert(value)
        if converted is not None:
            return converted
    if callable(value):
        return FunctionNode(
            name=getattr(value, "__name__", "node"),
            description=(getattr(value, "__doc__", None) or "").strip(),
            func=value,
        )
    raise WorkflowDefinitionError(
        f"{value!r} cannot be a workflow node: use a function, a BaseNode, an agent, a tool, "
        "or 'START'"
    )


def _stage(element: Any) -> list[Any]:
    """The nodes of one chain element: a tuple fans out to each of its members; a routing
    map stands for every node it names."""
    if isinstance(element, dict):
        return [node for target in element.values() for node in _stage(target)]
    return list(element) if isinstance(element, tuple) else [element]


def parse_edges(edges: Iterable[Any]) -> list[Edge]:
    """Expand ADK's edge syntax into single edges (endpoints not yet converted).

    - ``Edge(a, b, route=None)`` as is;
    - a chain ``(START, a, b)``: a→b for each neighbouring pair;
    - a tuple inside a chain fans out: ``(a, (b, c), d)`` is a→b, a→c, b→d, c→d;
    - a dict routes: ``(a, {"ok": b, "fix": (c, d)})`` is a→b on "ok", and a→c, a→d (a
      fan-out) on "fix"; an element after the map follows every node the map names.
    """
    result: list[Edge] = []
    for entry in edges:
        if isinstance(entry, Edge):
            result.append(entry)
        elif isinstance(entry, tuple):
            result.extend(_parse_chain(entry))
        else:
            raise WorkflowDefinitionError(
                f"edge entry {entry!r} is neither an Edge nor a tuple chain such as "
                "(START, first_node, second_node)"
            )
    return result


def _parse_chain(chain: Sequence[Any]) -> list[Edge]:
    if len(chain) < 2:
        raise WorkflowDefinitionError(
            f"the chain {chain!r} needs at least two elements, e.g. (START, first_node)"
        )
    edges: list[Edge] = []
    for before, element in itertools.pairwise(chain):
        if isinstance(element, dict):
            if isinstance(before, dict):
                raise WorkflowDefinitionError(
                    "two routing maps follow each other in a chain; split them into two "
                    "chains, the second starting from the node that routes again"
                )
            if not element:
                raise WorkflowDefinitionError(
                    "a routing map needs at least one route, e.g. {'approve': publish}"
                )
            for route, target in element.items():
                for source in _stage(before):
                    for node in _stage(target):
                        edges.append(Edge(source, node, route))
            continue
        for source in _stage(before):
            for target in _stage(element):
                edges.append(Edge(source, target))
    return edges


@dataclasses.dataclass
class Graph:
    """Nodes by name and, for each, its outgoing and incoming edges.

    ``Graph(edges=[...])`` (as ADK builds one, for ``Workflow(graph=...)``) keeps the edges
    as given; the workflow converts and checks them.
    """

    nodes: dict[str, BaseNode] = dataclasses.field(default_factory=dict)
    edges: list[Edge] = dataclasses.field(default_factory=list)

    def successors(self, name: str) -> list[Edge]:
        return [e for e in self.edges if e.from_node.name == name]

    def predecessors(self, name: str) -> list[str]:
        return [e.from_node.name for e in self.edges if e.to_node.name == name]

    @property
    def terminals(self) -> list[str]:
        """Nodes with no outgoing edge: their outputs are the workflow's output."""
        sources = {e.from_node.name for e in self.edges}
        return [name for name in self.nodes if name not in sources and name != START_NAME]


def build_graph(
    workflow_name: str,
    edges: Iterable[Any],
    convert: Callable[[Any], BaseNode | None] | None = None,
) -> Graph:
    """Parse, convert and validate; every problem is a WorkflowDefinitionError naming nodes."""
    converted: dict[int, BaseNode] = {}

    def node_for(value: Any) -> BaseNode:
        key = id(value)
        if key not in converted:
            converted[key] = as_node(value, convert)
        return converted[key]

    graph_edges = [
        Edge(node_for(e.from_node), node_for(e.to_node), e.route) for e in parse_edges(edges)
    ]
    nodes: dict[str, BaseNode] = {}
    for edge in graph_edges:
        for endpoint in (edge.from_node, edge.to_node):
            known = nodes.setdefault(endpoint.name, endpoint)
            if known is not endpoint:
                raise WorkflowDefinitionError(
                    f"workflow {workflow_name!r} has two different nodes named "
                    f"{endpoint.name!r}; node names must be unique — rename one "
                    "(for a function, wrap it: node(name='other_name')(func))"
                )
    graph = Graph(nodes=nodes, edges=graph_edges)
    _validate(workflow_name, graph)
    return graph


def _validate(workflow_name: str, graph: Graph) -> None:
    where = f"workflow {workflow_name!r}"
    if START_NAME not in graph.nodes:
        raise WorkflowDefinitionError(
            f"{where} has no edge from START; begin a chain with it, e.g. (START, first_node)"
        )
    into_start = graph.predecessors(START_NAME)
    if into_start:
        raise WorkflowDefinitionError(
            f"{where} has an edge into START (from {', '.join(sorted(set(into_start)))}); "
            "START only begins chains — to loop, route back to the first real node"
        )
    if any(e.route is not None for e in graph.successors(START_NAME)):
        raise WorkflowDefinitionError(
            f"{where}: edges from START cannot have routes; START always goes on"
        )
    seen: set[tuple[str, str, str]] = set()
    for edge in graph.edges:
        key = (edge.from_node.name, edge.to_node.name, repr(edge.route))
        if key in seen:
            raise WorkflowDefinitionError(
                f"{where} has the edge {key[0]} -> {key[1]} (route {edge.route!r}) twice"
            )
        seen.add(key)
    reachable = _reachable(graph, START_NAME, routed=True)
    unreachable = sorted(set(graph.nodes) - reachable)
    if unreachable:
        raise WorkflowDefinitionError(
            f"{where}: the node(s) {', '.join(unreachable)} cannot be reached from START; "
            "add an edge to them or remove them"
        )
    cycle = _unconditional_cycle(graph)
    if cycle:
        raise WorkflowDefinitionError(
            f"{where} loops forever through {' -> '.join(cycle)}: every edge of that cycle "
            "always fires. Put a route on one of them so the loop can end."
        )
    for edge in graph.edges:
        produced, expected = edge.from_node.output_schema, edge.to_node.input_schema
        if produced is not None and expected is not None and not issubclass(produced, expected):
            raise WorkflowDefinitionError(
                f"{where}: {edge.from_node.name} outputs {produced.__name__} but "
                f"{edge.to_node.name} expects {expected.__name__}; make the schemas match"
            )


def _reachable(graph: Graph, start: str, *, routed: bool) -> set[str]:
    found = {start}
    frontier = [start]
    while frontier:
        current = frontier.pop()
        for edge in graph.successors(current):
            if (routed or edge.route is None) and edge.to_node.name not in found:
                found.add(edge.to_node.name)
                frontier.append(edge.to_node.name)
    return found


def _unconditional_cycle(graph: Graph) -> list[str] | None:
    """A cycle made only of unrouted edges, as a list of node names, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for edge in graph.successors(name):
            if edge.route is not None:
                continue
            target = edge.to_node.name
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[name] = 2
        return None

    for name in graph.nodes:
        if name not in state:
            found = visit(name)
            if found:
                return found
    return None
