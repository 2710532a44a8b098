"""Every interrupt kind pauses, lists as pending, and resumes: on each store, in the same
process and in a new one; answered work never runs twice."""

from __future__ import annotations

from pathlib import Path

from tests.hitl.scenarios import runs


async def test_tool_confirmation_approved(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("confirm")
    paused = await driver.step({"say": "refund my order"})
    [interrupt] = paused.pending
    assert interrupt.kind == "confirmation" and interrupt.name == "adk_request_confirmation"
    assert interrupt.function_call.name == "refund" and interrupt.function_call.args == {
        "amount": 50
    }
    assert "refund(amount=50)" in interrupt.message
    assert runs(tmp_path / "runs.txt") == {}  # nothing ran before the approval
    # ADK's events: the call, the confirmation request, then the call's placeholder response
    # (skip_summarization), which carries requested_tool_confirmations: not a result.
    call, request, held = paused.events[-3:]
    [made] = call.get_function_calls()
    assert [c.name for c in request.get_function_calls()] == ["adk_request_confirmation"]
    assert request.actions.requested_tool_confirmations == {}
    [placeholder] = held.get_function_responses()
    assert placeholder.id == made.id and placeholder.response == {
        "error": "This tool call requires confirmation, please approve or reject."
    }
    assert set(held.actions.requested_tool_confirmations) == {made.id}
    assert held.actions.skip_summarization is True
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, {"confirmed": True}]]})
    assert done.error is None and done.pending == []
    assert done.text.startswith("results: ") and '"refunded": 50' in done.text
    assert runs(tmp_path / "runs.txt") == {"refund": 1}
    again = await driver.step({"answer": [[interrupt.id, interrupt.name, {"confirmed": True}]]})
    assert again.error is not None and again.error[0] == "InterruptNotPendingError"
    assert "answered already" in again.error[1]
    assert runs(tmp_path / "runs.txt") == {"refund": 1}  # an approval is used once


async def test_tool_confirmation_denied(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("confirm")
    [interrupt] = (await driver.step({"say": "refund"})).pending
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, {"confirmed": False}]]})
    assert "rejected" in done.text and runs(tmp_path / "runs.txt") == {}


async def test_a_tool_asks_for_confirmation_and_gets_a_payload(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("confirm_inside")
    paused = await driver.step({"say": "transfer"})
    [interrupt] = paused.pending
    [placeholder] = paused.events[-1].get_function_responses()
    assert placeholder.response == {"status": "waiting for approval"}
    assert set(paused.events[-1].actions.requested_tool_confirmations) == {placeholder.id}
    assert interrupt.kind == "confirmation" and interrupt.message == "Transfer 100?"
    assert interrupt.payload == {"amount": 100}
    answer = {"confirmed": True, "payload": {"amount": 80}}
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, answer]]})
    assert '"transferred": 80' in done.text and runs(tmp_path / "runs.txt") == {"transfer": 1}
    # As ADK, what the tool returned while it asked is its placeholder response; the model
    # sees only the result it gave once approved.
    assert "waiting for approval" not in done.text


