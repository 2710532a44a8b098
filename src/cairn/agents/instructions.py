"""Fill ``{var}``, ``{var?}`` and ``{artifact.name}`` in instructions from state and artifacts."""

from __future__ import annotations

import re
from typing import Any

from cairn.errors import CairnError

_PLACEHOLDER = re.compile(r"\{+[^{}]*\}+")
_STATE_NAME = re.compile(r"^(?:(?:app|user|temp):)?[A-Za-z_][A-Za-z0-9_]*$")


class MissingInstructionVariableError(CairnError, KeyError):
    """An instruction names a state key or artifact that is not there."""

    def __str__(self) -> str:
        return str(self.args[0])


async def inject_session_state(template: str, context: Any, *, agent_name: str = "") -> str:
    """The template with each ``{name}`` replaced by ``context.state[name]``.

    ``{name?}`` renders empty when the key is missing; ``{artifact.file}`` is
    the text of that artifact. A missing required key is an error naming it.
    Braces around anything that is not a valid name are left as they are.
    """
    pieces: list[str] = []
    end = 0
    for match in _PLACEHOLDER.finditer(template):
        pieces.append(template[end : match.start()])
        end = match.end()
        raw = match.group()
        name = raw.lstrip("{").rstrip("}").strip()
        optional = name.endswith("?")
        name = name.removesuffix("?")
        if name.startswith("artifact."):
            pieces.append(
                await _artifact_text(context, name[len("artifact.") :], optional, agent_name)
            )
            continue
        if not _STATE_NAME.match(name):
            pieces.append(raw)
            continue
        if name in context.state:
            value = context.state[name]
            pieces.append("" if value is None else str(value))
        elif optional:
            pieces.append("")
        else:
            raise MissingInstructionVariableError(
                f"the instruction of agent {agent_name!r} uses {{{name}}} but the session state "
                f"has no key {name!r}. Set it before this agent runs, or write {{{name}?}} to "
                "render it empty when missing."
            )
    pieces.append(template[end:])
    return "".join(pieces)


async def _artifact_text(context: Any, filename: str, optional: bool, agent_name: str) -> str:
    service = context.invocation_context.artifact_service
    if service is None:
        if optional:
            return ""
        raise MissingInstructionVariableError(
            f"the instruction of agent {agent_name!r} uses {{artifact.{filename}}} but the "
            "Runner has no artifact_service; pass one to the Runner."
        )
    session = context.session
    part = await service.load_artifact(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.id,
        filename=filename,
    )
    if part is None:
        if optional:
            return ""
        raise MissingInstructionVariableError(
            f"the instruction of agent {agent_name!r} uses {{artifact.{filename}}} but there is "
            f"no artifact {filename!r} in session {session.id!r}."
        )
    return str(getattr(part, "text", None) or "")
