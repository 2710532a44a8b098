"""Workflow edges in ADK's syntax, and the checks made when a workflow is built."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from cairn.workflow import (
    DEFAULT_ROUTE,
    START,
    Edge,
    FunctionNode,
    RetryConfig,
    WorkflowDefinitionError,
    build_graph,
    node,
)


def draft() -> str:
    return "draft"


def review() -> str:
    return "review"


def send() -> None: ...


def archive() -> None: ...


def rewrite() -> None: ...


def done() -> None: ...


def names(graph, **_: object) -> set[tuple[str, str, object]]:  # type: ignore[no-untyped-def]
    return {(e.from_node.name, e.to_node.name, e.route) for e in graph.edges}


def test_chains_fan_out_and_routing_maps() -> None:
    graph = build_graph(
        "mail",
        [
            ("START", draft, (review, archive), send),
            (send, {"approved": rewrite, "revise": (node(name="fix")(draft), review)}, done),
        ],
    )
    assert names(graph) == {
        ("__START__", "draft", None),
        ("draft", "review", None),
        ("draft", "archive", None),
        ("review", "send", None),
        ("archive", "send", None),
        ("send", "rewrite", "approved"),
        ("send", "fix", "revise"),  # a tuple in a routing map fans out, as in ADK
        ("send", "review", "revise"),
        ("rewrite", "done", None),  # what follows a map follows each node it names
        ("fix", "done", None),
        ("review", "done", None),
    }
    assert graph.nodes["__START__"] is START
    assert isinstance(graph.nodes["draft"], FunctionNode) and graph.nodes["draft"].func is draft
    assert sorted(graph.terminals) == ["done"]
    assert sorted(graph.predecessors("send")) == ["archive", "review"]


def test_edge_objects_and_default_route() -> None:
    graph = build_graph(
        "w", [Edge(START, draft), Edge(draft, send, "ok"), Edge(draft, archive, DEFAULT_ROUTE)]
    )
    assert ("draft", "archive", DEFAULT_ROUTE) in names(graph)


def test_node_decorator_and_settings() -> None:
    @node(retry_config=RetryConfig(max_attempts=3), timeout=2.5, rerun_on_resume=True)
    def careful() -> None:
        """Does things carefully."""

    assert careful.name == "careful" and careful.description == "Does things carefully."
    assert careful.retry_config is not None and careful.retry_config.max_attempts == 3
    assert careful.timeout == 2.5 and careful.rerun_on_resume
    assert node(send).name == "send"
    with pytest.raises(ValidationError, match="identifier"):
        node(name="not a name")(send)
    with pytest.raises(ValidationError, match="max_attempts"):
        RetryConfig(max_attempts=-1)


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ([(draft, review)], "no edge from START"),
        ([(START, draft), (draft, "START")], "edge into START"),
        ([(START, {"x": draft})], "edges from START cannot have routes"),
        ([(START, draft), (START, draft)], r"draft .*twice"),
        ([(START, draft), (review, send)], r"review, send cannot be reached"),
        ([(START, draft, review, draft)], r"loops forever through draft -> review -> draft"),
        ([(START, draft, {"again": draft})], None),  # a routed loop is fine
        ([(START, draft, node(name="draft")(review))], "two different nodes named 'draft'"),
        ([(START, draft, {"a": review}, {"b": send})], "two routing maps follow each other"),
        ([(START, draft, {})], "at least one route"),
        ([(START,)], "at least two elements"),
        (["START"], "neither an Edge nor a tuple chain"),
        ([(START, 42)], "cannot be a workflow node"),
    ],
)
def test_invalid_graphs_are_refused_naming_the_nodes(edges: list, message: str | None) -> None:
    if message is None:
        build_graph("w", edges)
        return
    with pytest.raises(WorkflowDefinitionError, match=message):
        build_graph("w", edges)


class Draft(BaseModel):
    text: str


class Review(BaseModel):
    verdict: str


def test_schemas_must_match_along_an_edge() -> None:
    producer = node(name="producer", output_schema=Draft)(draft)
    consumer = node(name="consumer", input_schema=Review)(review)
    with pytest.raises(WorkflowDefinitionError, match="producer outputs Draft but consumer"):
        build_graph("w", [(START, producer, consumer)])
    fine = node(name="fine", input_schema=Draft)(review)
    build_graph("w", [(START, producer, fine)])
