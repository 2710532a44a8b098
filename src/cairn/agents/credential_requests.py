"""Asking a user for a credential and taking the answer: one code path for tool calls and
workflow nodes.

A request is an ``adk_request_credential`` call whose ``authConfig`` is what the user is
shown (``cairn.auth.user_request``: the sign-in request, never a secret). The answer is
read from the invocation's credential answers when this process received it (the whole
answer; the log keeps it without secrets), else from the log; ``accept_credential_answer``
merges it into the recorded request, and ``obtain_credential`` completes it with the
asker's own config (its client secret, in this process), e.g. exchanging an OAuth2 code
for tokens, and saves the credential with the credential service. An answer whose secret
stayed with the process that received it yields None: the user is asked again.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.auth import (
    AuthConfig,
    AuthCredential,
    InvalidCredentialError,
    accept_auth_response,
    complete_credential,
)

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class CredentialAnswer:
    """A user's answer to a credential request, merged into the request (no asker's secrets)."""

    config: AuthConfig
    whole: bool
    """The answer as the user sent it (this process got it); False: as stored, its secrets
    (an API key, tokens) left out."""


def credential_request_args(function_call_id: str, asker: str, asked: AuthConfig) -> dict[str, Any]:
    """The arguments of a credential request: ADK's (functionCallId, authConfig) and a
    message naming ``asker`` ("The call f(...)", "The node n"); ``asked`` is what the user
    is shown (``cairn.auth.user_request``)."""
    where = ""
    oauth2 = asked.exchanged_auth_credential.oauth2 if asked.exchanged_auth_credential else None
    if oauth2 is not None and oauth2.auth_uri:
        where = f" Send the user to {oauth2.auth_uri} and answer with the URL it redirects to."
    return {
        "functionCallId": function_call_id,
        "authConfig": asked.model_dump(by_alias=True, exclude_none=True, mode="json"),
        "message": f"{asker} needs a credential ({asked.key}).{where}",
    }


def accept_credential_answer(
    ctx: InvocationContext, interrupt_id: str, request_args: Mapping[str, Any], stored: Any
) -> CredentialAnswer:
    """The answer to request ``interrupt_id`` (whose recorded arguments are
    ``request_args``) merged into that request: the whole answer if this process received
    it, else the stored one. Raises ``CredentialError`` for an answer that does not fit."""
    whole = ctx.credential_answers.get(interrupt_id)
    requested = AuthConfig.model_validate(request_args.get("authConfig") or {})
    answered = accept_auth_response(requested, whole if whole is not None else stored)
    return CredentialAnswer(answered, whole is not None)


async def obtain_credential(
    ctx: InvocationContext, answer: CredentialAnswer, own_config: AuthConfig
) -> AuthCredential | None:
    """The credential ``answer`` leads to with the asker's own config ``own_config`` (its
    client: an OAuth2 code exchanged for tokens), saved with the credential service; None
    if the answer lacks a secret it had before it was stored (ask the user again). Raises
    ``CredentialError`` if it cannot be obtained."""
    own = own_config.raw_auth_credential
    config = answer.config.model_copy(update={"raw_auth_credential": own})
    try:
        credential = await complete_credential(config)
    except InvalidCredentialError:
        if answer.whole:
            raise
        logger.info("the stored answer for %r lacks its secret: asking again", config.key)
        return None
    if ctx.credential_service is not None:
        completed = config.model_copy(update={"exchanged_auth_credential": credential})
        await ctx.credential_service.save_credential(completed, Context(ctx))
    return credential
