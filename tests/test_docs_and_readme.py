"""The README's commands and every Python example in README.md and docs/ are kept true."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL)


def bash_blocks(path: Path) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_python_examples_run(doc: Path, tmp_path: Path) -> None:
    blocks = python_blocks(doc)
    assert blocks, f"{doc.name} has no runnable example"
    script = tmp_path / f"{doc.stem}_examples.py"
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, f"{doc.name} examples failed:\n{result.stderr}"


def test_readme_opens_with_the_demo_and_test_commands() -> None:
    demo, tests = (block.strip() for block in bash_blocks(ROOT / "README.md")[:2])
    assert demo.startswith("python3 -m venv .venv") and "examples/email_review/main.py" in demo
    assert tests.startswith("python3 -m venv .venv") and "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines(), ".ci/run must call exactly the README's test command"


def test_quickstart_output_matches_the_readme() -> None:
    quickstart = python_blocks(ROOT / "README.md")[0]
    result = subprocess.run(
        [sys.executable, "-c", quickstart], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["monday visit number 1", "tuesday visit number 2"]
