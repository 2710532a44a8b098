"""Reading YAML files and writing pydantic models as YAML (ADK's ``yaml_utils``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel


def load_yaml_file(file_path: str | Path) -> Any:
    """The content of the YAML file ``file_path`` (parsed safely: plain data only);
    ``FileNotFoundError`` if there is no such file."""
    path = Path(file_path)
    if not path.is_file():
        raise FileNotFoundError(f"YAML file not found: {path}")
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


class _BlockDumper(yaml.SafeDumper):  # type: ignore[misc]
    """Indents lists under their key, and writes text with newlines or quotes as ``|``."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, text: str) -> Any:
    block = "\n" in text or '"' in text or "'" in text
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if block else None)


_BlockDumper.add_representer(str, _str)


def dump_pydantic_to_yaml(
    model: BaseModel,
    file_path: str | Path,
    *,
    indent: int = 2,
    sort_keys: bool = True,
    exclude_none: bool = True,
    exclude_defaults: bool = True,
    exclude: Any = None,
) -> None:
    """Write ``model`` (as JSON data) to the YAML file ``file_path``, creating its folder;
    multi-line text as ``|`` blocks, lists indented, no line wrapping."""
    data = model.model_dump(
        mode="json", exclude_none=exclude_none, exclude_defaults=exclude_defaults, exclude=exclude
    )
    path = Path(file_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        yaml.dump(
            data,
            f,
            Dumper=_BlockDumper,
            indent=indent,
            sort_keys=sort_keys,
            width=1_000_000,
            allow_unicode=True,
        )
