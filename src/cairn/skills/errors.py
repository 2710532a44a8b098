"""The errors of skill folders: one that is missing, and one that is not a valid skill."""

from __future__ import annotations

from cairn.errors import CairnError


class SkillNotFoundError(CairnError, FileNotFoundError):
    """A skill folder, or its SKILL.md, does not exist (a ``FileNotFoundError``, as ADK's)."""


class InvalidSkillError(CairnError, ValueError):
    """A skill folder is not a valid skill: its SKILL.md has no front matter, the front
    matter is not valid, or the skill's name differs from its folder's (a ``ValueError``)."""
