"""Skill folders: SKILL.md's front matter and body, resources, and what a bad folder says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cairn.skills import (
    Frontmatter,
    InvalidSkillError,
    SkillNotFoundError,
    list_skills_in_dir,
    list_skills_in_dir_async,
    load_skill_from_dir,
    load_skill_from_dir_async,
    load_skills_from_dir,
    load_skills_from_dir_async,
)
from cairn.skills.prompt import format_skills_as_xml

SKILL_MD = """---
name: pdf-forms
description: Fill in PDF forms from a customer's data.
license: Apache-2.0
allowed-tools: read_file
metadata:
  adk_additional_tools: [fill_field]
---
# Filling forms

1. Read references/fields.md.
"""


def make_skill(base: Path, name: str = "pdf-forms", text: str = SKILL_MD) -> Path:
    folder = base / name
    (folder / "references" / "deep").mkdir(parents=True)
    (folder / "assets").mkdir()
    (folder / "scripts").mkdir()
    (folder / "SKILL.md").write_text(text)
    (folder / "references" / "fields.md").write_text("name, date")
    (folder / "references" / "deep" / "more.md").write_text("more")
    (folder / "assets" / "logo.png").write_bytes(b"\x89PNG\x00\xff")
    (folder / "scripts" / "fill.py").write_text("print('filled')")
    return folder


def test_a_skill_folder_loads_whole(tmp_path: Path) -> None:
    skill = load_skill_from_dir(make_skill(tmp_path))
    assert skill.name == "pdf-forms"
    assert skill.description == "Fill in PDF forms from a customer's data."
    assert skill.frontmatter.license == "Apache-2.0"
    assert skill.frontmatter.allowed_tools == "read_file"
    assert skill.frontmatter.metadata == {"adk_additional_tools": ["fill_field"]}
    assert skill.instructions == "# Filling forms\n\n1. Read references/fields.md."
    assert skill.resources.list_references() == ["deep/more.md", "fields.md"]
    assert skill.resources.get_reference("fields.md") == "name, date"
    assert skill.resources.get_asset("logo.png") == b"\x89PNG\x00\xff"  # binary: bytes
    script = skill.resources.get_script("fill.py")
    assert script is not None and str(script) == "print('filled')"
    assert skill._uri == (tmp_path / "pdf-forms").resolve().as_uri()


def test_a_link_out_of_the_skill_folder_is_not_read(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    os.symlink(secret, folder / "references" / "leak.md")
    assert "leak.md" not in load_skill_from_dir(folder).resources.references


@pytest.mark.parametrize(
    ("text", "error", "words"),
    [
        ("no front matter", InvalidSkillError, "must start with a '---' line"),
        ("---\nname: pdf-forms\n", InvalidSkillError, "not closed"),
        ("---\nname: [x\n---\n", InvalidSkillError, "not valid YAML"),
        ("---\n- a\n---\n", InvalidSkillError, "must be a mapping"),
        ("---\nname: PDF Forms\ndescription: d\n---\n", InvalidSkillError, "kebab-case"),
        ("---\nname: pdf-forms\ndescription: ''\n---\n", InvalidSkillError, "description is empty"),
        ("---\ndescription: d\n---\n", InvalidSkillError, "name: Field required"),
        (
            "---\nname: pdf-forms\ndescription: d\nmetadata:\n  adk_additional_tools: x\n---\n",
            InvalidSkillError,
            "adk_additional_tools must be a list",
        ),
        ("---\nname: other-name\ndescription: d\n---\n", InvalidSkillError, "rename one"),
    ],
)
def test_a_bad_skill_folder_says_what_is_wrong(
    tmp_path: Path, text: str, error: type[Exception], words: str
) -> None:
    folder = make_skill(tmp_path, text=text)
    with pytest.raises(error) as caught:
        load_skill_from_dir(folder)
    assert words in str(caught.value) and str(folder) in str(caught.value)
    assert isinstance(caught.value, ValueError)  # as ADK's


def test_a_missing_folder_or_skill_md_is_a_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(SkillNotFoundError, match="does not exist"):
        load_skill_from_dir(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"has no SKILL\.md"):
        load_skill_from_dir(tmp_path / "empty")


async def test_loading_and_listing_a_folder_of_skills(tmp_path: Path) -> None:
    make_skill(tmp_path)
    make_skill(tmp_path, "csv-report", SKILL_MD.replace("pdf-forms", "csv-report"))
    (tmp_path / "notes").mkdir()  # no SKILL.md: not a skill, skipped
    names = [s.name for s in load_skills_from_dir(tmp_path)]
    assert names == ["csv-report", "pdf-forms"]
    assert [s.name for s in await load_skills_from_dir_async(tmp_path)] == names
    assert (await load_skill_from_dir_async(tmp_path / "pdf-forms")).name == "pdf-forms"
    listed = list_skills_in_dir(tmp_path, on_error=lambda name, error: None)
    assert list(listed) == names and isinstance(listed["pdf-forms"], Frontmatter)
    assert list(await list_skills_in_dir_async(tmp_path)) == names
    with pytest.raises(SkillNotFoundError):
        load_skills_from_dir(tmp_path / "missing")


def test_listing_reports_bad_skills_to_on_error(tmp_path: Path) -> None:
    make_skill(tmp_path)
    make_skill(tmp_path, "broken", "---\nname: not-broken\ndescription: d\n---\n")
    seen: list[str] = []
    listed = list_skills_in_dir(tmp_path, on_error=lambda name, error: seen.append(name))
    assert list(listed) == ["pdf-forms"] and seen == ["broken"]
    with pytest.raises(InvalidSkillError):
        load_skills_from_dir(tmp_path)  # loading all of them refuses a bad one

    def stop(name: str, error: Exception) -> None:
        raise error

    with pytest.raises(InvalidSkillError, match="rename one"):
        list_skills_in_dir(tmp_path, on_error=stop)


def test_the_catalog_as_xml_escapes_text(tmp_path: Path) -> None:
    skill = load_skill_from_dir(
        make_skill(tmp_path, "a-b", "---\nname: a-b\ndescription: x < y & z\n---\n")
    )
    assert format_skills_as_xml([skill]) == (
        "<available_skills>\n<skill>\n<name>\na-b\n</name>\n<description>\n"
        "x &lt; y &amp; z\n</description>\n</skill>\n</available_skills>"
    )
