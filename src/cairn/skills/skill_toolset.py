"""``SkillToolset``: skills offered to a model as tools (ADK's ``google.adk.tools.skill_toolset``).

The model lists the skills (``list_skills``), loads one's instructions (``load_skill``), reads
its files (``load_skill_resource``) and runs its scripts (``run_skill_script``, through the
toolset's or the agent's code executor, bounded in time and output). Which skills are
active is session state (``_adk_activated_skill_<agent>``), written by the tool calls, so it
is in the log and replayed on resume like every other state change.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.genai import types

from cairn.agents.context import Context
from cairn.agents.instructions import inject_session_state
from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.code_executors.code_execution_utils import file_bytes
from cairn.models.llm_request import LlmRequest
from cairn.skills.models import Skill
from cairn.skills.prompt import (
    DEFAULT_SKILL_SYSTEM_INSTRUCTION,
    format_skills_as_xml,
    skill_system_instruction,
)
from cairn.skills.script_runs import (
    INTERPRETERS,
    ScriptRunError,
    run_script,
    script_argv,
    script_path,
)
from cairn.skills.skill_registry import SkillRegistry
from cairn.tools.base_tool import BaseTool, BaseToolset, ToolPredicate
from cairn.tools.function_tool import FunctionTool

logger = logging.getLogger(__name__)

DEFAULT_SCRIPT_TIMEOUT = 300
"""Seconds a script may run (ADK's default) before its whole process group is stopped."""
DEFAULT_MAX_SCRIPT_OUTPUT_BYTES = 32_000
"""How much of a script's stdout, and of its stderr, the model is shown."""

_FETCHED_TURNS = 16
"""How many invocations' registry lookups a toolset keeps (a skill is fetched once per turn)."""
_BINARY = "Binary file detected. The content has been injected into the conversation history."
_UNLOADED = (
    "This skill has been unloaded: its instructions no longer apply and its tools are gone. "
    "Load it again if you need it."
)

__all__ = [
    "DEFAULT_SKILL_SYSTEM_INSTRUCTION",
    "ListSkillsTool",
    "LoadSkillResourceTool",
    "LoadSkillTool",
    "RunSkillScriptTool",
    "SearchSkillsTool",
    "SkillDiscoveryMode",
    "SkillLifecycleConfig",
    "SkillLifecycleMode",
    "SkillToolset",
    "UnloadSkillTool",
]


class SkillLifecycleMode(enum.Enum):
    """How long a skill stays active once loaded."""

    PERSISTENT = "persistent"
    """For the rest of the session, unless unloaded (the default)."""
    BOUNDED = "bounded"
    """As PERSISTENT, but at most ``max_active_skills`` bounded skills are active: loading
    one more releases the one loaded least recently."""
    EPHEMERAL = "ephemeral"
    """Until the invocation (the turn) that loaded it ends."""


@dataclasses.dataclass(frozen=True)
class SkillLifecycleConfig:
    """How long a toolset's skills stay active. Passing one also offers ``unload_skill``."""

    enabled: bool = True
    default_mode: SkillLifecycleMode = SkillLifecycleMode.PERSISTENT
    max_active_skills: int = 5
    skill_overrides: dict[str, SkillLifecycleMode] = dataclasses.field(default_factory=dict)
    revalidate_skills: bool = False
    """ADK's re-check of active skills against their definition at each request; cairn
    does not do it (``True`` is refused)."""

    def __post_init__(self) -> None:
        if self.max_active_skills < 1:
            raise ValueError(f"max_active_skills must be at least 1, not {self.max_active_skills}")


class SkillDiscoveryMode(enum.Enum):
    """How the model learns which skills there are."""

    LAZY = "lazy"
    """It calls ``list_skills`` (the default)."""
    EAGER = "eager"
    """The catalog is in the system instruction; there is no ``list_skills`` tool."""


def _error(code: str, message: str) -> dict[str, str]:
    return {"error": message, "error_code": code}


def _declaration(
    tool: BaseTool, properties: dict[str, Any], required: list[str]
) -> types.FunctionDeclaration:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return types.FunctionDeclaration(
        name=tool.name, description=tool.description, parameters_json_schema=schema
    )


_SKILL_NAME = {"skill_name": {"type": "string", "description": "The name of the skill."}}


class _SkillTool(BaseTool):
    TOOL_NAME = ""

    def __init__(self, toolset: SkillToolset, description: str) -> None:
        super().__init__(name=self.TOOL_NAME, description=description)
        self._toolset = toolset


class ListSkillsTool(_SkillTool):
    """``list_skills``: the skills' names and descriptions, as XML."""

    TOOL_NAME = "list_skills"

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(toolset, "Lists all available skills with their names and descriptions.")

    def _get_declaration(self) -> types.FunctionDeclaration:
        return _declaration(self, {}, [])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        return format_skills_as_xml(self._toolset.skills)


class SearchSkillsTool(_SkillTool):
    """``search_skills``: the registry's skills that fit a query."""

    TOOL_NAME = "search_skills"

    def __init__(self, toolset: SkillToolset) -> None:
        registry = toolset._registry
        if registry is None:
            raise ValueError("SearchSkillsTool needs a SkillToolset with a registry")
        super().__init__(
            toolset,
            registry.search_tool_description()
            or "Searches the skill registry for skills that fit a query.",
        )

    def _get_declaration(self) -> types.FunctionDeclaration:
        query = {"query": {"type": "string", "description": "What to search for."}}
        return _declaration(self, query, ["query"])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        query = args.get("query")
        if not query:
            return _error("INVALID_ARGUMENTS", "Argument 'query' is required.")
        assert self._toolset._registry is not None
        try:
            found = await self._toolset._registry.search_skills(query=query)
        except Exception as error:
            return _error("REGISTRY_ERROR", f"Failed to search skills from registry: {error}")
        return [m.model_dump() for m in found if m.name not in self._toolset._skills]


class LoadSkillTool(_SkillTool):
    """``load_skill``: a skill's instructions; the skill becomes active."""

    TOOL_NAME = "load_skill"

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(toolset, "Loads the SKILL.md instructions for a given skill.")

    def _get_declaration(self) -> types.FunctionDeclaration:
        return _declaration(self, _SKILL_NAME, ["skill_name"])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        name = args.get("skill_name")
        if not name:
            return _error("INVALID_ARGUMENTS", "Argument 'skill_name' is required.")
        found = await self._toolset._find(name, tool_context)
        if isinstance(found, dict):
            return found
        released = self._toolset._activate(tool_context, found)
        instructions = found.instructions
        if found.frontmatter.metadata.get("adk_inject_state"):
            instructions = await inject_session_state(instructions, tool_context)
        result: dict[str, Any] = {
            "skill_name": name,
            "instructions": instructions,
            "frontmatter": found.frontmatter.model_dump(),
        }
        if released:
            result["unloaded_skills"] = released
        if self._toolset._mode_of(name) is SkillLifecycleMode.EPHEMERAL:
            result["lifecycle_notice"] = (
                "This skill is released at the end of the current turn; load it again in a "
                "later turn if you need it."
            )
        return result


class UnloadSkillTool(_SkillTool):
    """``unload_skill``: releases an active skill (offered with a ``lifecycle_config``)."""

    TOOL_NAME = "unload_skill"

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(
            toolset, "Unloads an active skill once its task is done, releasing its tools."
        )

    def _get_declaration(self) -> types.FunctionDeclaration:
        return _declaration(self, _SKILL_NAME, ["skill_name"])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        name = args.get("skill_name")
        if not name:
            return _error("INVALID_ARGUMENTS", "Argument 'skill_name' is required.")
        if not self._toolset.unload_skill(tool_context, name):
            return _error("SKILL_NOT_ACTIVE", f"Skill '{name}' is not active.")
        return {
            "skill_name": name,
            "unloaded": True,
            "active_skills": self._toolset.list_active_skills(tool_context),
        }


def _resource(skill: Skill, file_path: str) -> str | bytes | None:
    folder, _, rest = file_path.partition("/")
    if folder == "references":
        return skill.resources.get_reference(rest)
    if folder == "assets":
        return skill.resources.get_asset(rest)
    script = skill.resources.get_script(rest)
    return script.src if script is not None else None


def _not_found_again(tool_context: Any, kind: str) -> int:
    """How many lookups of ``kind`` failed in this invocation, this one included (kept in
    ``temp:`` state: never stored)."""
    key = f"temp:_adk_skill_{kind}_not_found_count_{tool_context.invocation_id}"
    count = int(tool_context.state.get(key) or 0) + 1
    tool_context.state[key] = count
    return count


class LoadSkillResourceTool(_SkillTool):
    """``load_skill_resource``: a file of a skill's references/, assets/ or scripts/."""

    TOOL_NAME = "load_skill_resource"

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(
            toolset,
            "Loads a resource file (from references/, assets/, or scripts/) from within a skill.",
        )

    def _get_declaration(self) -> types.FunctionDeclaration:
        path = {
            "type": "string",
            "description": "The path in the skill, e.g. 'references/guide.md', "
            "'assets/template.txt' or 'scripts/setup.sh'.",
        }
        return _declaration(self, {**_SKILL_NAME, "file_path": path}, ["skill_name", "file_path"])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        name, file_path = args.get("skill_name"), args.get("file_path")
        missing = [k for k, v in (("skill_name", name), ("file_path", file_path)) if not v]
        if missing:
            return _error(
                "INVALID_ARGUMENTS", "\n".join(f"Argument '{k}' is required." for k in missing)
            )
        assert isinstance(name, str) and isinstance(file_path, str)
        found = await self._toolset._find(name, tool_context)
        if isinstance(found, dict):
            return found
        if not file_path.startswith(("references/", "assets/", "scripts/")):
            return _error(
                "INVALID_RESOURCE_PATH",
                "Path must start with 'references/', 'assets/', or 'scripts/'.",
            )
        content = _resource(found, file_path)
        if content is None:
            failures = _not_found_again(tool_context, "resource")
            if failures > 1:
                return _error(
                    "RESOURCE_NOT_FOUND_FATAL",
                    f"Resource '{file_path}' not found in skill '{name}'. This is lookup "
                    f"failure #{failures} of this turn: do not retry any path; tell the user "
                    "and stop.",
                )
            return _error(
                "RESOURCE_NOT_FOUND", f"Resource '{file_path}' not found in skill '{name}'."
            )
        if isinstance(content, bytes):
            return {"skill_name": name, "file_path": file_path, "status": _BINARY}
        return {"skill_name": name, "file_path": file_path, "content": content}

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        """Declares the tool, and shows the model a binary file it asked for in its last
        turn (as inline data after the function response; the log keeps only the response)."""
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        if not llm_request.contents:
            return
        for part in llm_request.contents[-1].parts or []:
            response = part.function_response
            if response is None or response.name != self.name:
                continue
            body = response.response or {}
            if body.get("status") != _BINARY:
                continue
            skill = await self._toolset._find(str(body.get("skill_name")), tool_context)
            file_path = str(body.get("file_path"))
            content = _resource(skill, file_path) if isinstance(skill, Skill) else None
            if not isinstance(content, bytes):
                continue
            mime_type = mimetypes.guess_type(file_path)[0] or "application/octet-stream"
            llm_request.contents.append(
                types.Content(
                    role="user",
                    parts=[
                        types.Part(text=f"The content of binary file '{file_path}' is:"),
                        types.Part(inline_data=types.Blob(data=content, mime_type=mime_type)),
                    ],
                )
            )


class RunSkillScriptTool(_SkillTool):
    """``run_skill_script``: runs a script of a skill's scripts/ folder (``.py``, ``.sh``,
    ``.bash``) with the toolset's code executor, else the agent's; at most
    ``script_timeout`` seconds, and ``max_script_output_bytes`` of each output stream."""

    TOOL_NAME = "run_skill_script"

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(toolset, "Executes a script from a skill's scripts/ directory.")

    def _get_declaration(self) -> types.FunctionDeclaration:
        properties = {
            **_SKILL_NAME,
            "file_path": {
                "type": "string",
                "description": "The relative path to the script (e.g., 'scripts/setup.py').",
            },
            "args": {
                "anyOf": [{"type": "object"}, {"type": "array", "items": {"type": "string"}}],
                "description": "Optional arguments: key-value pairs (passed as --key value) "
                "or the complete list of arguments.",
            },
            "short_options": {
                "type": "object",
                "description": "Optional short options (passed as -k value); not with a list "
                "of args.",
            },
            "positional_args": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Optional positional arguments; not with a list of args.",
            },
        }
        return _declaration(self, properties, ["skill_name", "file_path"])

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        name, file_path = args.get("skill_name"), args.get("file_path")
        missing = [k for k, v in (("skill_name", name), ("file_path", file_path)) if not v]
        if missing:
            return _error(
                "INVALID_ARGUMENTS", "\n".join(f"Argument '{k}' is required." for k in missing)
            )
        assert isinstance(name, str) and isinstance(file_path, str)
        script_args, short, positional = (
            args.get("args"),
            args.get("short_options"),
            args.get("positional_args"),
        )
        problems = []
        if script_args is not None and not isinstance(script_args, dict | list):
            problems.append("'args' must be a JSON object or a list of strings.")
        if short is not None and not isinstance(short, dict):
            problems.append("'short_options' must be a JSON object.")
        if positional is not None and not isinstance(positional, list):
            problems.append("'positional_args' must be a list of strings.")
        if isinstance(script_args, list) and (short or positional):
            problems.append("'short_options' and 'positional_args' cannot go with a list of args.")
        if problems:
            return _error("INVALID_ARGUMENTS", "\n".join(problems))
        found = await self._toolset._find(name, tool_context)
        if isinstance(found, dict):
            return found
        script = script_path(file_path)
        if script is None or found.resources.get_script(script) is None:
            failures = _not_found_again(tool_context, "script")
            code = "SCRIPT_NOT_FOUND_FATAL" if failures > 1 else "SCRIPT_NOT_FOUND"
            return _error(code, f"Script '{file_path}' not found in skill '{name}'.")
        suffix = Path(script).suffix.lower()
        if suffix not in INTERPRETERS:
            return _error(
                "UNSUPPORTED_SCRIPT_TYPE",
                f"Unsupported script type '{suffix or '(no extension)'}'. Supported types: "
                ".py, .sh, .bash",
            )
        executor = self._toolset._executor_for(tool_context)
        if executor is None:
            return _error(
                "NO_CODE_EXECUTOR",
                "No code executor is configured: give the SkillToolset a code_executor (or "
                "the agent one) to run scripts.",
            )
        toolset = self._toolset
        try:
            run = await run_script(
                executor,
                tool_context.invocation_context,
                found,
                script,
                script_argv(script_args, short, positional),
                timeout_seconds=toolset._script_timeout,
                max_output_bytes=toolset._max_script_output_bytes,
                collect_files=toolset._save_output_artifacts,
            )
        except ScriptRunError as error:
            return _error("EXECUTION_ERROR", f"Failed to execute script '{file_path}': {error}")
        stderr = run.stderr
        if run.timed_out:
            note = (
                f"The script timed out after {toolset._script_timeout:g} seconds and was stopped."
            )
            stderr = f"{stderr.rstrip()}\n{note}" if stderr else note
        elif run.returncode not in (0, None):
            note = f"Exit code {run.returncode}"
            stderr = f"{stderr.rstrip()}\n{note}" if stderr else note
        failed = run.timed_out or run.returncode not in (0, None)
        status = "error" if failed else ("warning" if stderr else "success")
        result: dict[str, Any] = {
            "skill_name": name,
            "file_path": file_path,
            "stdout": run.stdout,
            "stderr": stderr,
            "status": status,
        }
        saved = []
        for path, made in run.files.items():
            part = types.Part(
                inline_data=types.Blob(data=file_bytes(made), mime_type=made.mime_type)
            )
            await tool_context.save_artifact(path, part)
            saved.append(path)
        if saved:
            result["saved_artifacts"] = saved
        return result


