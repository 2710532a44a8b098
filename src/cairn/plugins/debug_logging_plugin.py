"""DebugLoggingPlugin: everything an invocation did, written to a YAML file when it ends.

Each invocation is one YAML document appended to ``output_path``: its user message, every
event, model request (model, system instruction, contents, tools) and response, tool call
and result, error, and the session state at the end. Secrets are redacted (credential
objects, keys that name a secret such as ``api_key`` or ``*_token``, armored private keys,
every ``temp:`` state key), but the file still holds whole prompts and replies: it is
created readable by its owner only.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import logging
import os
import re
from pathlib import Path
from typing import Any

from google.genai import types
from pydantic import BaseModel

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.auth.auth_credential import AuthCredential, HttpAuth, HttpCredentials, OAuth2Auth
from cairn.events.event import Event
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.plugins.base_plugin import BasePlugin
from cairn.plugins.tool_results import ToolResultClassifier, check_classifier, tool_error_message
from cairn.tools.base_tool import BaseTool

logger = logging.getLogger(__name__)

REDACTED = "[REDACTED]"
_CREDENTIALS = (AuthCredential, HttpAuth, HttpCredentials, OAuth2Auth)
_SECRET_KEYS = frozenset(
    {
        "access_token",
        "api_key",
        "auth_code",
        "auth_response_uri",
        "authorization",
        "client_secret",
        "code_verifier",
        "id_token",
        "password",
        "private_key",
        "private_key_id",
        "proxy_authorization",
        "refresh_token",
        "secret",
        "signature",
        "token",
        "x_api_key",
    }
)
_SECRET_WORDS = ("api_key", "credentials", "passwd", "password", "private_key", "secret")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S
)
_MAX_DEPTH = 20


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a secret (scope prefixes, case and separators aside)."""
    name = key.removeprefix("app:").removeprefix("user:")
    name = _CAMEL.sub("_", name).lower().replace("-", "_")
    return (
        name in _SECRET_KEYS
        or any(word in name for word in _SECRET_WORDS)
        or name.endswith("_token")
    )


