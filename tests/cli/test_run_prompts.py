"""``cairn run`` at the prompt: every interrupt kind is shown and asked for in its own way,
the answer resumes the run, and each tool runs exactly once."""

from __future__ import annotations

from tests.cli.harness import Cli, session_id


def test_a_confirmation_is_asked_and_the_tool_runs_once(cli: Cli) -> None:
    result = cli.run("shop.py", input="refund please\ny\n")
    assert result.exit_code == 0, result.output
    assert "→ refund(amount=50)" in result.output
    assert "⏸ confirmation" in result.output
    assert "Approve or reject the call refund(amount=50)." in result.output
    assert '← refund: {"refunded": 50}' in result.output
    assert 'clerk: results: {"refund": {"refunded": 50}}' in result.output
    assert cli.runs() == {"refund": 1}


def test_a_rejected_call_does_not_run(cli: Cli) -> None:
    result = cli.run("shop.py", input="refund please\nmaybe\nn\n")
    assert result.exit_code == 0, result.output
    assert "answer y or n" in result.output  # asked again
    assert "rejected" in result.output and cli.runs() == {}


def test_a_confirmation_payload_can_be_changed(cli: Cli) -> None:
    result = cli.run("shop.py", input='transfer\ny\nnot json\n{"amount": 80}\n')
    assert result.exit_code == 0, result.output
    assert "Transfer 100?" in result.output and 'payload: {"amount": 100}' in result.output
    assert "not JSON" in result.output  # asked again
    assert '"transferred": 80' in result.output and cli.runs() == {"transfer": 1}


def test_an_unchanged_payload_is_sent_back_as_it_was(cli: Cli) -> None:
    result = cli.run("shop.py", input="transfer\ny\n\n")
    assert '"transferred": 100' in result.output and cli.runs() == {"transfer": 1}


def test_a_long_running_tool_gets_json_or_text(cli: Cli) -> None:
    result = cli.run("shop.py", input='ask the manager\n{"approved": true}\nask again\nlater\n')
    assert result.exit_code == 0, result.output
    assert "⏸ long_running  call-manager" in result.output
    assert 'results: {"ask_manager": {"approved": true}}' in result.output


def test_text_for_a_long_running_tool_is_its_result(cli: Cli) -> None:
    result = cli.run("shop.py", input="ask the manager\nnext week\n")
    assert 'results: {"ask_manager": {"result": "next week"}}' in result.output


