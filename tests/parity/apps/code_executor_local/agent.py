"""An LlmAgent with ADK's UnsafeLocalCodeExecutor: a code block runs, the model goes on."""

from google.adk.agents import Agent
from google.adk.code_executors import UnsafeLocalCodeExecutor

root_agent = Agent(
    name="calculator",
    model="gemini-2.5-flash",
    instruction="You compute answers by writing Python.",
    code_executor=UnsafeLocalCodeExecutor(),
    output_key="answer",
)
