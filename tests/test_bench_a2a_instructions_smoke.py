"""bench/a2a_instructions.py on a few messages: it counts what cairn's A2A server and the
a2a-sdk alone execute per message, under valgrind (cairn's figure above the sdk's; no
figure asserted beyond that)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.databases import service_unavailable
from tests.support.waiting import BOUND_SECONDS

ROOT = Path(__file__).resolve().parent.parent


def counted(*options: str) -> int:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "a2a_instructions.py"), "--messages=16", *options],
        capture_output=True, text=True, cwd=ROOT, timeout=BOUND_SECONDS * 3,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(r": ([\d,]+) instructions per SendMessage \(16 messages", done.stdout)
    assert found is not None, done.stdout
    return int(found.group(1).replace(",", ""))


def test_cairn_and_the_sdk_floor_are_counted_per_message() -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        service_unavailable("valgrind is not installed (Debian: apt install valgrind)")
        pytest.skip("valgrind is not installed")
    floor = counted("--floor")
    cairn = counted()
    assert 0 < floor < cairn
