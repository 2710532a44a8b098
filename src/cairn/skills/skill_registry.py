"""``SkillRegistry``: where a ``SkillToolset`` finds skills it was not given (ADK's interface)."""

from __future__ import annotations

import abc

from cairn.skills.models import Frontmatter, Skill


class SkillRegistry(abc.ABC):
    """A searchable store of skills: the toolset's ``search_skills`` tool asks it, and
    ``load_skill`` falls back to it for a name the toolset does not hold."""

    @abc.abstractmethod
    async def get_skill(self, *, name: str) -> Skill:
        """The skill called ``name`` (raise if there is none)."""

    @abc.abstractmethod
    async def search_skills(self, *, query: str) -> list[Frontmatter]:
        """The skills that fit ``query``, as their front matter."""

    def search_tool_description(self) -> str | None:
        """How the ``search_skills`` tool is described to the model (None: the default)."""
        return None
