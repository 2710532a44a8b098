"""``node(auth_config=...)``: a workflow node that needs a credential before it runs.

The node asks as a tool call does (an ``adk_request_credential`` call, ADK's id
``wf_auth:<node path>``); its body reads the credential with ``ctx.get_auth_response``.
An API key and an OAuth2 sign-in at a real local provider, on memory and SQLite, each step
in this process or in a new one; no secret is in any stored event; a bad answer is a
typed error; a saved credential is used without asking.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.auth.token_server import CLIENT_SECRET, FakeProvider
from tests.support.stored_rows import stored_rows
from tests.workflow.node_auth_worker import APP, SESSION, USER, run_step, runner_for

from cairn import LlmAgent, Runner
from cairn.agents.context import Context
from cairn.auth import APIKey, APIKeyIn, AuthConfig
from cairn.sessions import BaseSessionService, InMemorySessionService
from cairn.sessions.factory import session_service_from_url
from cairn.workflow import FunctionNode, node

ROOT = Path(__file__).resolve().parents[2]
CREDENTIALS_TABLE = "cairn_credentials"


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider().running() as running:
        running.token_tag = f"-{secrets.token_hex(8)}"  # tokens unique to this test
        yield running


class Steps:
    """Steps of the node-auth workflow on one store: in this process (one runner), or
    each in a new process (``new=True``, SQLite only)."""

    def __init__(self, store: str, tmp: Path, kind: str, base_url: str, *, new: bool) -> None:
        self.url = "memory://" if store == "memory" else str(tmp / "sessions.db")
        self.kind, self.base_url, self.new = kind, base_url, new
        self.store: BaseSessionService | None = None
        self.runner: Runner | None = None
        if not new:
            memory = store == "memory"
            self.store = InMemorySessionService() if memory else session_service_from_url(self.url)
            self.runner = runner_for(self.store, kind, base_url)

    async def step(self, step: dict[str, Any], *, die: bool = False) -> dict[str, Any]:
        if self.runner is not None:
            return await run_step(self.runner, step)
        env = {**os.environ, "CAIRN_NODE_AUTH_DIE": "1" if die else ""}
        command = [sys.executable, "-m", "tests.workflow.node_auth_worker"]
        result = subprocess.run(
            [*command, self.url, self.kind, self.base_url, json.dumps(step)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env=env,
        )
        if die:
            assert result.returncode != 0, result.stdout
            return {}
        assert result.returncode == 0, result.stderr
        outcome: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
        return outcome

    async def stored(self) -> dict[str, list[str]]:
        """Every stored row by table (the session's events and state, in memory)."""
        if self.url == "memory://":
            assert self.store is not None
            session = await self.store.get_session(app_name=APP, user_id=USER, session_id=SESSION)
            assert session is not None
            return {"events": [e.to_json() for e in session.events], "state": [str(session.state)]}
        return await stored_rows(self.url)

    async def state(self) -> dict[str, Any]:
        store = self.store or session_service_from_url(self.url)
        session = await store.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        if self.store is None:
            await store.close()
        assert session is not None
        return dict(session.state)

    async def close(self) -> None:
        if self.store is not None:
            await self.store.close()


def answered(request: dict[str, Any], credential: dict[str, Any]) -> dict[str, Any]:
    """The answer a UI sends: the requested auth config with the credential filled in."""
    config = dict(request["args"]["authConfig"])
    config["exchangedAuthCredential"] = {
        **(config.get("exchangedAuthCredential") or {}),
        **credential,
    }
    return config


def signed_in(provider: FakeProvider, request: dict[str, Any]) -> dict[str, Any]:
    """The user's answer after signing in at the request's sign-in URL."""
    oauth2 = dict(request["args"]["authConfig"]["exchangedAuthCredential"]["oauth2"])
    oauth2["authResponseUri"] = provider.authorize(oauth2["authUri"])
    return answered(request, {"authType": "oauth2", "oauth2": oauth2})


def assert_nowhere(secret: str, rows: dict[str, list[str]]) -> None:
    assert rows.get("cairn_events") or rows.get("events"), f"no stored events in {list(rows)}"
    for table, lines in rows.items():
        if table == CREDENTIALS_TABLE:  # the credential service's own table
            continue
        found = [line for line in lines if secret in line]
        assert not found, f"{secret!r} is stored in {table}: {found[0][:300]}"


WHERE = [("memory", False), ("sqlite", False), ("sqlite", True)]
IDS = ["memory", "sqlite", "sqlite-new-process"]


@pytest.mark.parametrize(("store", "new"), WHERE, ids=IDS)
async def test_an_api_key_node_asks_once_then_reads_it(
    store: str, new: bool, tmp_path: Path, provider: FakeProvider
) -> None:
    steps = Steps(store, tmp_path, "api_key", provider.base_url, new=new)
    asked = await steps.step({"say": "what is on monday?"})
    assert asked["error"] is None and asked["outputs"] == []
    [request] = asked["requests"]
    assert request["id"] == "wf_auth:calendar@1/fetch@1"  # ADK's id
    assert request["args"]["functionCallId"] == request["id"]
    assert request["args"]["authConfig"]["authScheme"]["name"] == "X-Api-Key"
    assert "runs" not in await steps.state()  # the body waits for the credential
    key = f"key-{secrets.token_hex(8)}"
    done = await steps.step(
        {"answer": [request["id"], answered(request, {"authType": "apiKey", "apiKey": key})]}
    )
    assert done["error"] is None and done["requests"] == []
    assert done["outputs"] == [{"ends": key[-6:]}]
    again = await steps.step({"say": "and tuesday?"})  # the saved key, not asked for
    assert again["requests"] == [] and again["outputs"] == [{"ends": key[-6:]}]
    assert (await steps.state())["runs"] == 2
    assert_nowhere(key, await steps.stored())
    await steps.close()


@pytest.mark.parametrize(("store", "new"), WHERE, ids=IDS)
async def test_an_oauth2_node_signs_in_and_reads_its_token(
    store: str, new: bool, tmp_path: Path, provider: FakeProvider
) -> None:
    steps = Steps(store, tmp_path, "oauth2", provider.base_url, new=new)
    [request] = (await steps.step({"say": "what is on monday?"}))["requests"]
    sign_in = request["args"]["authConfig"]["exchangedAuthCredential"]["oauth2"]
    assert sign_in["authUri"].startswith(f"{provider.base_url}/authorize") and sign_in["state"]
    done = await steps.step({"answer": [request["id"], signed_in(provider, request)]})
    assert done["error"] is None, done["error"]
    [access_token, refresh_token, *_] = provider.issued
    assert done["outputs"] == [{"ends": access_token[-6:]}]
    [exchange] = [r for r in provider.requests if r.form.get("grant_type") == "authorization_code"]
    assert exchange.form["code_verifier"]  # the recorded request's PKCE, re-derived
    again = await steps.step({"say": "and tuesday?"})
    assert again["requests"] == [] and again["outputs"] == [{"ends": access_token[-6:]}]
    assert len([r for r in provider.requests if r.path == "/token"]) == 1  # exchanged once
    rows = await steps.stored()
    for secret in (CLIENT_SECRET, access_token, refresh_token):
        assert_nowhere(secret, rows)
    await steps.close()


async def test_a_new_process_without_the_answer_asks_again(
    tmp_path: Path, provider: FakeProvider
) -> None:
    """The process that got the key died before the node finished: the stored answer has no
    key, so the node asks again (as a tool call does), under a new interrupt id."""
    steps = Steps("sqlite", tmp_path, "api_key", provider.base_url, new=True)
    [request] = (await steps.step({"say": "what is on monday?"}))["requests"]
    key = f"key-{secrets.token_hex(8)}"
    answer = answered(request, {"authType": "apiKey", "apiKey": key})
    await steps.step({"answer": [request["id"], answer]}, die=True)
    continued = await steps.step({"continue": await _invocation_id(steps)})
    assert continued["error"] is None and continued["outputs"] == []
    [again] = continued["requests"]
    assert again["id"] == "wf_auth:calendar@1/fetch@1#2"
    key2 = f"key-{secrets.token_hex(8)}"
    done = await steps.step(
        {"answer": [again["id"], answered(again, {"authType": "apiKey", "apiKey": key2})]}
    )
    assert done["error"] is None and done["outputs"] == [{"ends": key2[-6:]}]
    rows = await steps.stored()
    assert_nowhere(key, rows)
    assert_nowhere(key2, rows)


async def _invocation_id(steps: Steps) -> str:
    store = session_service_from_url(steps.url)
    session = await store.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    await store.close()
    assert session is not None
    return session.events[-1].invocation_id


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_a_bad_answer_is_a_typed_error(
    store: str, tmp_path: Path, provider: FakeProvider
) -> None:
    steps = Steps(store, tmp_path, "api_key", provider.base_url, new=False)
    [request] = (await steps.step({"say": "what is on monday?"}))["requests"]
    refused = await steps.step({"answer": [request["id"], {"apiKey": "not-an-auth-config"}]})
    assert refused["error"][0] == "InvalidAnswerError"  # refused before anything is stored
    empty = await steps.step({"answer": [request["id"], answered(request, {"authType": "apiKey"})]})
    assert empty["error"][0] == "InvalidCredentialError"
    assert "api_key is empty" in empty["error"][1]
    assert "runs" not in await steps.state()
    asked = await steps.step({"say": "try again"})  # a new message asks anew
    assert len(asked["requests"]) == 1 and asked["error"] is None
    await steps.close()


async def test_a_refused_sign_in_is_a_typed_error(tmp_path: Path, provider: FakeProvider) -> None:
    steps = Steps("memory", tmp_path, "oauth2", provider.base_url, new=False)
    [request] = (await steps.step({"say": "what is on monday?"}))["requests"]
    oauth2 = dict(request["args"]["authConfig"]["exchangedAuthCredential"]["oauth2"])
    oauth2["authResponseUri"] = provider.authorize(oauth2["authUri"], approve=False)
    denied = await steps.step(
        {"answer": [request["id"], answered(request, {"authType": "oauth2", "oauth2": oauth2})]}
    )
    assert denied["error"][0] == "CredentialExchangeError"
    assert "access_denied" in denied["error"][1]


KEY = AuthConfig(auth_scheme=APIKey(in_=APIKeyIn.header, name="X-Api-Key"))


def test_auth_config_needs_a_function_that_reruns() -> None:
    def fetch(ctx: Context) -> str:
        return "ok"

    built = node(fetch, auth_config=KEY)
    assert isinstance(built, FunctionNode) and built.rerun_on_resume and built.auth_config == KEY
    with pytest.raises(ValueError, match="rerun_on_resume=True"):
        FunctionNode(func=fetch, auth_config=KEY)
    with pytest.raises(TypeError, match="takes a function; got LlmAgent"):
        node(LlmAgent(name="helper", model="gemini-2.5-flash"), auth_config=KEY)
