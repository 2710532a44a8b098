"""AgentTool: another agent, called by an LLM agent as if it were a function."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types
from pydantic import ValidationError

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext, InvocationFlags, new_invocation_id
from cairn.agents.llm_agent import LlmAgent
from cairn.events.event import Event
from cairn.events.json_values import copy_json
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.state import State
from cairn.tools.base_tool import BaseTool

_REQUEST = "request"


class AgentTool(BaseTool):
    """Wraps ``agent`` so a model can call it as a tool (ADK's ``AgentTool``).

    The tool is named after the agent and described by its ``description``.
    Its parameters are the agent's ``input_schema`` (an ``LlmAgent`` with one)
    or a single string, ``request``.

    Each call runs the agent in a fresh, private in-memory session seeded with
    the caller's current state (``temp:`` keys excepted), with the call's
    arguments as the user message. The result is the agent's last final reply:
    ``{"result": text}``, or the parsed dict when the agent has an
    ``output_schema``. State the agent writes (its ``output_key`` included) is
    forwarded to the caller's ``tool_context.state``, so it is committed with
    the caller's function-response event, in the caller's session.
    ``skip_summarization=True`` ends the caller's turn with the tool's result
    instead of handing it back to the caller's model.

    The child session lives only as long as the call: a child that pauses (a
    long-running tool, a confirmation) cannot be resumed later, and the
    child's own events are not stored in the caller's session.
    """

    def __init__(
        self, agent: BaseAgent, skip_summarization: bool = False, *, include_plugins: bool = True
    ) -> None:
        super().__init__(name=agent.name, description=agent.description)
        self.agent = agent
        self.skip_summarization = skip_summarization
        self.include_plugins = include_plugins

    def declaration(self) -> types.FunctionDeclaration:
        input_schema = self.agent.input_schema if isinstance(self.agent, LlmAgent) else None
        if input_schema is not None:
            schema = input_schema.model_json_schema()
            schema.pop("title", None)
        else:
            schema = {
                "type": "object",
                "properties": {_REQUEST: {"type": "string"}},
                "required": [_REQUEST],
            }
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )

    def _user_message(self, args: dict[str, Any]) -> types.Content | dict[str, Any]:
        """The child's user message, or an error result for the model."""
        input_schema = self.agent.input_schema if isinstance(self.agent, LlmAgent) else None
        if input_schema is not None:
            try:
                text = input_schema.model_validate(args).model_dump_json(exclude_none=True)
            except ValidationError as error:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in issue['loc']) or '(arguments)'}: {issue['msg']}"
                    for issue in error.errors()
                )
                return {
                    "error": f"invalid arguments for agent tool {self.name!r}: {problems}. Call "
                    "it again with arguments that match its parameters."
                }
        else:
            request = args.get(_REQUEST)
            if request is None:
                return {
                    "error": f"agent tool {self.name!r} needs a {_REQUEST!r} argument (a string "
                    "saying what it should do)"
                }
            text = request if isinstance(request, str) else json.dumps(request)
        return types.Content(role="user", parts=[types.Part(text=text)])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        message = self._user_message(args or {})
        if isinstance(message, dict):
            return message
        if self.skip_summarization:
            tool_context.actions.skip_summarization = True
        parent: InvocationContext = tool_context.invocation_context
        seed = {
            key: value
            for key, value in tool_context.state.to_dict().items()
            if not key.startswith(State.TEMP_PREFIX)
        }
        sessions = InMemorySessionService()
        session = await sessions.create_session(
            app_name=parent.app_name, user_id=parent.user_id, state=seed
        )
        start_calls = parent.flags.llm_calls
        child = InvocationContext(
            session_service=sessions,
            invocation_id=new_invocation_id(),
            agent=self.agent,
            session=session,
            artifact_service=parent.artifact_service,
            memory_service=parent.memory_service,
            credential_service=parent.credential_service,
            user_content=message,
            run_config=parent.run_config,
            plugin_manager=parent.plugin_manager if self.include_plugins else None,
            # The child's model calls count towards the caller's invocation-wide limit.
            flags=InvocationFlags(llm_calls=start_calls),
        )
        await sessions.append_event(
            session, Event(invocation_id=child.invocation_id, author="user", content=message)
        )
        final: Event | None = None
        events = self.agent.run_async(child)
        try:
            async for event in events:
                if event.partial:
                    continue
                await sessions.append_event(session, event)
                _forward_state(event, tool_context)
                if event.is_final_response() and event.author != "user":
                    final = event
        finally:
            await events.aclose()
            parent.flags.llm_calls += child.flags.llm_calls - start_calls
        return self._result(final)

    def _result(self, final: Event | None) -> dict[str, Any]:
        if final is None:
            return {"result": ""}
        text = "\n".join(
            part.text
            for part in (final.content.parts or [] if final.content else [])
            if part.text and not part.thought
        )
        if final.error_code and not text:
            return {"error": f"agent {self.agent.name!r} failed: {final.error_message}"}
        output_schema = self.agent.output_schema if isinstance(self.agent, LlmAgent) else None
        if output_schema is not None and text:
            if final.error_code:
                return {"error": final.error_message, "result": text}
            dumped: dict[str, Any] = output_schema.model_validate_json(text).model_dump(
                mode="json", exclude_none=True
            )
            return dumped
        return {"result": text}


def _forward_state(event: Event, tool_context: Context) -> None:
    for key, value in event.actions.state_delta.items():
        tool_context.state[key] = copy_json(value)


__all__ = ["AgentTool"]
