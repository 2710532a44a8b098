"""Run tests/parity/drive.py on google-adk 2.13.0 and on cairn, and compare what they printed.

ADK runs in its own venv (bench/.peers/adk, made by bench/peers.py's ``ensure_venv``);
cairn in this interpreter. One subprocess per framework runs every app.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DRIVER = HERE / "drive.py"
TIMEOUT = 300


def adk_python(install: bool = True) -> Path:
    """google-adk 2.13.0's venv python, made if missing; RuntimeError says why it cannot be."""
    spec = importlib.util.spec_from_file_location("cairn_bench_peers", ROOT / "bench" / "peers.py")
    assert spec is not None and spec.loader is not None
    peers = sys.modules.get(spec.name) or importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = peers  # its dataclasses look their module up
    spec.loader.exec_module(peers)
    return Path(peers.ensure_venv(peers.PEERS["adk"], install=install))


def run_driver(python: Path | str, framework: str, apps: list[str] | None = None) -> Any:
    """The driver's JSON for these apps (all when None), run by ``python``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_API_KEY")
    }
    command = [str(python), str(DRIVER), f"--framework={framework}", *(apps or [])]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, env=env, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{framework} driver exited {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def both(apps: list[str] | None = None) -> tuple[Any, Any]:
    return run_driver(adk_python(), "adk", apps), run_driver(sys.executable, "cairn", apps)


def diff(adk: Any, cairn: Any, limit: int = 160) -> str:
    """A unified diff of the two normalized outputs (ADK first), cut after ``limit`` lines."""
    left = json.dumps(adk, indent=1, sort_keys=True).splitlines()
    right = json.dumps(cairn, indent=1, sort_keys=True).splitlines()
    lines = list(difflib.unified_diff(left, right, "google-adk", "cairn", lineterm="", n=4))
    if len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)


def first_difference(adk: Any, cairn: Any, path: str = "") -> str:
    """Where the two outputs first differ, as `path: adk-value != cairn-value`."""
    if isinstance(adk, dict) and isinstance(cairn, dict):
        for key in sorted(set(adk) | set(cairn)):
            if key not in cairn:
                return f"{path}/{key}: only on ADK"
            if key not in adk:
                return f"{path}/{key}: only on cairn ({short(cairn[key])})"
            if adk[key] != cairn[key]:
                return first_difference(adk[key], cairn[key], f"{path}/{key}")
        return ""
    if isinstance(adk, list) and isinstance(cairn, list):
        for index, (left, right) in enumerate(zip(adk, cairn, strict=False)):
            if left != right:
                return first_difference(left, right, f"{path}[{index}]")
        if len(adk) != len(cairn):
            return f"{path}: {len(adk)} items on ADK, {len(cairn)} on cairn"
        return ""
    return f"{path}: {short(adk)} != {short(cairn)}"


def short(value: Any, width: int = 90) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= width else text[: width - 3] + "..."


def app_names() -> list[str]:
    return sorted(path.parent.name for path in (HERE / "apps").glob("*/agent.py"))
