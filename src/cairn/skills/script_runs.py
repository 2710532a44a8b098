"""Running a skill's script: through a code executor, bounded in time and output.

The executor runs a small Python program (``_PROGRAM``) that writes the skill's files into
a fresh folder, starts the script there (``python`` for ``.py``, ``bash`` for ``.sh`` and
``.bash``) in a process group of its own, stops the whole group after ``timeout_seconds``,
keeps at most ``max_output_bytes`` of its stdout and of its stderr, and prints one line
after a marker no script can guess: the outcome, as JSON. With ``collect_files`` the files
the script created are copied where the executor collects output files. The executor is
called on a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import secrets
from pathlib import PurePosixPath
from typing import Any

from cairn.agents.invocation_context import InvocationContext
from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.code_executors.code_execution_utils import CodeExecutionInput, File
from cairn.skills.models import Skill

INTERPRETERS = {".py": "python", ".sh": "bash", ".bash": "bash"}
"""The scripts that can run, by suffix, and what runs them."""

_PROGRAM = r"""
import base64, json, os, shutil, signal, subprocess, sys, tempfile, threading

JOB = json.loads(base64.b64decode(__JOB__).decode("utf-8"))


def drain(stream, limit, into):
    kept, total = bytearray(), 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        total += len(chunk)
        room = limit - len(kept)
        if room > 0:
            kept += chunk[:room]
    into.append((bytes(kept), total))


def text(box, limit):
    kept, total = box[0] if box else (b"", 0)
    shown = kept.decode("utf-8", errors="replace")
    # Control characters would come back as six-character JSON escapes.
    shown = "".join(c if c >= " " or c in "\n\r\t" else "?" for c in shown)
    if total > limit:
        shown += "\n[output cut: the script wrote %d bytes; only the first %d are kept]" % (
            total, limit)
    return shown


def stop(process):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except OSError:
            pass
        try:
            process.wait(2)
        except subprocess.TimeoutExpired:
            pass


