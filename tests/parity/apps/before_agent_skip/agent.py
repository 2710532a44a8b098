"""A before_agent_callback that answers in the agent's place; the answer goes to output_key."""

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.agents.callback_context import CallbackContext
from google.genai import types


def serve_from_cache(callback_context: CallbackContext) -> types.Content | None:
    cached = callback_context.state.get("cached_summary")
    if cached:
        return types.Content(role="model", parts=[types.Part(text=cached)])
    return None


summarizer = LlmAgent(
    name="summarizer",
    model="gemini-2.5-flash",
    instruction="Summarize the user's text in one line.",
    output_key="summary",
    before_agent_callback=serve_from_cache,
)

translator = LlmAgent(
    name="translator",
    model="gemini-2.5-flash",
    instruction="Translate this summary to French: {summary}",
)

root_agent = SequentialAgent(name="summary_pipeline", sub_agents=[summarizer, translator])
