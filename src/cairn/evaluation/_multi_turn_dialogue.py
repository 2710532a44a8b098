"""A whole conversation as text for a judge: the turns, the agents' instructions and their
tools."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types as genai_types

from .eval_case import Invocation, InvocationEvents


def _texts(content: genai_types.Content | None) -> str:
    if content is None or not content.parts:
        return ""
    return " ".join(part.text for part in content.parts if part.text)


def _json(value: Any) -> str:
    return json.dumps(dict(value), default=str) if value else "{}"


def format_dialogue(invocations: list[Invocation]) -> str:
    """One line per message, tool call and tool result, each tagged with its speaker and its
    turn number (from 1)."""
    lines: list[str] = []
    for number, invocation in enumerate(invocations, start=1):
        said = _texts(invocation.user_content)
        if said:
            lines.append(f"USER TURN {number}: {said}")
        data = invocation.intermediate_data
        agent = "agent"
        if isinstance(data, InvocationEvents):
            if data.invocation_events:
                agent = data.invocation_events[0].author
            for event in data.invocation_events:
                who = "USER" if event.author.lower() == "user" else f"AGENT ({event.author})"
                if event.content is None or not event.content.parts:
                    continue
                text = _texts(event.content)
                if text:
                    lines.append(f"{who} TURN {number}: {text}")
                for part in event.content.parts:
                    if part.function_call:
                        call = part.function_call
                        lines.append(
                            f"{who} TURN {number} (tool call): {call.name}({_json(call.args)})"
                        )
                    if part.function_response:
                        result = part.function_response
                        lines.append(
                            f"{who} TURN {number} (tool output): {result.name} -> "
                            f"{_json(result.response)}"
                        )
        answer = _texts(invocation.final_response)
        if answer:
            lines.append(f"AGENT ({agent}) TURN {number}: {answer}")
    return "\n".join(lines)


def _function_declarations(tool: Any) -> list[Any]:
    if isinstance(tool, dict):
        return list(tool.get("function_declarations") or tool.get("functionDeclarations") or [])
    return list(getattr(tool, "function_declarations", None) or [])


def _field(declaration: Any, name: str) -> Any:
    if isinstance(declaration, dict):
        return declaration.get(name)
    return getattr(declaration, name, None)


def format_instructions(invocations: list[Invocation]) -> str:
    """Each agent's instructions once, in the order the invocations name the agents."""
    blocks: dict[str, None] = {}
    for invocation in invocations:
        if invocation.app_details:
            for name, details in invocation.app_details.agent_details.items():
                blocks[f"Agent {name} Instructions:\n{details.instructions}"] = None
    return "\n\n".join(blocks)


def format_tools(invocations: list[Invocation]) -> str:
    """Each agent's tools once, as ``- name: description`` lines under ``Agent: name``."""
    lines: dict[str, None] = {}
    for invocation in invocations:
        if invocation.app_details:
            for name, details in invocation.app_details.agent_details.items():
                lines[f"Agent: {name}"] = None
                for tool in details.tool_declarations:
                    for declaration in _function_declarations(tool):
                        lines[
                            f"- {_field(declaration, 'name')}: {_field(declaration, 'description')}"
                        ] = None
    return "\n".join(lines)
