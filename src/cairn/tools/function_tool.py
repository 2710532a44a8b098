"""Plain Python functions as tools: schema from type hints, description from the docstring."""

from __future__ import annotations

import copy
import inspect
import re
import typing
from collections.abc import Callable
from typing import Any, Final

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from cairn.tools.base_tool import BaseTool, is_context_annotation
from cairn.user_code import call_user_code

_CONTEXT_PARAMETER = "tool_context"
_OTHER_SECTIONS = {"returns", "return", "raises", "yields", "example", "examples"}


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(summary, {argument: description}) from a Google- or Sphinx-style docstring."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    arguments: dict[str, str] = {}
    summary_lines: list[str] = []
    section: str | None = None
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        header = stripped.rstrip(":").lower()
        if stripped.endswith(":") and header in {"args", "arguments", "parameters", "params"}:
            section, current = "args", None
            continue
        if stripped.endswith(":") and header in _OTHER_SECTIONS:
            section, current = "other", None
            continue
        sphinx = re.match(r":param\s+(?:\w+\s+)?(\w+):\s*(.*)", stripped)
        if sphinx:
            arguments[sphinx.group(1)] = sphinx.group(2)
            continue
        if section == "args":
            match = re.match(r"(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)", stripped)
            if match and not line.startswith((" " * 8, "\t\t")):
                current = match.group(1)
                arguments[current] = match.group(2)
            elif current and stripped:
                arguments[current] = f"{arguments[current]} {stripped}".strip()
        elif section is None:
            summary_lines.append(line)
    return "\n".join(summary_lines).strip(), arguments


class FunctionTool(BaseTool):
    """A sync or async function the model can call (a sync one runs on a thread, so it never
    blocks the event loop).

    Parameters become a JSON schema (pydantic models, enums, optional and
    default arguments, lists and nested objects are all understood); the
    docstring's summary and ``Args:`` lines become the descriptions. A
    parameter annotated ``ToolContext`` (or named ``tool_context``) receives
    the call's context. Arguments the model gets wrong come back to it as an
    error result naming the problem, so it can try again.

    ``require_confirmation=True`` (or a predicate called with the call's arguments as
    keywords, see ``BaseTool.require_confirmation``) pauses each call until a human
    approves it; ``idempotent=True`` lets a call whose result was lost in a crash run
    again on resume.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        is_long_running: bool = False,
        require_confirmation: bool | Callable[..., Any] = False,
        idempotent: bool = False,
    ) -> None:
        summary, argument_docs = _parse_docstring(func.__doc__)
        super().__init__(
            name=name or str(getattr(func, "__name__", "tool")),
            description=description if description is not None else summary,
            is_long_running=is_long_running,
            require_confirmation=require_confirmation,
            idempotent=idempotent,
        )
        self.func = func
        self._context_parameter: str | None = None
        self._arguments = self._arguments_model(func, argument_docs)
        self._parameters_schema: dict[str, Any] | None = None

    _supplied_parameters: frozenset[str] = frozenset()
    """Parameters the model neither sees nor fills: the tool supplies them (a subclass's)."""

    def _arguments_model(self, func: Callable[..., Any], docs: dict[str, str]) -> type[BaseModel]:
        signature = inspect.signature(func)
        try:
            hints = typing.get_type_hints(func, include_extras=True)
        except Exception:  # unresolvable forward references: fall back to raw annotations
            hints = {}
        fields: dict[str, Any] = {}
        for parameter in signature.parameters.values():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            if parameter.name in self._supplied_parameters:
                continue
            annotation = hints.get(parameter.name, parameter.annotation)
            if parameter.name == _CONTEXT_PARAMETER or is_context_annotation(annotation):
                self._context_parameter = parameter.name
                continue
            if annotation is inspect.Parameter.empty:
                annotation = Any
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            fields[parameter.name] = (
                annotation,
                Field(default, description=docs.get(parameter.name) or None),
            )
        return create_model(
            f"{self.name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
        )

    def declaration(self) -> types.FunctionDeclaration:
        declared = self._get_declaration()
        assert declared is not None  # a subclass that declares nothing overrides this too
        return declared

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        """The declaration from the function's signature and docstring (ADK's hook: a
        subclass may override it and call ``super()._get_declaration()``)."""
        if self._parameters_schema is None:
            # The arguments model never changes: its JSON schema is made once (pydantic's
            # schema generation was a fifth of a scripted model call), and each declaration
            # gets its own copy of it.
            schema = self._arguments.model_json_schema()
            schema.pop("title", None)
            self._parameters_schema = schema
        schema = copy.deepcopy(self._parameters_schema)
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        return await self._call_function(args, tool_context, supplied={})

    async def _call_function(
        self, args: dict[str, Any], tool_context: Any, *, supplied: dict[str, Any]
    ) -> Any:
        """Validate the model's ``args`` and call the function with them, the call's context
        and the ``supplied`` values of ``_supplied_parameters``; bad arguments come back to
        the model as an error result."""
        try:
            parsed = self._arguments.model_validate(args or {})
        except ValidationError as error:
            return invalid_arguments_result(self.name, error)
        kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        for name, field in type(parsed).model_fields.items():
            # As in ADK (and PEP 484's numeric tower), an int the model sent for a float
            # parameter is passed as it came: 250 stays 250, not 250.0.
            raw = (args or {}).get(name)
            if field.annotation is float and type(raw) is int:
                kwargs[name] = raw
        if self._context_parameter is not None:
            kwargs[self._context_parameter] = tool_context
        return await call_user_code(self.func, **kwargs, **supplied)


class LongRunningFunctionTool(FunctionTool):
    """A function whose work finishes later (a human, a job queue, another system).

    The call's id goes into the model event's ``long_running_tool_ids``. If the
    function returns None, no response is sent and the invocation pauses; a
    later ``FunctionResponse`` with that id (sent through ``run_async``)
    resumes it.
    """

    def __init__(self, func: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(func, is_long_running=True, **kwargs)

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        """The function's declaration, its description ending with ADK's note to the model."""
        declared = super()._get_declaration()
        if declared is None:
            return None
        description = f"{declared.description or ''}\n\n{LONG_RUNNING_NOTE}".lstrip("\n")
        return declared.model_copy(update={"description": description})


LONG_RUNNING_NOTE: Final = (
    "NOTE: This is a long-running operation. Do not call this tool again if it has already "
    "returned some intermediate or pending status."
)
"""What a long-running tool's declaration tells the model (ADK's words)."""


def invalid_arguments_result(tool_name: str, error: ValidationError) -> dict[str, Any]:
    """What the model gets for a call whose arguments do not fit the tool: each problem,
    and what to do, so that it can call again."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in issue['loc']) or '(arguments)'}: {issue['msg']}"
        for issue in error.errors()
    )
    return {
        "error": f"invalid arguments for tool {tool_name!r}: {problems}. Call it again with "
        "arguments that match its parameters."
    }


def to_json_result(result: Any) -> dict[str, Any]:
    """A tool's return value as the dict a FunctionResponse carries: a dict as it is, anything
    else (a pydantic model too, as JSON without its ``None`` fields) under ``"result"``,
    as ADK sends it."""
    if isinstance(result, BaseModel):  # by field name, as ADK's models are (no aliases)
        return {"result": result.model_dump(mode="json", by_alias=False, exclude_none=True)}
    if isinstance(result, dict):
        return result
    return {"result": result}
