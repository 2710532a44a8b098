"""load_memory: the model searches what earlier sessions put into the memory service."""

from google.adk.agents import Agent
from google.adk.tools import load_memory

root_agent = Agent(
    name="recall_agent",
    model="gemini-2.5-flash",
    instruction="Use load_memory to answer questions about earlier conversations.",
    tools=[load_memory],
)
