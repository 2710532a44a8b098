"""A command run on a pseudo-terminal, as a person at a terminal runs it: ``isatty()`` is
true for its input and output, so it asks its interactive questions."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path
from types import TracebackType

_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")


class Terminal:
    """``command`` on a pty of its own; ``expect`` waits for text, ``send`` types a line."""

    def __init__(self, command: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 250, 0, 0))
        self._leader = leader
        self.process = subprocess.Popen(
            command, stdin=follower, stdout=follower, stderr=follower, cwd=cwd, env=env
        )
        os.close(follower)
        self.output = ""  # everything read so far, escape sequences removed, \r\n as \n
        self._raw = ""
        self._seen = 0

    def expect(self, text: str, timeout: float = 60) -> str:
        """Wait until ``text`` appears after what was matched before; return what came
        in between (fails with the whole transcript if it does not come in ``timeout``)."""
        deadline = time.monotonic() + timeout
        while (found := self.output.find(text, self._seen)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{text!r} did not appear; the terminal shows:\n{self.output}")
        between = self.output[self._seen : found]
        self._seen = found + len(text)
        return between

    def send(self, line: str) -> None:
        os.write(self._leader, line.encode() + b"\r")

    def _read(self, timeout: float) -> bool:
        """Read what is there within ``timeout`` seconds; False once the command has ended."""
        ready, _, _ = select.select([self._leader], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self._leader, 65536)
        except OSError:  # the command ended and closed the terminal
            return False
        if not chunk:
            return False
        self._raw += chunk.decode(errors="replace")
        self.output = _ESCAPES.sub("", self._raw).replace("\r\n", "\n").replace("\r", "")
        return True

    def wait(self, timeout: float = 60) -> int:
        """The command's exit code, once it ended (what it still printed is read)."""
        deadline = time.monotonic() + timeout
        while self._read(max(0.0, deadline - time.monotonic())):
            if time.monotonic() > deadline:
                raise AssertionError(f"the command did not end; it shows:\n{self.output}")
        return self.process.wait(timeout=max(1.0, deadline - time.monotonic()))

    def __enter__(self) -> Terminal:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self._leader)
