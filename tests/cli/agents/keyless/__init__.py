"""A Gemini agent, run with no API key in the environment: its model call fails at once."""

from cairn import Agent

root_agent = Agent(name="keyless", model="gemini-2.5-flash", instruction="Answer briefly.")
