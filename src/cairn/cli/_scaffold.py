"""The files ``cairn create NAME`` writes: a runnable agent package with a test."""

from __future__ import annotations

DEFAULT_MODEL = "gemini-2.5-flash"

INIT = '''"""The {name} agent: `cairn run {name}` talks to it."""

from . import agent

__all__ = ["agent"]
'''

AGENT = '''"""{name}: an agent with one function tool.

`cairn run {name}` talks to it in a terminal; `cairn web .` opens it in the
browser. The model needs an API key: copy .env.example to .env and fill it in.
"""

from __future__ import annotations

from cairn import Agent
from cairn.models import BaseLlm

MODEL = {model_literal}


def get_weather(city: str) -> dict[str, str]:
    """Report today's weather in a city.

    Args:
        city: The city's name, e.g. "Paris".
    """
    # A stand-in: call a real weather service here.
    reports = {{"paris": "sunny, 21 °C", "london": "light rain, 15 °C"}}
    report = reports.get(city.strip().lower())
    if report is None:
        return {{"status": "unknown", "city": city}}
    return {{"status": "ok", "city": city, "report": report}}


def build_agent(model: str | BaseLlm = MODEL) -> Agent:
    """The agent; tests pass a scripted model instead of a real one."""
    return Agent(
        name={name_literal},
        model=model,
        instruction=(
            "You are a helpful assistant. When asked about the weather, call "
            "get_weather with the city's name and answer in one sentence."
        ),
        tools=[get_weather],
    )


root_agent = build_agent()
'''

ENV_EXAMPLE = """# Copy to .env and fill in the key of the model provider you use.
GOOGLE_API_KEY=...
# OPENAI_API_KEY=...
# Where sessions are stored (default .cairn/sessions.db); e.g. postgresql+asyncpg://user@host/db
# CAIRN_STORE=.cairn/sessions.db
"""

TESTS_INIT = ""

TEST_AGENT = '''"""The {name} agent, tested with a scripted model: no API key, no network."""

from __future__ import annotations

import asyncio

from cairn import InMemoryRunner
from cairn.testing import Call, ScriptedLlm
from google.genai import types

from {name}.agent import build_agent, get_weather

APP = {name_literal}


def test_get_weather_knows_paris() -> None:
    assert get_weather("Paris") == {{
        "status": "ok",
        "city": "Paris",
        "report": "sunny, 21 °C",
    }}


def test_the_agent_calls_the_tool_and_answers() -> None:
    # The model's replies, in order: a call of get_weather, then the answer.
    model = ScriptedLlm(
        script=[Call("get_weather", city="Paris"), "It is sunny in Paris."]
    )
    runner = InMemoryRunner(agent=build_agent(model=model), app_name=APP)
    session = asyncio.run(
        runner.session_service.create_session(app_name=APP, user_id="tester")
    )
    question = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    events = list(
        runner.run(user_id="tester", session_id=session.id, new_message=question)
    )

    results = [r.response for e in events for r in e.get_function_responses()]
    assert results == [get_weather("Paris")]
    answer = events[-1]
    assert answer.is_final_response() and answer.content and answer.content.parts
    assert answer.content.parts[0].text == "It is sunny in Paris."
    # The second model call saw the tool's result.
    assert "sunny, 21" in str(model.requests[1].contents[-1])
'''

README = """# {name}

An agent made with `cairn create`: `{name}/agent.py` defines `root_agent`, a
model ({model}) with one function tool, `get_weather`.

```bash
cp {name}/.env.example {name}/.env   # then fill in your API key
cairn run {name}                     # talk to it (cairn reads {name}/.env)
pytest {name}/tests                  # its tests use a scripted model: no key needed
```

Edit the instruction and the tools in `agent.py`; `tests/test_agent.py` shows
how to test a change without calling a real model (`cairn.testing.ScriptedLlm`).
"""

# -- cairn create NAME --type=config: an Agent Config folder (root_agent.yaml) ---------------

CONFIG_AGENT = """# {name}: an agent declared in YAML (docs/agent-config.md).
# `cairn run {name}` talks to it; `cairn web .` and `cairn api-server .` serve it.
name: {name}
description: Answers questions about the weather.
model: {model}
instruction: |
  You answer questions about the weather. Call get_weather for the city the
  user asks about, then answer in one short sentence.
tools:
  - name: {name}.tools.get_weather
"""

CONFIG_TOOLS = '''"""The tools root_agent.yaml names (as {name}.tools.NAME)."""

from __future__ import annotations


def get_weather(city: str) -> dict[str, str]:
    """Report today's weather in a city.

    Args:
        city: The city's name, e.g. "Paris".
    """
    if city.strip().lower() == "paris":
        return {{"status": "ok", "city": "Paris", "report": "sunny, 21 °C"}}
    return {{"status": "unknown", "city": city, "report": "no report for this city"}}
'''

CONFIG_TEST_AGENT = '''"""The {name} config agent, run with a scripted model: no key, no network."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from cairn import InMemoryRunner
from cairn.agents import LlmAgent
from cairn.agents.config_agent_utils import from_config
from cairn.testing import Call, ScriptedLlm
from google.genai import types

FOLDER = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(FOLDER.parent))  # the config names code as {name}.tools.NAME

APP = {name_literal}


def test_the_config_loads_and_the_agent_answers() -> None:
    agent = from_config(FOLDER / "root_agent.yaml")
    assert isinstance(agent, LlmAgent)
    model = ScriptedLlm(script=[Call("get_weather", city="Paris"), "Sunny in Paris."])
    runner = InMemoryRunner(agent=agent.clone(update={{"model": model}}), app_name=APP)
    session = asyncio.run(
        runner.session_service.create_session(app_name=APP, user_id="tester")
    )
    question = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    events = list(
        runner.run(user_id="tester", session_id=session.id, new_message=question)
    )

    results = [r.response for e in events for r in e.get_function_responses()]
    assert results == [{{"status": "ok", "city": "Paris", "report": "sunny, 21 °C"}}]
    assert events[-1].content and events[-1].content.parts
    assert events[-1].content.parts[0].text == "Sunny in Paris."
'''

CONFIG_README = """# {name}

An agent declared in YAML, made with `cairn create --type=config`:
`{name}/root_agent.yaml` declares `root_agent`, a model ({model}) with one tool,
`get_weather`, which `{name}/tools.py` defines.

```bash
cp {name}/.env.example {name}/.env   # then fill in your API key
cairn run {name}                     # talk to it (cairn reads {name}/.env)
pytest {name}/tests                  # its test uses a scripted model: no key needed
```

A mistake in the YAML is reported with its file, line and key, e.g.
`{name}/root_agent.yaml:4: modle: not a key of this schema`.
"""
