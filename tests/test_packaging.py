"""What the published package declares: extras that install on any machine, a license file
that matches the declared license, a changelog."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS = PYPROJECT["project"]["optional-dependencies"]


def _requirement(extra: str, name: str) -> Requirement:
    (found,) = (r for r in map(Requirement, EXTRAS[extra]) if r.name == name)
    return found


def test_the_semantic_extra_asks_for_a_torch_range_not_one_release() -> None:
    """A user's installed torch (any build within the range) is kept; no exact pin."""
    torch = _requirement("semantic", "torch")
    assert not any(spec.operator in ("==", "===") for spec in torch.specifier)
    for release in ("2.4.0", "2.13.0", "2.14.1"):
        assert torch.specifier.contains(release), release
    assert not torch.specifier.contains("3.0.0")


def test_the_dev_extra_pins_the_torch_the_projects_own_runs_install() -> None:
    """The README's test command and .ci/run install `.[dev]`: the CPU build on disk."""
    assert str(_requirement("dev", "torch").specifier) == "==2.13.0"
    assert any("semantic" in r.extras for r in map(Requirement, EXTRAS["dev"]))


def test_the_license_file_is_the_declared_license() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.split("\n", 3)[:2] == [
        " " * 33 + "Apache License",
        " " * 27 + "Version 2.0, January 2004",
    ]
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_changelog_has_an_unreleased_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n")
    assert "\n## [Unreleased]\n" in text
    assert "\n### Added\n" in text
