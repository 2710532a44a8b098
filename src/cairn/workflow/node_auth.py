"""A function node's ``auth_config``: the credential it needs before it runs.

The node asks as a tool call does (``cairn.agents.credential_requests``, one code path):
a credential saved in the credential service is used without asking; else the node
yields an ``adk_request_credential`` call (id ``wf_auth:<node path>``, as ADK's) whose
``authConfig`` is the user's sign-in request, without secrets, and waits. On the answer it
runs again: the answer (whole if this process received it, else as stored, without its
secrets) is merged into the recorded request and completed with the node's own config
(an OAuth2 code exchanged with its client secret), saved, and handed to the function
(``ctx.get_auth_response(auth_config)``). A stored answer whose secret died with the
process that received it (an API key) makes the node ask again (``wf_auth:<path>#2``...).
"""

from __future__ import annotations

from google.genai import types

from cairn.agents.context import Context
from cairn.agents.credential_requests import (
    accept_credential_answer,
    credential_request_args,
    obtain_credential,
)
from cairn.auth import AuthConfig, AuthCredential, user_request
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.interrupts import REQUEST_CREDENTIAL_FUNCTION, earlier_call


def auth_interrupt_id(node_path: str) -> str:
    """The interrupt id of a node run's first credential request (ADK's)."""
    return f"wf_auth:{node_path}"


async def node_credential(
    ctx: Context, node_name: str, auth_config: AuthConfig
) -> AuthCredential | Event:
    """The credential for ``auth_config``, or the request event to yield (the node waits).

    Raises ``CredentialError`` if the user's answer does not fit the request, or the
    provider refuses it (the answer stays in the log as given)."""
    invocation = ctx.invocation_context
    first = auth_interrupt_id(ctx.node_path)
    asked = [i for i in ctx.resume_inputs if i == first or i.startswith(first + "#")]
    if not asked:
        saved = await ctx.load_credential(auth_config)
        return saved if saved is not None else _request(node_name, auth_config, first)
    latest = max(asked, key=_request_number)
    made = earlier_call(invocation.session.events, invocation.invocation_id, latest)
    calls = [c for c in made.get_function_calls() if c.id == latest] if made else []
    recorded = dict(calls[0].args or {}) if calls else {}
    answer = accept_credential_answer(invocation, latest, recorded, ctx.resume_inputs[latest])
    credential = await obtain_credential(invocation, answer, auth_config)
    if credential is not None:
        return credential
    return _request(node_name, auth_config, f"{first}#{_request_number(latest) + 1}")


def _request_number(interrupt_id: str) -> int:
    _, _, number = interrupt_id.rpartition("#")
    return int(number) if number.isdigit() else 1


def _request(node_name: str, auth_config: AuthConfig, interrupt_id: str) -> Event:
    shown = user_request(auth_config)
    call = types.FunctionCall(
        id=interrupt_id,
        name=REQUEST_CREDENTIAL_FUNCTION,
        args=credential_request_args(interrupt_id, f"The node {node_name}", shown),
    )
    return Event(
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        long_running_tool_ids={interrupt_id},
        actions=EventActions(requested_auth_configs={interrupt_id: shown}),
    )
