"""A workflow of agent nodes and a router: the writer's answer is the judge's input, and the
router picks the "good" or "bad" route from the judge's verdict."""

from __future__ import annotations

from typing import Any

from cairn import Agent, Event
from cairn.testing import ScriptedLlm
from cairn.workflow import START, Workflow

writer = Agent(name="writer", model=ScriptedLlm(respond=lambda request: "a poem about the sea"))
judge = Agent(name="judge", model=ScriptedLlm(respond=lambda request: "good"))


def route(node_input: Any) -> Any:
    yield Event(route="good" if "good" in str(node_input) else "bad", output="judged")


def publish() -> str:
    return "published"


def rewrite() -> str:
    return "rewritten"


root_agent = Workflow(
    name="routing",
    edges=[(START, writer, judge, route), (route, {"good": publish, "bad": rewrite})],
)
