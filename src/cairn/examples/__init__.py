"""Few-shot examples an agent's model is shown (ADK's ``google.adk.examples``).

An ``Example`` is a user message and what the model should answer (tool calls and their
results included); ``ExampleTool`` puts a list of them, or those a ``BaseExampleProvider``
picks for the user's message, into the system instruction of each model call.
"""

from cairn.examples.base_example_provider import BaseExampleProvider
from cairn.examples.example import Example

__all__ = ["BaseExampleProvider", "Example"]
