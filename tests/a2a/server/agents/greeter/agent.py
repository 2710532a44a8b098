"""Answers "hello, <what the user said>" (a one-turn scripted agent)."""

from cairn import Agent
from cairn.testing import ScriptedLlm


def _reply(request) -> str:  # type: ignore[no-untyped-def]
    text = request.contents[-1].parts[0].text or ""
    return f"hello, {text}"


root_agent = Agent(
    name="greeter",
    description="Greets whoever writes to it.",
    model=ScriptedLlm(respond=_reply),
)
