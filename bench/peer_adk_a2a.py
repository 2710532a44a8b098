"""google-adk 2.13.0's side of A2A interop (tests/a2a/interop) and of bench/a2a_round_trips.py.

Runs inside bench/.peers/adk (made by bench/peers.py's ``ensure_venv``: google-adk[a2a]),
never in the project's venv, and never imports cairn. Two modes:

    python bench/peer_adk_a2a.py serve --port 8001 [--agent teller|approver]
                                       [--loop auto] [--http auto] [--dump events.json]

serves an ADK agent with ADK's ``to_a2a`` (JSON-RPC at ``/``, the card at
``/.well-known/agent-card.json``, A2A 1.0 and the 0.3 compatibility ADK enables) under
uvicorn, and prints ``READY http://127.0.0.1:<port>`` once it accepts connections. With
``--dump``, the events of every session it served are written there (JSON, normalized by
bench/a2a_events.py) when it shuts down (SIGTERM or SIGINT), so a test can compare what the
server recorded with what its client saw.

    python bench/peer_adk_a2a.py client --card http://127.0.0.1:8001/.well-known/agent-card.json
                                        --store client.db --session s1
                                        (--say "hello" | --answer '{"approved": true}')

runs one turn of an ADK agent, ``caller`` (a SequentialAgent), whose only sub-agent is ADK's
``RemoteA2aAgent`` named ``remote`` pointed at the card. ``--say`` sends a user text;
``--answer`` answers the pending long-running call (the remote task's ``input-required``)
with that JSON as the function response, which ADK sends to the same remote task. The
session lives in an ADK SqliteSessionService file (``--store``), so the turns of one
conversation may run in separate processes, with the remote side restarted in between.
Each event of the turn is printed as one JSON line ``EVENT {...}`` (normalized), then
``END {"events": n}``.

The agents (``teller``: one turn; ``approver``: pauses for input on a long-running tool)
and the client's ``caller`` come from bench/a2a_twins.py, built from google-adk's classes;
cairn's side builds the same source from cairn's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

import a2a_twins
from a2a_events import normalize_all, pending_call

FRAMEWORK = "google.adk"
APP = "peer"
USER = "ada"


def quiet() -> None:
    warnings.filterwarnings("ignore")
    logging.getLogger("google_adk").setLevel(logging.ERROR)


def serve(args: argparse.Namespace) -> None:
    agent = a2a_twins.agent(FRAMEWORK, args.agent)
    sessions = InMemorySessionService()
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)

    @contextlib.asynccontextmanager
    async def dump_on_exit(app: Any) -> AsyncIterator[None]:
        yield
        if args.dump:
            await dump(sessions, Path(args.dump))

    app = to_a2a(agent, host="127.0.0.1", port=args.port, runner=runner, lifespan=dump_on_exit)

    a2a_twins.serve(app, args.port, args.loop, args.http)


async def dump(sessions: InMemorySessionService, path: Path) -> None:
    """Every session's events, normalized, as {session id: [event, ...]}."""
    listed = await sessions.list_sessions(app_name=APP)
    found: dict[str, Any] = {}
    for summary in listed.sessions:
        session = await sessions.get_session(
            app_name=APP, user_id=summary.user_id, session_id=summary.id
        )
        if session is not None:
            events = [event.model_dump(mode="json", exclude_none=True) for event in session.events]
            found[session.id] = normalize_all(events)
    path.write_text(json.dumps(found, indent=1, sort_keys=True))


async def client(args: argparse.Namespace) -> None:
    caller = a2a_twins.caller(FRAMEWORK, args.card)
    sessions = SqliteSessionService(db_path=args.store)
    runner = Runner(app_name=APP, agent=caller, session_service=sessions)
    session = await sessions.get_session(app_name=APP, user_id=USER, session_id=args.session)
    if session is None:
        session = await sessions.create_session(app_name=APP, user_id=USER, session_id=args.session)
    if args.say is not None:
        message = types.Content(role="user", parts=[types.Part(text=args.say)])
    else:
        history = [event.model_dump(mode="json", exclude_none=True) for event in session.events]
        call = pending_call(history)
        if call is None:
            raise SystemExit("--answer: no long-running call is waiting in this session")
        response = types.FunctionResponse(
            id=call["id"], name=call["name"], response=json.loads(args.answer)
        )
        message = types.Content(role="user", parts=[types.Part(function_response=response)])
    seen = []
    async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message):
        seen.append(event.model_dump(mode="json", exclude_none=True))
    shown = normalize_all(seen)
    for event in shown:
        print("EVENT " + json.dumps(event, sort_keys=True), flush=True)
    print("END " + json.dumps({"events": len(shown)}), flush=True)
    await caller.sub_agents[0].cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    modes = parser.add_subparsers(dest="mode", required=True)
    serving = modes.add_parser("serve")
    serving.add_argument("--port", type=int, required=True)
    serving.add_argument("--agent", choices=("teller", "approver"), default="teller")
    serving.add_argument("--loop", default="auto", help="uvicorn's --loop (auto, uvloop, asyncio)")
    serving.add_argument("--http", default="auto", help="uvicorn's --http (auto, httptools, h11)")
    serving.add_argument("--dump", help="write every session's events here on shutdown")
    calling = modes.add_parser("client")
    calling.add_argument("--card", required=True, help="the remote agent card's URL")
    calling.add_argument("--store", required=True, help="the client's SQLite session file")
    calling.add_argument("--session", required=True)
    said = calling.add_mutually_exclusive_group(required=True)
    said.add_argument("--say", help="a user text to send")
    said.add_argument("--answer", help="JSON answering the pending long-running call")
    args = parser.parse_args()
    quiet()
    if args.mode == "serve":
        serve(args)
    else:
        asyncio.run(client(args))


if __name__ == "__main__":
    sys.exit(main())
