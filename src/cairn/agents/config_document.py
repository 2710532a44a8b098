"""A YAML agent config as read: its data, and where each key and value stands in the file.

Every error about a config names the file, the line and the key path (``tools[1].name``), so
the document keeps PyYAML's node tree (whose marks hold the lines) beside the plain data.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from cairn.agents.agent_config_error import AgentConfigError

Loc = Sequence[str | int]


def format_loc(loc: Loc) -> str:
    """``("tools", 1, "name")`` as ``tools[1].name``."""
    text = ""
    for item in loc:
        text += f"[{item}]" if isinstance(item, int) else (f".{item}" if text else str(item))
    return text


@dataclasses.dataclass(frozen=True)
class ConfigDocument:
    """One YAML file of an agent config: ``data`` (a mapping) and its node tree."""

    path: str
    data: dict[str, Any]
    root: Any
    """The document's ``yaml.MappingNode`` (None when the data did not come from a file)."""

    @classmethod
    def read(cls, path: str | Path) -> ConfigDocument:
        """Read and parse ``path``; ``AgentConfigError`` for a missing, unreadable, empty or
        non-mapping file, or a YAML syntax error (with its line)."""
        shown = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise AgentConfigError(
                shown, None, None, "no such file; an agent config folder holds root_agent.yaml"
            ) from None
        except (OSError, UnicodeDecodeError) as error:
            raise AgentConfigError(shown, None, None, f"cannot be read: {error}") from None
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            line = mark.line + 1 if mark is not None else None
            raise AgentConfigError(
                shown, line, None, f"not valid YAML: {error.problem or error}"
            ) from None
        except yaml.YAMLError as error:
            raise AgentConfigError(shown, None, None, f"not valid YAML: {error}") from None
        if data is None:
            raise AgentConfigError(
                shown,
                1,
                None,
                "the file is empty; an agent config has at least `name:` "
                "(and `instruction:` for an LlmAgent)",
            )
        if not isinstance(data, dict):
            raise AgentConfigError(
                shown,
                _line(root),
                None,
                f"an agent config is a mapping of keys (name: ..., instruction: ...), "
                f"not a {type(data).__name__}",
            )
        return cls(path=shown, data=data, root=root)

    def line_of(self, loc: Loc) -> int | None:
        """The line of the deepest node along ``loc`` (a key's own line for a mapping entry);
        None for a document built from data rather than read from a file."""
        if self.root is None:
            return None
        node, line = self.root, _line(self.root)
        for item in loc:
            found = _child(node, item)
            if found is None:
                break
            key_node, node = found
            line = _line(key_node if key_node is not None else node)
            if isinstance(node, yaml.ScalarNode):
                line = _line(node)
        return line

    def error(self, loc: Loc, problem: str) -> AgentConfigError:
        """An ``AgentConfigError`` about the key at ``loc``."""
        return AgentConfigError(self.path, self.line_of(loc), format_loc(loc) or None, problem)

    def validation_error(self, error: ValidationError, prefix: Loc = ()) -> AgentConfigError:
        """The first of pydantic's errors, at the line of the key it is about (``prefix`` is
        where the validated data stands in the document)."""
        errors = error.errors()
        # A misspelt key shows up as an unknown key and a missing one: name the typo.
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = [*prefix, *self.existing(list(prefix), first["loc"])]
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "missing":
            message = f"a required key is missing here; add `{first['loc'][-1]}: ...`"
            loc = [*prefix, *self.existing(list(prefix), first["loc"][:-1])]
            field = format_loc([*loc, first["loc"][-1]])
            return AgentConfigError(self.path, self.line_of(loc), field, message)
        if first["type"] == "extra_forbidden":
            message = (
                "not a key of this schema; check its spelling (docs/agent-config.md lists them)"
            )
            known = [str(e["loc"][-1]) for e in errors if e["type"] == "missing"]
            close = difflib.get_close_matches(str(first["loc"][-1]), known, n=1)
            if close:
                message = f"not a key of this schema; did you mean `{close[0]}`?"
        return self.error(loc, message)

    def existing(self, prefix: list[str | int], loc: Loc) -> list[str | int]:
        """The leading part of ``loc`` that names nodes of the document (pydantic adds names
        of union members and the like that are not keys)."""
        node = self.root
        for item in prefix:
            found = _child(node, item)
            if found is None:
                return []
            node = found[1]
        kept: list[str | int] = []
        for item in loc:
            found = _child(node, item)
            if found is None:
                break
            kept.append(item)
            node = found[1]
        return kept


def _line(node: Any) -> int:
    return int(node.start_mark.line) + 1


def _child(node: Any, item: str | int) -> tuple[Any, Any] | None:
    """(key node, value node) of a mapping's ``item``, or (None, element) of a sequence's."""
    if isinstance(node, yaml.MappingNode) and isinstance(item, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == item:
                return key, value
    if (
        isinstance(node, yaml.SequenceNode)
        and isinstance(item, int)
        and 0 <= item < len(node.value)
    ):
        return None, node.value[item]
    return None
