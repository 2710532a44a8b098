"""``cairn run``'s options and exit codes: 0 done, 1 not found, 2 refused."""

from __future__ import annotations

from pathlib import Path

from tests.cli.harness import AGENTS, Cli, session_id


def test_list_pending_shows_kind_id_question_payload_and_schema(cli: Cli) -> None:
    paused = cli.run("review", input="the report\n")
    listed = cli.run("review", "--session", session_id(paused.output), "--list-pending")
    assert listed.exit_code == 0, listed.output
    assert "1 pending interrupt(s)" in listed.output
    assert "⏸ input  review-1  (review@1/review@1)" in listed.output
    assert "asks: Send this draft?" in listed.output
    assert 'payload: "draft of the report"' in listed.output
    assert '"required": ["verdict"]' in listed.output  # the schema
    assert "answer as: FunctionResponse(id=..., name='adk_request_input')" in listed.output
    assert "you>" not in listed.output  # listed, nothing asked


def test_list_pending_of_a_confirmation_shows_the_call_and_schema(cli: Cli) -> None:
    paused = cli.run("shop.py", input="transfer\n")
    listed = cli.run("shop.py", "--session", session_id(paused.output), "--list-pending")
    assert "call: transfer(amount=100)" in listed.output
    assert 'payload: {"amount": 100}' in listed.output
    assert '"confirmed": {"type": "boolean"}' in listed.output


def test_list_pending_with_nothing_pending(cli: Cli) -> None:
    done = cli.run("shop.py", input="hello\n")
    listed = cli.run("shop.py", "--session", session_id(done.output), "--list-pending")
    assert listed.exit_code == 0 and "no pending interrupts" in listed.output


def test_an_unknown_session_exits_1(cli: Cli) -> None:
    for extra in ([], ["--list-pending"]):
        result = cli.run("shop.py", "--session", "no-such-session", *extra)
        assert result.exit_code == 1, result.output
        assert "session 'no-such-session' does not exist" in result.stderr
        assert "app 'shop', user 'user'" in result.stderr


def test_a_session_belongs_to_its_app_and_user(cli: Cli) -> None:
    started = cli.run("shop.py", "--user", "ada", input="hello\n")
    assert "--user ada --session" in started.output  # how to come back
    sid = session_id(started.output)
    assert cli.run("shop.py", "--session", sid, "--list-pending").exit_code == 1
    assert cli.run("shop.py", "--user", "ada", "--session", sid, "--list-pending").exit_code == 0
    other_app = cli.run("shop.py", "--app", "other", "--user", "ada", "--session", sid)
    assert other_app.exit_code == 1


def test_list_pending_needs_a_session_and_no_replay(cli: Cli, tmp_path: Path) -> None:
    result = cli.run("shop.py", "--list-pending")
    assert result.exit_code == 2 and "--list-pending needs --session" in result.output
    replay = tmp_path / "turns.txt"
    replay.write_text("hello\n")
    both = cli.run("shop.py", "--session", "s", "--list-pending", "--replay", str(replay))
    assert both.exit_code == 2


def test_an_unknown_path_exits_1(cli: Cli, tmp_path: Path) -> None:
    result = cli("run", tmp_path / "missing.py")
    assert result.exit_code == 1 and "no such file or directory" in result.stderr
    (tmp_path / "notes.txt").write_text("hello")
    assert cli("run", tmp_path / "notes.txt").exit_code == 1
    (tmp_path / "empty_dir").mkdir()
    empty = cli("run", tmp_path / "empty_dir")
    assert empty.exit_code == 1
    assert "neither __init__.py, agent.py nor root_agent.yaml" in empty.stderr


def test_a_file_without_root_agent_or_app_exits_1_naming_what_was_expected(
    cli: Cli, tmp_path: Path
) -> None:
    (tmp_path / "nothing.py").write_text("app = 'not an App'\n")
    result = cli("run", tmp_path / "nothing.py")
    assert result.exit_code == 1
    assert "root_agent" in result.stderr and "app = App(" in result.stderr
    assert "nothing.app is a str" in result.stderr


def test_a_file_that_fails_to_import_exits_2_with_the_traceback(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import no_such_module_anywhere\n")
    result = cli("run", tmp_path / "broken.py")
    assert result.exit_code == 2
    assert "loading" in result.stderr
    assert "No module named 'no_such_module_anywhere'" in result.stderr


def test_an_app_is_run_under_its_own_name_unless_app_is_given(cli: Cli) -> None:
    result = cli.run("front_desk.py", input="hi\n")
    assert result.exit_code == 0 and "app 'front-desk'" in result.output
    assert "greeter: welcome" in result.output
    renamed = cli.run("front_desk.py", "--app", "lobby", input="hi\n")
    assert "app 'lobby'" in renamed.output and "greeter: welcome" in renamed.output
    bad = cli.run("front_desk.py", "--app", "no spaces")
    assert bad.exit_code == 2 and "--app 'no spaces'" in bad.stderr


def test_a_root_agent_is_run_under_the_file_or_package_name(cli: Cli) -> None:
    assert "app 'shop'" in cli.run("shop.py", input="").output
    assert "app 'review'" in cli.run("review", input="").output  # ADK's package layout
    assert "app 'desk'" in cli.run("shop.py", "--app", "desk", input="").output


def test_a_plain_directory_with_agent_py_is_loaded(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "helper"
    folder.mkdir()
    (folder / "agent.py").write_text(
        "from cairn import Agent\nfrom cairn.testing import ScriptedLlm\n"
        "model = ScriptedLlm(respond=lambda request: 'at your service')\n"
        "root_agent = Agent(name='helper', model=model)\n"
    )
    result = cli("run", folder, input="hi\n")
    assert result.exit_code == 0 and "helper: at your service" in result.output


def test_a_store_that_refuses_exits_2(cli: Cli) -> None:
    result = cli("run", AGENTS / "shop.py", "--store", "oracle://scott:tiger@db/x", store=False)
    assert result.exit_code == 2 and "tiger" not in result.output


def test_the_memory_store_keeps_nothing(cli: Cli) -> None:
    result = cli("run", AGENTS / "shop.py", "--store", "memory://", input="hi\n", store=False)
    assert result.exit_code == 0 and "memory:// keeps nothing" in result.output


def test_no_color_output_has_no_escape_codes(cli: Cli) -> None:
    result = cli.run("shop.py", "--no-color", input="refund please\ny\n")
    assert "\x1b[" not in result.output and cli.runs() == {"refund": 1}


def test_help_everywhere(cli: Cli) -> None:
    top = cli("--help", store=False)
    assert top.exit_code == 0
    assert all(command in top.output for command in ("run", "migrate", "info"))
    run = cli("run", "-h", store=False)
    assert run.exit_code == 0
    for option in ("--store", "--app", "--user", "--session", "--list-pending", "--replay"):
        assert option in run.output
    assert "Exit codes:" in run.output and "1  not found" in run.output
    assert cli("migrate", "--help", store=False).exit_code == 0
    assert "cairn 0." in cli("info", store=False).output
