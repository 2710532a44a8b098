"""A sub-agent root_agent.yaml names by code reference."""

from cairn import Agent
from cairn.testing import ScriptedLlm

greeter = Agent(
    name="greeter",
    description="Says hello.",
    model=ScriptedLlm(respond=lambda request: "Hello from the greeter."),
)
