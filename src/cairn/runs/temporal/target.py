"""Where the Temporal server is: ``temporal://HOST:PORT[/NAMESPACE]``."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from cairn.runs.executor import ExecutorUnavailableError

if TYPE_CHECKING:
    from temporalio.client import Client

DEFAULT_PORT = 7233
DEFAULT_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "cairn-runs"
"""The task queue API servers submit to and workers poll, unless both are given another."""


@dataclasses.dataclass(frozen=True)
class TemporalTarget:
    """A Temporal frontend's address and the namespace to use in it."""

    address: str
    """``HOST:PORT``, as ``temporalio.client.Client.connect`` takes it."""
    namespace: str = DEFAULT_NAMESPACE

    @classmethod
    def parse(cls, url: str) -> TemporalTarget:
        """``temporal://HOST[:PORT][/NAMESPACE]`` (port 7233, namespace ``default`` unless
        given); ``ValueError`` naming what is wrong otherwise."""
        parts = urlsplit(url)
        if parts.scheme != "temporal" or not parts.hostname:
            raise ValueError(
                f"{url!r} is not a Temporal target; write temporal://HOST:PORT[/NAMESPACE], "
                "e.g. temporal://127.0.0.1:7233/default"
            )
        try:
            port = parts.port or DEFAULT_PORT
        except ValueError:
            raise ValueError(f"{url!r}: the port is not a number from 1 to 65535") from None
        namespace = unquote(parts.path.strip("/")) or DEFAULT_NAMESPACE
        if "/" in namespace or parts.query or parts.fragment:
            raise ValueError(
                f"{url!r}: after HOST:PORT give at most a namespace (temporal://HOST:PORT/NS)"
            )
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return cls(address=f"{host}:{port}", namespace=namespace)

    def __str__(self) -> str:
        return f"temporal://{self.address}/{self.namespace}"


class TemporalUnavailableError(ExecutorUnavailableError):
    """The Temporal server named by a target could not be reached."""

    def __init__(self, target: TemporalTarget, reason: str) -> None:
        self.target = target
        super().__init__(
            f"cannot reach the Temporal server at {target} ({reason}); start it (for a local "
            "one: `temporal server start-dev`) or fix the target temporal://HOST:PORT[/NS]"
        )


async def connect(target: TemporalTarget) -> Client:
    """A client of ``target``'s namespace; ``TemporalUnavailableError`` when unreachable."""
    from temporalio.client import Client

    try:
        return await Client.connect(target.address, namespace=target.namespace)
    except RuntimeError as exc:  # the SDK's core reports a failed connection so
        raise TemporalUnavailableError(target, str(exc).splitlines()[0]) from None