def redact(value: Any, depth: int = 0) -> Any:
    """``value`` as plain YAML-able data, secrets replaced by ``[REDACTED]``."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, _CREDENTIALS):
        return REDACTED
    if depth > _MAX_DEPTH:
        return f"<{type(value).__name__} ...>"
    if isinstance(value, str):
        return _PRIVATE_KEY.sub(REDACTED, value)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, enum.Enum):
        return redact(value.value, depth + 1)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {
            str(k): REDACTED
            if isinstance(k, str) and (is_secret_key(k) or k.startswith("temp:"))
            else redact(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(item, depth + 1) for item in value]
    if isinstance(value, BaseModel):
        fields = {name: getattr(value, name) for name in type(value).model_fields}
        return redact({k: v for k, v in fields.items() if v is not None}, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return redact(dataclasses.asdict(value), depth + 1)
    return redact(str(value), depth + 1)


def _content(content: types.Content | None) -> dict[str, Any] | None:
    if content is None:
        return None
    parts: list[dict[str, Any]] = []
    for part in content.parts or []:
        shown: dict[str, Any] = {}
        if part.text:
            shown["text"] = part.text
        if part.function_call is not None:
            call = part.function_call
            shown["function_call"] = {"id": call.id, "name": call.name, "args": call.args}
        if part.function_response is not None:
            response = part.function_response
            shown["function_response"] = {
                "id": response.id,
                "name": response.name,
                "response": response.response,
            }
        if part.inline_data is not None:
            shown["inline_data"] = {
                "mime_type": part.inline_data.mime_type,
                "display_name": part.inline_data.display_name,
                "_data_omitted": True,
            }
        if part.file_data is not None:
            shown["file_data"] = {
                "file_uri": part.file_data.file_uri,
                "mime_type": part.file_data.mime_type,
            }
        if part.executable_code is not None:
            shown["executable_code"] = {"code": part.executable_code.code}
        if part.code_execution_result is not None:
            shown["code_execution_result"] = {"output": part.code_execution_result.output}
        if shown:
            parts.append(shown)
    return {"role": content.role, "parts": parts}


@dataclasses.dataclass
class _Invocation:
    invocation_id: str
    session_id: str
    app_name: str
    user_id: str
    start_time: str
    entries: list[dict[str, Any]] = dataclasses.field(default_factory=list)


class DebugLoggingPlugin(BasePlugin):
    """Records each invocation in full to ``output_path`` (YAML, one document each).

    ``include_session_state``: add the session's state at the end of each invocation;
    ``include_system_instruction``: the whole system instruction of each model request
    (else its length only).
    """

    def __init__(
        self,
        *,
        name: str = "debug_logging_plugin",
        output_path: str = "adk_debug.yaml",
        include_session_state: bool = True,
        include_system_instruction: bool = True,
        tool_result_classifier: ToolResultClassifier | None = None,
    ) -> None:
        super().__init__(name)
        check_classifier(tool_result_classifier)
        self._output_path = Path(output_path)
        self._include_session_state = include_session_state
        self._include_system_instruction = include_system_instruction
        self._tool_result_classifier = tool_result_classifier
        self._invocations: dict[str, _Invocation] = {}
        self._errors_recorded: set[tuple[str, str | None]] = set()

    def _add(
        self, invocation_id: str, kind: str, agent_name: str | None = None, **data: Any
    ) -> None:
        invocation = self._invocations.get(invocation_id)
        if invocation is None:
            return
        entry: dict[str, Any] = {
            "timestamp": datetime.datetime.now().isoformat(),
            "entry_type": kind,
            "invocation_id": invocation_id,
        }
        if agent_name is not None:
            entry["agent_name"] = agent_name
        entry["data"] = redact({k: v for k, v in data.items() if v is not None})
        invocation.entries.append(entry)

    def _start(self, ctx: InvocationContext) -> None:
        if ctx.invocation_id not in self._invocations:
            self._invocations[ctx.invocation_id] = _Invocation(
                invocation_id=ctx.invocation_id,
                session_id=ctx.session.id,
                app_name=ctx.app_name,
                user_id=ctx.user_id,
                start_time=datetime.datetime.now().isoformat(),
            )

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        self._start(invocation_context)
        self._add(invocation_context.invocation_id, "user_message", content=_content(user_message))
        return None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        self._start(invocation_context)
        self._add(
            invocation_context.invocation_id,
            "invocation_start",
            agent_name=invocation_context.agent.name,
            branch=invocation_context.branch,
        )
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        self._add(
            invocation_context.invocation_id,
            "event",
            agent_name=event.author,
            event_id=event.id,
            author=event.author,
            content=_content(event.content),
            is_final_response=event.is_final_response(),
            partial=event.partial,
            branch=event.branch,
            node_path=event.node_info.path or None,
            error_code=event.error_code,
            error_message=event.error_message,
            state_delta=dict(event.actions.state_delta) or None,
            artifact_delta=dict(event.actions.artifact_delta) or None,
            long_running_tool_ids=sorted(event.long_running_tool_ids or []) or None,
        )
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        invocation_id = invocation_context.invocation_id
        if self._include_session_state:
            self._add(invocation_id, "session_state", state=dict(invocation_context.session.state))
        self._add(invocation_id, "invocation_end")
        invocation = self._invocations.pop(invocation_id, None)
        if invocation is not None:
            self._write(invocation)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        invocation_id = invocation_context.invocation_id
        self._add(invocation_id, "invocation_error", error=f"{type(error).__name__}: {error}")
        invocation = self._invocations.pop(invocation_id, None)
        if invocation is not None:
            self._write(invocation)

    def _write(self, invocation: _Invocation) -> None:
        import yaml

        document = {
            "invocation_id": invocation.invocation_id,
            "session_id": invocation.session_id,
            "app_name": invocation.app_name,
            "user_id": invocation.user_id,
            "start_time": invocation.start_time,
            "entries": invocation.entries,
        }
        try:
            descriptor = os.open(self._output_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(descriptor, "a", encoding="utf-8") as out:
                out.write("---\n")
                yaml.safe_dump(
                    document, out, sort_keys=False, allow_unicode=True, default_flow_style=False
                )
        except OSError:
            logger.exception("DebugLoggingPlugin could not write %s", self._output_path)

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        self._add(
            callback_context.invocation_id,
            "agent_start",
            agent_name=agent.name,
            branch=callback_context.invocation_context.branch,
        )
        return None

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        self._add(callback_context.invocation_id, "agent_end", agent_name=agent.name)
        return None

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        instruction = llm_request.system_instruction_text
        self._add(
            callback_context.invocation_id,
            "llm_request",
            agent_name=callback_context.agent_name,
            model=llm_request.model,
            system_instruction=instruction
            if self._include_system_instruction
            else f"<{len(instruction)} characters>",
            contents=[_content(content) for content in llm_request.contents],
            tools=list(llm_request.tools_dict) or None,
        )
        return None

    async def after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        final = llm_response.partial is not True
        reason = llm_response.finish_reason
        self._add(
            callback_context.invocation_id,
            "llm_response",
            agent_name=callback_context.agent_name,
            content=_content(llm_response.content),
            partial=llm_response.partial,
            error_code=llm_response.error_code,
            error_message=llm_response.error_message,
            finish_reason=getattr(reason, "value", reason) if final and reason else None,
            usage_metadata=llm_response.usage_metadata,
        )
        return None

    async def on_model_error_callback(
        self, *, callback_context: Context, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        self._add(
            callback_context.invocation_id,
            "llm_error",
            agent_name=callback_context.agent_name,
            error_type=type(error).__name__,
            error_message=str(error),
        )
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        self._add(
            tool_context.invocation_id,
            "tool_call",
            agent_name=tool_context.agent_name,
            tool_name=tool.name,
            function_call_id=tool_context.function_call_id,
            args=tool_args,
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
        if key in self._errors_recorded:
            self._errors_recorded.discard(key)
            return None
        error = tool_error_message(
            tool=tool,
            tool_args=tool_args,
            tool_context=tool_context,
            result=result,
            classifier=self._tool_result_classifier,
        )
        self._add(
            tool_context.invocation_id,
            "tool_error" if error is not None else "tool_response",
            agent_name=tool_context.agent_name,
            tool_name=tool.name,
            function_call_id=tool_context.function_call_id,
            result=result,
            error_message=error,
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
        self._errors_recorded.add((tool_context.invocation_id, tool_context.function_call_id))
        self._add(
            tool_context.invocation_id,
            "tool_error",
            agent_name=tool_context.agent_name,
            tool_name=tool.name,
            function_call_id=tool_context.function_call_id,
            args=tool_args,
            error_type=type(error).__name__,
            error_message=str(error),
        )
        return None
