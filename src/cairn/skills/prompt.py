"""What the model is told about skills: the catalog as XML, and how to use the skill tools."""

from __future__ import annotations

import html
from collections.abc import Sequence

from cairn.skills.models import Frontmatter, Skill


def format_skills_as_xml(skills: Sequence[Frontmatter | Skill]) -> str:
    """The skills' names and descriptions in an ``<available_skills>`` block."""
    lines = ["<available_skills>"]
    for skill in skills:
        lines += [
            "<skill>",
            "<name>",
            html.escape(skill.name),
            "</name>",
            "<description>",
            html.escape(skill.description),
            "</description>",
            "</skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def skill_system_instruction(
    *,
    prefix: str | None = None,
    offered: set[str] | frozenset[str] | None = None,
    scripts_runnable: bool = True,
    unload_offered: bool = False,
) -> str:
    """The guidance on skills added to the system instruction; ``prefix`` is the toolset's
    tool name prefix, ``offered`` the skill tools the toolset offers (None: all of them)."""
    p = f"{prefix}_" if prefix else ""
    scripts = (
        "- scripts/ (optional): scripts you can run with the skill tools.\n"
        if scripts_runnable
        else f"- scripts/ (optional): scripts you cannot run here; read one with "
        f"`{p}load_skill_resource` and follow it yourself.\n"
    )
    steps = [
        f"When a skill fits the user's request, call `{p}load_skill` with its "
        "`skill_name` and read its instructions before doing anything else.",
        "Then follow those instructions exactly, every step in order, before you reply.",
        f"`{p}load_skill_resource` reads a file of a skill (`references/...`, `assets/...`, "
        "`scripts/...`); use it only for a skill's own files, never for files the user "
        "gives you.",
    ]
    if scripts_runnable:
        steps.append(
            f"`{p}run_skill_script` runs a script of a skill's `scripts/` folder; read it "
            f"first with `{p}load_skill_resource` if you need to."
        )
    steps.append(
        "If a skill tool returns an error, do not retry with another path or name: tell the "
        "user what failed and stop."
    )
    steps.append(
        "Loading a skill does not end your turn: go on in the same turn with the tools its "
        "steps need, then write your reply."
    )
    if unload_offered:
        steps.append(
            f"When you are done with a skill, you may call `{p}unload_skill` to release it "
            "(its tools go away until you load it again)."
        )
    text = (
        "You can use skills: folders of instructions and resources for specialised tasks. "
        "Use the skill tools to work with them. A skill folder holds:\n"
        "- SKILL.md: the skill's name, description and instructions.\n"
        "- references/ (optional): more documentation.\n"
        "- assets/ (optional): templates and other files the skill uses.\n"
        + scripts
        + "\n"
        + "".join(f"{i}. {step}\n" for i, step in enumerate(steps, start=1))
    )
    if offered is not None:
        tools = ["list_skills", "load_skill", "load_skill_resource", "run_skill_script"]
        if unload_offered:
            tools.append("unload_skill")
        missing = [f"`{p}{name}`" for name in tools if name not in offered]
        if missing:
            text += (
                f"\nThese tools are not available, do not call them: {', '.join(missing)}. "
                "Apply a loaded skill's instructions yourself and answer in plain text.\n"
            )
    return text


DEFAULT_SKILL_SYSTEM_INSTRUCTION = skill_system_instruction()
"""The guidance a ``SkillToolset`` with every tool adds to the system instruction."""
