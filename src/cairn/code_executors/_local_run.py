"""Running a piece of Python in a child process of this one, bounded in time and output.

Shared by the executors that start a process here (``UnsafeLocalCodeExecutor``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import mimetypes
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

from cairn.code_executors.code_execution_utils import CodeExecutionResult, File, file_bytes

_RUNNER = """\
import sys, traceback
source = sys.stdin.buffer.read().decode("utf-8")
sys.argv = ["<code>"]
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
try:
    exec(compile(source, "<code>", "exec"), namespace)
except SystemExit:
    raise
except BaseException as error:
    frames = error.__traceback__
    traceback.print_exception(type(error), error, frames.tb_next if frames else None)
    sys.exit(1)
"""
"""The child's program: the code comes on stdin and runs as ``__main__``; an uncaught
exception prints its traceback (without this frame) and exits with status 1."""

_GRACE_SECONDS = 2.0
_CHUNK = 65536


@dataclasses.dataclass
class _Capped:
    """The first ``limit`` bytes a stream gave, and how many it gave in all."""

    limit: int
    kept: bytearray = dataclasses.field(default_factory=bytearray)
    total: int = 0

    def drain(self, stream: IO[bytes]) -> None:
        while chunk := stream.read(_CHUNK):
            self.total += len(chunk)
            room = self.limit - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]

    def text(self) -> str:
        text = bytes(self.kept).decode("utf-8", errors="replace")
        if self.total > self.limit:
            text += (
                f"\n[output cut: the run wrote {self.total} bytes here; only the first "
                f"{self.limit} are kept (max_output_bytes)]"
            )
        return text


def _child_path() -> str:
    """This process's import path for the child (the app's own modules stay importable; the
    child runs in another directory, so the current one is named)."""
    entries = [entry or os.getcwd() for entry in sys.path]
    return os.pathsep.join(dict.fromkeys(entries))


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the child and everything it started (its own process group): TERM, a grace
    period, then KILL (also for what ignores TERM or outlives the child)."""
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(_GRACE_SECONDS)
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(_GRACE_SECONDS)


def run_python(
    code: str,
    *,
    input_files: list[File],
    timeout_seconds: float,
    max_output_bytes: int,
    max_output_file_bytes: int,
) -> CodeExecutionResult:
    """Run ``code`` with this interpreter in a fresh working directory holding
    ``input_files``; files it leaves there (new or changed) are its output files."""
    with tempfile.TemporaryDirectory(prefix="cairn-code-") as workdir:
        given: dict[str, bytes] = {}
        for file in input_files:
            data = file_bytes(file)
            (Path(workdir) / Path(file.name).name).write_bytes(data)
            given[Path(file.name).name] = data
        env = {**os.environ, "PYTHONPATH": _child_path(), "PYTHONIOENCODING": "utf-8"}
        process = subprocess.Popen(
            [sys.executable, "-c", _RUNNER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env=env,
            start_new_session=True,  # its own group: a timeout ends what it started too
        )
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        out, err = _Capped(max_output_bytes), _Capped(max_output_bytes)
        readers = [
            threading.Thread(target=out.drain, args=(process.stdout,), daemon=True),
            threading.Thread(target=err.drain, args=(process.stderr,), daemon=True),
        ]
        for reader in readers:
            reader.start()
        with contextlib.suppress(BrokenPipeError):
            process.stdin.write(code.encode("utf-8"))
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
        timed_out = False
        try:
            process.wait(timeout_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(process)
        for reader in readers:
            reader.join(_GRACE_SECONDS)  # a process that left the group may hold a pipe
        stdout, stderr = out.text(), err.text()
        if timed_out:
            note = f"Code execution timed out after {timeout_seconds:g} seconds."
            stderr = f"{stderr}\n{note}" if stderr else note
        elif process.returncode == 0:
            stderr = ""  # warnings of a run that succeeded: a non-empty stderr means failure
        elif not stderr:
            stderr = f"Code execution exited with status {process.returncode}."
        files, skipped = _output_files(Path(workdir), given, max_output_file_bytes)
        if skipped:
            stdout += (
                f"\n[not saved, over max_output_file_bytes={max_output_file_bytes}: "
                f"{', '.join(skipped)}]"
            )
        return CodeExecutionResult(
            stdout=stdout,
            stderr=stderr,
            output_files=files,
            exit_code=process.returncode,
        )


def _output_files(
    workdir: Path, given: dict[str, bytes], limit: int
) -> tuple[list[File], list[str]]:
    """Regular files in ``workdir`` that are new or changed, within ``limit`` bytes in all
    (by name); the names of those left out for the limit."""
    files: list[File] = []
    skipped: list[str] = []
    used = 0
    for path in sorted(workdir.iterdir()):
        if not path.is_file() or path.is_symlink():
            continue
        size = path.stat().st_size
        unchanged = path.name in given and len(given[path.name]) == size
        if unchanged and path.read_bytes() == given[path.name]:
            continue  # an input file, as it was given
        if used + size > limit:
            skipped.append(f"{path.name} ({size} bytes)")
            continue
        data = path.read_bytes()
        used += len(data)
        mime_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        files.append(File(name=path.name, content=data, mime_type=mime_type))
    return files, skipped
