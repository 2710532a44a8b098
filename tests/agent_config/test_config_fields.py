"""Each key of ADK's agent YAML schema, on its own: what ``from_config`` builds from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel
from tests.agent_config.conftest import WriteConfig

from cairn.agents import (
    BaseAgent,
    BaseAgentConfig,
    LlmAgent,
    LlmAgentConfig,
    LoopAgent,
    LoopAgentConfig,
    ParallelAgent,
    SequentialAgent,
)
from cairn.agents.agent_config import AgentConfig
from cairn.agents.agent_tool import AgentTool
from cairn.agents.config_agent_utils import from_config
from cairn.examples.example import Example
from cairn.tools import exit_loop, google_search
from cairn.tools.example_tool import ExampleTool
from cairn.tools.function_tool import FunctionTool
from cairn.tools.mcp_toolset import McpToolset, StreamableHTTPConnectionParams
from cairn.utils.yaml_utils import dump_pydantic_to_yaml, load_yaml_file

HELPERS = """
from pydantic import BaseModel

from cairn import Agent, FunctionTool
from cairn.tools.base_tool import BaseTool
from cairn.testing import ScriptedLlm


class Question(BaseModel):
    text: str


class Answer(BaseModel):
    verdict: str


def lookup(city: str) -> str:
    \"\"\"Looks a city up.\"\"\"
    return city


def callback_a(*args, **kwargs):
    return None


def callback_b(*args, **kwargs):
    return None


model = ScriptedLlm(respond=lambda request: "ok")
tool_object = FunctionTool(lookup)


class Limited(BaseTool):
    def __init__(self, label: str, limit: int = 1, check: "callable | None" = None) -> None:
        super().__init__(name=f"limited_{label}", description="A tool with arguments.")
        self.label, self.limit = label, limit


def make_tool(args):
    return FunctionTool(lookup) if (args.model_extra or {}).get("ok") else None