async def test_long_running_tool_answered_later(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("long_running")
    [interrupt] = (await driver.step({"say": "refund 50"})).pending
    assert interrupt.kind == "long_running" and interrupt.id == "call-manager"
    done = await driver.step({"answer": [["call-manager", "ask_manager", {"approved": True}]]})
    assert done.text == 'results: {"ask_manager": {"approved": true}}'
    assert runs(tmp_path / "runs.txt") == {"ask_manager": 1}


async def test_input_request_in_a_workflow(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("input")
    [interrupt] = (await driver.step({"say": "the report"})).pending
    assert interrupt.kind == "input" and interrupt.message == "Approve the draft?"
    assert interrupt.payload == "draft of the report"
    assert interrupt.response_schema == {"type": "string", "enum": ["yes", "no"]}
    maybe = {"result": "maybe"}
    refused = await driver.step({"answer": [["review-1", "adk_request_input", maybe]]})
    assert refused.error is not None and refused.error[0] == "InvalidAnswerError"
    assert [i.id for i in refused.pending] == ["review-1"]  # still waiting
    done = await driver.step({"answer": [["review-1", "adk_request_input", {"result": "yes"}]]})
    assert done.events[-1].output == "sent (yes)"
    assert runs(tmp_path / "runs.txt") == {"draft": 1, "review": 1, "send": 1}


async def test_answering_one_of_two_keeps_waiting_for_the_other(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("two_pending")
    paused = await driver.step({"say": "ask both"})
    assert sorted(i.id for i in paused.pending) == ["call-finance", "call-manager"]
    half = await driver.step({"answer": [["call-manager", "ask_manager", {"ok": True}]]})
    assert half.error is None
    assert [i.id for i in half.pending] == ["call-finance"]
    assert not any(e.content and e.content.parts and e.content.parts[0].text for e in half.events)
    done = await driver.step({"answer": [["call-finance", "ask_finance", {"budget": 9}]]})
    assert done.text == ('results: {"ask_finance": {"budget": 9}, "ask_manager": {"ok": true}}')
    assert runs(tmp_path / "runs.txt") == {"ask_manager": 1, "ask_finance": 1}


async def test_an_unknown_id_is_refused_naming_the_pending_ones(drive) -> None:  # type: ignore[no-untyped-def]
    driver = drive("long_running")
    await driver.step({"say": "refund 50"})
    refused = await driver.step({"answer": [["no-such-call", "ask_manager", {}]]})
    assert refused.error is not None and refused.error[0] == "InterruptNotPendingError"
    assert "'no-such-call'" in refused.error[1] and "'call-manager'" in refused.error[1]
    assert [i.id for i in refused.pending] == ["call-manager"]


# -- composition ----------------------------------------------------------------------------
async def test_an_agent_node_of_a_workflow_waits_and_resumes(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("workflow_agent")
    [interrupt] = (await driver.step({"say": "refund 50"})).pending
    assert interrupt.kind == "long_running" and interrupt.node_path == "desk@1/clerk@1"
    done = await driver.step({"answer": [["call-manager", "ask_manager", {"approved": True}]]})
    assert done.error is None and done.pending == []
    assert done.events[-1].output == 'filed: results: {"ask_manager": {"approved": true}}'
    repeated = [e for e in done.events if e.content and e.content.parts[0].text == "refund 50"]
    assert repeated == []  # the node's input is not given to the agent again on resume
    assert runs(tmp_path / "runs.txt") == {"ask_manager": 1, "file_it": 1}


async def test_a_sub_agents_long_running_tool(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("sub_agent")
    [interrupt] = (await driver.step({"say": "refund please"})).pending
    assert interrupt.author == "refunds"
    done = await driver.step({"answer": [["call-manager", "ask_manager", {"approved": True}]]})
    assert done.events[-1].author == "refunds"
    assert done.text == 'results: {"ask_manager": {"approved": true}}'
    assert runs(tmp_path / "runs.txt") == {"ask_manager": 1}


async def test_a_parallel_agent_with_two_branches_waiting(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("parallel")
    paused = await driver.step({"say": "ask both"})
    assert sorted(i.id for i in paused.pending) == ["call-finance", "call-manager"]
    assert {i.branch for i in paused.pending} == {"both.manager_desk", "both.finance_desk"}
    half = await driver.step({"answer": [["call-finance", "ask_finance", {"budget": 9}]]})
    assert [i.id for i in half.pending] == ["call-manager"]
    # Only the answered branch went on (ADK's events: its answer, nothing of the parallel's).
    assert [(e.author, e.branch) for e in half.events if e.author != "user"] == [
        ("finance_desk", "both.finance_desk")
    ]
    done = await driver.step({"answer": [["call-manager", "ask_manager", {"ok": True}]]})
    assert done.pending == []
    assert [(e.author, e.branch) for e in done.events if e.author != "user"] == [
        ("manager_desk", "both.manager_desk")
    ]
    assert done.text == 'results: {"ask_manager": {"ok": true}}'
    assert runs(tmp_path / "runs.txt") == {"ask_manager": 1, "ask_finance": 1}


async def test_a_custom_agent_orchestrating_others(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("custom")
    [interrupt] = (await driver.step({"say": "hi, refund 50"})).pending
    assert interrupt.kind == "confirmation" and runs(tmp_path / "runs.txt") == {"greet": 1}
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, {"confirmed": True}]]})
    assert '"refunded": 50' in done.text
    assert runs(tmp_path / "runs.txt") == {"greet": 1, "refund": 1}  # the greeter ran once


async def test_an_agent_used_as_a_tool_asks_for_confirmation(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("agent_tool")
    [interrupt] = (await driver.step({"say": "refund my order"})).pending
    assert interrupt.kind == "confirmation" and interrupt.author == "refunder"
    assert interrupt.branch == "refunder@call-refunder"
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, {"confirmed": True}]]})
    assert done.error is None and done.pending == []
    assert done.events[-1].author == "front"
    assert done.text.startswith('results: {"refunder": {"result": "results: ')
    assert '\\"refunded\\": 50' in done.text
    assert runs(tmp_path / "runs.txt") == {"refund": 1}


