"""One step of a human-in-the-loop scenario, in its own process (see driver.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

if os.environ.get("CAIRN_HITL_CLOCK_SHIFT"):  # a simulated clock: this process lives later
    import time

    _real_time, _shift = time.time, float(os.environ["CAIRN_HITL_CLOCK_SHIFT"])
    time.time = lambda: _real_time() + _shift

from tests.hitl.driver import credential_service_for, run_step
from tests.hitl.scenarios import APP, build

from cairn import Runner
from cairn.sessions.factory import session_service_from_url


async def main(store_url: str, scenario: str, step: str) -> None:
    store = session_service_from_url(store_url)
    runner = Runner(
        app_name=APP,
        agent=build(scenario),
        session_service=store,
        auto_create_session=True,
        credential_service=credential_service_for(store),
        # A crash test's killed process holds the session's lease until it expires.
        session_lease_ttl=float(os.environ.get("CAIRN_HITL_TTL", "30")),
        session_busy_timeout=float(os.environ.get("CAIRN_HITL_WAIT", "0")),
    )
    # Events are printed as they are yielded, so a crash mid-step still shows what came before.
    outcome = await run_step(runner, json.loads(step), echo=True)
    if outcome.error:
        print(f"ERROR {outcome.error[0]} {outcome.error[1]}".replace("\n", " "), flush=True)
    print("PENDING " + json.dumps([i.model_dump(mode="json") for i in outcome.pending]))
    await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
