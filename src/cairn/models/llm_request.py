"""What an agent sends to a model: contents, system instruction, tools, settings."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from cairn.events.cache_metadata import CacheMetadata
from cairn.models.context_cache_config import ContextCacheConfig


class LlmRequest(BaseModel):
    """A model call: the conversation as this agent sees it, plus its configuration.

    ``config.system_instruction`` carries the instructions, ``config.tools``
    the function declarations (and any Gemini built-in tool); ``tools_dict`` maps
    each declared name to the tool object that runs it (never sent to the model).
    With context caching on, ``cache_config``, ``cache_metadata`` and
    ``cacheable_contents_token_count`` tell the model adapter what to cache.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    model: str | None = None
    contents: list[types.Content] = Field(default_factory=list)
    config: types.GenerateContentConfig = Field(default_factory=types.GenerateContentConfig)
    tools_dict: dict[str, Any] = Field(default_factory=dict, exclude=True)
    cache_config: ContextCacheConfig | None = None
    """The App's context caching settings (None: do not cache)."""
    cache_metadata: CacheMetadata | None = None
    """The cache (or prefix fingerprint) this agent's previous response recorded."""
    cacheable_contents_token_count: int | None = None
    """The prompt tokens of this agent's previous request, as the model counted them."""
    previous_interaction_id: str | None = None
    """A stored earlier response the provider continues from (the Responses API's
    ``previous_response_id``); cairn's agents send the whole conversation and leave it unset,
    a ``before_model_callback`` may set it (as in ADK)."""

    def append_instructions(self, instructions: list[str]) -> None:
        """Add paragraphs to the system instruction (joined with blank lines)."""
        text = "\n\n".join(i for i in instructions if i)
        if not text:
            return
        current = self.config.system_instruction
        if current is None:
            self.config.system_instruction = text
        elif isinstance(current, str):
            self.config.system_instruction = f"{current}\n\n{text}"
        else:
            raise TypeError(
                "append_instructions needs the system instruction to be text; this request "
                f"holds a {type(current).__name__}"
            )

    def insert_user_context(self, contents: list[types.Content]) -> None:
        """Put request-scoped user contents (retrieved memories, say) where the current turn
        starts: before the trailing run of user messages, or right after the last function
        response when the model is going on with its tool calls (as ADK places them). They
        are for this model call only; nothing is stored."""
        index = len(self.contents)
        while index > 0:
            content = self.contents[index - 1]
            if content.role != "user" or any(p.function_response for p in content.parts or []):
                break
            index -= 1
        self.contents[index:index] = contents

    @property
    def system_instruction_text(self) -> str:
        """The system instruction as plain text ('' when there is none)."""
        instruction = self.config.system_instruction
        if instruction is None:
            return ""
        if isinstance(instruction, str):
            return instruction
        if isinstance(instruction, types.Content):
            return "".join(p.text or "" for p in instruction.parts or [])
        return str(instruction)

    def append_tools(self, tools: list[Any]) -> None:
        """Declare tools (objects with ``name`` and ``declaration()``) to the model."""
        declarations = []
        for tool in tools:
            declaration = declaration_of(tool)
            if declaration is None:
                continue
            if tool.name in self.tools_dict:
                raise ValueError(
                    f"two tools are named {tool.name!r}; tool names must be unique within an "
                    "agent (rename one, or give the FunctionTool a name=...)"
                )
            self.tools_dict[tool.name] = tool
            declarations.append(declaration)
        if not declarations:
            return
        if self.config.tools is None:
            self.config.tools = []
        for tool_entry in self.config.tools:
            if isinstance(tool_entry, types.Tool) and tool_entry.function_declarations is not None:
                tool_entry.function_declarations.extend(declarations)
                return
        self.config.tools.append(types.Tool(function_declarations=declarations))

    @property
    def function_declarations(self) -> list[types.FunctionDeclaration]:
        """Every function declaration in the request, in order."""
        found: list[types.FunctionDeclaration] = []
        for tool_entry in self.config.tools or []:
            if isinstance(tool_entry, types.Tool):
                found.extend(tool_entry.function_declarations or [])
        return found


def declaration_of(tool: Any) -> types.FunctionDeclaration | None:
    """What ``tool`` declares to the model: a renamed copy's own declaration, else its
    ``declaration()`` (also when the tool keeps a field of that name, as an ADK tool may:
    then its class's ``declaration``, by default its ``_get_declaration``, says)."""
    renamed = tool.__dict__.get("_get_declaration")
    if callable(renamed):
        return renamed()  # type: ignore[no-any-return]
    declare = getattr(tool, "declaration", None)
    if callable(declare):
        return declare()  # type: ignore[no-any-return]
    return type(tool).declaration(tool)  # type: ignore[no-any-return]
