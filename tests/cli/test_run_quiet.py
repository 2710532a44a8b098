"""``cairn run`` says what failed in one line (the traceback with --verbose), shows a
continued session's transcript, a workflow's routes, and each node output once."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from tests.cli.harness import AGENTS, Cli, session_id

from cairn.cli._prompts import SCHEMA_REFUSAL


def test_a_provider_error_is_one_line_with_the_providers_message(cli: Cli) -> None:
    result = cli.run("failing_model.py", input="outage\n")
    assert result.exit_code == 0, result.output
    failed = [line for line in result.output.splitlines() if "✗" in line]
    assert failed == [
        "  ✗ helper: ModelCallError: the model call of agent 'helper' failed: acme model "
        "'acme-1' call failed (HTTP 503): the model is overloaded"
    ]
    assert "Traceback" not in result.output


def test_a_failing_model_call_shows_its_traceback_only_with_verbose(cli: Cli) -> None:
    quiet = cli.run("failing_model.py", input="bug\n")
    assert quiet.exit_code == 0, quiet.output
    assert "Traceback" not in quiet.output
    failed = [line for line in quiet.output.splitlines() if "✗" in line]
    assert failed == [
        "  ✗ helper: KeyError: the model call of agent 'helper' failed: 'choices' "
        "(--verbose shows the traceback)"
    ]
    assert quiet.stderr == ""  # the log's record of it is not a second report

    verbose = cli.run("failing_model.py", "--verbose", input="bug\n")
    assert verbose.exit_code == 0, verbose.output
    assert "Traceback (most recent call last)" in verbose.stderr
    assert "KeyError: 'choices'" in verbose.stderr
    assert "model call of agent 'helper' failed: 'choices'" in verbose.stdout


def test_the_missing_api_key_message_names_the_variable_and_the_agent_folders_env(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    result = cli.run("keyless", input="hello\n")
    assert result.exit_code == 0, result.output
    failed = [line for line in result.output.splitlines() if "✗" in line]
    assert len(failed) == 1, result.output
    assert "has no API key" in failed[0]
    env_file = AGENTS.resolve() / "keyless" / ".env"
    assert f"put GOOGLE_API_KEY=... in {env_file}" in failed[0]
    assert "Traceback" not in result.output and "--verbose" not in result.output


def test_an_exception_from_the_agent_is_one_line_and_its_traceback_needs_verbose(
    cli: Cli, tmp_path: Path
) -> None:
    agent = tmp_path / "crashing.py"
    agent.write_text(
        "from cairn import BaseAgent\n\n"
        "class Crashing(BaseAgent):\n"
        "    async def _run_async_impl(self, ctx):\n"
        "        raise RuntimeError('a bug in the agent')\n"
        "        yield\n\n"
        "root_agent = Crashing(name='crashing')\n"
    )
    quiet = cli("run", agent, input="hi\n")
    assert "the agent failed: RuntimeError: a bug in the agent (--verbose shows the traceback)" in (
        quiet.output
    )
    assert "Traceback" not in quiet.output
    verbose = cli("run", agent, "-v", input="hi\n")
    assert "the agent failed: RuntimeError: a bug in the agent\n" in verbose.output
    assert "Traceback" in verbose.output and "_run_async_impl" in verbose.output


def test_continuing_a_session_shows_its_transcript_before_the_prompt(cli: Cli) -> None:
    first = cli.run("failing_model.py", input="hi\noutage\n")
    assert first.exit_code == 0, first.output
    session = session_id(first.output)

    again = cli.run("failing_model.py", "--session", session, input="hi\n")
    assert again.exit_code == 0, again.output
    before_prompt = again.output.split("type a message")[0]
    lines = [line.strip() for line in before_prompt.splitlines()]
    start = lines.index("so far:")
    assert lines[start + 1 :] == [
        "you: hi",
        "helper: ok",
        "you: outage",
        "✗ helper: ModelCallError: the model call of agent 'helper' failed: acme model "
        "'acme-1' call failed (HTTP 503): the model is overloaded",
        "(end of the transcript)",
        "",
    ]


def test_a_new_session_has_no_transcript(cli: Cli) -> None:
    result = cli.run("failing_model.py", input="hi\n")
    assert "so far" not in result.output


def test_the_transcript_shows_answered_questions_and_their_answers(cli: Cli) -> None:
    first = cli.run("review", input='the report\n{"verdict": "send", "note": "ok"}\n')
    assert first.exit_code == 0, first.output
    again = cli.run("review", "--session", session_id(first.output), input="\n")
    transcript = again.output.split("so far:")[1].split("(end of the transcript)")[0]
    assert [line.strip() for line in transcript.strip().splitlines()] == [
        "you: the report",
        "review@1/draft@1 → draft of the report",
        "⏸ input review-1: Send this draft?",
        'answer review-1: {"verdict": "send", "note": "ok"}',
        'review@1/review@1 → {"verdict": "send", "note": "ok"}',
        "review@1/send@1 → send: ok",
    ]


def test_a_workflows_node_outputs_show_once_and_its_routes_are_shown(cli: Cli) -> None:
    result = cli.run("routing.py", input="go\n")
    assert result.exit_code == 0, result.output
    shown = result.output.split("you> go")[1].strip().splitlines()
    assert shown[:4] == [
        "writer: a poem about the sea",
        "judge: good",
        "  routing@1/route@1 → judged  route: good",
        "  routing@1/publish@1 → published",
    ]
    assert result.output.count("a poem about the sea") == 1  # not again as the judge's input
    assert "user:" not in result.output


def test_an_answer_off_its_schema_is_refused_in_the_words_of_the_http_api(
    cli: Cli, tmp_path: Path
) -> None:
    typed = cli.run("review", input='the report\n{"verdict": "later"}\n\n')
    refusal = f"{SCHEMA_REFUSAL}: verdict: 'later' is not one of ['send', 'hold']"
    assert f"not accepted: {refusal}" in typed.output

    replay = tmp_path / "turns.txt"
    replay.write_text('the report\n{"answer": {"response": {"verdict": "later"}}}\n')
    replayed = cli.run("review", "--replay", str(replay))
    assert replayed.exit_code == 2
    assert refusal in replayed.output  # the Runner's InvalidAnswerError, as a 422 says it


def test_a_failing_tool_is_its_result_line_and_its_traceback_needs_verbose(cli: Cli) -> None:
    quiet = cli.run("broken_tool.py", input="weigh it\n")
    assert quiet.exit_code == 0, quiet.output
    results = [line for line in quiet.output.splitlines() if line.startswith("  ← ")]
    assert results == [
        "  ← weigh: {\"error\": \"tool 'weigh' failed: ValueError: the scale says 'box' is "
        '\\"off the chart\\""} (--verbose shows the traceback)'
    ]
    assert "✗" not in quiet.output and "Traceback" not in quiet.output
    assert "porter: I could not weigh it." in quiet.output

    verbose = cli.run("broken_tool.py", "--verbose", input="weigh it\n")
    assert "Traceback (most recent call last)" in verbose.stderr
    assert "--verbose shows" not in verbose.output


def test_the_cairn_logger_is_as_it_was_after_a_run(cli: Cli) -> None:
    logger = logging.getLogger("cairn")
    before = (logger.level, logger.propagate, list(logger.handlers))
    cli.run("failing_model.py", "--verbose", input="bug\n")
    assert (logger.level, logger.propagate, list(logger.handlers)) == before


def test_a_long_transcript_shows_the_newest_events_and_says_where_the_rest_are(
    cli: Cli,
) -> None:
    turns = [f"message {n}" for n in range(30)]  # 60 events: each message and its answer
    first = cli.run("failing_model.py", input="\n".join(turns) + "\n")
    session = session_id(first.output)
    again = cli.run("failing_model.py", "--session", session, input="\n")
    transcript = again.output.split("(end of the transcript)")[0]
    assert f"so far (the last 50 events; cairn sessions show {session} --events N" in transcript
    assert "you: message 4\n" not in transcript and "you: message 5\n" in transcript
    assert transcript.count("helper: ok") == 25
