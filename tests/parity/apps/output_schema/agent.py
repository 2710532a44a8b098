"""output_schema alone: the reply is JSON of a pydantic model, stored under output_key."""

from google.adk.agents import LlmAgent
from pydantic import BaseModel, Field


class Capital(BaseModel):
    country: str = Field(description="The country asked about.")
    capital: str = Field(description="Its capital city.")


root_agent = LlmAgent(
    name="capital_agent",
    model="gemini-2.5-flash",
    instruction="Reply with the country and its capital as JSON.",
    output_schema=Capital,
    output_key="capital_info",
)
