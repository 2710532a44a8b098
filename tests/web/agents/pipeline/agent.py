"""A workflow with a retried node and a nested workflow, for the graph's node details."""

from __future__ import annotations

from cairn.workflow import START, RetryConfig, Workflow, node

_attempts: dict[str, int] = {}


@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0, jitter=0))
def fetch(node_input: str) -> str:
    """Fails on its first attempt for each text (a flaky service), then succeeds."""
    _attempts[node_input] = _attempts.get(node_input, 0) + 1
    if _attempts[node_input] == 1:
        raise ConnectionError(f"service busy for {node_input!r}")
    return f"fetched {node_input}"


def clean(node_input: str) -> str:
    return node_input.upper()


def count(node_input: str) -> int:
    return len(node_input)


tidy = Workflow(name="tidy", edges=[(START, clean, count)])


def report(node_input: int) -> str:
    return f"{node_input} characters"


root_agent = Workflow(name="pipeline", edges=[(START, fetch, tidy, report)])
