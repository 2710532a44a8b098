"""LoggingPlugin: prints what happens at every hook, for following a run in a terminal."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.plugins.base_plugin import BasePlugin
from cairn.plugins.tool_results import ToolResultClassifier, check_classifier, tool_error_message
from cairn.tools.base_tool import BaseTool


class LoggingPlugin(BasePlugin):
    """Prints (to stdout, dimmed) each user message, invocation start and end, agent run,
    model request and response, tool call and result, event and error.

    A tool call that raised, or whose result reports a failure (a
    ``ReflectAndRetryToolPlugin`` answer, an MCP result with ``isError``, or what
    ``tool_result_classifier`` calls an error), is printed as a ``TOOL ERROR``; an error
    is printed once even when a later plugin's answer to it comes back as the result.
    """

    def __init__(
        self,
        name: str = "logging_plugin",
        *,
        tool_result_classifier: ToolResultClassifier | None = None,
    ) -> None:
        super().__init__(name)
        check_classifier(tool_result_classifier)
        self._tool_result_classifier = tool_result_classifier
        self._errors_printed: set[tuple[str, str | None]] = set()

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        self._log(
            "USER MESSAGE RECEIVED",
            invocation=invocation_context.invocation_id,
            session=invocation_context.session.id,
            user=invocation_context.user_id,
            app=invocation_context.app_name,
            root_agent=invocation_context.agent.name,
            content=_content(user_message),
            branch=invocation_context.branch,
        )
        return None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        self._log(
            "INVOCATION STARTING",
            invocation=invocation_context.invocation_id,
            starting_agent=invocation_context.agent.name,
        )
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        fields: dict[str, Any] = {
            "event": event.id,
            "author": event.author,
            "content": _content(event.content),
            "final_response": event.is_final_response(),
        }
        if event.get_function_calls():
            fields["function_calls"] = [c.name for c in event.get_function_calls()]
        if event.get_function_responses():
            fields["function_responses"] = [r.name for r in event.get_function_responses()]
        if event.long_running_tool_ids:
            fields["long_running_tools"] = sorted(event.long_running_tool_ids)
        if event.node_info.path:
            fields["node_path"] = event.node_info.path
            if not event.partial and event.output is not None:
                fields["node_output"] = _clip(repr(event.output), 300)
        if event.error_code:
            fields["error"] = f"[{event.error_code}] {event.error_message or ''}".rstrip()
        self._log("EVENT YIELDED", **fields)
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._log(
            "INVOCATION COMPLETED",
            invocation=invocation_context.invocation_id,
            final_agent=invocation_context.agent.name,
        )

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        self._log("INVOCATION FAILED", invocation=invocation_context.invocation_id, error=error)

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        self._log(
            "AGENT STARTING",
            agent=agent.name,
            invocation=callback_context.invocation_id,
            branch=callback_context.invocation_context.branch,
        )
        return None

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        self._log("AGENT COMPLETED", agent=agent.name, invocation=callback_context.invocation_id)
        return None

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        self._log(
            "LLM REQUEST",
            model=llm_request.model or "default",
            agent=callback_context.agent_name,
            system_instruction=_clip(llm_request.system_instruction_text, 200) or None,
            tools=list(llm_request.tools_dict) or None,
        )
        return None

    async def after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        final = llm_response.partial is not True
        fields: dict[str, Any] = {"agent": callback_context.agent_name}
        if final and llm_response.error_code:
            fields["error"] = f"[{llm_response.error_code}] {llm_response.error_message}"
        else:
            fields["content"] = _content(llm_response.content)
            if llm_response.partial:
                fields["partial"] = True
        if final and llm_response.finish_reason:
            reason = llm_response.finish_reason
            fields["finish_reason"] = getattr(reason, "value", reason)
        usage = llm_response.usage_metadata
        if usage is not None:
            fields["tokens"] = (
                f"input {usage.prompt_token_count}, output {usage.candidates_token_count}"
            )
        self._log("LLM RESPONSE", **fields)
        return None

    async def on_model_error_callback(
        self, *, callback_context: Context, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        self._log("LLM ERROR", agent=callback_context.agent_name, error=error)
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        self._log(
            "TOOL STARTING",
            tool=tool.name,
            agent=tool_context.agent_name,
            call=tool_context.function_call_id,
            arguments=_clip(str(tool_args), 300),
        )
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        key = (tool_context.invocation_id, tool_context.function_call_id)
        if key in self._errors_printed:
            self._errors_printed.discard(key)  # the answer to an error printed already
            return None
        error = tool_error_message(
            tool=tool,
            tool_args=tool_args,
            tool_context=tool_context,
            result=result,
            classifier=self._tool_result_classifier,
        )
        title = "TOOL ERROR" if error is not None else "TOOL COMPLETED"
        self._log(
            title,
            tool=tool.name,
            agent=tool_context.agent_name,
            call=tool_context.function_call_id,
            result=_clip(str(result), 300),
            error=error,
        )
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: Exception,
    ) -> dict[str, Any] | None:
        self._errors_printed.add((tool_context.invocation_id, tool_context.function_call_id))
        self._log(
            "TOOL ERROR",
            tool=tool.name,
            agent=tool_context.agent_name,
            call=tool_context.function_call_id,
            arguments=_clip(str(tool_args), 300),
            error=error,
        )
        return None

    def _log(self, title: str, **fields: Any) -> None:
        lines = [title]
        for key, value in fields.items():
            if value is not None:
                lines.append(f"   {key.replace('_', ' ').capitalize()}: {value}")
        for line in lines:
            print(f"\033[90m[{self.name}] {line}\033[0m")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _content(content: types.Content | None) -> str:
    """One line per content: its parts, text clipped."""
    if content is None or not content.parts:
        return "None"
    shown = []
    for part in content.parts:
        if part.text:
            shown.append(f"text: {_clip(part.text.strip(), 200)!r}")
        elif part.function_call is not None:
            shown.append(f"function_call: {part.function_call.name}")
        elif part.function_response is not None:
            shown.append(f"function_response: {part.function_response.name}")
        elif part.code_execution_result is not None:
            shown.append("code_execution_result")
        else:
            shown.append("other_part")
    return " | ".join(shown)
