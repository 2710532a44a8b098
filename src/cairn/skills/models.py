"""What a skill is: ``Frontmatter`` (SKILL.md's metadata), instructions, and ``Resources``.

A skill is a folder: ``SKILL.md`` (YAML front matter between ``---`` lines, then markdown
instructions) and optional ``references/``, ``assets/`` and ``scripts/`` folders. The model
sees a skill's name and description first, its instructions when it loads the skill, and
its resources when it asks for them.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class Frontmatter(BaseModel):
    """SKILL.md's front matter: ``name`` (kebab-case, at most 64 characters, the folder's
    name), ``description`` (what the skill does and when to use it, at most 1024), and
    optional ``license``, ``compatibility``, ``allowed-tools`` and ``metadata``.

    ``metadata.adk_additional_tools`` lists tools (of the toolset's ``additional_tools``)
    offered once the skill is loaded; ``metadata.adk_inject_state: true`` fills ``{key}``
    placeholders of the instructions from session state when the skill is loaded.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = Field(
        default=None, alias="allowed-tools", serialization_alias="allowed-tools"
    )
    metadata: dict[str, Any] = {}

    @field_validator("name")
    @classmethod
    def _kebab_name(cls, name: str) -> str:
        name = unicodedata.normalize("NFKC", name)
        if len(name) > 64:
            raise ValueError(f"name {name!r} is longer than 64 characters")
        if not _KEBAB.match(name):
            raise ValueError(
                f"name {name!r} must be lowercase kebab-case: letters a-z, digits and single "
                "hyphens between them (e.g. 'pdf-forms')"
            )
        return name

    @field_validator("description")
    @classmethod
    def _description(cls, description: str) -> str:
        if not description:
            raise ValueError("description is empty; say what the skill does and when to use it")
        if len(description) > 1024:
            raise ValueError(f"description has {len(description)} characters; at most 1024")
        return description

    @field_validator("compatibility")
    @classmethod
    def _compatibility(cls, value: str | None) -> str | None:
        if value is not None and len(value) > 500:
            raise ValueError("compatibility has more than 500 characters")
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, metadata: dict[str, Any]) -> dict[str, Any]:
        tools = metadata.get("adk_additional_tools")
        if tools is not None and not (
            isinstance(tools, list) and all(isinstance(t, str) for t in tools)
        ):
            raise ValueError("metadata.adk_additional_tools must be a list of tool names")
        if "adk_inject_state" in metadata and not isinstance(metadata["adk_inject_state"], bool):
            raise ValueError("metadata.adk_inject_state must be true or false")
        return metadata


class Script(BaseModel):
    """A script's source (``str(script)`` is the source)."""

    src: str

    def __str__(self) -> str:
        return self.src


class Resources(BaseModel):
    """A skill's files by path below their folder: ``references`` and ``assets`` (text, or
    bytes for a binary file) and ``scripts`` (text)."""

    references: dict[str, str | bytes] = {}
    assets: dict[str, str | bytes] = {}
    scripts: dict[str, Script] = {}

    def get_reference(self, reference_id: str) -> str | bytes | None:
        return self.references.get(reference_id)

    def get_asset(self, asset_id: str) -> str | bytes | None:
        return self.assets.get(asset_id)

    def get_script(self, script_id: str) -> Script | None:
        return self.scripts.get(script_id)

    def list_references(self) -> list[str]:
        return list(self.references)

    def list_assets(self) -> list[str]:
        return list(self.assets)

    def list_scripts(self) -> list[str]:
        return list(self.scripts)


class Skill(BaseModel):
    """A whole skill: its ``frontmatter``, its ``instructions`` (SKILL.md's body) and its
    ``resources``."""

    frontmatter: Frontmatter
    instructions: str
    resources: Resources = Resources()

    _uri: str | None = PrivateAttr(default=None)
    """Where the skill was loaded from (a file: URI)."""

    @property
    def name(self) -> str:
        return self.frontmatter.name

    @property
    def description(self) -> str:
        return self.frontmatter.description