def main():
    home = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="cairn-skill-") as work:
        given = set()
        for relative, data in JOB["files"].items():
            path = os.path.join(work, *relative.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(base64.b64decode(data))
            given.add(os.path.normpath(path))
        runner = [sys.executable] if JOB["interpreter"] == "python" else ["bash"]
        script = os.path.join(work, *JOB["script"].split("/"))
        process = subprocess.Popen(
            runner + [script] + JOB["argv"], cwd=work, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        out, err = [], []
        readers = [
            threading.Thread(target=drain, args=(process.stdout, JOB["limit"], out), daemon=True),
            threading.Thread(target=drain, args=(process.stderr, JOB["limit"], err), daemon=True),
        ]
        for reader in readers:
            reader.start()
        timed_out = False
        try:
            process.wait(JOB["timeout"])
        except subprocess.TimeoutExpired:
            timed_out = True
            stop(process)
        for reader in readers:
            reader.join(2)
        made = []
        if JOB["collect"]:
            for folder, _, names in os.walk(work):
                for name in sorted(names):
                    path = os.path.normpath(os.path.join(folder, name))
                    if path in given or os.path.islink(path) or len(made) >= JOB["max_files"]:
                        continue
                    target = name
                    while os.path.exists(os.path.join(home, target)):
                        target = "_" + target
                    shutil.copyfile(path, os.path.join(home, target))
                    relative = os.path.relpath(path, work).replace(os.sep, "/")
                    made.append({"copy": target, "path": relative})
        outcome = {
            "stdout": text(out, JOB["limit"]),
            "stderr": text(err, JOB["limit"]),
            "returncode": process.returncode,
            "timed_out": timed_out,
            "files": made,
        }
        sys.stdout.write("\n" + JOB["marker"] + json.dumps(outcome, ensure_ascii=False) + "\n")


main()
"""


@dataclasses.dataclass
class ScriptRun:
    """How a script run ended: what it printed, its exit status, and the files it made."""

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool
    files: dict[str, File]
    """The files the script created, by their path in its folder (``out/report.csv``)."""


class ScriptRunError(Exception):
    """The executor did not report the script's outcome (it failed before or around it)."""


def script_argv(
    args: dict[str, Any] | list[str] | None,
    short_options: dict[str, Any] | None,
    positional_args: list[str] | None,
) -> list[str]:
    """The script's arguments, as ADK builds them: a list as it is; else ``--key value``
    for ``args``, ``-k value`` for ``short_options``, then ``--`` and ``positional_args``."""
    if isinstance(args, list):
        return [str(value) for value in args]
    argv: list[str] = []
    for key, value in (args or {}).items():
        argv += [f"--{key}", str(value)]
    for key, value in (short_options or {}).items():
        argv += [f"-{key}", str(value)]
    if positional_args:
        argv += ["--", *(str(value) for value in positional_args)]
    return argv


def script_path(file_path: str) -> str | None:
    """``file_path`` as a path below the skill's ``scripts/`` folder (with or without that
    prefix), or None if it leads anywhere else."""
    path = PurePosixPath(file_path.replace("\\", "/"))
    parts = path.parts[1:] if path.parts[:1] == ("scripts",) else path.parts
    if not parts or path.is_absolute() or ".." in parts or ":" in parts[0]:
        return None
    return "/".join(parts)


def _payload(skill: Skill) -> dict[str, str]:
    files: dict[str, str] = {}
    groups: list[tuple[str, dict[str, Any]]] = [
        ("references", dict(skill.resources.references)),
        ("assets", dict(skill.resources.assets)),
        ("scripts", {k: v.src for k, v in skill.resources.scripts.items()}),
    ]
    for folder, contents in groups:
        for key, content in contents.items():
            data = content if isinstance(content, bytes) else str(content).encode("utf-8")
            files[f"{folder}/{key}"] = base64.b64encode(data).decode("ascii")
    return files


async def run_script(
    executor: BaseCodeExecutor,
    invocation_context: InvocationContext,
    skill: Skill,
    script: str,
    argv: list[str],
    *,
    timeout_seconds: float,
    max_output_bytes: int,
    collect_files: bool = False,
    max_files: int = 50,
) -> ScriptRun:
    """Run ``scripts/<script>`` of ``skill`` with ``executor`` (on a worker thread);
    ``ScriptRunError`` if the executor reported no outcome."""
    suffix = PurePosixPath(script).suffix.lower()
    marker = f"__cairn_skill_run_{secrets.token_hex(16)}__:"
    executor_cap = getattr(executor, "max_output_bytes", None)
    if isinstance(executor_cap, int) and executor_cap > 0:
        # Both streams travel in the executor's own stdout, JSON-escaped: keep them
        # within what the executor passes back.
        max_output_bytes = min(max_output_bytes, max(256, executor_cap // 5))
    job = {
        "files": _payload(skill),
        "script": f"scripts/{script}",
        "interpreter": INTERPRETERS[suffix],
        "argv": argv,
        "timeout": timeout_seconds,
        "limit": max_output_bytes,
        "collect": collect_files,
        "max_files": max_files,
        "marker": marker,
    }
    encoded = base64.b64encode(json.dumps(job).encode("utf-8")).decode("ascii")
    code = _PROGRAM.replace("__JOB__", repr(encoded))
    result = await asyncio.to_thread(
        executor.execute_code, invocation_context, CodeExecutionInput(code=code)
    )
    found = result.stdout.rfind(marker)
    if found < 0:
        detail = (result.stderr or result.stdout).strip()[-2000:]
        raise ScriptRunError(
            f"the code executor ({type(executor).__name__}) reported no outcome of the run"
            + (f": {detail}" if detail else "")
        )
    outcome = json.loads(result.stdout[found + len(marker) :].splitlines()[0])
    copies = {file.name: file for file in result.output_files}
    return ScriptRun(
        stdout=outcome["stdout"],
        stderr=outcome["stderr"],
        returncode=outcome["returncode"],
        timed_out=bool(outcome["timed_out"]),
        files={
            made["path"]: copies[made["copy"]]
            for made in outcome["files"]
            if made["copy"] in copies  # the executor may leave out what is over its limits
        },
    )
