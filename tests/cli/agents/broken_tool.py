"""An agent whose one tool raises: its failure is the tool's result, and the log has the
traceback."""

from __future__ import annotations

from cairn import Agent
from cairn.testing import Call, ScriptedLlm


def weigh(parcel: str) -> int:
    """The parcel's weight in grams."""
    raise ValueError(f'the scale says {parcel!r} is "off the chart"')


root_agent = Agent(
    name="porter",
    model=ScriptedLlm(script=[Call("weigh", parcel="box"), "I could not weigh it."]),
    tools=[weigh],
)
