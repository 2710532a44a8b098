"""One step of a remote-agent scenario in its own process, on a shared store: the in-doubt
tests SIGKILL it in the middle of a call and run the next step in a new one.

``python worker.py STORE_URL CARD_URL STEP_JSON``; a step is ``{"say": text}``,
``{"answer": [[id, name, response]]}``, ``{"continue": invocation_id}`` or
``{"pending_only": true}``. Prints ``EVENT <json>`` per event as it comes, then
``ERROR <name> <text>`` if the Runner refused, then ``PENDING <json>``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.hitl.driver import run_step

from cairn import Runner
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.sessions.factory import session_service_from_url


async def main(store_url: str, card: str, step_json: str) -> None:
    step = json.loads(step_json)
    store = session_service_from_url(store_url)
    runner = Runner(
        app_name="app",
        agent=RemoteA2aAgent(name="helper", agent_card=card),
        session_service=store,
        auto_create_session=True,
        # A killed process holds the session's lease until it expires.
        session_lease_ttl=float(os.environ.get("CAIRN_A2A_TTL", "30")),
        session_busy_timeout=float(os.environ.get("CAIRN_A2A_WAIT", "0")),
    )
    # Events are printed as they come, so a kill mid-step still shows what came before.
    outcome = await run_step(runner, step, echo=True)
    if outcome.error:
        print(f"ERROR {outcome.error[0]} {outcome.error[1]}".replace("\n", " "), flush=True)
    print("PENDING " + json.dumps([i.model_dump(mode="json") for i in outcome.pending]), flush=True)
    await runner.close()
    await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
