"""Workflows declared in YAML (``agent_class: Workflow``), with ADK's edge syntax.

``edges`` is a list; each entry is a chain (a list: ``[START, draft, review]``), an edge
mapping (``{from_node: review, to_node: draft, route: revise}``) or a single node. In a
chain a nested list fans out (``[START, [a, b], join]``) and a mapping that is not a node
routes (``{approve: publish, revise: [rewrite, review]}``). A node is ``START``; the name
of a node an earlier edge defined; a fully qualified name (``my_app.nodes.draft``, or
``.nodes.draft`` beside the config) of a function, a node or an agent; a YAML file
(``reviewer.yaml``); or a mapping: ``config_path``/``code`` (an agent reference) or an
inline node (``agent_class`` with its keys, ``LlmAgent`` by default; ``func_code`` names a
``FunctionNode``'s function). Each error names the file, the line and the edge.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from cairn.agents import LlmAgent
from cairn.agents.agent_config_error import AgentConfigError
from cairn.agents.base_agent import BaseAgent
from cairn.agents.common_configs import AgentRefConfig
from cairn.agents.config_agent_utils import build_from_config_model, resolve_agent_reference
from cairn.agents.config_document import ConfigDocument, Loc
from cairn.agents.llm_agent_config import LlmAgentConfig
from cairn.tools.code_references import CodeReferenceError, resolve_fully_qualified_name
from cairn.workflow.graph import Edge
from cairn.workflow.nodes import START, BaseNode, FunctionNode

if TYPE_CHECKING:
    from cairn.workflow.workflow import Workflow

_NODE_KEYS = ("agent_class", "config_path", "func_code")
_SCHEMA_KEYS = ("input_schema", "output_schema", "state_schema")
_EDGE_KEYS = {"from_node", "to_node", "route"}


def workflow_from_config(cls: type[Workflow], config: Any, config_abs_path: str) -> Workflow:
    """``cls`` (Workflow or a subclass) built from its validated config: ``edges`` resolved
    here, every other key as for any agent."""
    try:
        document = ConfigDocument.read(config_abs_path)
    except AgentConfigError:
        document = ConfigDocument(path=config_abs_path, data={}, root=None)
    if isinstance(config, BaseModel):
        data = {key: getattr(config, key) for key in config.model_fields_set}
        data.update(config.model_extra or {})
    else:
        data = dict(config)
    data.pop("agent_class", None)
    resolver = _Edges(document)
    given: dict[str, Any] = {}
    if "edges" in data:
        given["edges"] = resolver.edges(data.pop("edges"))
    for key in _SCHEMA_KEYS:
        if isinstance(data.get(key), (str, dict)):
            given[key] = resolver.code(data.pop(key), [key])
    built = build_from_config_model(cls, data, config_abs_path, keywords=given, document=document)
    assert isinstance(built, cls)
    return built


class _Edges:
    """Resolves the node references of one config's edges; a node defined once (by name or
    by the reference that made it) is the same object wherever a later edge names it."""

    def __init__(self, document: ConfigDocument) -> None:
        self.document = document
        self.path = document.path
        self.nodes: dict[Any, Any] = {}

    def edges(self, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise self.document.error(
                ["edges"], "edges is a list of chains, e.g. [[START, draft, review]]"
            )
        found: list[Any] = []
        for index, entry in enumerate(value):
            loc: list[str | int] = ["edges", index]
            if isinstance(entry, list):
                found.append(tuple(self.element(e, [*loc, n]) for n, e in enumerate(entry)))
            elif isinstance(entry, dict) and set(entry) <= _EDGE_KEYS and "to_node" in entry:
                if "from_node" not in entry:
                    raise self.document.error(loc, "an edge mapping needs from_node and to_node")
                found.append(
                    Edge(
                        from_node=self.node(entry["from_node"], [*loc, "from_node"]),
                        to_node=self.node(entry["to_node"], [*loc, "to_node"]),
                        route=entry.get("route"),
                    )
                )
            else:
                found.append(self.element(entry, loc))
        return found

    def element(self, value: Any, loc: Loc) -> Any:
        """One element of a chain: a node, a fan-out (list) or a routing map."""
        if isinstance(value, list):
            return tuple(self.node(v, [*loc, n]) for n, v in enumerate(value))
        if isinstance(value, dict) and not _looks_like_a_node(value):
            routes: dict[Any, Any] = {}
            for route, target in value.items():
                here = [*loc, str(route)]
                if isinstance(target, list):
                    routes[route] = tuple(self.node(t, [*here, n]) for n, t in enumerate(target))
                else:
                    routes[route] = self.node(target, here)
            return routes
        return self.node(value, loc)

    def node(self, value: Any, loc: Loc) -> Any:
        if value == "START" or value is START:
            return START
        if isinstance(value, str):
            return self._named(value, loc)
        if isinstance(value, dict):
            return self._mapping(value, loc)
        raise self.document.error(
            loc,
            f"{value!r} is not a node: give START, a node's name, a fully qualified name, "
            "a YAML file or a mapping",
        )

    def code(self, value: Any, loc: Loc) -> Any:
        """The object a name (or ``{name: ...}``) refers to; ``.x`` is beside the config."""
        name = value.get("name") if isinstance(value, dict) else value
        if not isinstance(name, str):
            raise self.document.error(loc, "a code reference is a fully qualified name")
        if name.startswith("."):
            name = Path(self.path).parent.name + name
        try:
            return resolve_fully_qualified_name(name)
        except CodeReferenceError as error:
            raise self.document.error(loc, str(error)) from None
        except Exception as error:  # the named module failed while importing
            raise self.document.error(
                loc, f"importing {name!r} failed: {type(error).__name__}: {error}"
            ) from error

    def _remember(self, keys: list[Any], resolved: Any) -> Any:
        for key in keys:
            self.nodes[key] = resolved
        name = getattr(resolved, "name", None)
        if name:
            self.nodes[name] = resolved
        return resolved

    def _named(self, value: str, loc: Loc) -> Any:
        if value in self.nodes:
            return self.nodes[value]
        if value.endswith((".yaml", ".yml")):
            return self._remember([value], self._reference({"config_path": value}, loc))
        if "." not in value:
            raise self.document.error(
                loc,
                f"unknown node {value!r}: a bare name refers to a node an earlier edge "
                "defined; define it there first (or give its fully qualified name)",
            )
        found = self.code(value, loc)
        if isinstance(found, (BaseNode, BaseAgent)):
            return self._remember([value], found)
        if callable(found) and not inspect.isclass(found):
            node = FunctionNode(name=value.rsplit(".", 1)[-1], func=found)
            return self._remember([value], node)
        raise self.document.error(
            loc,
            f"{value!r} is a {type(found).__name__}: name a function, a node or an agent",
        )

    def _mapping(self, value: dict[str, Any], loc: Loc) -> Any:
        if id(value) in self.nodes:
            return self.nodes[id(value)]
        if value.get("name") in self.nodes:
            return self.nodes[value["name"]]
        if "config_path" in value or (
            "code" in value and not {"agent_class", "func_code"} & set(value)
        ):
            return self._remember([id(value)], self._reference(value, loc))
        return self._remember([id(value)], self._inline(value, loc))

    def _reference(self, value: dict[str, Any], loc: Loc) -> BaseAgent:
        try:
            ref = AgentRefConfig.model_validate(value)
        except ValidationError as error:
            raise self.document.validation_error(error, prefix=list(loc)) from None
        if ref.config_path is not None and ref.config_path.endswith((".yaml", ".yml")):
            try:
                return resolve_agent_reference(ref, self.path)
            except AgentConfigError as error:
                if error.path != self.path or error.line is not None:
                    raise
                raise self.document.error(loc, error.problem) from None
        return resolve_agent_reference(ref, self.path)

    def _inline(self, value: dict[str, Any], loc: Loc) -> Any:
        """A node written out in the edge: an agent (``agent_class``, LlmAgent by default)
        or a node class such as FunctionNode (``func_code`` names its function)."""
        name = value.get("agent_class", "LlmAgent")
        cls = self._class(name, [*loc, "agent_class"])
        data = {k: v for k, v in value.items() if k != "agent_class"}
        if issubclass(cls, BaseAgent):
            if issubclass(cls, _workflow_class()):
                return workflow_from_config(cls, data, self.path)  # type: ignore[arg-type]
            try:
                return build_from_config_model(cls, data, self.path)
            except AgentConfigError as error:
                where = [*loc, error.field] if error.field else list(loc)
                raise self.document.error(where, error.problem) from None
        keywords: dict[str, Any] = {}
        for key, item in data.items():
            if key.endswith("_code") and key.removesuffix("_code") in cls.model_fields:
                keywords[key.removesuffix("_code")] = self.code(item, [*loc, key])
            elif key in cls.model_fields:
                keywords[key] = item
            else:
                raise self.document.error(
                    [*loc, key],
                    f"{cls.__name__} has no field {key!r}; remove the key or fix its spelling",
                )
        try:
            return cls(**keywords)
        except ValidationError as error:
            first = error.errors()[0]
            where = [*loc, *(str(p) for p in first["loc"][:1])]
            raise self.document.error(
                where, str(first["msg"]).removeprefix("Value error, ")
            ) from None

    def _class(self, name: Any, loc: Loc) -> type[Any]:
        if not isinstance(name, str) or not name:
            raise self.document.error(loc, "agent_class is the name of an agent or node class")
        if "." not in name:
            import cairn.agents as agents
            import cairn.workflow as workflow

            found = getattr(agents, name, None) or getattr(workflow, name, None)
        else:
            found = self.code(name, loc)
        if isinstance(found, type) and issubclass(found, (BaseAgent, BaseNode)):
            return found
        raise self.document.error(
            loc,
            f"{name!r} is not an agent or node class (LlmAgent, Workflow, FunctionNode, ...; "
            "or your own class by its fully qualified name)",
        )


def _workflow_class() -> type[Any]:
    from cairn.workflow.workflow import Workflow

    return Workflow


def _looks_like_a_node(value: dict[str, Any]) -> bool:
    """A mapping in a chain is a node (else a routing map): it has a node's keys, is a
    one-key ``code`` reference, or has a name and only keys an LlmAgent config has."""
    if any(key in value for key in _NODE_KEYS):
        return True
    if len(value) == 1 and isinstance(value.get("code"), str):
        return True
    fields = set(LlmAgentConfig.model_fields) | set(LlmAgent.model_fields)
    return "name" in value and all(str(key) in fields for key in value)


__all__ = ["workflow_from_config"]
