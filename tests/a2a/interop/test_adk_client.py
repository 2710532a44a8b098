"""google-adk 2.13.0's RemoteA2aAgent against cairn's A2A servers (tests/a2a/interop).

What google-adk's client and cairn's server see, normalized, is held to google-adk's client
talking to google-adk's server (conversations.py; ``baseline`` in conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.a2a.interop.conversations import (
    APPROVED,
    APPROVER_KEPT,
    PAUSED,
    Exchange,
    assert_same,
    pairings,
    talk,
)


def test_google_adk_talking_to_itself_is_what_the_others_are_held_to(
    baseline: dict[str, Exchange],
) -> None:
    teller, approver = baseline["teller"], baseline["approver"]
    assert teller.client == [[{"author": "remote", "text": "teller heard: hello"}]]
    assert teller.server == [
        [{"author": "user", "text": "hello"}, {"author": "teller", "text": "teller heard: hello"}]
    ]
    asked, answered = approver.client
    assert asked[-1] == PAUSED
    assert answered == [APPROVED]
    assert approver.server == [APPROVER_KEPT]


@pytest.mark.parametrize(("server", "agent"), pairings("adk"))
def test_google_adk_s_client_sees_from_cairn_what_it_sees_from_google_adk(
    server: str, agent: str, adk: Path, baseline: dict[str, Exchange], tmp_path: Path
) -> None:
    assert_same(talk("adk", server, agent, adk, tmp_path), baseline[agent])
