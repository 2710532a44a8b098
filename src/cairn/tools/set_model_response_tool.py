"""``set_model_response``: how an agent with both ``output_schema`` and tools answers.

A model cannot be held to a response schema while it may also call tools, so
such an agent is offered this tool (first, as ADK offers it) and told to give
its final answer through it. A valid call's result is the structured answer:
the agent then writes it as its final model event (the JSON text, saved to its
``output_key``). Arguments that do not match the schema come back to the model
as an error to fix, and the turn goes on.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any, Final

from google.genai import types
from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

from cairn.models.llm_request import LlmRequest
from cairn.tools.base_tool import BaseTool

INSTRUCTION: Final = (
    "Give your final answer by calling set_model_response, whose parameters are the fields "
    "of the answer; do not answer in plain text. Use your other tools first if you need "
    "them, then call set_model_response once with the complete answer."
)


class SetModelResponseTool(BaseTool):
    """The tool an agent with ``output_schema`` and tools gives its final answer through.

    ``output_schema`` is a pydantic model (its fields are the tool's parameters), as an
    agent's is, or, as ADK also accepts for the tool itself, ``list[Model]`` (one
    parameter, ``items``), another type such as ``list[str]`` or ``dict[str, int]``, or a
    raw JSON-schema dict (one parameter, ``response``).
    """

    NAME: Final = "set_model_response"

    def __init__(self, output_schema: Any) -> None:
        super().__init__(
            name=self.NAME,
            description="Set your final response using the required output schema. Use "
            "this tool to give your final structured answer instead of answering in text.",
        )
        if isinstance(output_schema, types.Schema):
            output_schema = output_schema.model_dump(exclude_none=True)
        self.output_schema = output_schema
        self._is_basemodel = _is_model(output_schema)
        self._is_list_of_basemodel = _list_item_model(output_schema) is not None
        self.func = _signature_function(self.NAME, self._parameters())
        """A function with the tool's parameters (keyword-only), as ADK's tool has."""

    def _parameters(self) -> dict[str, tuple[Any, Any]]:
        """Each parameter's annotation and default (``...``: required)."""
        schema = self.output_schema
        if self._is_basemodel:
            return {
                name: (field.annotation, ... if field.is_required() else field.get_default())
                for name, field in schema.model_fields.items()
            }
        if self._is_list_of_basemodel:
            return {"items": (schema, ...)}
        return {"response": (dict if isinstance(schema, dict) else schema, ...)}

    def declaration(self) -> types.FunctionDeclaration:
        schema_json: dict[str, Any]
        if self._is_basemodel:
            schema_json = self.output_schema.model_json_schema()
        elif isinstance(self.output_schema, dict):
            schema_json = {
                "type": "object",
                "properties": {"response": self.output_schema},
                "required": ["response"],
            }
        else:
            fields: dict[str, Any] = {
                name: (annotation, ...) for name, (annotation, _) in self._parameters().items()
            }
            answer_model: type[BaseModel] = create_model("answer", **fields)
            schema_json = answer_model.model_json_schema()
        schema_json.pop("title", None)
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema_json
        )

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        llm_request.append_tools([self])
        llm_request.append_instructions([INSTRUCTION])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        args = args or {}
        try:
            result = self._validated(args)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in issue['loc']) or '(arguments)'}: {issue['msg']}"
                for issue in error.errors()
            )
            return {
                "error": f"the answer does not match {_schema_name(self.output_schema)}: "
                f"{problems}. Call set_model_response again with all required fields, of the "
                "right types."
            }
        tool_context.actions.set_model_response = result
        return result

    def _validated(self, args: dict[str, Any]) -> Any:
        """The answer in ``args`` as JSON values, checked against the schema."""
        schema = self.output_schema
        if self._is_basemodel:
            return schema.model_validate(args).model_dump(mode="json", exclude_none=True)
        if isinstance(schema, dict):  # a raw JSON schema: the answer as given
            return args.get("response")
        name = "items" if self._is_list_of_basemodel else "response"
        adapter: TypeAdapter[Any] = TypeAdapter(schema)
        value = adapter.validate_python(args.get(name))
        return adapter.dump_python(value, mode="json", exclude_none=True)


def _is_model(schema: Any) -> bool:
    return isinstance(schema, type) and issubclass(schema, BaseModel)


def _list_item_model(schema: Any) -> type[BaseModel] | None:
    """``M`` for ``list[M]`` of a pydantic model ``M``; else None."""
    if typing.get_origin(schema) is not list:
        return None
    [item] = typing.get_args(schema) or [None]
    return item if _is_model(item) else None


def _schema_name(schema: Any) -> str:
    return getattr(schema, "__name__", None) or str(schema)


def _signature_function(name: str, parameters: dict[str, tuple[Any, Any]]) -> Any:
    """A function called ``name`` taking ``parameters`` as keywords; it answers that the
    response is set (the tool's own ``run_async`` does the work)."""

    def set_model_response(**kwargs: Any) -> str:
        return "Response set successfully."

    set_model_response.__name__ = name
    set_model_response.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                key,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=annotation,
                default=inspect.Parameter.empty if default is ... else default,
            )
            for key, (annotation, default) in parameters.items()
        ]
    )
    return set_model_response


__all__ = ["SetModelResponseTool"]
