"""Shipped plugins: a global instruction, reflect-and-retry on a failing tool, and a context
filter keeping the latest turn."""

from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins import ReflectAndRetryToolPlugin
from google.adk.plugins.context_filter_plugin import ContextFilterPlugin
from google.adk.plugins.global_instruction_plugin import GlobalInstructionPlugin


def fetch_rate(currency: str) -> dict:
    """Returns an exchange rate."""
    if currency != "EUR":
        raise ValueError(f"unknown currency {currency}")
    return {"rate": 1.1}


root_agent = Agent(
    name="fx_agent",
    model="gemini-2.5-flash",
    instruction="Give exchange rates with fetch_rate.",
    tools=[fetch_rate],
)

app = App(
    name="plugin_shipped",
    root_agent=root_agent,
    plugins=[
        GlobalInstructionPlugin("You work for {org?}."),
        ReflectAndRetryToolPlugin(max_retries=2),
        ContextFilterPlugin(num_invocations_to_keep=1),
    ],
)
