"""Build agents from YAML configs: ``from_config("my_agent/root_agent.yaml")`` (ADK's loader).

A config names its agent class (``agent_class``, LlmAgent by default), which names its schema
(the class's ``config_type``: ``LlmAgentConfig`` & co); the document is validated against it,
then each key becomes a constructor keyword: ``sub_agents`` by ``config_path`` or ``code``,
``tools`` by built-in name or fully qualified name (with ``args``), ``*_callbacks`` as the
callbacks they name, ``model_code`` and schema references as the objects they name. Every
error is an ``AgentConfigError`` naming the file, the line and the key.
"""

from __future__ import annotations

import contextvars
import inspect
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

import cairn.agents as built_in_agents
import cairn.tools as built_in_tools
from cairn.agents.agent_config_error import AgentConfigError
from cairn.agents.base_agent import BaseAgent
from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.common_configs import AgentRefConfig, CodeConfig
from cairn.agents.config_document import ConfigDocument, Loc
from cairn.tools.base_tool import BaseTool, BaseToolset
from cairn.tools.code_references import CodeReferenceError, resolve_fully_qualified_name
from cairn.tools.tool_configs import ToolArgsConfig, ToolConfig

__all__ = [
    "from_config",
    "resolve_agent_reference",
    "resolve_callbacks",
    "resolve_code_reference",
    "resolve_fully_qualified_name",
]

_loading: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "cairn_agent_configs_loading", default=()
)
"""The config files being loaded, outermost first (a file that refers back to one of them
would never finish)."""


def from_config(config_path: str | os.PathLike[str]) -> BaseAgent:
    """The agent the YAML file ``config_path`` declares (with its sub-agents, tools and
    callbacks); ``AgentConfigError`` (file, line, key) for anything wrong in it."""
    path = os.path.abspath(config_path)
    with _entering(path):
        return _Builder(ConfigDocument.read(path)).agent()


def resolve_agent_reference(
    ref_config: AgentRefConfig, referencing_agent_config_abs_path: str
) -> BaseAgent:
    """The agent ``ref_config`` names: a YAML file beside (or below) the referring config,
    or an agent object by fully qualified name."""
    document = ConfigDocument(path=referencing_agent_config_abs_path, data={}, root=None)
    return _Builder(document).sub_agent(ref_config, [])


def resolve_code_reference(code_config: CodeConfig) -> Any:
    """The object ``code_config.name`` names (``CodeReferenceError`` if it names nothing, or
    a module configs may not name)."""
    return resolve_fully_qualified_name(code_config.name)


def resolve_callbacks(callbacks_config: list[CodeConfig]) -> list[Any]:
    """The callbacks the configs name, in order."""
    return [resolve_code_reference(config) for config in callbacks_config]


@contextmanager
def _entering(path: str) -> Iterator[None]:
    chain = _loading.get()
    if path in chain:
        cycle = " -> ".join(Path(p).name for p in (*chain[chain.index(path) :], path))
        raise AgentConfigError(
            chain[-1],
            None,
            "sub_agents",
            f"the configs refer to each other in a cycle ({cycle}); an agent cannot be its "
            "own sub-agent",
        )
    token = _loading.set((*chain, path))
    try:
        yield
    finally:
        _loading.reset(token)


