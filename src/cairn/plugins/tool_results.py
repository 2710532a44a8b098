"""Whether a tool call's result reports a failure: the verdict the logging plugins share.

A tool may fail without raising: a ``ReflectAndRetryToolPlugin`` answer stands for an
error that was raised and handled, an MCP ``CallToolResult`` (or its dump) has ``isError``
set, or an app's own ``tool_result_classifier`` says so. The rules read only plain dict
entries of the result; they run none of its code.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from typing import Any, Literal, Protocol

from cairn.agents.context import Context
from cairn.plugins.failure_counts import REFLECT_AND_RETRY_RESPONSE_TYPE
from cairn.tools.base_tool import BaseTool

logger = logging.getLogger(__name__)

CLASSIFIED_AS_ERROR = "tool_result_classifier classified the tool result as an error."
MCP_ERROR = "Tool returned an MCP result with isError=true."
HANDLED_ERROR = "Tool raised an error that ReflectAndRetryToolPlugin handled."


@dataclasses.dataclass(frozen=True)
class ToolResultClassification:
    """A classifier's verdict on a tool result: ``status="ERROR"`` logs the call as a tool
    error (with ``error_message``, or a fixed one), ``"OK"`` as a completed call."""

    status: Literal["OK", "ERROR"]
    error_message: str | None = None

    def __post_init__(self) -> None:
        if self.status not in ("OK", "ERROR"):
            raise ValueError(
                f"ToolResultClassification.status must be 'OK' or 'ERROR', got {self.status!r}"
            )
        if self.error_message is not None and not isinstance(self.error_message, str):
            raise ValueError("ToolResultClassification.error_message must be a str or None")


class ToolResultClassifier(Protocol):
    """``classify(*, tool, tool_args, tool_context, result)``: a synchronous function that
    returns a ``ToolResultClassification``, or None to leave the result to the built-in
    rules."""

    def __call__(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> ToolResultClassification | None: ...


def check_classifier(classifier: Any) -> None:
    """Refuse a classifier the plugins could not call: not callable, async, or not taking
    the keywords ``tool``, ``tool_args``, ``tool_context`` and ``result``."""
    if classifier is None:
        return
    if not callable(classifier):
        raise ValueError(
            f"tool_result_classifier must be callable, got {type(classifier).__name__}"
        )
    call = getattr(classifier, "__call__", None)  # noqa: B004 - the method is what we inspect
    if inspect.iscoroutinefunction(classifier) or inspect.iscoroutinefunction(call):
        raise ValueError(
            "tool_result_classifier must be a plain (synchronous) function: the plugins call "
            "it inside after_tool_callback and do not await it"
        )
    try:
        inspect.signature(classifier).bind(
            tool=None, tool_args=None, tool_context=None, result=None
        )
    except (TypeError, ValueError) as error:
        raise ValueError(
            "tool_result_classifier must accept the keyword arguments tool, tool_args, "
            "tool_context and result"
        ) from error


def tool_error_message(
    *,
    tool: BaseTool,
    tool_args: dict[str, Any],
    tool_context: Context,
    result: Any,
    classifier: ToolResultClassifier | None = None,
) -> str | None:
    """The failure ``result`` reports, or None when the call succeeded.

    A ``ReflectAndRetryToolPlugin`` answer always counts (no classifier hides it); then
    the classifier's verdict; then MCP's ``isError``. A classifier that raises or answers
    with something else is skipped with a warning naming only the tool.
    """
    fields = _fields(result)
    if fields.get("response_type") == REFLECT_AND_RETRY_RESPONSE_TYPE:
        for key in ("error_details", "error_type"):
            value = fields.get(key)
            if isinstance(value, str) and value:
                return value
        return HANDLED_ERROR
    if classifier is not None:
        verdict: Any
        try:
            verdict = classifier(
                tool=tool, tool_args=tool_args, tool_context=tool_context, result=result
            )
        except Exception:
            verdict = _UNUSABLE
        if verdict is not None and not isinstance(verdict, ToolResultClassification):
            if inspect.iscoroutine(verdict):
                verdict.close()
            logger.warning(
                "tool_result_classifier failed or gave an unusable verdict for tool %s; "
                "the built-in rules apply",
                tool.name,
            )
        elif verdict is not None:
            if verdict.status == "OK":
                return None
            return verdict.error_message or CLASSIFIED_AS_ERROR
    if fields.get("isError") is True or fields.get("is_error") is True:
        return MCP_ERROR
    return None


_UNUSABLE = object()


def _fields(result: Any) -> dict[str, Any]:
    """The entries the rules read, from a dict result or an MCP result model's fields."""
    if isinstance(result, dict):
        entries = result
    elif type(result).__name__ == "CallToolResult":
        entries = dict(getattr(result, "__dict__", {}))
    else:
        return {}
    names = ("response_type", "error_details", "error_type", "isError", "is_error")
    return {key: value for key, value in entries.items() if type(key) is str and key in names}