helper_agent = Agent(name="helper", instruction="Help.")
"""


def agent(write: WriteConfig, root: str, **files: str) -> Any:
    return from_config(write(root, helpers_py=HELPERS, **files))


def test_name_description_model_and_instruction(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        """
        name: clerk
        description: Answers questions.
        model: gemini-2.5-flash
        instruction: "Answer {user_name?}."
        """,
    )
    assert isinstance(built, LlmAgent)
    assert (built.name, built.description) == ("clerk", "Answers questions.")
    assert (built.model, built.instruction) == ("gemini-2.5-flash", "Answer {user_name?}.")


def test_model_code_names_a_model_object(write_config: WriteConfig) -> None:
    built = agent(
        write_config, "name: a\ninstruction: x\nmodel_code:\n  name: {pkg}.helpers.model\n"
    )
    assert type(built.model).__name__ == "ScriptedLlm"


def test_static_instruction_and_the_flags(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        """
        name: a
        instruction: x
        static_instruction: You are a clerk.
        disallow_transfer_to_parent: true
        disallow_transfer_to_peers: true
        include_contents: none
        output_key: answer
        """,
    )
    assert built.static_instruction == "You are a clerk."
    assert built.disallow_transfer_to_parent and built.disallow_transfer_to_peers
    assert (built.include_contents, built.output_key) == ("none", "answer")


def test_schemas_are_named_by_reference(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        """
        name: a
        instruction: x
        input_schema:
          name: {pkg}.helpers.Question
        output_schema:
          name: {pkg}.helpers.Answer
        """,
    )
    assert issubclass(built.input_schema, BaseModel) and built.input_schema.__name__ == "Question"
    assert built.output_schema.__name__ == "Answer"


def test_generate_content_config(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        (
            "name: a\ninstruction: x\ngenerate_content_config:\n"
            "  temperature: 0.2\n  max_output_tokens: 64\n"
        ),
    )
    assert built.generate_content_config == types.GenerateContentConfig(
        temperature=0.2, max_output_tokens=64
    )


def test_every_callback_key_becomes_the_callbacks_it_names(write_config: WriteConfig) -> None:
    keys = [
        "before_agent_callbacks",
        "after_agent_callbacks",
        "before_model_callbacks",
        "after_model_callbacks",
        "before_tool_callbacks",
        "after_tool_callbacks",
    ]
    refs = "\n".join(
        f"{key}:\n  - name: {{pkg}}.helpers.callback_a\n  - name: .helpers.callback_b"
        for key in keys
    )
    built = agent(write_config, f"name: a\ninstruction: x\n{refs}\n")
    for key in keys:
        names = [c.__name__ for c in getattr(built, key.removesuffix("s"))]
        assert names == ["callback_a", "callback_b"], key  # a leading dot: this folder's


def test_tools_by_built_in_name(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        "name: a\ninstruction: x\ntools:\n  - name: exit_loop\n  - name: google_search\n",
    )
    assert built.tools == [exit_loop, google_search]


def test_tools_by_reference_a_function_and_a_tool_object(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        (
            "name: a\ninstruction: x\ntools:\n  - name: {pkg}.helpers.lookup\n"
            "  - name: {pkg}.helpers.tool_object\n"
        ),
    )
    function, tool = built.tools
    assert function.__name__ == "lookup"
    assert isinstance(tool, FunctionTool) and tool.name == "lookup"


def test_a_tool_class_is_built_from_args(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        """
        name: a
        instruction: x
        tools:
          - name: {pkg}.helpers.Limited
            args:
              label: daily
              limit: 3
        """,
    )
    (tool,) = built.tools
    assert (tool.name, tool.limit) == ("limited_daily", 3)


def test_a_tool_factory_is_called_with_the_args(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        (
            "name: a\ninstruction: x\ntools:\n  - name: {pkg}.helpers.make_tool\n"
            "    args:\n      ok: true\n"
        ),
    )
    (tool,) = built.tools
    assert isinstance(tool, FunctionTool) and tool.name == "lookup"


def test_agent_tool_by_config_path_and_by_code(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        """
        name: a
        instruction: x
        tools:
          - name: AgentTool
            args:
              agent:
                config_path: sub/translator.yaml
              skip_summarization: true
              include_plugins: false
          - name: AgentTool
            args:
              agent:
                code: {pkg}.helpers.helper_agent
        """,
        sub__translator_yaml="name: translator\ninstruction: Translate.\n",
    )
    by_path, by_code = built.tools
    assert isinstance(by_path, AgentTool) and by_path.agent.name == "translator"
    assert by_path.skip_summarization and not by_path.include_plugins
    assert isinstance(by_code, AgentTool) and by_code.agent.name == "helper"


def test_example_tool_with_examples(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        """
        name: a
        instruction: x
        tools:
          - name: ExampleTool
            args:
              examples:
                - input: {role: user, parts: [{text: "2+2?"}]}
                  output: [{role: model, parts: [{text: "4"}]}]
        """,
    )
    (tool,) = built.tools
    assert isinstance(tool, ExampleTool)
    assert isinstance(tool.examples, list) and isinstance(tool.examples[0], Example)


def test_mcp_toolset_over_http(write_config: WriteConfig) -> None:
    pytest.importorskip("mcp")
    built = agent(
        write_config,
        """
        name: a
        instruction: x
        tools:
          - name: McpToolset
            args:
              streamable_http_connection_params:
                url: http://127.0.0.1:9/mcp
                timeout: 2
              tool_filter: [search]
              tool_name_prefix: docs
        """,
    )
    (toolset,) = built.tools
    assert isinstance(toolset, McpToolset)
    assert toolset.connection_params == StreamableHTTPConnectionParams(
        url="http://127.0.0.1:9/mcp", timeout=2.0
    )
    assert (toolset.tool_filter, toolset.tool_name_prefix) == (["search"], "docs")


def test_sub_agents_by_path_and_by_code(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        """
        name: a
        instruction: x
        sub_agents:
          - config_path: team/writer.yaml
          - code: {pkg}.helpers.helper_agent
        """,
        team__writer_yaml=(
            "name: writer\ninstruction: Write.\nsub_agents:\n  - config_path: editor.yaml\n"
        ),
        team__editor_yaml="name: editor\ninstruction: Edit.\n",
    )
    writer, helper = built.sub_agents
    assert writer.name == "writer" and writer.parent_agent is built
    assert [e.name for e in writer.sub_agents] == ["editor"]  # relative to writer.yaml
    assert helper.name == "helper"


@pytest.mark.parametrize(
    ("agent_class", "cls"),
    [
        ("SequentialAgent", SequentialAgent),
        ("ParallelAgent", ParallelAgent),
        ("LoopAgent", LoopAgent),
    ],
)
def test_workflow_agent_classes(write_config: WriteConfig, agent_class: str, cls: type) -> None:
    built = agent(
        write_config,
        f"agent_class: {agent_class}\nname: team\nsub_agents:\n  - config_path: one.yaml\n",
        one_yaml="name: one\ninstruction: x\n",
    )
    assert type(built) is cls and [a.name for a in built.sub_agents] == ["one"]


def test_loop_agent_max_iterations(write_config: WriteConfig) -> None:
    built = agent(write_config, "agent_class: LoopAgent\nname: loop\nmax_iterations: 3\n")
    assert isinstance(built, LoopAgent) and built.max_iterations == 3


CUSTOM = """
from cairn.agents import BaseAgent, BaseAgentConfig


