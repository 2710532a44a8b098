"""Agents that pause, for the human-in-the-loop tests: built the same in any process.

Each tool body appends its name to the file named by ``CAIRN_HITL_RUNS`` (one
line per run), so a test counts runs across processes. The models reply from
what they are shown (``ScriptedLlm(respond=...)``), so a fresh process acts
exactly like the one that paused.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from google.genai import types

from cairn import Agent, AgentTool, FunctionTool, LongRunningFunctionTool, ToolContext
from cairn.agents.base_agent import BaseAgent
from cairn.agents.invocation_context import InvocationContext
from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    OAuth2,
    OAuth2Auth,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
)
from cairn.code_executors import UnsafeLocalCodeExecutor
from cairn.events.event import Event
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm
from cairn.workflow import START, ParallelAgent, RequestInput, Workflow

APP = "hitl"


def ran(name: str) -> None:
    path = os.environ.get("CAIRN_HITL_RUNS")
    if path:
        with Path(path).open("a") as file:
            file.write(name + "\n")
            file.flush()
            os.fsync(file.fileno())


def runs(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            counts[line] = counts.get(line, 0) + 1
    return counts


def _responses(request: LlmRequest) -> list[types.FunctionResponse]:
    last = request.contents[-1] if request.contents else None
    if last is None or not last.parts:
        return []
    return [p.function_response for p in last.parts if p.function_response is not None]


def caller(*calls: Call) -> ScriptedLlm:
    """A model that makes ``calls`` when asked, and reports the results it is shown."""

    def respond(request: LlmRequest) -> Any:
        responses = _responses(request)
        if not responses:
            return list(calls)
        report = {r.name: r.response for r in sorted(responses, key=lambda r: r.id or "")}
        return "results: " + json.dumps(report, sort_keys=True)

    return ScriptedLlm(respond=respond)


# -- tools ---------------------------------------------------------------------------------
def refund(amount: int, tool_context: ToolContext) -> dict[str, Any]:
    """Refund an amount to the customer."""
    ran("refund")
    return {"refunded": amount, "key": tool_context.idempotency_key}


def transfer(amount: int, tool_context: ToolContext) -> dict[str, Any]:
    """Move money; asks a human itself, with the amount as payload it may change."""
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(hint=f"Transfer {amount}?", payload={"amount": amount})
        return {"status": "waiting for approval"}
    ran("transfer")
    approved = (confirmation.payload or {}).get("amount", amount)
    return {"transferred": approved}


def ask_manager(question: str) -> None:
    """Ask a manager; the answer comes later."""
    ran("ask_manager")
    return None


def ask_finance(question: str) -> None:
    """Ask finance; the answer comes later."""
    ran("ask_finance")
    return None


def charge(amount: int, tool_context: ToolContext) -> dict[str, Any]:
    """Charge the card (dies the first time when CAIRN_HITL_DIE is set: a crash mid-call)."""
    ran("charge")
    if os.environ.get("CAIRN_HITL_DIE") == "charge":
        os.kill(os.getpid(), signal.SIGKILL)
    return {"charged": amount, "key": tool_context.idempotency_key}


def lookup(order: str, tool_context: ToolContext) -> dict[str, Any]:
    """Look an order up (idempotent; dies the first time when CAIRN_HITL_DIE=lookup)."""
    ran("lookup")
    if os.environ.get("CAIRN_HITL_DIE") == "lookup":
        os.kill(os.getpid(), signal.SIGKILL)
    return {"order": order, "status": "shipped"}


# -- apps ----------------------------------------------------------------------------------
def _confirm() -> BaseAgent:
    return Agent(
        name="clerk",
        model=caller(Call("refund", id="call-refund", amount=50)),
        tools=[FunctionTool(refund, require_confirmation=True)],
    )


def _confirm_inside() -> BaseAgent:
    return Agent(
        name="clerk",
        model=caller(Call("transfer", id="call-transfer", amount=100)),
        tools=[transfer],
    )


def _confirm_when() -> BaseAgent:
    def large(amount: int) -> bool:
        return amount > 10

    return Agent(
        name="clerk",
        model=caller(
            Call("refund", id="call-small", amount=5), Call("refund", id="call-large", amount=500)
        ),
        tools=[FunctionTool(refund, require_confirmation=large)],
    )


def _long_running() -> BaseAgent:
    return Agent(
        name="clerk",
        model=caller(Call("ask_manager", id="call-manager", question="refund 50?")),
        tools=[LongRunningFunctionTool(ask_manager)],
    )


def _two_pending() -> BaseAgent:
    return Agent(
        name="clerk",
        model=caller(
            Call("ask_manager", id="call-manager", question="ok?"),
            Call("ask_finance", id="call-finance", question="budget?"),
        ),
        tools=[LongRunningFunctionTool(ask_manager), LongRunningFunctionTool(ask_finance)],
    )


def _input() -> BaseAgent:
    def draft(node_input: str) -> str:
        ran("draft")
        return f"draft of {node_input}"

    def review(node_input: str):  # type: ignore[no-untyped-def]
        ran("review")
        yield RequestInput(
            interrupt_id="review-1",
            message="Approve the draft?",
            payload=node_input,
            response_schema={"type": "string", "enum": ["yes", "no"]},
        )

    def send(node_input: str) -> str:
        ran("send")
        return f"sent ({node_input})"

    return Workflow(name="mail", edges=[(START, draft, review, send)])


def _in_doubt() -> BaseAgent:
    return Agent(
        name="clerk",
        model=caller(Call("charge", id="call-charge", amount=30)),
        tools=[charge],
    )


def _idempotent() -> BaseAgent:
    return Agent(
        name="clerk",
        model=caller(Call("lookup", id="call-lookup", order="A-1")),
        tools=[FunctionTool(lookup, idempotent=True)],
    )


def _workflow_agent() -> BaseAgent:
    clerk = Agent(
        name="clerk",
        model=caller(Call("ask_manager", id="call-manager", question="refund?")),
        tools=[LongRunningFunctionTool(ask_manager)],
    )

    def file_it(node_input: str) -> str:
        ran("file_it")
        return f"filed: {node_input}"

    return Workflow(name="desk", edges=[(START, clerk, file_it)])


def _sub_agent() -> BaseAgent:
    refunds = Agent(
        name="refunds",
        description="Handles refunds.",
        model=caller(Call("ask_manager", id="call-manager", question="refund?")),
        tools=[LongRunningFunctionTool(ask_manager)],
    )
    return Agent(
        name="front",
        model=caller(Call("transfer_to_agent", id="call-transfer", agent_name="refunds")),
        sub_agents=[refunds],
    )


def _parallel() -> BaseAgent:
    manager = Agent(
        name="manager_desk",
        model=caller(Call("ask_manager", id="call-manager", question="ok?")),
        tools=[LongRunningFunctionTool(ask_manager)],
    )
    finance = Agent(
        name="finance_desk",
        model=caller(Call("ask_finance", id="call-finance", question="budget?")),
        tools=[LongRunningFunctionTool(ask_finance)],
    )
    return ParallelAgent(name="both", sub_agents=[manager, finance])


class _Orchestrator(BaseAgent):
    """A custom agent: a greeter first, then a clerk whose tool needs approval."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for agent in self.sub_agents:
            async for event in agent.run_async(ctx.for_agent(agent)):
                yield event


