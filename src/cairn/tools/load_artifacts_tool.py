"""``load_artifacts``: the model is told which artifacts exist and can ask to see some."""

from __future__ import annotations

import inspect
import json
import logging
from typing import Any

from google.genai import types

from cairn.models.llm_request import LlmRequest
from cairn.tools.artifact_parts import ProcessArtifactCallback, as_safe_part_for_llm
from cairn.tools.base_tool import BaseTool

logger = logging.getLogger(__name__)
_USER = "user:"


class LoadArtifactsTool(BaseTool):
    """Lists the session's artifacts in the instruction; loads those the model asks for.

    Each request tells the model the filenames visible from the session (its
    own and the user's ``user:`` ones). When the model calls
    ``load_artifacts(artifact_names=[...])``, the next request carries each named
    artifact as a user content (``Artifact <name> is:`` and the part), as ADK
    sends it: the part as ``process_artifact(part, name)`` returns it (None leaves
    it out), by default ``as_safe_part_for_llm`` (images, audio, video and PDF
    inline; text-like data, Word documents and, with ``enable_spreadsheet_parsing``,
    Excel workbooks as text; other binary data described). They are shown to the
    model, not copied into the session's events: the log keeps only the names.
    """

    def __init__(
        self,
        process_artifact: ProcessArtifactCallback | None = None,
        enable_spreadsheet_parsing: bool = False,
    ) -> None:
        super().__init__(
            name="load_artifacts",
            description=(
                "Loads the named artifacts so that their contents are shown to you in the "
                "next step."
            ),
            idempotent=True,
        )
        self.process_artifact = process_artifact
        self.enable_spreadsheet_parsing = enable_spreadsheet_parsing

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
        shown: list[types.Content] = []
        for name in _requested_names(tool_context.session.events):
            loaded_as = name if name in available else f"{_USER}{name}"
            if loaded_as not in available:
                paragraphs.append(f"There is no artifact named {name!r}.")
                continue
            part = await tool_context.load_artifact(loaded_as)
            if part is None:
                paragraphs.append(f"There is no artifact named {name!r}.")
                continue
            safe = await self._for_model(part, loaded_as, name)
            if safe is not None:
                heading = types.Part(text=f"Artifact {name} is:")
                shown.append(types.Content(role="user", parts=[heading, safe]))
        llm_request.append_instructions(paragraphs)
        llm_request.contents.extend(shown)

    async def _for_model(self, part: types.Part, loaded_as: str, asked: str) -> types.Part | None:
        """The part shown to the model for one artifact (None: left out)."""
        if self.process_artifact is None:
            return as_safe_part_for_llm(part, asked, self.enable_spreadsheet_parsing)
        try:
            result = self.process_artifact(part, loaded_as)
            if inspect.isawaitable(result):
                result = await result
        except Exception:  # the app's callback: one artifact left out, the run goes on
            logger.exception("process_artifact failed for artifact %r; it is not shown", loaded_as)
            return None
        return result


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


load_artifacts = LoadArtifactsTool()
"""The tool instance to put in an agent's ``tools``, as in ADK."""

__all__ = [
    "LoadArtifactsTool",
    "ProcessArtifactCallback",
    "as_safe_part_for_llm",
    "load_artifacts",
]