class GreeterConfig(BaseAgentConfig):
    greeting: str = "hello"


class Greeter(BaseAgent):
    config_type = GreeterConfig
    greeting: str = ""


class Builds(BaseAgent):
    made_by: str = ""

    @classmethod
    def from_config(cls, config, config_abs_path):
        return cls(name=config.name, made_by="its own from_config")
"""


def test_a_custom_agent_class_with_its_config_type(write_config: WriteConfig) -> None:
    built = agent(
        write_config,
        "agent_class: {pkg}.custom.Greeter\nname: hi\ngreeting: bonjour\n",
        custom_py=CUSTOM,
    )
    assert type(built).__name__ == "Greeter" and built.greeting == "bonjour"


def test_a_class_that_builds_itself_is_asked_to(write_config: WriteConfig) -> None:
    built = agent(write_config, "agent_class: {pkg}.custom.Builds\nname: b\n", custom_py=CUSTOM)
    assert built.made_by == "its own from_config"


def test_base_agent_from_config_takes_a_config_model(tmp_path: Path) -> None:
    config = LoopAgentConfig(name="loop", max_iterations=2)
    built = LoopAgent.from_config(config, str(tmp_path / "x.yaml"))
    assert isinstance(built, LoopAgent) and built.max_iterations == 2


def test_agent_config_picks_the_schema_by_agent_class() -> None:
    assert isinstance(
        AgentConfig.model_validate({"name": "a", "instruction": "x"}).root, LlmAgentConfig
    )
    loop = AgentConfig.model_validate(
        {"agent_class": "LoopAgent", "name": "l", "max_iterations": 1}
    )
    assert isinstance(loop.root, LoopAgentConfig)
    custom = AgentConfig.model_validate({"agent_class": "my.Agent", "name": "c", "extra": 1})
    assert type(custom.root) is BaseAgentConfig
    assert (
        issubclass(LlmAgent.config_type, BaseAgentConfig)
        and BaseAgent.config_type is BaseAgentConfig
    )


def test_yaml_utils_write_a_config_that_loads_back(tmp_path: Path) -> None:
    config = LlmAgentConfig(
        name="a", instruction="line one\nline two", tools=[{"name": "exit_loop"}]
    )
    path = tmp_path / "out" / "root_agent.yaml"
    dump_pydantic_to_yaml(config, path)
    text = path.read_text()
    assert "instruction: |" in text and "  - name: exit_loop" in text
    assert load_yaml_file(path) == {
        "instruction": "line one\nline two",
        "name": "a",
        "tools": [{"name": "exit_loop"}],
    }
    built = from_config(path)
    assert isinstance(built, LlmAgent) and built.tools == [exit_loop]
    with pytest.raises(FileNotFoundError):
        load_yaml_file(tmp_path / "missing.yaml")


def test_adks_parse_config_hook_still_edits_the_keywords(write_config: WriteConfig) -> None:
    hooked = CUSTOM + (
        "\n\nclass Hooked(BaseAgent):\n"
        "    note: str = ''\n\n"
        "    @classmethod\n"
        "    def _parse_config(cls, config, config_abs_path, kwargs):\n"
        "        return {**kwargs, 'note': 'from ' + config_abs_path.rsplit('/', 1)[-1]}\n"
    )
    built = agent(write_config, "agent_class: {pkg}.custom.Hooked\nname: h\n", custom_py=hooked)
    assert built.note == "from root_agent.yaml"
