"""A model agent whose (scripted) model streams its reply in three chunks."""

from cairn import Agent
from cairn.testing import ScriptedLlm, Stream

root_agent = Agent(
    name="streamer",
    model=ScriptedLlm(respond=lambda request: Stream(["Hel", "lo, ", "world"])),
)
