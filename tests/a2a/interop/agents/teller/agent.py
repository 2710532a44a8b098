"""bench/a2a_twins.py's ``teller``, built from cairn, as `cairn api-server --a2a` serves it."""

from bench.a2a_twins import agent

root_agent = agent("cairn", "teller")
