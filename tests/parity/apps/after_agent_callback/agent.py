"""An after_agent_callback that adds a closing line and records state."""

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.genai import types


def sign_off(callback_context: CallbackContext) -> types.Content:
    callback_context.state["answered"] = True
    return types.Content(role="model", parts=[types.Part(text="-- the help desk")])


root_agent = Agent(
    name="help_desk",
    model="gemini-2.5-flash",
    instruction="Answer the user's question briefly.",
    after_agent_callback=sign_off,
)
