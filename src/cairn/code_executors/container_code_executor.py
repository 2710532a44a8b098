"""Running model-written code in a container (Docker, or an engine that speaks its API).

Needs the ``docker`` package: ``pip install 'cairn[docker]'``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import mimetypes
import os
import tarfile
import uuid
import weakref
from typing import TYPE_CHECKING, Any

from pydantic import Field, PrivateAttr, model_validator

from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.code_executors.code_execution_utils import (
    CodeExecutionInput,
    CodeExecutionResult,
    File,
    file_bytes,
)
from cairn.code_executors.errors import CodeExecutorError, ContainerEngineUnavailableError
from cairn.code_executors.unsafe_local_code_executor import (
    DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_MAX_OUTPUT_FILE_BYTES,
    DEFAULT_TIMEOUT_SECONDS,
    bounded_run_settings,
)

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext

logger = logging.getLogger(__name__)

DEFAULT_IMAGE_TAG = "adk-code-executor:latest"
"""The tag an image built from ``docker_path`` gets when no ``image`` is named (ADK's)."""

_TIMED_OUT = 124
_WRAPPER = """\
import os, signal, sys
limit, source = float(sys.argv[1]), sys.argv[2]
child = os.fork()
if child == 0:
    os.setpgid(0, 0)
    sys.argv = ["<code>"]
    exec(compile(source, "<code>", "exec"), {"__name__": "__main__"})
    sys.exit(0)
def expire(signum, frame):
    try:
        os.killpg(child, signal.SIGKILL)
    except OSError:
        pass
    os._exit(TIMED_OUT)
signal.signal(signal.SIGALRM, expire)
signal.setitimer(signal.ITIMER_REAL, limit)
status = os.waitpid(child, 0)[1]
signal.setitimer(signal.ITIMER_REAL, 0)
try:
    os.killpg(child, signal.SIGKILL)
except OSError:
    pass
os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
""".replace("TIMED_OUT", str(_TIMED_OUT))
"""Runs in the container: the code in a child process group, killed with everything it
started when the time is up (exit status 124)."""


def _docker() -> Any:
    try:
        import docker
    except ModuleNotFoundError as error:
        raise CodeExecutorError(
            "ContainerCodeExecutor needs the 'docker' package: pip install 'cairn[docker]'"
        ) from error
    return docker


def _remove(container: Any) -> None:
    with contextlib.suppress(Exception):
        container.stop(timeout=2)
    with contextlib.suppress(Exception):
        container.remove(force=True)


class ContainerCodeExecutor(BaseCodeExecutor):
    """Runs each piece of code with ``python3`` in one long-lived container, started when
    the executor is made (from ``image``, or from an image built from the Dockerfile in
    ``docker_path``) and removed by ``close()`` or when the executor is collected.

    The container has no network unless ``network_enabled``, drops every Linux capability
    and may not gain privileges. Each run gets its own working directory in it (with the
    input files; files the code leaves there are its output files) and is bounded as a
    local run is: ``timeout_seconds``, ``max_output_bytes``, ``max_output_file_bytes``.
    """

    base_url: str | None = None
    """The engine's address (``unix:///run/user/1000/podman/podman.sock``, ``tcp://...``);
    None: the environment's (``DOCKER_HOST``, else the default socket)."""
    image: str = DEFAULT_IMAGE_TAG
    docker_path: str | None = None
    """A directory with a Dockerfile to build the image from (tagged ``image``)."""
    network_enabled: bool = False
    stateful: bool = Field(default=False, frozen=True, exclude=True)
    optimize_data_file: bool = Field(default=False, frozen=True, exclude=True)
    timeout_seconds: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0)
    max_output_bytes: int = Field(default=DEFAULT_MAX_OUTPUT_BYTES, gt=0)
    max_output_file_bytes: int = Field(default=DEFAULT_MAX_OUTPUT_FILE_BYTES, ge=0)

    _client: Any = PrivateAttr(default=None)
    _container: Any = PrivateAttr(default=None)
    _finalizer: Any = PrivateAttr(default=None)

    def __init__(
        self,
        base_url: str | None = None,
        image: str | None = None,
        docker_path: str | None = None,
        **data: Any,
    ) -> None:
        if not image and not docker_path:
            raise CodeExecutorError(
                "ContainerCodeExecutor needs image= (an image with python3, e.g. "
                "'python:3.12-slim') or docker_path= (a directory with a Dockerfile)"
            )
        super().__init__(
            base_url=base_url,
            image=image or DEFAULT_IMAGE_TAG,
            docker_path=os.path.abspath(docker_path) if docker_path else None,
            **data,
        )
        self._start()

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        return bounded_run_settings(cls.__name__, data)

    # -- the container ------------------------------------------------------------------
    def _start(self) -> None:
        docker = _docker()
        where = self.base_url or os.environ.get("DOCKER_HOST") or "the default socket"
        try:
            client = (
                docker.DockerClient(base_url=self.base_url)
                if self.base_url
                else (docker.from_env())
            )
            client.ping()
        except docker.errors.DockerException as error:
            raise ContainerEngineUnavailableError(
                f"ContainerCodeExecutor found no container engine at {where} ({error}). "
                "Start Docker (or Podman's Docker-compatible service), or pass base_url= "
                "with its address; to run code without a container, use "
                "UnsafeLocalCodeExecutor."
            ) from error
        self._client = client
        if self.docker_path:
            if not os.path.isdir(self.docker_path):
                raise CodeExecutorError(
                    f"ContainerCodeExecutor(docker_path={self.docker_path!r}): no such directory"
                )
            logger.info("building image %s from %s", self.image, self.docker_path)
            client.images.build(path=self.docker_path, tag=self.image, rm=True)
        self._container = client.containers.run(
            image=self.image,
            detach=True,
            tty=True,
            network_disabled=not self.network_enabled,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
        )
        self._finalizer = weakref.finalize(self, _remove, self._container)
        found = self._container.exec_run(["python3", "--version"])
        if found.exit_code != 0:
            self.close()
            raise CodeExecutorError(
                f"the image {self.image!r} has no python3; ContainerCodeExecutor needs an image "
                "with it (e.g. 'python:3.12-slim')"
            )

    def close(self) -> None:
        """Stop and remove the container."""
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
        self._container = None

    def __enter__(self) -> ContainerCodeExecutor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- a run ----------------------------------------------------------------------------
    def execute_code(
        self,
        invocation_context: InvocationContext,
        code_execution_input: CodeExecutionInput,
    ) -> CodeExecutionResult:
        container = self._container
        if container is None:
            raise CodeExecutorError("this ContainerCodeExecutor is closed; make a new one")
        workdir = f"/tmp/cairn-run-{uuid.uuid4().hex}"
        container.exec_run(["mkdir", "-p", workdir])
        given = {os.path.basename(f.name): file_bytes(f) for f in code_execution_input.input_files}
        if given:
            container.put_archive(workdir, _tar(given))
        try:
            stdout, stderr, status = self._exec(container, workdir, code_execution_input.code)
            files, skipped = self._output_files(container, workdir, given)
        finally:
            container.exec_run(["rm", "-rf", workdir])
        if status == _TIMED_OUT:
            note = f"Code execution timed out after {self.timeout_seconds:g} seconds."
            stderr = f"{stderr}\n{note}" if stderr else note
        elif status == 0:
            stderr = ""
        elif not stderr:
            stderr = f"Code execution exited with status {status}."
        if skipped:
            stdout += (
                f"\n[not saved, over max_output_file_bytes={self.max_output_file_bytes}: "
                f"{', '.join(skipped)}]"
            )
        return CodeExecutionResult(
            stdout=stdout, stderr=stderr, output_files=files, exit_code=status
        )

    def _exec(self, container: Any, workdir: str, code: str) -> tuple[str, str, int | None]:
        api = self._client.api
        command = ["python3", "-c", _WRAPPER, str(self.timeout_seconds), code]
        run = api.exec_create(container.id, command, workdir=workdir)
        kept = [bytearray(), bytearray()]
        totals = [0, 0]
        for chunks in api.exec_start(run["Id"], stream=True, demux=True):
            for index, chunk in enumerate(chunks):
                if not chunk:
                    continue
                totals[index] += len(chunk)
                room = self.max_output_bytes - len(kept[index])
                if room > 0:
                    kept[index] += chunk[:room]
        texts = []
        for index in (0, 1):
            text = bytes(kept[index]).decode("utf-8", errors="replace")
            if totals[index] > self.max_output_bytes:
                text += (
                    f"\n[output cut: the run wrote {totals[index]} bytes here; only the first "
                    f"{self.max_output_bytes} are kept (max_output_bytes)]"
                )
            texts.append(text)
        status = api.exec_inspect(run["Id"]).get("ExitCode")
        return texts[0], texts[1], status

    def _output_files(
        self, container: Any, workdir: str, given: dict[str, bytes]
    ) -> tuple[list[File], list[str]]:
        stream, _ = container.get_archive(workdir + "/.")
        archive = io.BytesIO()
        limit = self.max_output_file_bytes + 1024 * 1024  # file headers beside the files
        for chunk in stream:
            archive.write(chunk)
            if archive.tell() > limit * 2:
                break  # more than could be kept: read what came
        archive.seek(0)
        files: list[File] = []
        skipped: list[str] = []
        used = 0
        with (
            contextlib.suppress(tarfile.TarError, EOFError, OSError),
            tarfile.open(fileobj=archive) as tar,
        ):
            for member in tar:
                name = os.path.basename(member.name)
                if not member.isfile() or os.path.dirname(member.name.lstrip("./")):
                    continue
                if used + member.size > self.max_output_file_bytes:
                    skipped.append(f"{name} ({member.size} bytes)")
                    continue
                extracted = tar.extractfile(member)
                data = extracted.read() if extracted is not None else b""
                if given.get(name) == data:
                    continue
                used += len(data)
                mime_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
                files.append(File(name=name, content=data, mime_type=mime_type))
        return files, skipped


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


__all__ = ["DEFAULT_IMAGE_TAG", "ContainerCodeExecutor", "logger"]
