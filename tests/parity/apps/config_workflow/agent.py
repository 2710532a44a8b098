"""A Workflow declared in YAML (agent_class: Workflow): a chain, a fan-out into an inline
JoinNode, a routing map, nodes by fully qualified name and by an earlier edge's name."""

from pathlib import Path

from google.adk.agents import config_agent_utils

root_agent = config_agent_utils.from_config(str(Path(__file__).parent / "root_agent.yaml"))
