"""The files ``cairn create NAME`` writes: a runnable agent package with a test."""

from __future__ import annotations

import re
from dataclasses import dataclass

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

# -- .env.example, one per provider: the variables its model adapter reads ------------------

_ENV_HEADER = """# Copy to .env and fill it in: cairn run / web / api-server read {name}/.env before
# loading the agent (variables already set in the shell win). Never commit .env.
"""

_ENV_STORE = """
# Where sessions are stored (default .cairn/sessions.db); e.g. postgresql+asyncpg://user@host/db
# CAIRN_STORE=.cairn/sessions.db
"""

GEMINI_ENV = (
    _ENV_HEADER
    + """
# Gemini through the Gemini API: a key from https://aistudio.google.com/apikey
# (GEMINI_API_KEY is read too).
GOOGLE_GENAI_USE_VERTEXAI=false
GOOGLE_API_KEY=

# Or Gemini on Vertex AI, with Google Cloud credentials
# (gcloud auth application-default login) instead of a key:
# GOOGLE_GENAI_USE_VERTEXAI=true
# GOOGLE_CLOUD_PROJECT=my-project
# GOOGLE_CLOUD_LOCATION=us-central1
"""
    + _ENV_STORE
)

OPENAI_ENV = (
    _ENV_HEADER
    + """
# OpenAI: a key from https://platform.openai.com/api-keys
OPENAI_API_KEY=

# Or a local OpenAI-compatible server (llama.cpp's llama-server, Ollama, vLLM, LM Studio):
# its base URL, and no key is needed. The model is openai/<the server's model name>.
# OPENAI_BASE_URL=http://127.0.0.1:8080/v1     # llama.cpp: llama-server -m model.gguf
# OPENAI_BASE_URL=http://127.0.0.1:11434/v1    # Ollama
# OPENAI_BASE_URL=http://127.0.0.1:8000/v1     # vLLM: vllm serve <model> (cairn web: --port 8001)
"""
    + _ENV_STORE
)

ANTHROPIC_ENV = (
    _ENV_HEADER
    + """
# Anthropic: a key from https://console.anthropic.com/settings/keys
ANTHROPIC_API_KEY=
"""
    + _ENV_STORE
)

LITELLM_ENV = (
    _ENV_HEADER
    + """
# {model} goes through litellm, which reads its provider's own variables, e.g.
# GROQ_API_KEY=, MISTRAL_API_KEY=, AZURE_API_KEY= with AZURE_API_BASE=, or for Ollama:
# OLLAMA_API_BASE=http://127.0.0.1:11434
"""
    + _ENV_STORE
)

OTHER_ENV = (
    _ENV_HEADER
    + """
# {model}: put here the variables its model class reads (an API key, a base URL).
"""
    + _ENV_STORE
)


@dataclass(frozen=True)
class Provider:
    """What the scaffold's model string needs: the cairn extra that installs its SDK and
    the ``.env.example`` listing the variables its adapter reads."""

    label: str
    extra: str | None
    env_example: str
    key_hint: str
    """What to fill in .env, for the next steps."""


_PROVIDERS: list[tuple[str, Provider]] = [
    (
        r"gemini-.*|gemma-.*",
        Provider("Gemini", None, GEMINI_ENV, "set GOOGLE_API_KEY (or Vertex AI's variables)"),
    ),
    (
        r"openai/.+|gpt-.*|o\d+-.*",
        Provider(
            "OpenAI",
            "openai",
            OPENAI_ENV,
            "set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server",
        ),
    ),
    (
        r"anthropic/.+|claude-.*",
        Provider("Anthropic", "anthropic", ANTHROPIC_ENV, "set ANTHROPIC_API_KEY"),
    ),
    (
        r"[a-z][a-z0-9_]*/.+",
        Provider("litellm", "litellm", LITELLM_ENV, "set the provider's API key"),
    ),
]

_OTHER = Provider("other", None, OTHER_ENV, "set what the model class reads")


def provider_for(model: str) -> Provider:
    """The provider serving ``model`` as cairn's model registry resolves it: ``gemini-*``,
    ``openai/*`` (or ``gpt-*``), ``anthropic/*`` (or ``claude-*``), litellm's
    ``provider/model``; any other string (a class of one's own) gets a generic file."""
    for pattern, provider in _PROVIDERS:
        if re.fullmatch(pattern, model):
            return provider
    return _OTHER


