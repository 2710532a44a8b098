"""Agents declared in YAML (Agent Config): a SequentialAgent whose sub-agents are YAML files,
with tools by reference and by built-in name, callbacks by reference, output keys."""

from pathlib import Path

from google.adk.agents import config_agent_utils

root_agent = config_agent_utils.from_config(str(Path(__file__).parent / "root_agent.yaml"))
