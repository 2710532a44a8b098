"""ADK's workflow agents as thin compositions over the Workflow engine (one execution path)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from cairn.agents.context import Context
from cairn.events.event import Event
from cairn.workflow.nodes import START, FunctionNode
from cairn.workflow.workflow import Workflow


class SequentialAgent(Workflow):
    """Runs its sub-agents one after another, each getting the previous one's output."""

    edges: list[Any] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _chain(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("edges") and data.get("sub_agents"):
            data = {**data, "edges": [(START, *data["sub_agents"])]}
        return data


class ParallelAgent(Workflow):
    """Runs its sub-agents at the same time, each on its own branch; its output is the list
    of their outputs."""

    edges: list[Any] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _fan_out(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("edges") and data.get("sub_agents"):
            data = {**data, "edges": [(START, tuple(data["sub_agents"]))]}
        return data


class LoopAgent(Workflow):
    """Runs its sub-agents in order, again and again, until one escalates
    (``tool_context.actions.escalate = True``) or ``max_iterations`` rounds have run."""

    edges: list[Any] = Field(default_factory=list)
    max_iterations: int | None = Field(default=None, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _loop(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("edges") or not data.get("sub_agents"):
            return data
        limit = data.get("max_iterations")
        agents = data["sub_agents"]

        def next_round(ctx: Context) -> Event:
            """Decides whether the loop goes round again (its run number is the round)."""
            rounds = int(ctx.node_path.rsplit("@", 1)[1])
            return Event(route="again" if limit is None or rounds < limit else "done")

        check = FunctionNode(name=f"{data['name']}_next_round", func=next_round)
        return {**data, "edges": [(START, *agents, check), (check, {"again": agents[0]})]}
