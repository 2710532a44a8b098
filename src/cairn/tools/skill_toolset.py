"""ADK's path for ``SkillToolset``: skills (folders of instructions, resources and scripts) as
tools (the toolset lives in ``cairn.skills``, beside the code executors it runs scripts with)."""

from cairn.skills.skill_toolset import (
    DEFAULT_SKILL_SYSTEM_INSTRUCTION,
    ListSkillsTool,
    LoadSkillResourceTool,
    LoadSkillTool,
    RunSkillScriptTool,
    SearchSkillsTool,
    SkillDiscoveryMode,
    SkillLifecycleConfig,
    SkillLifecycleMode,
    SkillToolset,
    UnloadSkillTool,
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
