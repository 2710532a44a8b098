"""The agents of the A2A interop tests and benchmark, written once for both frameworks.

``agent(framework, name)`` builds one of them from ``framework``'s modules, ``"google.adk"``
or ``"cairn"``: the same source on both, only the import root differs (an ADK app runs on
cairn by changing ``google.adk`` to ``cairn``). bench/peer_adk_a2a.py builds them from
google-adk inside its own venv; cairn's side (bench/a2a_round_trips.py, tests/a2a/interop)
from cairn. Neither framework is imported until asked for.

- ``teller`` (one turn): a scripted model, a ``BaseLlm`` subclass with no latency, answers
  ``teller heard: <the user's last text>``.
- ``approver`` (a pause for input): asked anything, its model calls
  ``ask_approval(amount=50)``, a ``LongRunningFunctionTool`` returning None, so the
  invocation pauses on the call with no interim answer (A2A: ``input-required``). Shown
  the answer (a function response carrying ``approved``), it replies ``approved`` or
  ``refused``.

``caller(framework, card)``: the client side, a ``SequentialAgent`` named ``caller`` whose
only sub-agent is the framework's ``RemoteA2aAgent`` named ``remote``, pointed at ``card``
(the remote agent card's URL).

``serve(app, port)`` runs a server (any ASGI app) the way every A2A server of the bench and
the interop tests runs: under uvicorn, printing a readiness line.
"""

from __future__ import annotations

import importlib
from typing import Any

FRAMEWORKS = ("google.adk", "cairn")
AGENTS = ("teller", "approver")


def _module(framework: str, path: str) -> Any:
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {FRAMEWORKS}, not {framework!r}")
    return importlib.import_module(f"{framework}.{path}")


def ask_approval(amount: int) -> None:
    """Ask a manager to approve a refund of this amount (the answer comes later)."""
    return None


def agent(framework: str, name: str) -> Any:
    """The agent ``name`` (one of AGENTS) built from ``framework``'s classes."""
    from google.genai import types

    agents = _module(framework, "agents")
    base_llm = _module(framework, "models.base_llm")
    llm_response = _module(framework, "models.llm_response")

    def reply(part: types.Part) -> Any:
        content = types.Content(role="model", parts=[part])
        return llm_response.LlmResponse(content=content, turn_complete=True)

    class Teller(base_llm.BaseLlm):  # type: ignore[misc,name-defined]
        """One turn: repeats the user's last text after a fixed prefix."""

        model: str = "teller"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            said = ""
            for content in reversed(llm_request.contents or []):
                texts = [part.text for part in content.parts or [] if part.text]
                if content.role == "user" and texts:
                    said = "".join(texts)
                    break
            yield reply(types.Part(text=f"teller heard: {said}"))

    class Approver(base_llm.BaseLlm):  # type: ignore[misc,name-defined]
        """Calls ask_approval; shown an answer carrying ``approved``, says what it was."""

        model: str = "approver"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            last = llm_request.contents[-1] if llm_request.contents else None
            answers = [
                part.function_response.response or {}
                for part in (last.parts or [] if last else [])
                if part.function_response
            ]
            if any("approved" in answer for answer in answers):
                yield reply(types.Part(text="approved" if answers[-1]["approved"] else "refused"))
            else:
                call = types.FunctionCall(name="ask_approval", args={"amount": 50})
                yield reply(types.Part(function_call=call))

    if name == "teller":
        return agents.LlmAgent(
            name="teller", description="Repeats what it is told.", model=Teller()
        )
    if name == "approver":
        tools = _module(framework, "tools")
        return agents.LlmAgent(
            name="approver",
            description="Asks a manager before approving a refund.",
            model=Approver(),
            tools=[tools.LongRunningFunctionTool(ask_approval)],
        )
    raise ValueError(f"agent must be one of {AGENTS}, not {name!r}")


def caller(framework: str, card: str) -> Any:
    """``caller``, a SequentialAgent whose sub-agent ``remote`` is a RemoteA2aAgent at ``card``."""
    agents = _module(framework, "agents")
    remote = _module(framework, "agents.remote_a2a_agent")
    return agents.SequentialAgent(
        name="caller", sub_agents=[remote.RemoteA2aAgent(name="remote", agent_card=card)]
    )


def serve(app: Any, port: int, loop: str = "auto", http: str = "auto") -> None:
    """Run the ASGI ``app`` under uvicorn on 127.0.0.1:``port`` (its own event loop, ``loop``
    and ``http`` as uvicorn's options) and print ``READY http://127.0.0.1:<port>`` once it
    accepts connections; return when it stops (SIGTERM or SIGINT)."""
    import uvicorn

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                print(f"READY http://127.0.0.1:{port}", flush=True)

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        loop=loop,
        http=http,
        log_level="warning",
        access_log=False,
    )
    Announcing(config).run()