GITIGNORE = """# The API keys (.env.example is the template to commit), sessions, build output.
.env
.cairn/
__pycache__/
build/
*.egg-info/
"""

# -- pyproject.toml: the project's dependencies, its test tools, pytest's settings ------------

PYPROJECT = """# {name}: an agent project made with `cairn create`. From the folder above this one:
#   pip install -e '{name}[test]'   # {requirement} and the test tools
#   pytest {name}/tests
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "0.1.0"
description = "An agent built with cairn."
requires-python = ">=3.11"
dependencies = [{requirement_literal}]

[project.optional-dependencies]
test = ["pytest>=8.0", "pytest-asyncio>=0.24"]

[tool.setuptools]
# This folder is the package {name} itself (ADK's agent layout, which `cairn run {name}`
# and `cairn web` load), so the package's directory is ".".
package-dir = {{ {name} = "." }}
packages = ["{name}"]
{package_data}
[tool.pytest.ini_options]
# `import {name}` resolves from the folder above, installed or not.
pythonpath = [".."]
testpaths = ["tests"]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
"""

CONFIG_PACKAGE_DATA = """
[tool.setuptools.package-data]
{name} = ["*.yaml"]
"""

TESTS_INIT = ""

TEST_AGENT = '''"""The {name} agent, tested with a scripted model: no API key, no network."""

from __future__ import annotations

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


async def test_the_agent_calls_the_tool_and_answers() -> None:
    # The model's replies, in order: a call of get_weather, then the answer.
    model = ScriptedLlm(
        script=[Call("get_weather", city="Paris"), "It is sunny in Paris."]
    )
    runner = InMemoryRunner(agent=build_agent(model=model), app_name=APP)
    session = await runner.session_service.create_session(
        app_name=APP, user_id="tester"
    )
    question = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    events = [
        event
        async for event in runner.run_async(
            user_id="tester", session_id=session.id, new_message=question
        )
    ]

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

From the folder above this one:

```bash
pip install -e '{name}[test]'        # cairn and the test tools ({name}/pyproject.toml)
cp {name}/.env.example {name}/.env   # then fill in your API key
cairn run {name}                     # talk to it (cairn reads {name}/.env)
cairn web .                          # or in the browser, at http://127.0.0.1:8000
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


async def test_the_config_loads_and_the_agent_answers() -> None:
    agent = from_config(FOLDER / "root_agent.yaml")
    assert isinstance(agent, LlmAgent)
    model = ScriptedLlm(script=[Call("get_weather", city="Paris"), "Sunny in Paris."])
    runner = InMemoryRunner(agent=agent.clone(update={{"model": model}}), app_name=APP)
    session = await runner.session_service.create_session(
        app_name=APP, user_id="tester"
    )
    question = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    events = [
        event
        async for event in runner.run_async(
            user_id="tester", session_id=session.id, new_message=question
        )
    ]

    results = [r.response for e in events for r in e.get_function_responses()]
    assert results == [{{"status": "ok", "city": "Paris", "report": "sunny, 21 °C"}}]
    assert events[-1].content and events[-1].content.parts
    assert events[-1].content.parts[0].text == "Sunny in Paris."
'''

CONFIG_README = """# {name}

An agent declared in YAML, made with `cairn create --type=config`:
`{name}/root_agent.yaml` declares `root_agent`, a model ({model}) with one tool,
`get_weather`, which `{name}/tools.py` defines.

From the folder above this one:

```bash
pip install -e '{name}[test]'        # cairn and the test tools ({name}/pyproject.toml)
cp {name}/.env.example {name}/.env   # then fill in your API key
cairn run {name}                     # talk to it (cairn reads {name}/.env)
cairn web .                          # or in the browser, at http://127.0.0.1:8000
pytest {name}/tests                  # its test uses a scripted model: no key needed
```

A mistake in the YAML is reported with its file, line and key, e.g.
`{name}/root_agent.yaml:4: modle: not a key of this schema`.
"""
