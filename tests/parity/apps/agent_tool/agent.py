"""An agent used as a tool by another agent (AgentTool)."""

from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

translator = LlmAgent(
    name="translator",
    model="gemini-2.5-flash",
    description="Translates English text to Spanish.",
    instruction="Translate the request to Spanish. Reply with the translation only.",
)

root_agent = LlmAgent(
    name="assistant",
    model="gemini-2.5-flash",
    instruction="Use the translator tool for translations.",
    tools=[AgentTool(agent=translator)],
)
