"""``load_artifacts``: the model is told which artifacts exist and can ask to see some."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from cairn.models.llm_request import LlmRequest
from cairn.tools.base_tool import BaseTool

_TEXT_LIKE = ("text/", "application/json", "application/xml", "application/yaml")


class LoadArtifactsTool(BaseTool):
    """Lists the session's artifacts in the instruction; loads those the model asks for.

    Each request tells the model the filenames visible from the session (its
    own and the user's ``user:`` ones). When the model calls
    ``load_artifacts(artifact_names=[...])``, the next request carries the
    named artifacts' contents. They are shown to the model, not copied into
    the session's events: the log keeps only the names.
    """

    def __init__(self) -> None:
        super().__init__(
            name="load_artifacts",
            description=(
                "Loads the named artifacts so that their contents are shown to you in the "
                "next step."
            ),
            idempotent=True,
        )

    def declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {
                    "artifact_names": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "The filenames of the artifacts to load.",
                    }
                },
                "required": ["artifact_names"],
            },
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        names = [str(name) for name in args.get("artifact_names") or []]
        return {
            "artifact_names": names,
            "status": "The contents of these artifacts are shown to you in the next step.",
        }

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        llm_request.append_tools([self])
        if tool_context.invocation_context.artifact_service is None:
            return
        available = await tool_context.list_artifacts()
        if not available:
            return
        paragraphs = [
            "You have these artifacts: "
            + json.dumps(available)
            + ". When the user's request needs one of them, call load_artifacts with its name "
            "to see its contents."
        ]
        for name in _requested_names(tool_context.session.events):
            if name not in available:
                paragraphs.append(f"There is no artifact named {name!r}.")
                continue
            part = await tool_context.load_artifact(name)
            if part is not None:
                paragraphs.append(_shown(name, part))
        llm_request.append_instructions(paragraphs)


def _requested_names(events: list[Any]) -> list[str]:
    """The names asked for by load_artifacts in the latest event, if it answers such a call."""
    if not events:
        return []
    content = events[-1].content
    names: list[str] = []
    for part in (content.parts or []) if content is not None else []:
        response = part.function_response
        if response is None or response.name != "load_artifacts":
            continue
        for name in (response.response or {}).get("artifact_names") or []:
            if str(name) not in names:
                names.append(str(name))
    return names


def _shown(name: str, part: types.Part) -> str:
    """An artifact's contents as instruction text."""
    if part.text is not None:
        return f"Artifact {name!r} is:\n{part.text}"
    blob = part.inline_data
    data = bytes(blob.data or b"") if blob is not None else b""
    mime_type = (blob.mime_type if blob is not None else None) or "application/octet-stream"
    if mime_type.startswith(_TEXT_LIKE):
        return f"Artifact {name!r} ({mime_type}) is:\n{data.decode('utf-8', errors='replace')}"
    return (
        f"Artifact {name!r} is {len(data)} bytes of {mime_type}; its contents cannot be shown "
        "as text."
    )


load_artifacts = LoadArtifactsTool()
"""The tool instance to put in an agent's ``tools``, as in ADK."""
