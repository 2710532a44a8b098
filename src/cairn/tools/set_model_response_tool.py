"""``set_model_response``: how an agent with both ``output_schema`` and tools answers.

A model cannot be held to a response schema while it may also call tools, so
such an agent is offered this tool (first, as ADK offers it) and told to give
its final answer through it. A valid call's result is the structured answer:
the agent then writes it as its final model event (the JSON text, saved to its
``output_key``). Arguments that do not match the schema come back to the model
as an error to fix, and the turn goes on.
"""

from __future__ import annotations

from typing import Any, Final

from google.genai import types
from pydantic import BaseModel, ValidationError

from cairn.models.llm_request import LlmRequest
from cairn.tools.base_tool import BaseTool

INSTRUCTION: Final = (
    "Give your final answer by calling set_model_response, whose parameters are the fields "
    "of the answer; do not answer in plain text. Use your other tools first if you need "
    "them, then call set_model_response once with the complete answer."
)


class SetModelResponseTool(BaseTool):
    """The tool an agent with ``output_schema`` and tools gives its final answer through."""

    NAME: Final = "set_model_response"

    def __init__(self, output_schema: type[BaseModel]) -> None:
        super().__init__(
            name=self.NAME,
            description="Give your final answer, as structured data with the fields below "
            "(instead of a text reply).",
        )
        self.output_schema = output_schema

    def declaration(self) -> types.FunctionDeclaration:
        schema = self.output_schema.model_json_schema()
        schema.pop("title", None)
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        llm_request.append_tools([self])
        llm_request.append_instructions([INSTRUCTION])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        try:
            answer = self.output_schema.model_validate(args or {})
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in issue['loc']) or '(arguments)'}: {issue['msg']}"
                for issue in error.errors()
            )
            return {
                "error": f"the answer does not match {self.output_schema.__name__}: {problems}. "
                "Call set_model_response again with all required fields, of the right types."
            }
        result = answer.model_dump(mode="json", exclude_none=True)
        tool_context.actions.set_model_response = result
        return result


__all__ = ["SetModelResponseTool"]
