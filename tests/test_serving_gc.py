"""A server cairn builds prepares the garbage collector when it starts (cairn.serving_gc):
the objects of startup are frozen out of collections and the youngest generation is given
room for a few requests. Each case runs in a fresh interpreter (the collector is global)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

STARTS = {
    "to_a2a": """
        from cairn import Agent
        from cairn.a2a.utils.agent_to_a2a import to_a2a
        app = to_a2a(Agent(name="helper", model="gemini-2.5-flash"))
        lifespan = app.router.lifespan_context
    """,
    "api-server": """
        from cairn.server import ServerSettings, create_app
        app = create_app(ServerSettings())
        lifespan = app.router.lifespan_context
    """,
}


@pytest.mark.parametrize("server", sorted(STARTS))
def test_a_starting_server_freezes_startup_objects_and_widens_the_young_generation(
    server: str, tmp_path: Path
) -> None:
    script = textwrap.dedent(STARTS[server]) + textwrap.dedent(
        """
        import asyncio, gc, json
        from cairn.serving_gc import YOUNG_OBJECTS
        before = {"frozen": gc.get_freeze_count(), "young": gc.get_threshold()[0]}

        async def main():
            async with lifespan(app):
                during = {"frozen": gc.get_freeze_count(), "young": gc.get_threshold()[0]}
            async with lifespan(app):  # a second start keeps the threshold
                again = {"frozen": gc.get_freeze_count(), "young": gc.get_threshold()[0]}
            print(json.dumps({"before": before, "during": during, "again": again,
                              "want": YOUNG_OBJECTS}))

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT / 'src'}", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"]["frozen"] == 0 and seen["before"]["young"] < seen["want"]
    assert seen["during"]["frozen"] > 10_000  # the imported modules, at least
    assert seen["during"]["young"] == seen["want"]
    assert seen["again"]["young"] == seen["want"]
