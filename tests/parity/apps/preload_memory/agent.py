"""preload_memory: memories matching the user's message are put in the instruction."""

from google.adk.agents import Agent
from google.adk.tools import preload_memory

root_agent = Agent(
    name="preload_agent",
    model="gemini-2.5-flash",
    instruction="Answer using what you remember about the user.",
    tools=[preload_memory],
)
