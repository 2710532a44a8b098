"""cairn's RemoteA2aAgent against google-adk 2.13.0's A2A server and cairn's (tests/a2a/interop).

What cairn's client and each server see, normalized, is held to google-adk's client talking
to google-adk's server (conversations.py; ``baseline`` in conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.a2a.interop.conversations import Exchange, assert_same, pairings, talk


@pytest.mark.parametrize(("server", "agent"), pairings("cairn"))
def test_cairn_s_client_sees_what_google_adk_s_sees(
    server: str, agent: str, adk: Path, baseline: dict[str, Exchange], tmp_path: Path
) -> None:
    assert_same(talk("cairn", server, agent, adk, tmp_path), baseline[agent])
