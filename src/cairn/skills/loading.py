"""Reading skill folders: ``load_skill_from_dir``, ``load_skills_from_dir``, ``list_skills_in_dir``.

A skill folder is named after the skill and holds ``SKILL.md``: front matter in YAML
between two ``---`` lines, then the instructions in markdown. Files under ``references/``,
``assets/`` and ``scripts/`` (any depth) are its resources, keyed by their path below that
folder with ``/`` separators; text files are read as text, others as bytes. A symbolic link
that leads out of the skill's folder is not read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from cairn.skills.errors import InvalidSkillError, SkillNotFoundError
from cairn.skills.models import Frontmatter, Resources, Script, Skill

logger = logging.getLogger(__name__)

_SKILL_FILES = ("SKILL.md", "skill.md")


def _skill_md(folder: Path) -> Path:
    if not folder.is_dir():
        raise SkillNotFoundError(f"skill folder {folder} does not exist (or is not a folder)")
    for name in _SKILL_FILES:
        if (folder / name).is_file():
            return folder / name
    raise SkillNotFoundError(
        f"skill folder {folder} has no SKILL.md; a skill is a folder with SKILL.md (front "
        "matter with name and description between --- lines, then instructions)"
    )


def parse_skill_md(text: str, where: str) -> tuple[dict[str, Any], str]:
    """SKILL.md's front matter (a mapping) and body; ``InvalidSkillError`` naming ``where``."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise InvalidSkillError(
            f"{where}: SKILL.md must start with a '---' line opening its YAML front matter"
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise InvalidSkillError(
            f"{where}: the front matter is not closed; add a '---' line after it"
        ) from None
    try:
        matter = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as error:
        raise InvalidSkillError(f"{where}: the front matter is not valid YAML: {error}") from None
    if not isinstance(matter, dict):
        raise InvalidSkillError(
            f"{where}: the front matter must be a mapping (name: ..., description: ...)"
        )
    return matter, "\n".join(lines[end + 1 :]).strip()


def _frontmatter(matter: dict[str, Any], where: str) -> Frontmatter:
    try:
        return Frontmatter.model_validate(matter)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "front matter"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise InvalidSkillError(f"{where}: {key}: {message}") from None


def _files(folder: Path, root: Path) -> dict[str, str | bytes]:
    """The files below ``folder`` by relative POSIX path (text, or bytes if not UTF-8)."""
    found: dict[str, str | bytes] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        if not path.resolve().is_relative_to(root):
            logger.warning("skipping %s: a link out of the skill folder %s", path, root)
            continue
        key = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        try:
            found[key] = data.decode("utf-8")
        except UnicodeDecodeError:
            found[key] = data
    return found


def _read_frontmatter(folder: Path) -> Frontmatter:
    skill_md = _skill_md(folder)
    matter, _ = parse_skill_md(skill_md.read_text(encoding="utf-8"), str(skill_md))
    frontmatter = _frontmatter(matter, str(skill_md))
    if frontmatter.name != folder.name:
        raise InvalidSkillError(
            f"{skill_md}: the skill is named {frontmatter.name!r} but its folder "
            f"{folder.name!r}; rename one so that they match"
        )
    return frontmatter


def load_skill_from_dir(skill_dir: str | Path) -> Skill:
    """The skill in ``skill_dir``: its front matter, instructions and resources.
    ``SkillNotFoundError`` (a ``FileNotFoundError``) or ``InvalidSkillError`` (a
    ``ValueError``) say what is wrong with the folder."""
    folder = Path(skill_dir).resolve()
    frontmatter = _read_frontmatter(folder)
    _, body = parse_skill_md(_skill_md(folder).read_text(encoding="utf-8"), str(folder))
    scripts: dict[str, Script] = {}
    for key, source in _files(folder / "scripts", folder).items():
        if isinstance(source, bytes):
            logger.warning("skipping script %s of skill %s: not UTF-8 text", key, folder.name)
            continue
        scripts[key] = Script(src=source)
    skill = Skill(
        frontmatter=frontmatter,
        instructions=body,
        resources=Resources(
            references=_files(folder / "references", folder),
            assets=_files(folder / "assets", folder),
            scripts=scripts,
        ),
    )
    skill._uri = folder.as_uri()
    return skill


def load_skills_from_dir(skills_dir: str | Path) -> list[Skill]:
    """Every skill in the subfolders of ``skills_dir`` that hold a SKILL.md, by folder name
    (an invalid one is an error, not skipped)."""
    folder = Path(skills_dir).resolve()
    if not folder.exists():
        raise SkillNotFoundError(f"skills folder {folder} does not exist")
    if not folder.is_dir():
        raise InvalidSkillError(f"{folder} is not a folder of skill folders")
    return [
        load_skill_from_dir(sub)
        for sub in sorted(folder.iterdir())
        if sub.is_dir() and any((sub / name).is_file() for name in _SKILL_FILES)
    ]


def list_skills_in_dir(
    skills_base_path: str | Path,
    on_error: Callable[[str, Exception], None] | None = None,
) -> dict[str, Frontmatter]:
    """The front matter of each skill in the subfolders of ``skills_base_path``, by folder
    name, without reading instructions or resources. A folder that is not a valid skill is
    passed to ``on_error(name, error)`` (which may raise to stop), or logged and skipped."""
    folder = Path(skills_base_path).resolve()
    listed: dict[str, Frontmatter] = {}
    if not folder.is_dir():
        logger.warning("skills folder %s is not a folder", folder)
        return listed
    for sub in sorted(folder.iterdir()):
        if not sub.is_dir():
            continue
        try:
            listed[sub.name] = _read_frontmatter(sub)
        except (SkillNotFoundError, InvalidSkillError) as error:
            if on_error is not None:
                on_error(sub.name, error)
                continue
            logger.warning("skipping skill folder %s: %s", sub, error)
    return listed


async def load_skill_from_dir_async(skill_dir: str | Path) -> Skill:
    """``load_skill_from_dir`` on a worker thread (the event loop goes on meanwhile)."""
    return await asyncio.to_thread(load_skill_from_dir, skill_dir)


async def load_skills_from_dir_async(skills_dir: str | Path) -> list[Skill]:
    """``load_skills_from_dir`` on a worker thread."""
    return await asyncio.to_thread(load_skills_from_dir, skills_dir)


async def list_skills_in_dir_async(
    skills_base_path: str | Path,
    on_error: Callable[[str, Exception], None] | None = None,
) -> dict[str, Frontmatter]:
    """``list_skills_in_dir`` on a worker thread (``on_error`` runs there too)."""
    return await asyncio.to_thread(list_skills_in_dir, skills_base_path, on_error)
