"""The gate agent with an idempotent tool: a run killed while it waits is taken over by the
next server and finishes there (the tool runs again) once the file the message names exists."""

from tests.server.fault_agents.gate.agent import respond, wait_for_release

from cairn import Agent, FunctionTool
from cairn.testing import ScriptedLlm

root_agent = Agent(
    name="waiter",
    model=ScriptedLlm(respond=respond),
    tools=[FunctionTool(wait_for_release, idempotent=True)],
)
