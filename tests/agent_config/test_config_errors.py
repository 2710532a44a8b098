"""A config that cannot be loaded is an ``AgentConfigError`` naming the file, the line and
the key, with what to do; the CLI prints it on one line and exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.agent_config.conftest import WriteConfig

from cairn.agents.agent_config_error import AgentConfigError
from cairn.agents.config_agent_utils import from_config
from cairn.cli import main

HELPERS = """
raise_on_import = False

def not_a_tool():
    pass

number = 42
"""


def error_of(path: Path) -> AgentConfigError:
    with pytest.raises(AgentConfigError) as caught:
        from_config(path)
    return caught.value


CASES = [
    # (yaml, line, field, words in the problem)
    ("name: a\ninstruction: x\nmodle: gemini\n", 3, "modle", "not a key of this schema"),
    ("name: a\ninstructions: x\n", 2, "instructions", "did you mean `instruction`"),
    ("name: a\n", 1, "instruction", "add `instruction: ...`"),
    ("name: a\ninstruction: x\noutput_key: [1, 2]\n", 3, "output_key", "valid string"),
    ("name: a-b\ninstruction: x\n", 1, "name", "Python identifier"),
    ("name: a\ninstruction: x\nmodel: m\nmodel_code:\n  name: x.y\n", 1, None, "not both"),
    (
        "name: a\ninstruction: x\ntools:\n  - name: exit_loop\n  - nme: typo\n",
        5,
        "tools[1].nme",
        "not a key",
    ),
    (
        "name: a\ninstruction: x\ntools:\n  - name: no_such_tool\n",
        4,
        "tools[0].name",
        "cairn.tools has no tool 'no_such_tool'",
    ),
    (
        "name: a\ninstruction: x\ntools:\n  - name: {pkg}.helpers.missing\n",
        4,
        "tools[0].name",
        "has no attribute 'missing'",
    ),
    (
        "name: a\ninstruction: x\ntools:\n  - name: nowhere_pkg.tools.x\n",
        4,
        "tools[0].name",
        "no module 'nowhere_pkg.tools'",
    ),
    (
        "name: a\ninstruction: x\ntools:\n  - name: {pkg}.helpers.number\n",
        4,
        "tools[0].name",
        "is a int, not a tool",
    ),
    (
        "name: a\ninstruction: x\ntools:\n  - name: google_search\n    args: {a: 1}\n",
        5,
        "tools[0].args",
        "args are for a tool class or a function",
    ),
    (
        "name: a\ninstruction: x\nbefore_model_callbacks:\n  - name: os.system\n",
        4,
        "before_model_callbacks[0].name",
        "standard library",
    ),
    (
        "name: a\ninstruction: x\nsub_agents:\n  - config_path: ../outside.yaml\n",
        4,
        "sub_agents[0].config_path",
        "leads outside this config's folder",
    ),
    (
        "name: a\ninstruction: x\nsub_agents:\n  - config_path: /etc/agent.yaml\n",
        4,
        "sub_agents[0].config_path",
        "is absolute",
    ),
    (
        "name: a\ninstruction: x\nsub_agents:\n  - config_path: nope.yaml\n",
        4,
        "sub_agents[0].config_path",
        "no such file",
    ),
    (
        "name: a\ninstruction: x\nsub_agents:\n  - config_path: a.yaml\n    code: x.y\n",
        4,
        "sub_agents[0]",
        "exactly one of",
    ),
    (
        "name: a\ninstruction: x\nsub_agents:\n  - code: {pkg}.helpers.not_a_tool\n",
        4,
        "sub_agents[0].code",
        "not an agent object",
    ),
    ("agent_class: Nope\nname: a\n", 1, "agent_class", "not one of cairn's agent classes"),
    ("agent_class: LoopAgent\nname: l\nmax_iterations: many\n", 3, "max_iterations", "integer"),
    ("agent_class: LoopAgent\nname: l\ninstruction: x\n", 3, "instruction", "not a key"),
    (
        "name: a\ninstruction: x\ntools:\n  - name: AgentTool\n    args:\n      agent: {}\n",
        6,
        "tools[0].args.agent",
        "exactly one of",
    ),
    (
        (
            "name: a\ninstruction: x\ntools:\n  - name: McpToolset\n    args:\n"
            "      tool_filter: [a]\n"
        ),
        5,
        "tools[0].args",
        "exactly one of stdio_server_params",
    ),
    ("name: a\ninstruction: [x\n", 3, None, "not valid YAML"),
    ("- name: a\n", 1, None, "mapping of keys"),
    ("", 1, None, "the file is empty"),
]


@pytest.mark.parametrize(("text", "line", "field", "words"), CASES)
def test_the_error_names_the_file_line_and_key(
    write_config: WriteConfig, text: str, line: int, field: str | None, words: str
) -> None:
    path = write_config(text, helpers_py=HELPERS)
    error = error_of(path)
    assert (error.path, error.line, error.field) == (str(path), line, field), str(error)
    assert words in error.problem, str(error)
    assert "\n" not in str(error) and str(error).startswith(f"{path}:{line}: ")


def test_an_error_in_a_sub_agent_file_names_that_file(write_config: WriteConfig) -> None:
    path = write_config(
        "name: a\ninstruction: x\nsub_agents:\n  - config_path: team/b.yaml\n",
        team__b_yaml="name: b\ninstruction: x\ntools:\n  - name: nothing_here\n",
    )
    error = error_of(path)
    assert error.path == str(path.parent / "team" / "b.yaml") and error.line == 4
    assert error.field == "tools[0].name"


def test_configs_that_refer_to_each_other_are_a_cycle(write_config: WriteConfig) -> None:
    path = write_config(
        "name: a\ninstruction: x\nsub_agents:\n  - config_path: b.yaml\n",
        b_yaml="name: b\ninstruction: x\nsub_agents:\n  - config_path: root_agent.yaml\n",
    )
    error = error_of(path)
    assert "cycle (root_agent.yaml -> b.yaml -> root_agent.yaml)" in error.problem


def test_a_stdio_mcp_server_is_refused_unless_allowed(
    write_config: WriteConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mcp")
    text = (
        "name: a\ninstruction: x\ntools:\n  - name: McpToolset\n    args:\n"
        "      stdio_server_params:\n        command: npx\n        args: [server]\n"
    )
    monkeypatch.delenv("CAIRN_ALLOW_CONFIG_STDIO_MCP_SERVERS", raising=False)
    monkeypatch.delenv("ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS", raising=False)
    error = error_of(write_config(text))
    assert error.line == 5 and error.field == "tools[0].args" and "refused" in error.problem
    monkeypatch.setenv("CAIRN_ALLOW_CONFIG_STDIO_MCP_SERVERS", "1")
    built = from_config(write_config(text))
    assert type(built.tools[0]).__name__ == "McpToolset"  # type: ignore[attr-defined]


def test_a_module_that_fails_to_import_is_reported_at_its_reference(
    write_config: WriteConfig,
) -> None:
    path = write_config(
        "name: a\ninstruction: x\nbefore_agent_callbacks:\n  - name: {pkg}.broken.cb\n",
        broken_py="raise RuntimeError('the database is not configured')\n",
    )
    error = error_of(path)
    assert (error.line, error.field) == (4, "before_agent_callbacks[0].name")
    assert "RuntimeError: the database is not configured" in error.problem


def test_the_cli_prints_one_line_and_exits_2(write_config: WriteConfig, tmp_path: Path) -> None:
    path = write_config("name: desk\ninstruction: x\ntools:\n  - name: {pkg}.nothing.here\n")
    replay = tmp_path / "t.json"
    replay.write_text(json.dumps({"queries": ["hi"]}))
    result = CliRunner().invoke(
        main, ["run", str(path.parent), "--store", str(tmp_path / "s.db"), "--replay", str(replay)]
    )
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {path}:4: tools[0].name: {error_of(path).problem}"]
    assert "Traceback" not in result.output