def _custom() -> BaseAgent:
    def greet_model(request: LlmRequest) -> Any:
        ran("greet")
        return "hello"

    greeter = Agent(name="greeter", model=ScriptedLlm(respond=greet_model))
    clerk = Agent(
        name="clerk",
        model=caller(Call("refund", id="call-refund", amount=50)),
        tools=[FunctionTool(refund, require_confirmation=True)],
    )
    return _Orchestrator(name="desk", sub_agents=[greeter, clerk])


def _agent_tool() -> BaseAgent:
    refunder = Agent(
        name="refunder",
        description="Refunds orders.",
        model=caller(Call("refund", id="call-refund", amount=50)),
        tools=[FunctionTool(refund, require_confirmation=True)],
    )
    return Agent(
        name="front",
        model=caller(Call("refunder", id="call-refunder", request="refund 50")),
        tools=[AgentTool(refunder)],
    )


API_KEY = AuthConfig(auth_scheme=APIKey(in_=APIKeyIn.header, name="X-Api-Key"))


async def weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The weather in a city (needs an API key; dies when CAIRN_HITL_DIE=weather)."""
    if os.environ.get("CAIRN_HITL_DIE") == "weather":
        os.kill(os.getpid(), signal.SIGKILL)
    credential = tool_context.get_auth_response(API_KEY) or await tool_context.load_credential(
        API_KEY
    )
    if credential is None:
        tool_context.request_credential(API_KEY)
        return {"status": "waiting for an API key"}
    ran("weather")
    return {"city": city, "key_ends": (credential.api_key or "")[-3:]}


def oauth_config() -> AuthConfig:
    """Sign in at the test provider whose address is in CAIRN_HITL_OAUTH."""
    base = os.environ["CAIRN_HITL_OAUTH"]
    return AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorization_code=OAuthFlowAuthorizationCode(
                    authorization_url=f"{base}/authorize?prompt=consent",
                    token_url=f"{base}/token",
                    scopes={"calendar.read": "Read your calendar"},
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(
                client_id="cairn-test-client",
                client_secret=os.environ.get("CAIRN_HITL_OAUTH_SECRET", "client-s3cret"),
                redirect_uri="http://127.0.0.1/callback",
            ),
        ),
    )


async def calendar(day: str, tool_context: ToolContext) -> dict[str, Any]:
    """Your calendar for a day (needs you to sign in)."""
    config = oauth_config()
    credential = tool_context.get_auth_response(config) or await tool_context.load_credential(
        config
    )
    if credential is None or credential.oauth2 is None:
        tool_context.request_credential(config)
        return {"status": "waiting for sign-in"}
    ran("calendar")
    return {"day": day, "token_ends": (credential.oauth2.access_token or "")[-6:]}


def _credential_key() -> BaseAgent:
    return Agent(name="clerk", model=caller(Call("weather", city="Paris")), tools=[weather])


def _credential_oauth() -> BaseAgent:
    return Agent(name="clerk", model=caller(Call("calendar", day="monday")), tools=[calendar])


# -- code runs -----------------------------------------------------------------------------
CHARGE_CODE = """\
import os, signal
with open(os.environ["CAIRN_HITL_RUNS"], "a") as runs:
    runs.write("code\\n")
