"""``to_a2a``: an agent (or app) as an ASGI app that A2A clients call.

The app serves the agent card at ``/.well-known/agent-card.json``, JSON-RPC at ``/`` and the
HTTP+JSON binding under ``/rest`` (see ``cairn.a2a.routes``). Tasks are runs in the Runner's
session store: give a ``runner`` on a SQLite or PostgreSQL store and tasks, pauses and
resubscriptions survive a restart and are shared by every process serving the same store.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from a2a import types as a2a_types
from google.genai import types as genai_types
from google.protobuf import json_format
from starlette.applications import Starlette

from cairn.a2a.handler import CairnRequestHandler
from cairn.a2a.routes import REST_SUFFIX, a2a_routes
from cairn.a2a.tasks import ArtifactLoader
from cairn.a2a.utils.agent_card_builder import AgentCardBuilder
from cairn.agents.base_agent import BaseAgent
from cairn.agents.run_config import RunConfig
from cairn.apps.app import App
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService
from cairn.runners.runner import Runner
from cairn.runs.in_process import InProcessExecutor
from cairn.runs.service import Runs
from cairn.serving_gc import prepare_gc_for_serving
from cairn.sessions.a2a_store import A2aTask, a2a_store_for
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.run_store import run_store_for

logger = logging.getLogger("cairn.a2a")


def load_agent_card(card: a2a_types.AgentCard | str | Path) -> a2a_types.AgentCard:
    """A card given as is, or read from a JSON file (``ValueError`` naming the file)."""
    if isinstance(card, a2a_types.AgentCard):
        return card
    try:
        data = json.loads(Path(card).read_text(encoding="utf-8"))
        return json_format.ParseDict(data, a2a_types.AgentCard(), ignore_unknown_fields=True)
    except (OSError, ValueError, json_format.ParseError) as exc:
        raise ValueError(
            f"the agent card {str(card)!r} cannot be read: {exc}; give an AgentCard or the "
            "path of an A2A 1.0 agent card JSON file"
        ) from exc


def artifact_loader_for(runner: Runner) -> Callable[[A2aTask], ArtifactLoader] | None:
    """Loads a task's saved artifacts with the Runner's artifact service (None: it has none)."""
    service = runner.artifact_service
    if service is None:
        return None

    def for_task(task: A2aTask) -> ArtifactLoader:
        async def load(filename: str, version: int) -> genai_types.Part | None:
            part: genai_types.Part | None = await service.load_artifact(
                app_name=task.app_name,
                user_id=task.user_id,
                session_id=task.session_id,
                filename=filename,
                version=version,
            )
            return part

        return load

    return for_task


def to_a2a(
    agent: BaseAgent | App,
    *,
    host: str = "localhost",
    port: int = 8000,
    protocol: str = "http",
    rpc_path: str = "",
    agent_card: a2a_types.AgentCard | str | None = None,
    push_config_store: Any = None,
    task_store: Any = None,
    runner: Runner | None = None,
    lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]] | None = None,
    agent_executor_factory: Any = None,
    security_schemes: dict[str, a2a_types.SecurityScheme] | None = None,
    default_skill_security: list[dict[str, list[str]]] | None = None,
    run_config: RunConfig | None = None,
) -> Starlette:
    """Serve ``agent`` (an agent, workflow or ``App``) over A2A; run the result with uvicorn.

    ``host``, ``port``, ``protocol`` and ``rpc_path`` make the URL the card advertises (and
    ``rpc_path`` the prefix the routes are under). Without ``runner``, the agent runs on
    in-memory stores (tasks last as long as the process). ``task_store``,
    ``push_config_store`` and ``agent_executor_factory`` are accepted for google-adk's
    signature and not used: cairn keeps tasks and push configs in its own store, beside the
    runs, and executes tasks as runs. ``run_config=RunConfig(streaming_mode=StreamingMode.SSE)``
    runs tasks streaming, and streams forward the model's partial text (a cairn addition:
    google-adk sets this in its executor's request converter); only ``streaming_mode`` is
    taken from it.
    """
    for name, value in (
        ("task_store", task_store),
        ("push_config_store", push_config_store),
        ("agent_executor_factory", agent_executor_factory),
    ):
        if value is not None:
            logger.warning(
                "to_a2a(%s=...) is not used: cairn keeps A2A tasks and push configs in the "
                "Runner's session store and executes tasks as runs",
                name,
            )
    root = agent.root_agent if isinstance(agent, App) else agent
    if runner is None:
        app_name = agent.name if isinstance(agent, App) else agent.name or "cairn_agent"
        services: dict[str, Any] = {
            "session_service": InMemorySessionService(),
            "artifact_service": InMemoryArtifactService(),
        }
        runner = (
            Runner(app=agent, **services)
            if isinstance(agent, App)
            else Runner(agent=agent, app_name=app_name, **services)
        )
    chosen = runner
    sessions = chosen.session_service

    async def runner_for(app_name: str) -> Runner:
        return chosen

    run_store = run_store_for(sessions)
    executor = InProcessExecutor(run_store, sessions, runner_for)
    runs = Runs(run_store, sessions, executor, runner_for)
    prefix = f"/{rpc_path.strip('/')}" if rpc_path.strip("/") else ""
    base_url = f"{protocol}://{host}:{port}{prefix}"
    if agent_card is not None:
        card = load_agent_card(agent_card)
    else:
        card = AgentCardBuilder(
            agent=root,
            rpc_url=f"{base_url}/",
            rest_url=f"{base_url}{REST_SUFFIX}",
            security_schemes=security_schemes,
            default_skill_security=default_skill_security,
        ).build_now()
    handler = CairnRequestHandler(
        app_name=chosen.app_name,
        runs=runs,
        a2a_store=a2a_store_for(sessions),
        agent_card=card,
        artifacts=artifact_loader_for(chosen),
        run_config=run_config,
    )

    @contextlib.asynccontextmanager
    async def serving(app: Starlette) -> AsyncIterator[None]:
        prepare_gc_for_serving()
        await executor.start()
        handler.start()  # watches again the tasks whose push notifications are due
        try:
            if lifespan is not None:
                async with lifespan(app):
                    yield
            else:
                yield
        finally:
            await handler.aclose()
            await executor.close()

    return Starlette(routes=a2a_routes(handler, card, prefix), lifespan=serving)