def test_an_input_request_is_asked_again_until_it_matches_its_schema(cli: Cli) -> None:
    answers = ["the report", "maybe", '{"verdict": "later"}', '{"verdict": "send", "note": "ok"}']
    result = cli.run("review", input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "⏸ input  review-1" in result.output and "Send this draft?" in result.output
    assert 'payload: "draft of the report"' in result.output
    assert "'maybe' is not of type 'object'" in result.output
    assert "verdict: 'later' is not one of ['send', 'hold']" in result.output
    assert "review@1/send@1 → send: ok" in result.output
    assert cli.runs() == {"draft": 1, "review": 1, "send": 1}


def test_a_credential_is_read_as_json_and_not_echoed(cli: Cli) -> None:
    credential = '{"authType": "apiKey", "apiKey": "s3cret"}'
    result = cli.run("vault.py", input=f"key please\n[1]\n{credential}\n")
    assert result.exit_code == 0, result.output
    assert "⏸ credential  ask-key" in result.output
    assert "an API key for the weather service" in result.output
    assert '"name": "X-Key"' in result.output  # what is asked: the auth config
    assert "a credential is a JSON object" in result.output  # [1] was asked again
    assert "(not shown)" in result.output
    assert "vault: got key s3cret for X-Key" in result.output  # merged into the asked config


def test_an_interrupted_invocation_is_continued_and_the_call_in_doubt_rerun(cli: Cli) -> None:
    result = cli.run("doubt.py", input="pay\ny\nr\n")
    assert result.exit_code == 0, result.output
    assert "⏸ interrupted  call-charge" in result.output
    assert "⏸ in_doubt  doubt-charge" in result.output
    assert 'cashier: charge: {"charged": 30}' in result.output
    assert cli.runs() == {"charge": 1}


def test_a_call_in_doubt_may_be_given_its_result_instead(cli: Cli) -> None:
    result = cli.run("doubt.py", input='pay\ny\nx\ns\n{"charged": 30, "receipt": "R-1"}\n')
    assert result.exit_code == 0, result.output
    assert "answer r or s" in result.output
    assert '"receipt": "R-1"' in result.output and cli.runs() == {}


def test_a_new_message_while_an_invocation_is_interrupted_is_refused_in_red(cli: Cli) -> None:
    result = cli.run("doubt.py", input="pay\n\nhello\n")
    assert result.exit_code == 0, result.output
    assert "error: invocation" in result.output and "stopped while running" in result.output


def test_several_pending_some_answered_the_skipped_ones_later(cli: Cli) -> None:
    steps = ["both", '{"ok": true}', "", "/pending", "/answer", '{"budget": 9}']
    result = cli.run("shop.py", input="\n".join(steps) + "\n")
    assert result.exit_code == 0, result.output
    assert "2 pending interrupt(s)" in result.output
    after_skip = result.output.split("/pending", 1)[1]
    assert "⏸ long_running  call-finance" in after_skip
    assert "call-manager" not in after_skip.split("/answer")[0]  # answered, no longer pending
    assert 'results: {"ask_finance": {"budget": 9}, "ask_manager": {"ok": true}}' in after_skip
    assert cli.runs() == {"ask_manager": 1, "ask_finance": 1}


def test_pending_interrupts_are_asked_for_first_when_a_session_is_continued(cli: Cli) -> None:
    first = cli.run("shop.py", input="refund please\n\n\n")  # skip, then quit
    assert first.exit_code == 0 and cli.runs() == {}
    again = cli.run("shop.py", "--session", session_id(first.output), input="y\n")
    assert again.exit_code == 0, again.output
    before_prompt = again.output.split("approve?")[0]
    assert "⏸ confirmation" in before_prompt and "you>" not in before_prompt
    assert 'results: {"refund": {"refunded": 50}}' in again.output
    assert cli.runs() == {"refund": 1}


def test_streamed_text_is_printed_once(cli: Cli) -> None:
    result = cli.run("shop.py", input="hello there\n")
    assert result.output.count("you said: hello there") == 1
    assert "clerk: you said: hello there\n" in result.output


def test_a_failed_model_call_is_shown_as_an_error(cli: Cli) -> None:
    result = cli.run("shop.py", input="boom\n")
    assert result.exit_code == 0
    assert "✗ clerk: RuntimeError: the model call of agent 'clerk' failed" in result.output


def test_quit_help_and_commands(cli: Cli) -> None:
    result = cli.run("shop.py", input="/help\n/nope\n//slash\n/pending\n/quit\nnever sent\n")
    assert result.exit_code == 0, result.output
    assert "/pending" in result.output and "/answer" in result.output
    assert "unknown command /nope" in result.output
    assert "clerk: you said: /slash" in result.output
    assert "no pending interrupts" in result.output
    assert "never sent" not in result.output


def test_end_of_input_and_an_empty_line_quit(cli: Cli) -> None:
    assert cli.run("shop.py", input="").exit_code == 0
    assert cli.run("shop.py", input="\nnever sent\n").output.count("you said") == 0


def test_end_of_input_at_an_interrupt_prompt_quits_without_answering(cli: Cli) -> None:
    result = cli.run("shop.py", input="refund please\n")
    assert result.exit_code == 0 and cli.runs() == {}
    listed = cli.run("shop.py", "--session", session_id(result.output), "--list-pending")
    assert "⏸ confirmation" in listed.output