class SkillToolset(BaseToolset):
    """Skills as tools: ``skills`` (e.g. ``load_skills_from_dir("skills")``) and/or a
    ``registry`` to search.

    ``code_executor`` runs scripts (else the agent's ``code_executor``; without either,
    ``run_skill_script`` is not offered). A script runs at most ``script_timeout`` seconds
    and the model sees at most ``max_script_output_bytes`` of its stdout and of its stderr
    (cairn's keyword). ``save_output_artifacts`` saves the files a script creates as
    artifacts. ``additional_tools`` are offered while a skill whose
    ``metadata.adk_additional_tools`` names them is active. ``discovery_mode`` EAGER puts
    the catalog in the system instruction instead of offering ``list_skills``.
    ``lifecycle_config`` bounds how long skills stay active, and offers ``unload_skill``.
    ADK's ``environment`` and ``skills_folder`` (a remote execution environment) are not
    supported.
    """

    def __init__(
        self,
        skills: list[Skill] | None = None,
        *,
        registry: SkillRegistry | None = None,
        code_executor: BaseCodeExecutor | None = None,
        environment: Any = None,
        skills_folder: Path | str | None = None,
        script_timeout: float = DEFAULT_SCRIPT_TIMEOUT,
        save_output_artifacts: bool = False,
        additional_tools: Sequence[Any] | None = None,
        tool_name_prefix: str | None = None,
        tool_filter: ToolPredicate | list[str] | None = None,
        discovery_mode: SkillDiscoveryMode = SkillDiscoveryMode.LAZY,
        lifecycle_config: SkillLifecycleConfig | None = None,
        max_script_output_bytes: int = DEFAULT_MAX_SCRIPT_OUTPUT_BYTES,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        if environment is not None or skills_folder is not None:
            raise ValueError(
                "SkillToolset(environment=..., skills_folder=...) is not supported by cairn "
                "(it has no remote execution environments); give a code_executor instead, "
                "e.g. UnsafeLocalCodeExecutor() or ContainerCodeExecutor(...)"
            )
        if lifecycle_config is not None and lifecycle_config.revalidate_skills:
            raise ValueError(
                "SkillLifecycleConfig(revalidate_skills=True) is not supported by cairn; "
                "leave it False"
            )
        if script_timeout <= 0 or max_script_output_bytes <= 0:
            raise ValueError("script_timeout and max_script_output_bytes must be positive")
        self._skills: dict[str, Skill] = {}
        for skill in skills or []:
            if skill.name in self._skills:
                raise ValueError(f"Duplicate skill name '{skill.name}'.")
            self._skills[skill.name] = skill
        self._registry = registry
        self._fetched: dict[str, dict[str, Skill]] = {}
        self._code_executor = code_executor
        self._script_timeout = script_timeout
        self._max_script_output_bytes = max_script_output_bytes
        self._save_output_artifacts = save_output_artifacts
        self._discovery_mode = discovery_mode
        self._lifecycle = lifecycle_config if lifecycle_config is not None else None
        self._use_invocation_cache = False  # a loaded skill's tools appear in the same turn
        self._extra_tools: dict[str, BaseTool] = {}
        self._extra_toolsets: list[BaseToolset] = []
        for entry in additional_tools or []:
            if isinstance(entry, BaseToolset):
                self._extra_toolsets.append(entry)
            elif isinstance(entry, BaseTool):
                self._extra_tools[entry.name] = entry
            elif callable(entry):
                tool = FunctionTool(entry)
                self._extra_tools[tool.name] = tool
            else:
                raise TypeError(
                    f"additional_tools takes tools, toolsets and functions, not "
                    f"{type(entry).__name__}"
                )
        self._tools: list[BaseTool] = []
        if discovery_mode is SkillDiscoveryMode.LAZY:
            self._tools.append(ListSkillsTool(self))
        self._tools += [LoadSkillTool(self), LoadSkillResourceTool(self), RunSkillScriptTool(self)]
        if registry is not None:
            self._tools.append(SearchSkillsTool(self))
        if self._lifecycle is not None and self._lifecycle.enabled:
            self._tools.append(UnloadSkillTool(self))

    # -- the skills --------------------------------------------------------------------
    @property
    def skills(self) -> list[Skill]:
        """The skills this toolset holds (not the registry's)."""
        return list(self._skills.values())

    async def _find(self, name: str, context: Any = None) -> Skill | dict[str, str]:
        """The skill called ``name`` (held, else the registry's, asked once per invocation
        of ``context``), or the error to return."""
        skill = self._skills.get(name)
        if skill is not None:
            return skill
        if self._registry is None:
            return _error("SKILL_NOT_FOUND", f"Skill '{name}' not found.")
        invocation = getattr(context, "invocation_id", None)
        fetched = self._fetched.get(invocation, {}) if invocation else {}
        if name in fetched:
            return fetched[name]
        try:
            skill = await self._registry.get_skill(name=name)
        except Exception as error:
            return _error(
                "REGISTRY_ERROR", f"Failed to fetch skill '{name}' from registry: {error}"
            )
        if invocation:
            if invocation not in self._fetched and len(self._fetched) >= _FETCHED_TURNS:
                self._fetched.pop(next(iter(self._fetched)))  # the oldest invocation's
            self._fetched.setdefault(invocation, {})[name] = skill
        return skill

    def _executor_for(self, context: Any) -> BaseCodeExecutor | None:
        if self._code_executor is not None:
            return self._code_executor
        invocation = getattr(context, "invocation_context", None)
        executor = getattr(getattr(invocation, "agent", None), "code_executor", None)
        return executor if isinstance(executor, BaseCodeExecutor) else None

    def _offers_scripts(self, context: Any) -> bool:
        if self._executor_for(context) is None:
            return False
        return self._registry is not None or any(s.resources.scripts for s in self.skills)

    # -- which skills are active (session state) ----------------------------------------
    def _mode_of(self, name: str) -> SkillLifecycleMode:
        config = self._lifecycle
        if config is None or not config.enabled:
            return SkillLifecycleMode.PERSISTENT
        return config.skill_overrides.get(name, config.default_mode)

    @staticmethod
    def _keys(agent_name: str) -> tuple[str, str]:
        return f"_adk_activated_skill_{agent_name}", f"_adk_skill_meta_{agent_name}"

    def _records(self, state: Any, agent_name: str) -> tuple[list[str], dict[str, Any]]:
        names_key, meta_key = self._keys(agent_name)
        names = [n for n in (state.get(names_key) or []) if isinstance(n, str)]
        meta = state.get(meta_key)
        return names, dict(meta) if isinstance(meta, dict) else {}

    def _active(self, state: Any, agent_name: str, invocation_id: str) -> list[str]:
        names, meta = self._records(state, agent_name)
        return [
            n
            for n in names
            if not (
                meta.get(n, {}).get("lifecycle") == SkillLifecycleMode.EPHEMERAL.value
                and meta.get(n, {}).get("activated_in") not in (None, invocation_id)
            )
        ]

    def list_active_skills(self, ctx: Any) -> list[str]:
        """The skills active for ``ctx``'s agent, least recently loaded first."""
        return self._active(ctx.state, ctx.agent_name, ctx.invocation_id)

    def _activate(self, ctx: Any, skill: Skill) -> list[str]:
        """Mark ``skill`` active (in state); the skills that releases, oldest first."""
        names, meta = self._records(ctx.state, ctx.agent_name)
        active = self._active(ctx.state, ctx.agent_name, ctx.invocation_id)
        released = [n for n in names if n not in active and n != skill.name]
        mode = self._mode_of(skill.name)
        if skill.name in active and mode is not SkillLifecycleMode.PERSISTENT:
            active.remove(skill.name)  # reloading counts as a use
        if skill.name not in active:
            active.append(skill.name)
        if mode is SkillLifecycleMode.BOUNDED and self._lifecycle is not None:
            bounded = [n for n in active if self._mode_of(n) is SkillLifecycleMode.BOUNDED]
            for name in bounded[: max(0, len(bounded) - self._lifecycle.max_active_skills)]:
                active.remove(name)
                released.append(name)
        meta = {n: r for n, r in meta.items() if n in active}
        if mode is not SkillLifecycleMode.PERSISTENT:
            meta[skill.name] = {"lifecycle": mode.value, "activated_in": ctx.invocation_id}
        names_key, meta_key = self._keys(ctx.agent_name)
        ctx.state[names_key] = active
        if meta or meta_key in ctx.state:
            ctx.state[meta_key] = meta
        return released

    async def load_skill(self, ctx: Context, skill_name: str) -> bool:
        """Activate ``skill_name`` for ``ctx``'s agent from code (its additional tools are
        then offered; the model is not shown its instructions). False if it already was
        active; ``ValueError`` if there is no such skill."""
        if skill_name in self.list_active_skills(ctx):
            return False
        found = await self._find(skill_name, ctx)
        if isinstance(found, dict):
            raise ValueError(found["error"])
        self._activate(ctx, found)
        return True

    def unload_skill(self, ctx: Context, skill_name: str) -> bool:
        """Release ``skill_name`` for ``ctx``'s agent; False if it was not active."""
        names, meta = self._records(ctx.state, ctx.agent_name)
        if skill_name not in names:
            return False
        was_active = skill_name in self.list_active_skills(ctx)
        names_key, meta_key = self._keys(ctx.agent_name)
        ctx.state[names_key] = [n for n in names if n != skill_name]
        if skill_name in meta:
            meta.pop(skill_name)
            ctx.state[meta_key] = meta
        return was_active

    # -- the tools and the request ---------------------------------------------------------
    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        tools = list(self._tools)
        if not self._offers_scripts(readonly_context):
            tools = [t for t in tools if not isinstance(t, RunSkillScriptTool)]
        return tools + await self._additional_tools(readonly_context)

    async def _additional_tools(self, context: Any) -> list[BaseTool]:
        if context is None:
            return []
        wanted: dict[str, None] = {}
        for name in self._active(context.state, context.agent_name, context.invocation_id):
            skill = await self._find(name, context)
            if isinstance(skill, Skill):
                wanted.update(
                    dict.fromkeys(skill.frontmatter.metadata.get("adk_additional_tools") or [])
                )
        if not wanted:
            return []
        candidates = dict(self._extra_tools)
        for toolset in self._extra_toolsets:
            try:
                for tool in await toolset.get_tools_with_prefix(context):
                    candidates[tool.name] = tool
            except Exception:
                logger.exception("skipping the tools of %s for skills", type(toolset).__name__)
        taken = {t.name for t in self._tools}
        chosen = []
        for name in wanted:
            extra = candidates.get(name)
            if extra is None or extra.name in taken:
                continue
            chosen.append(extra)
            taken.add(extra.name)
        return chosen

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        """Adds the skill guidance (and, EAGER, the catalog) to the system instruction; with
        a lifecycle, the instructions of skills no longer active are replaced by a notice in
        the request (the log keeps them)."""
        offered = {t.name for t in self._tools if self._is_selected(t, tool_context)}
        runnable = RunSkillScriptTool.TOOL_NAME in offered and self._offers_scripts(tool_context)
        unload = UnloadSkillTool.TOOL_NAME in {t.name for t in self._tools}
        parts = [
            skill_system_instruction(
                prefix=self.tool_name_prefix,
                offered=offered | ({RunSkillScriptTool.TOOL_NAME} if not runnable else set()),
                scripts_runnable=runnable,
                unload_offered=unload,
            )
        ]
        if self._discovery_mode is SkillDiscoveryMode.EAGER or (
            ListSkillsTool.TOOL_NAME not in offered
        ):
            parts.append(format_skills_as_xml(self.skills))
        if self._registry is not None and SearchSkillsTool.TOOL_NAME in offered:
            p = f"{self.tool_name_prefix}_" if self.tool_name_prefix else ""
            parts.append(
                f"If the skills here do not fit the task, `{p}search_skills` finds more in "
                "the registry."
            )
        llm_request.append_instructions(parts)
        if unload:
            self._prune_released(tool_context, llm_request)

    def _prune_released(self, ctx: Any, llm_request: LlmRequest) -> None:
        active = set(self.list_active_skills(ctx))
        load_name = LoadSkillTool.TOOL_NAME
        if self.tool_name_prefix:
            load_name = f"{self.tool_name_prefix}_{load_name}"
        for content in llm_request.contents:
            for part in content.parts or []:
                response = part.function_response
                if response is None or response.name != load_name:
                    continue
                body = response.response or {}
                name = body.get("skill_name")
                if isinstance(name, str) and "instructions" in body and name not in active:
                    part.function_response = response.model_copy(
                        update={
                            "response": {
                                "skill_name": name,
                                "status": "unloaded",
                                "notice": _UNLOADED,
                            }
                        }
                    )
