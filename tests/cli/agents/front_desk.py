"""Defines ``app`` (a cairn App) rather than root_agent."""

from cairn import Agent, App
from cairn.testing import ScriptedLlm

app = App(
    name="front-desk",
    root_agent=Agent(name="greeter", model=ScriptedLlm(respond=lambda request: "welcome")),
)