if os.environ.get("CAIRN_HITL_DIE") == "code":
    os.kill(os.getppid(), signal.SIGKILL)  # the agent's process dies before the result is in
print("charged 30")
"""


def coder() -> ScriptedLlm:
    """A model that writes CHARGE_CODE when asked, and reports the output it is shown."""

    def respond(request: LlmRequest) -> Any:
        last = request.contents[-1] if request.contents else None
        text = "".join(p.text or "" for p in (last.parts or [])) if last else ""
        if text.startswith("```tool_output"):
            return "output: " + text.removeprefix("```tool_output\n").removesuffix("\n```")
        return "Running it.\n```python\n" + CHARGE_CODE + "\n```"

    return ScriptedLlm(respond=respond)


def _code_in_doubt() -> BaseAgent:
    return Agent(name="clerk", model=coder(), code_executor=UnsafeLocalCodeExecutor())


def _code_idempotent() -> BaseAgent:
    return Agent(
        name="clerk", model=coder(), code_executor=UnsafeLocalCodeExecutor(idempotent=True)
    )


SCENARIOS = {
    "code_in_doubt": _code_in_doubt,
    "code_idempotent": _code_idempotent,
    "credential_key": _credential_key,
    "credential_oauth": _credential_oauth,
    "agent_tool": _agent_tool,
    "workflow_agent": _workflow_agent,
    "sub_agent": _sub_agent,
    "parallel": _parallel,
    "custom": _custom,
    "confirm": _confirm,
    "confirm_inside": _confirm_inside,
    "confirm_when": _confirm_when,
    "long_running": _long_running,
    "two_pending": _two_pending,
    "input": _input,
    "in_doubt": _in_doubt,
    "idempotent": _idempotent,
}


def build(scenario: str) -> BaseAgent:
    return SCENARIOS[scenario]()
