"""``AgentCardBuilder``: an A2A agent card made from the agent itself.

The card names the agent and says what it can do: one skill for the agent (its
description), one per tool, one per sub-agent (each with the sub-agent's own skills folded
in); the interfaces it is served on (JSON-RPC, and HTTP+JSON when given); and its
capabilities: streaming, push notifications, and the extension saying that this server
starts at most one run per message id (a client may resend a message after a crash). The
card is public, so it says only what the agent's descriptions say, never its instructions.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from a2a import types as a2a_types
from a2a.utils.constants import TransportProtocol

from cairn.agents.base_agent import BaseAgent
from cairn.agents.llm_agent import LlmAgent
from cairn.tools.base_tool import BaseTool, BaseToolset

logger = logging.getLogger(__name__)

IDEMPOTENT_MESSAGES_EXTENSION = "https://github.com/cairn-agents/cairn/a2a/idempotent-messages/v1"
"""A server that lists this extension in its card starts at most one run per message id: a
client may resend a message (same ``messageId``) when it does not know whether the first
send arrived, and gets the task the first one made."""

PROTOCOL_VERSION = "1.0"


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n\n")[0].replace("\n", " ").strip()


def _tool_name_and_description(tool: Any) -> tuple[str, str] | None:
    if isinstance(tool, BaseTool):
        return tool.name, _first_line(tool.description) or f"Tool: {tool.name}"
    if isinstance(tool, BaseToolset):
        name = type(tool).__name__
        return name, _first_line(inspect.getdoc(tool)) or f"Toolset: {name}"
    if callable(tool):
        name = getattr(tool, "__name__", type(tool).__name__)
        return name, _first_line(inspect.getdoc(tool)) or f"Tool: {name}"
    return None


def _skills(agent: BaseAgent) -> list[a2a_types.AgentSkill]:
    kind = "llm" if isinstance(agent, LlmAgent) else type(agent).__name__.lower()
    skills = [
        a2a_types.AgentSkill(
            id=agent.name,
            name="model" if isinstance(agent, LlmAgent) else agent.name,
            description=_first_line(agent.description) or f"The agent {agent.name}",
            tags=[kind],
        )
    ]
    for tool in getattr(agent, "tools", None) or []:
        found = _tool_name_and_description(tool)
        if found is None:
            continue
        name, description = found
        skills.append(
            a2a_types.AgentSkill(
                id=f"{agent.name}-{name}", name=name, description=description, tags=["llm", "tools"]
            )
        )
    for child in agent.sub_agents:
        for skill in _skills(child):
            skills.append(
                a2a_types.AgentSkill(
                    id=f"{child.name}_{skill.id}",
                    name=f"{child.name}: {skill.name}",
                    description=skill.description,
                    tags=[f"sub_agent:{child.name}", *skill.tags],
                )
            )
    return skills


class AgentCardBuilder:
    """Builds the card of ``agent`` served at ``rpc_url`` (ADK's keyword arguments)."""

    def __init__(
        self,
        *,
        agent: BaseAgent,
        rpc_url: str | None = None,
        capabilities: a2a_types.AgentCapabilities | None = None,
        doc_url: str | None = None,
        provider: a2a_types.AgentProvider | None = None,
        agent_version: str | None = None,
        security_schemes: dict[str, a2a_types.SecurityScheme] | None = None,
        default_skill_security: list[dict[str, list[str]]] | None = None,
        rest_url: str | None = None,
    ) -> None:
        if not isinstance(agent, BaseAgent):
            raise TypeError(
                f"AgentCardBuilder needs an agent (BaseAgent, LlmAgent or Workflow); got "
                f"{type(agent).__name__}"
            )
        self._agent = agent
        self._rpc_url = rpc_url or "http://localhost:80/a2a"
        self._rest_url = rest_url
        self._capabilities = capabilities
        self._doc_url = doc_url
        self._provider = provider
        self._version = agent_version or "0.0.1"
        self._security_schemes = security_schemes
        self._skill_security = default_skill_security

    def capabilities(self) -> a2a_types.AgentCapabilities:
        """Streaming, push notifications, and the idempotent-messages extension."""
        if self._capabilities is not None:
            return self._capabilities
        return a2a_types.AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extensions=[
                a2a_types.AgentExtension(
                    uri=IDEMPOTENT_MESSAGES_EXTENSION,
                    description="A message resent with the same messageId does not start "
                    "a second run: the server answers with the task the first one made.",
                    required=False,
                )
            ],
        )

    def build_now(self) -> a2a_types.AgentCard:
        """The card (``build`` without awaiting: nothing here waits)."""
        interfaces = [
            a2a_types.AgentInterface(
                url=self._rpc_url.rstrip("/"),
                protocol_binding=TransportProtocol.JSONRPC,
                protocol_version=PROTOCOL_VERSION,
            )
        ]
        if self._rest_url is not None:
            interfaces.append(
                a2a_types.AgentInterface(
                    url=self._rest_url.rstrip("/"),
                    protocol_binding=TransportProtocol.HTTP_JSON,
                    protocol_version=PROTOCOL_VERSION,
                )
            )
        skills = _skills(self._agent)
        if self._skill_security:
            for skill in skills:
                for requirement in self._skill_security:
                    wanted = skill.security_requirements.add()
                    for wanted_scheme, scopes in requirement.items():
                        wanted.schemes[wanted_scheme].list.extend(scopes)
        card = a2a_types.AgentCard(
            name=self._agent.name,
            description=_first_line(self._agent.description) or "A cairn agent",
            version=self._version,
            supported_interfaces=interfaces,
            capabilities=self.capabilities(),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=skills,
        )
        if self._provider is not None:
            card.provider.CopyFrom(self._provider)
        if self._doc_url:
            card.documentation_url = self._doc_url
        for scheme_name, scheme in (self._security_schemes or {}).items():
            card.security_schemes[scheme_name].CopyFrom(scheme)
        return card

    async def build(self) -> a2a_types.AgentCard:
        """The card (ADK's method)."""
        return self.build_now()