# -- credentials ---------------------------------------------------------------------------
def with_credential(interrupt, credential: dict) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """The answer a UI sends: the requested auth config with the credential filled in."""
    config = dict(interrupt.payload)
    config["exchangedAuthCredential"] = {
        **(config.get("exchangedAuthCredential") or {}),
        **credential,
    }
    return config


async def test_an_api_key_is_asked_for_once_then_kept(drive, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    driver = drive("credential_key")
    [interrupt] = (await driver.step({"say": "weather in Paris"})).pending
    assert interrupt.kind == "credential" and interrupt.name == "adk_request_credential"
    assert interrupt.function_call.name == "weather"
    assert interrupt.payload["authScheme"]["name"] == "X-Api-Key"
    bad = await driver.step({"answer": [[interrupt.id, interrupt.name, {"apiKey": "x"}]]})
    assert bad.error is not None and bad.error[0] == "InvalidAnswerError"
    answer = with_credential(interrupt, {"authType": "apiKey", "apiKey": "key-123"})
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, answer]]})
    assert done.error is None and done.pending == []
    assert '"key_ends": "123"' in done.text
    again = await driver.step({"say": "and tomorrow?"})  # the saved key is used, not asked for
    assert again.pending == [] and '"key_ends": "123"' in again.text
    assert runs(tmp_path / "runs.txt") == {"weather": 2}


async def test_oauth2_sign_in_exchanges_the_code_and_keeps_the_token(  # type: ignore[no-untyped-def]
    drive, oauth_provider, tmp_path: Path
) -> None:
    driver = drive("credential_oauth")
    [interrupt] = (await driver.step({"say": "what is on monday?"})).pending
    auth_uri = interrupt.payload["exchangedAuthCredential"]["oauth2"]["authUri"]
    assert auth_uri in interrupt.message
    redirected = oauth_provider.authorize(auth_uri)  # the user signs in; the browser lands here
    answer = with_credential(interrupt, {"oauth2": {"authResponseUri": redirected}})
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, answer]]})
    assert done.error is None and done.pending == []
    assert '"token_ends": "at-' in done.text
    [exchange] = oauth_provider.requests
    assert exchange.form["grant_type"] == "authorization_code" and exchange.form["code_verifier"]
    again = await driver.step({"say": "and tuesday?"})
    assert again.pending == [] and '"token_ends": "at-' in again.text
    assert len(oauth_provider.requests) == 1  # the kept token was used: no new sign-in
    assert runs(tmp_path / "runs.txt") == {"calendar": 2}
