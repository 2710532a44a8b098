"""A2A (Agent2Agent): serve cairn agents to any A2A client and call remote A2A agents.

Built on the official ``a2a-sdk`` (``pip install 'cairn[a2a]'``). The module paths follow
google-adk's ``google.adk.a2a``: ``cairn.a2a.utils.agent_to_a2a.to_a2a`` serves an agent,
``cairn.a2a.converters.part_converter`` converts message parts. docs/a2a.md is the guide.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("a2a") is None:  # pragma: no cover - packaging
    raise ImportError("cairn.a2a needs the a2a-sdk package: pip install 'cairn[a2a]'")
