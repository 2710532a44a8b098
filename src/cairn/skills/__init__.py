"""Skills: folders of instructions, resources and scripts an agent loads when a task needs
them (ADK's ``google.adk.skills``). ``SkillToolset`` offers them to a model as tools."""

from cairn.skills.errors import InvalidSkillError, SkillNotFoundError
from cairn.skills.loading import (
    list_skills_in_dir,
    list_skills_in_dir_async,
    load_skill_from_dir,
    load_skill_from_dir_async,
    load_skills_from_dir,
    load_skills_from_dir_async,
)
from cairn.skills.models import Frontmatter, Resources, Script, Skill
from cairn.skills.prompt import DEFAULT_SKILL_SYSTEM_INSTRUCTION
from cairn.skills.skill_registry import SkillRegistry

__all__ = [
    "DEFAULT_SKILL_SYSTEM_INSTRUCTION",
    "Frontmatter",
    "InvalidSkillError",
    "Resources",
    "Script",
    "Skill",
    "SkillNotFoundError",
    "SkillRegistry",
    "list_skills_in_dir",
    "list_skills_in_dir_async",
    "load_skill_from_dir",
    "load_skill_from_dir_async",
    "load_skills_from_dir",
    "load_skills_from_dir_async",
]