class _Builder:
    """Turns one validated document into an agent, reporting errors at their lines."""

    def __init__(self, document: ConfigDocument) -> None:
        self.document = document
        self.folder = Path(document.path).parent

    def agent(self) -> BaseAgent:
        data = self.document.data
        cls = self.agent_class(data.get("agent_class", "LlmAgent"))
        schema = _schema_of(cls)
        try:
            config = schema.model_validate(data)
        except ValidationError as error:
            raise self.document.validation_error(error) from None
        if _underlying(cls.from_config) is not _underlying(BaseAgent.from_config):
            return cls.from_config(config, self.document.path)  # the class builds itself
        return self.build(cls, config)

    def build(
        self, cls: type[BaseAgent], config: BaseModel, given: dict[str, Any] | None = None
    ) -> BaseAgent:
        keywords, keys = self.keywords(cls, config)
        for key, value in (given or {}).items():
            keywords[key], keys[key] = value, key
        parse = getattr(cls, "_parse_config", None)
        if callable(parse):  # ADK's older hook: the class edits its keywords
            keywords = parse(config, self.document.path, keywords)
        try:
            return cls(**keywords)
        except ValidationError as error:
            first = error.errors()[0]
            key = keys.get(str(first["loc"][0]), str(first["loc"][0])) if first["loc"] else ""
            message = str(first["msg"]).removeprefix("Value error, ")
            raise self.document.error([key] if key else [], message) from None
        except (TypeError, ValueError) as error:
            raise self.document.error([], f"{cls.__name__} refused the config: {error}") from None

    def agent_class(self, name: Any) -> type[BaseAgent]:
        loc = ["agent_class"]
        if not isinstance(name, str) or not name:
            raise self.document.error(loc, "agent_class is the name of an agent class")
        if "." not in name:
            found = getattr(built_in_agents, name, None)
            if found is None and name == "Workflow":
                # As ADK's shorthand: cairn.agents first, then the workflow package (named,
                # like any class a config names, by its fully qualified name).
                found = self.resolve("cairn.workflow.Workflow", loc)
            if isinstance(found, type) and issubclass(found, BaseAgent):
                return found
            raise self.document.error(
                loc,
                f"{name!r} is not one of cairn's agent classes (LlmAgent, SequentialAgent, "
                "ParallelAgent, LoopAgent, Workflow); name your own class by its fully "
                "qualified name",
            )
        found = self.resolve(name, loc)
        if isinstance(found, type) and issubclass(found, BaseAgent):
            return found
        raise self.document.error(loc, f"{name!r} is not a subclass of BaseAgent")

    def keywords(
        self, cls: type[BaseAgent], config: BaseModel
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """The constructor keywords, and the YAML key each came from."""
        fields = cls.model_fields
        extra = config.model_extra or {}
        keywords: dict[str, Any] = {}
        keys: dict[str, str] = {}
        for key in [*config.model_fields_set, *extra]:
            if key == "agent_class":
                continue
            value = extra[key] if key in extra else getattr(config, key)
            if value is None:
                continue  # as if unset
            target = key
            if key == "sub_agents":
                value = [
                    self.sub_agent(AgentRefConfig.model_validate(ref), [key, i])
                    for i, ref in enumerate(value)
                ]
            elif key == "tools":
                value = [
                    self.tool(self.tool_config(tool, [key, i]), [key, i])
                    for i, tool in enumerate(value)
                ]
            elif key.endswith("_callbacks") and key.removesuffix("s") in fields:
                target = key.removesuffix("s")
                value = [self.code(c, [key, i]) for i, c in enumerate(value)]
            elif key.endswith("_code") and key.removesuffix("_code") in fields:
                target = key.removesuffix("_code")
                value = self.code(value, [key])
            elif isinstance(value, CodeConfig):
                value = self.code(value, [key])
            if target not in fields:
                raise self.document.error(
                    [key],
                    f"{cls.__name__} has no field {target!r}; remove the key or fix its spelling",
                )
            keywords[target] = value
            keys[target] = key
        return keywords, keys

    def tool_config(self, value: Any, loc: list[str | int]) -> ToolConfig:
        """A ``tools`` entry as a ``ToolConfig`` (a custom class's extra ``tools`` key is
        plain data until here)."""
        try:
            return ToolConfig.model_validate(value)
        except ValidationError as error:
            raise self.document.validation_error(error, prefix=loc) from None

    def code(self, value: Any, loc: list[str | int]) -> Any:
        """The object a ``CodeConfig`` (or a bare name) names."""
        if isinstance(value, str):
            return self.resolve(value, loc)
        try:
            reference = CodeConfig.model_validate(value)
        except ValidationError as error:
            raise self.document.validation_error(error, prefix=loc) from None
        return self.resolve(reference.name, [*loc, "name"])

    def resolve(self, name: str, loc: Loc) -> Any:
        if name.startswith("."):  # relative to this config's folder (a package of that name)
            name = self.folder.name + name
        try:
            return resolve_fully_qualified_name(name)
        except CodeReferenceError as error:
            raise self.document.error(loc, str(error)) from None
        except Exception as error:  # the named module failed while importing
            raise self.document.error(
                loc, f"importing {name!r} failed: {type(error).__name__}: {error}"
            ) from error

    def sub_agent(self, ref: AgentRefConfig, loc: list[str | int]) -> BaseAgent:
        if ref.config_path is not None:
            here = [*loc, "config_path"]
            if os.path.isabs(ref.config_path):
                raise self.document.error(
                    here, f"{ref.config_path!r} is absolute; give a path relative to this file"
                )
            folder = os.path.realpath(self.folder)
            target = os.path.realpath(os.path.join(folder, ref.config_path))
            if os.path.commonpath([folder, target]) != folder:
                raise self.document.error(
                    here,
                    f"{ref.config_path!r} leads outside this config's folder ({folder}); "
                    "keep an agent's configs in its folder",
                )
            if not os.path.isfile(target):
                raise self.document.error(here, f"no such file: {target}")
            return from_config(target)
        assert ref.code is not None
        found = self.resolve(ref.code, [*loc, "code"])
        if isinstance(found, BaseAgent):
            return found
        kind = "a class" if inspect.isclass(found) else f"a {type(found).__name__}"
        raise self.document.error(
            [*loc, "code"],
            f"{ref.code!r} is {kind}, not an agent object; name an agent instance "
            "(or use config_path for a YAML file)",
        )

    def tool(self, config: ToolConfig, loc: list[str | int]) -> Any:
        if "." in config.name:
            found = self.resolve(config.name, [*loc, "name"])
        else:
            found = getattr(built_in_tools, config.name, None)
            if found is None:
                raise self.document.error(
                    [*loc, "name"],
                    f"cairn.tools has no tool {config.name!r}; give a built-in tool's name "
                    "(google_search, load_memory, exit_loop, AgentTool, ...) or a fully "
                    "qualified name (my_agent.tools.my_tool)",
                )
        args_loc = [*loc, "args"]
        if isinstance(found, (BaseTool, BaseToolset)):
            if config.args is not None:
                raise self.document.error(
                    args_loc,
                    f"{config.name!r} is a tool object: it takes no args (args are "
                    "for a tool class or a function that makes a tool)",
                )
            return found
        if inspect.isclass(found) and issubclass(found, (BaseTool, BaseToolset)):
            try:
                return found.from_config(config.args or ToolArgsConfig(), self.document.path)
            except AgentConfigError as error:
                if error.path != self.document.path or error.line is not None:
                    raise  # located in another file already
                raise self.document.error(args_loc, error.problem) from None
            except ValidationError as error:
                raise self.document.validation_error(error, prefix=args_loc) from None
            except (TypeError, ValueError) as error:
                raise self.document.error(args_loc, str(error)) from None
        if callable(found) and not inspect.isclass(found):
            if config.args is None:
                return found  # a function tool
            try:
                return found(config.args)
            except Exception as error:
                raise self.document.error(
                    args_loc, f"{config.name}(args) failed: {type(error).__name__}: {error}"
                ) from error
        raise self.document.error(
            [*loc, "name"],
            f"{config.name!r} is a {type(found).__name__}, not a tool, a tool class or a function",
        )


def _schema_of(cls: type[BaseAgent]) -> type[BaseModel]:
    schema = getattr(cls, "config_type", None)
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema
    return BaseAgentConfig


def _underlying(method: Any) -> Any:
    return getattr(method, "__func__", method)


def build_from_config_model(
    cls: type[BaseAgent],
    config: Any,
    config_abs_path: str,
    *,
    keywords: dict[str, Any] | None = None,
    document: ConfigDocument | None = None,
) -> BaseAgent:
    """``cls`` built from an already validated config model (or its plain data), as
    ``BaseAgent.from_config`` does. ``keywords`` are constructor keywords a class's own
    ``from_config`` resolved itself (a workflow's ``edges``), given as they are; errors
    name the file, and the line where ``document`` (the file as read) is given."""
    document = document or ConfigDocument(path=config_abs_path, data={}, root=None)
    if isinstance(config, dict):
        try:
            config = _schema_of(cls).model_validate(config)
        except ValidationError as error:
            raise document.validation_error(error) from None
    return _Builder(document).build(cls, config, keywords)
