"""static_instruction as types.Content, beside a templated instruction."""

from google.adk.agents import Agent
from google.genai import types

root_agent = Agent(
    name="tutor",
    model="gemini-2.5-flash",
    static_instruction=types.Content(
        role="user", parts=[types.Part(text="You are a patient maths tutor.")]
    ),
    instruction="The student's level is {level}.",
)
