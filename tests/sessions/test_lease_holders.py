"""Which lease holders are known to be gone: a process of this host (and pid namespace) that
has exited, or whose pid now belongs to a later process. Nothing else is judged."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from cairn.sessions.lease import holder_is_gone, lease_holder

pytestmark = pytest.mark.skipif(
    not os.path.exists(f"/proc/{os.getpid()}/stat"), reason="needs Linux /proc"
)


def test_a_live_holder_is_not_gone_and_an_exited_one_is() -> None:
    assert not holder_is_gone(lease_holder("inv-1"))
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; from cairn.sessions.lease import lease_holder; "
         "print(lease_holder('inv-2')); sys.stdout.flush(); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None and child.stdin is not None
    holder = child.stdout.readline().strip()
    assert holder.startswith(f"inv-2@{socket.gethostname()}:{child.pid}:")
    assert not holder_is_gone(holder)
    child.stdin.close()
    assert child.wait(timeout=60) == 0
    assert holder_is_gone(holder)


def test_a_reused_pid_does_not_pass_for_the_holder() -> None:
    name, _, identity = lease_holder("inv").rpartition(":")
    namespace, _, started = identity.partition(".")
    assert holder_is_gone(f"{name}:{namespace}.{int(started) + 1}")  # this pid, another start


@pytest.mark.parametrize(
    "holder",
    [
        "inv@another-host:1:4026531836.5",  # another host: cannot tell
        f"inv@{socket.gethostname()}:{2**22 + 7}",  # no process identity: cannot tell
        f"inv@{socket.gethostname()}:{2**22 + 7}:1.5",  # another pid namespace: cannot tell
        "someone",  # not a holder name cairn makes
    ],
)
def test_holders_that_cannot_be_judged_are_taken_as_alive(holder: str) -> None:
    assert not holder_is_gone(holder)
