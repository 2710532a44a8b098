"""The handle a callback, tool or node gets: state reads and writes, and the actions it records."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from google.genai import types

from cairn.agents.callback_hook import CallbackInfo
from cairn.artifacts.errors import ArtifactServiceMissingError
from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_tool import AuthConfig
from cairn.events.event import Event
from cairn.events.event_actions import EventActions, ToolConfirmation
from cairn.memory.base_memory_service import BaseMemoryService
from cairn.memory.errors import MemoryServiceMissingError
from cairn.memory.memory_entry import MemoryEntry, SearchMemoryResponse
from cairn.sessions.session import Session
from cairn.sessions.state import State

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext
    from cairn.agents.run_config import RunConfig


class NodeRunner(Protocol):
    """What runs a node for ``Context.run_node`` (a workflow gives one to each node it runs)."""

    async def __call__(
        self,
        node: Any,
        node_input: Any,
        *,
        use_as_output: bool,
        run_id: str | None,
        use_sub_branch: bool,
        override_branch: str | None,
        raise_on_wait: bool,
    ) -> Any: ...


class Context:
    """One step's view of the invocation.

    ``state[k] = v`` records the change in ``actions.state_delta``; it is
    visible at once, to later reads through this context and in the
    invocation's ``session.state`` (as in ADK), and becomes durable when an
    event carrying these actions is appended.
    """

    def __init__(
        self,
        invocation_context: InvocationContext,
        *,
        event_actions: EventActions | None = None,
        function_call_id: str | None = None,
        tool_confirmation: ToolConfirmation | None = None,
        node_path: str = "",
        attempt_count: int = 1,
        resume_inputs: dict[str, Any] | None = None,
        auth_responses: dict[str, AuthCredential] | None = None,
        run_id: str | None = None,
        node_runner: NodeRunner | None = None,
    ) -> None:
        self._invocation_context = invocation_context
        self._node_runner = node_runner
        self._given_actions = event_actions
        self._function_call_id = function_call_id
        self._tool_confirmation = tool_confirmation
        self.node_path = node_path
        """The ``name@run`` path of the workflow node this context serves ('' outside one)."""
        self.attempt_count = attempt_count
        """1 on a node's first attempt, 2 on its first retry, ..."""
        self.resume_inputs = resume_inputs or {}
        """Answers to this node's input requests, by interrupt id (when it reruns on resume)."""
        self._auth_responses = auth_responses if auth_responses is not None else {}
        self.callback_info: CallbackInfo | None = None
        """Which callback is running with this context (None outside a callback)."""
        self.run_id = run_id
        """An id for this node run, where the caller gives one (ADK's keyword; the run's
        identity in cairn is ``node_path``)."""
        self.output: Any = None
        """A workflow node's output, when it sets it here instead of yielding it."""
        self.route: Any = None
        """A workflow node's route, when it sets it here instead of on an event."""

    async def run_node(
        self,
        node: Any,
        node_input: Any = None,
        *,
        use_as_output: bool = False,
        run_id: str | None = None,
        use_sub_branch: bool = False,
        override_branch: str | None = None,
        override_isolation_scope: str | None = None,
        raise_on_wait: bool = False,
    ) -> Any:
        """Run ``node`` (a node, function, agent, tool or workflow) as a child of this workflow
        node and return its output, as ADK's ``ctx.run_node`` does.

        The child's run is ``<this node's path>/<name>@<n>``, ``n`` counting this node's
        calls of that name (or ``<name>@<run_id>``; a ``run_id`` of your own must not be
        all digits), so when this node runs again on resume each call gets the same path
        and a child that finished is not run again: its recorded output is returned. The
        calling node needs ``rerun_on_resume=True``: a child that waits for input makes it
        wait, and it runs again once the answer comes. ``use_as_output`` makes the child's
        output this node's; ``use_sub_branch`` puts the child on a branch of its own
        (``override_branch`` names one). A child that fails raises ``DynamicNodeFailError``.
        Always ``await`` it directly (not in a task of your own, which nothing supervises).
        """
        del override_isolation_scope  # ADK's isolation scopes; a cairn branch isolates
        if self._node_runner is None:
            raise RuntimeError(
                "ctx.run_node works inside a workflow node (a function or BaseNode a Workflow "
                "runs, with rerun_on_resume=True); this context serves "
                f"{self.agent_name!r} outside one. Make the caller a node of a Workflow."
            )
        return await self._node_runner(
            node,
            node_input,
            use_as_output=use_as_output,
            run_id=run_id,
            use_sub_branch=use_sub_branch,
            override_branch=override_branch,
            raise_on_wait=raise_on_wait,
        )

    @property
    def invocation_context(self) -> InvocationContext:
        return self._invocation_context

    # Made at first use: most contexts (one per model call for its tools, one per callback
    # hook) are never written through.
    @functools.cached_property
    def _event_actions(self) -> EventActions:
        return self._given_actions if self._given_actions is not None else EventActions()

    @functools.cached_property
    def _state(self) -> State:
        return State(self._invocation_context.session.state, self._event_actions.state_delta)

    @property
    def state(self) -> State:
        """Session state (all scopes) overlaid by this step's pending writes."""
        return self._state

    @property
    def actions(self) -> EventActions:
        """The actions this step has recorded so far (in-place edits and deletions included).

        A key deleted through ``state`` (``del``/``pop``) leaves ``state_delta`` for
        ``removed_state_keys``, which is how an event commits a deletion.
        """
        self._state.flush_in_place_edits()
        actions = self._event_actions
        removed = self._state.removed_keys()
        if removed or actions.removed_state_keys:
            delta = actions.state_delta
            for key in removed:
                if key in delta and delta[key] is None:
                    del delta[key]
            earlier = [key for key in actions.removed_state_keys or () if key not in delta]
            added = sorted(key for key in removed if key not in earlier)
            actions.removed_state_keys = [*earlier, *added] or None
        return actions

    @property
    def session(self) -> Session:
        return self._invocation_context.session

    @property
    def invocation_id(self) -> str:
        return self._invocation_context.invocation_id

    @property
    def agent_name(self) -> str:
        return self._invocation_context.agent.name

    @property
    def branch(self) -> str | None:
        return self._invocation_context.branch

    @property
    def user_content(self) -> types.Content | None:
        return self._invocation_context.user_content

    @property
    def run_config(self) -> RunConfig:
        return self._invocation_context.run_config

    @property
    def function_call_id(self) -> str | None:
        """The id of the function call this context serves (tools only)."""
        return self._function_call_id

    @property
    def tool_confirmation(self) -> ToolConfirmation | None:
        """The confirmation the user gave for this tool call, if any."""
        return self._tool_confirmation

    @property
    def idempotency_key(self) -> str | None:
        """A key for this tool call's external effects: the same whenever the call runs.

        ``<invocation_id>:<function_call_id>``. Pass it to the services a tool
        calls (payments, tickets, email) so that a call re-run after a crash
        (see ``idempotent=True``) does its effect at most once.
        """
        if self._function_call_id is None:
            return None
        return f"{self.invocation_id}:{self._function_call_id}"

    def request_confirmation(self, *, hint: str | None = None, payload: Any = None) -> None:
        """Pause this tool call until a human approves or rejects it.

        The tool should return after calling this (its result is not used).
        When the answer arrives the tool runs again with ``tool_confirmation``
        set: ``confirmed`` and the ``payload`` the human sent back.
        """
        if self._function_call_id is None:
            raise ValueError(
                "request_confirmation() pauses a tool call, so it works only in a tool's "
                "context (this context serves no function call)"
            )
        self.actions.requested_tool_confirmations[self._function_call_id] = ToolConfirmation(
            hint=hint or "", payload=payload
        )

    # -- credentials --------------------------------------------------------------------------
    def request_credential(self, auth_config: AuthConfig) -> None:
        """Pause this tool call until the user supplies the credential ``auth_config`` needs.

        The tool should return after calling this. The request is an
        ``adk_request_credential`` interrupt carrying ``auth_config`` without its
        secrets (for OAuth2, with the ``auth_uri`` to send the user to). When the
        answer arrives the tool runs again; when it asks again, cairn completes the
        answer with the config it passes here (its client secret exchanges an OAuth2
        code for tokens), saves it with the Runner's ``credential_service`` if there
        is one, and runs the tool once more: ``get_auth_response(auth_config)`` then
        returns the credential.
        """
        if self._function_call_id is None:
            raise ValueError(
                "request_credential() pauses a tool call, so it works only in a tool's "
                "context (this context serves no function call)"
            )
        self.actions.requested_auth_configs[self._function_call_id] = auth_config

    def get_auth_response(self, auth_config: AuthConfig) -> AuthCredential | None:
        """The credential the user supplied for ``auth_config`` in answer to this call's
        request (None before that)."""
        return self._auth_responses.get(auth_config.key)

    async def load_credential(self, auth_config: AuthConfig) -> AuthCredential | None:
        """The credential saved for ``auth_config`` for this app and user (refreshed if it
        expired and can be), from the Runner's ``credential_service``; None without one."""
        service = self._invocation_context.credential_service
        if service is None:
            return None
        found: AuthCredential | None = await service.load_credential(auth_config, self)
        return found

    async def save_credential(self, auth_config: AuthConfig) -> None:
        """Keep ``auth_config.exchanged_auth_credential`` for this app and user."""
        service = self._invocation_context.credential_service
        if service is None:
            raise ValueError(
                "Credential service is not initialized: save_credential() needs one; give "
                "the Runner "
                "credential_service=InMemoryCredentialService() or "
                "SessionStoreCredentialService(session_service)"
            )
        await service.save_credential(auth_config, self)

    # -- artifacts ----------------------------------------------------------------------------
    def _artifact_service(self, operation: str) -> Any:
        service = self._invocation_context.artifact_service
        if service is None:
            raise ArtifactServiceMissingError(operation, self.agent_name)
        return service

    async def save_artifact(
        self,
        filename: str,
        artifact: types.Part,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        """Save ``artifact`` as the next version of ``filename`` in this session (a ``user:``
        filename: for this user) and record it in ``actions.artifact_delta``; return the
        version (0 for the first save)."""
        service = self._artifact_service("save_artifact")
        session = self.session
        version = int(
            await service.save_artifact(
                app_name=self._invocation_context.app_name,
                user_id=self._invocation_context.user_id,
                session_id=session.id,
                filename=filename,
                artifact=artifact,
                custom_metadata=custom_metadata,
            )
        )
        self.actions.artifact_delta[filename] = version
        return version

    async def load_artifact(self, filename: str, version: int | None = None) -> types.Part | None:
        """The given version (default: the latest) of ``filename``; None if there is none."""
        service = self._artifact_service("load_artifact")
        session = self.session
        found: types.Part | None = await service.load_artifact(
            app_name=self._invocation_context.app_name,
            user_id=self._invocation_context.user_id,
            session_id=session.id,
            filename=filename,
            version=version,
        )
        return found

    async def list_artifacts(self) -> list[str]:
        """The filenames of this session's artifacts and of the user's ``user:`` ones."""
        service = self._artifact_service("list_artifacts")
        session = self.session
        found: list[str] = await service.list_artifact_keys(
            app_name=self._invocation_context.app_name,
            user_id=self._invocation_context.user_id,
            session_id=session.id,
        )
        return found

    # -- memory -------------------------------------------------------------------------------
    def _memory_service(self, operation: str) -> BaseMemoryService:
        service = self._invocation_context.memory_service
        if service is None:
            raise MemoryServiceMissingError(operation, self.agent_name)
        found: BaseMemoryService = service
        return found

    async def search_memory(self, query: str) -> SearchMemoryResponse:
        """The current user's memories that match ``query``, best first."""
        service = self._memory_service("search_memory")
        session = self.session
        return await service.search_memory(
            app_name=session.app_name, user_id=session.user_id, query=query
        )

    async def add_session_to_memory(self) -> None:
        """Remember this session's events (only those not remembered yet are added)."""
        await self._memory_service("add_session_to_memory").add_session_to_memory(self.session)

    async def add_events_to_memory(
        self, *, events: Sequence[Event], custom_metadata: Mapping[str, Any] | None = None
    ) -> None:
        """Remember just these events, for this session's app and user."""
        session = self.session
        await self._memory_service("add_events_to_memory").add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            events=events,
            custom_metadata=custom_metadata,
        )

    async def add_memory(
        self, *, memories: Sequence[MemoryEntry], custom_metadata: Mapping[str, Any] | None = None
    ) -> None:
        """Remember these entries as given, for this session's app and user."""
        session = self.session
        await self._memory_service("add_memory").add_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            memories=memories,
            custom_metadata=custom_metadata,
        )

    @property
    def custom_metadata(self) -> dict[str, Any]:
        """Metadata shared by every step of this invocation (not stored): it starts as a copy
        of ``RunConfig.custom_metadata``; a callback or tool may add to it for later steps."""
        metadata = self._invocation_context.custom_metadata
        if metadata is None:
            metadata = self._invocation_context.custom_metadata = {}
        return metadata

    @property
    def end_invocation(self) -> bool:
        return self._invocation_context.end_invocation

    @end_invocation.setter
    def end_invocation(self, value: bool) -> None:
        self._invocation_context.end_invocation = value


CallbackContext = Context
"""ADK's name for the context a callback receives."""

ToolContext = Context
"""ADK's name for the context a tool receives."""
