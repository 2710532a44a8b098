"""The child process of ``bench/stores.py``'s first-load rows: one fresh process's first load.

``python bench/first_load.py STORE WHERE APP USER SESSION`` imports cairn, builds the store
the way an application does (``sqlite``, ``sqlite-normal``: ``SqliteSessionService(WHERE,
synchronous=...)`` on the file ``WHERE``; ``postgres``, ``mariadb``:
``DatabaseSessionService(WHERE)`` on the URL ``WHERE``) and calls ``get_session`` once (no
config: every event). As soon as the session is loaded it writes one JSON line to stdout,
which is where the parent stops its clock: ``events`` (the count loaded, which the parent
checks), ``imports_ns`` (``import cairn`` and its sessions package), ``build_ns`` (the
store's constructor) and ``get_ns`` (the ``get_session`` call alone), each timed with
``time.perf_counter_ns()`` in this process. Then it closes the store and exits.
"""

from __future__ import annotations

import time

STARTED_NS = time.perf_counter_ns()  # the interpreter is up; nothing of cairn imported yet

import asyncio  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402


async def first_load(store: str, where: str, app: str, user: str, session_id: str) -> None:
    t0 = time.perf_counter_ns()
    import cairn  # noqa: F401  (what an application imports first)
    from cairn.sessions import DatabaseSessionService, SqliteSessionService

    t1 = time.perf_counter_ns()
    service: Any
    if store in ("sqlite", "sqlite-normal"):
        synchronous = "NORMAL" if store == "sqlite-normal" else "FULL"
        service = SqliteSessionService(where, synchronous=synchronous)
    else:
        service = DatabaseSessionService(where)
    t2 = time.perf_counter_ns()
    session = await service.get_session(app_name=app, user_id=user, session_id=session_id)
    t3 = time.perf_counter_ns()
    try:
        found = {
            "imports_ns": t1 - t0,
            "build_ns": t2 - t1,
            "get_ns": t3 - t2,
            "before_imports_ns": t0 - STARTED_NS,
            "events": None if session is None else len(session.events),
        }
        sys.stdout.write(json.dumps(found) + "\n")
        sys.stdout.flush()
    finally:
        await service.close()


def main() -> int:
    store, where, app, user, session_id = sys.argv[1:6]
    asyncio.run(first_load(store, where, app, user, session_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
