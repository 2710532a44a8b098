"""The conversations of tests/a2a/interop and what is held against what.

One conversation per agent of bench/a2a_twins.py, the same source on both frameworks:
``teller`` (a one-turn answer) and ``approver`` (it pauses on a long-running tool call, the
remote task is ``input-required``; the client's user answers; the same remote task
finishes). A pairing of a client (google-adk's RemoteA2aAgent, cairn's) with a server
(google-adk's to_a2a, cairn's to_a2a, ``cairn api-server --a2a``) holds it (``talk``), and
what each side saw, normalized, is compared with google-adk talking to google-adk
(``same_as``): the events the client's invocation yielded turn by turn, and the events the
server's session kept. cairn's client records its calls to the remote in its log
(``cairn_a2a_send_message`` with the message and its messageId, ``cairn_a2a_await_task``)
and yields none of them, so what it yields is compared as it is; the records are checked in
its log.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.a2a.interop import harness

TURNS: dict[str, list[tuple[str, Any]]] = {
    "teller": [("say", "hello")],
    "approver": [("say", "refund 50, please"), ("answer", {"approved": True})],
}
SERVERS = {"adk": "adk-to_a2a", "cairn": "cairn-to_a2a", "cairn-api": "cairn-api-server"}
CALL = {"name": "ask_approval", "args": {"amount": 50}}
PAUSED = {"author": "remote", "calls": [CALL], "paused": True}
"""What a client shows of the approver's pause."""
APPROVED = {"author": "remote", "text": "approved"}
APPROVER_KEPT = [
    {"author": "user", "text": "refund 50, please"},
    {"author": "approver", "calls": [CALL], "paused": True},
    {"author": "user", "responses": [{"name": "ask_approval", "response": {"approved": True}}]},
    {"author": "approver", "text": "approved"},
]
"""What the approver's server keeps of the conversation: the pause, the answer, once each."""


@dataclass
class Exchange:
    client: list[list[dict[str, Any]]]  # per turn, what the client's invocation yielded
    server: list[list[dict[str, Any]]]  # per session, what the server's log kept


@contextlib.contextmanager
def server_of(kind: str, agent: str, adk: Path, home: Path) -> Iterator[harness.Server]:
    if kind == "adk":
        with harness.adk_server(adk, agent, home) as server:
            yield server
    elif kind == "cairn":
        with harness.cairn_server(agent, home / "cairn.db", home) as server:
            yield server
    else:
        with harness.cairn_api_server(agent, home / "cairn.db", home) as server:
            yield server


def talk(client: str, server: str, agent: str, adk: Path, home: Path) -> Exchange:
    """The conversation TURNS[agent] from ``client`` to ``server``; then what each side saw."""
    seen = []
    with server_of(server, agent, adk, home) as remote:
        for number, (how, what) in enumerate(TURNS[agent], start=1):
            told = {"say": what} if how == "say" else {"answer": what}
            if client == "adk":
                seen.append(harness.adk_turn(adk, remote.card, home / "adk.db", "s1", **told))
            else:
                turn = harness.cairn_turn(remote.card, home / "client.db", "s1", **told)
                seen.append(asyncio.run(turn))
                sends = asyncio.run(harness.cairn_client_sends(home / "client.db", "s1"))
                assert len(sends) == number, sends  # each turn's message recorded, once
                assert sends[-1]["messageId"] == sends[-1]["message"]["messageId"]
    if server == "adk":
        kept = harness.adk_server_view(home)
    else:
        kept = asyncio.run(harness.cairn_server_view(home / "cairn.db", agent))
    return Exchange(seen, kept)


def adk_to_adk(adk: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Exchange]:
    """google-adk's RemoteA2aAgent talking to google-adk's to_a2a, per agent."""
    return {
        agent: talk("adk", "adk", agent, adk, tmp_path_factory.mktemp(f"adk-adk-{agent}"))
        for agent in TURNS
    }


def pairings(client: str) -> list[Any]:
    """The pytest params (server, agent) of ``client`` with every other server."""
    return [
        pytest.param(server, agent, id=f"{name}-{agent}")
        for server, name in SERVERS.items()
        if (client, server) != ("adk", "adk")
        for agent in sorted(TURNS)
    ]  # fmt: skip


def assert_same(seen: Exchange, expected: Exchange) -> None:
    assert once(seen.client) == once(expected.client), "the client saw something else"
    assert texts(seen.client) == texts(expected.client), "the client saw other answers"
    assert seen.server == expected.server, "the server kept something else"


def once(turns: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Each turn with an event repeated right after itself left once: google-adk's client,
    talking to google-adk's server, yields the pause twice (the working update and the
    input-required status both carry the call), cairn's once."""
    return [[e for i, e in enumerate(turn) if i == 0 or turn[i - 1] != e] for turn in turns]


def texts(turns: list[list[dict[str, Any]]]) -> list[list[str]]:
    """The answers of each turn, every one: an answer is never repeated (on ADK either)."""
    return [[event["text"] for event in turn if "text" in event] for turn in turns]
