"""before_model_callback short-circuits on a blocked word; after_model_callback edits replies."""

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmRequest, LlmResponse
from google.genai import types


def guard(callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse | None:
    last = llm_request.contents[-1].parts[0].text or ""
    if "secret" in last.lower():
        callback_context.state["blocked"] = True
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text="I can't discuss that.")])
        )
    return None


def shout(callback_context: CallbackContext, llm_response: LlmResponse) -> LlmResponse | None:
    if llm_response.content and llm_response.content.parts and llm_response.content.parts[0].text:
        text = llm_response.content.parts[0].text
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text.upper())])
        )
    return None


root_agent = LlmAgent(
    name="guarded_agent",
    model="gemini-2.5-flash",
    instruction="Chat with the user.",
    before_model_callback=guard,
    after_model_callback=shout,
)
