"""A ledger whose transfer tool kills its own server process the first time it runs, as a
crash mid-call would: the call is in the log, its result never is.

``CAIRN_TEST_LEDGER_RUNS`` names a file that gets a line each time the tool body starts.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from cairn import Agent
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm


def transfer(amount: int) -> dict[str, Any]:
    """Move money (not idempotent: a second run moves it twice)."""
    runs = Path(os.environ["CAIRN_TEST_LEDGER_RUNS"])
    first = not runs.exists()
    with runs.open("a") as out:
        out.write(f"transfer {amount}\n")
    if first:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"moved": amount}


def respond(request: LlmRequest) -> Any:
    last = request.contents[-1].parts[-1]
    if last.function_response is not None:
        return f"Moved: {last.function_response.response}."
    return Call("transfer", amount=int((last.text or "0").split()[-1]))


root_agent = Agent(name="ledger", model=ScriptedLlm(respond=respond), tools=[transfer])
