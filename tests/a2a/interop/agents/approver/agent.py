"""bench/a2a_twins.py's ``approver``, built from cairn, as `cairn api-server --a2a` serves it."""

from bench.a2a_twins import agent

root_agent = agent("cairn", "approver")
