"""A cairn app whose agent is a remote A2A agent (its card's URL in ``SCRIPTED_A2A_CARD``)."""

import os

from cairn.agents.remote_a2a_agent import RemoteA2aAgent

root_agent = RemoteA2aAgent(name="helper", agent_card=os.environ["SCRIPTED_A2A_CARD"])
