"""SkillToolset through a Runner: listing, loading, resources, scripts (bounded in time and
output, off the event loop), tools a skill brings, lifecycles; on memory and SQLite."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn import Agent, Runner
from cairn.artifacts import InMemoryArtifactService
from cairn.code_executors import UnsafeLocalCodeExecutor
from cairn.events.event import Event
from cairn.models.llm_request import LlmRequest
from cairn.sessions import BaseSessionService, InMemorySessionService, SqliteSessionService
from cairn.skills import Frontmatter, Skill, SkillRegistry, load_skills_from_dir
from cairn.skills.models import Resources, Script
from cairn.testing import Call, ScriptedLlm
from cairn.tools.skill_toolset import (
    DEFAULT_SKILL_SYSTEM_INSTRUCTION,
    SkillDiscoveryMode,
    SkillLifecycleConfig,
    SkillLifecycleMode,
    SkillToolset,
)

REPORT_MD = """---
name: csv-report
description: Summarise a CSV file.
metadata:
  adk_additional_tools: [word_count]
  adk_inject_state: true
---
Summarise for {customer}.
"""

SCRIPTS = {
    "summary.py": (
        "import argparse\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--rows')\np.add_argument('-s')\np.add_argument('rest', nargs='*')\n"
        "a = p.parse_args()\n"
        "print(f'rows={a.rows} s={a.s} rest={a.rest}')\n"
        "open('report.txt', 'w').write('the report')\n"
        "import os\nos.makedirs('out', exist_ok=True)\nopen('out/deep.csv', 'w').write('a,b')\n"
    ),
    "slow.sh": "while true; do sleep 1; done\n",
    "loud.py": "import sys\nsys.stdout.write('x' * 50000)\n",
    "fails.sh": "echo broken >&2\nexit 3\n",
    "wait_for_flag.py": (
        "import os, sys, time\n"
        "while not os.path.exists(sys.argv[1]):\n    time.sleep(0.01)\n"
        "print('saw the flag')\n"
    ),
    "notes.txt": "not a script type\n",
}


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "skills" / "csv-report"
    (folder / "scripts").mkdir(parents=True)
    (folder / "references").mkdir()
    (folder / "assets").mkdir()
    (folder / "SKILL.md").write_text(REPORT_MD)
    (folder / "references" / "format.md").write_text("one line per column")
    (folder / "assets" / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    for name, source in SCRIPTS.items():
        (folder / "scripts" / name).write_text(source)
    return tmp_path / "skills"


@pytest.fixture(params=["memory", "sqlite"])
async def service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    store: BaseSessionService = (
        SqliteSessionService(tmp_path / "s.db")
        if request.param == "sqlite"
        else InMemorySessionService()
    )
    yield store
    await store.close()


def word_count(text: str) -> int:
    """Counts the words of a text."""
    return len(text.split())


class Harness:
    """One agent with a SkillToolset, a scripted model, and its Runner."""

    def __init__(self, service: BaseSessionService, toolset: SkillToolset, script: list[Any]):
        self.model = ScriptedLlm(script=script)
        self.agent = Agent(name="analyst", model=self.model, tools=[toolset])
        self.service = service
        self.artifacts = InMemoryArtifactService()
        self.runner = Runner(
            app_name="skills",
            agent=self.agent,
            session_service=service,
            artifact_service=self.artifacts,
        )

    async def turn(self, text: str, session: str = "s") -> list[dict[str, Any]]:
        if (
            await self.service.get_session(app_name="skills", user_id="u", session_id=session)
            is None
        ):
            await self.service.create_session(
                app_name="skills", user_id="u", session_id=session, state={"customer": "Ada"}
            )
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events: list[Event] = [
            e
            async for e in self.runner.run_async(
                user_id="u", session_id=session, new_message=message
            )
        ]
        return [dict(r.response or {}) for e in events for r in e.get_function_responses()]

    def declared(self, call: int) -> list[str]:
        request = self.model.requests[call]
        tools = request.config.tools or []
        return [d.name for t in tools for d in (t.function_declarations or []) if d.name]


def run_call(path: str, **more: Any) -> Call:
    return Call("run_skill_script", skill_name="csv-report", file_path=path, **more)


async def test_list_load_and_read_resources(service: BaseSessionService, skills_dir: Path) -> None:
    toolset = SkillToolset(load_skills_from_dir(skills_dir), additional_tools=[word_count])
    h = Harness(
        service,
        toolset,
        [
            [Call("list_skills"), Call("load_skill", skill_name="csv-report")],
            [
                Call(
                    "load_skill_resource", skill_name="csv-report", file_path="references/format.md"
                ),
                Call("word_count", text="a b c"),
            ],
            "done",
        ],
    )
    listed, loaded, resource, counted = await h.turn("summarise")
    assert "<name>\ncsv-report\n</name>" in listed["result"]
    assert loaded["instructions"] == "Summarise for Ada."  # adk_inject_state
    assert loaded["frontmatter"]["name"] == "csv-report"
    assert resource == {
        "skill_name": "csv-report",
        "file_path": "references/format.md",
        "content": "one line per column",
    }
    assert counted == {"result": 3}
    assert "word_count" not in h.declared(0)  # offered once the skill is loaded
    assert "word_count" in h.declared(1)
    assert "run_skill_script" not in h.declared(0)  # no code executor: no scripts
    instruction = str(h.model.requests[0].config.system_instruction)
    assert "`load_skill`" in instruction and "`run_skill_script`" not in instruction
    assert "scripts you cannot run here" in instruction
    stored = await service.get_session(app_name="skills", user_id="u", session_id="s")
    assert stored is not None and stored.state["_adk_activated_skill_analyst"] == ["csv-report"]


async def test_the_activation_is_read_back_from_the_store(tmp_path: Path, skills_dir: Path) -> None:
    skills = load_skills_from_dir(skills_dir)
    async with SqliteSessionService(tmp_path / "kept.db") as first:
        h = Harness(
            first,
            SkillToolset(skills, additional_tools=[word_count]),
            [Call("load_skill", skill_name="csv-report"), "ok"],
        )
        await h.turn("load it")
    async with SqliteSessionService(tmp_path / "kept.db") as again:  # as another process would
        h = Harness(again, SkillToolset(skills, additional_tools=[word_count]), ["hi"])
        await h.turn("next")
        assert "word_count" in h.declared(0)


async def test_errors_of_names_and_paths(service: BaseSessionService, skills_dir: Path) -> None:
    toolset = SkillToolset(load_skills_from_dir(skills_dir))
    h = Harness(
        service,
        toolset,
        [
            [
                Call("load_skill", skill_name="nope"),
                Call("load_skill"),
                Call("load_skill_resource", skill_name="csv-report", file_path="../etc/passwd"),
            ],
            [Call("load_skill_resource", skill_name="csv-report", file_path="references/x.md")],
            [Call("load_skill_resource", skill_name="csv-report", file_path="assets/y.md")],
            "done",
        ],
    )
    missing, no_name, outside, not_found, again = await h.turn("go")
    assert missing == {"error": "Skill 'nope' not found.", "error_code": "SKILL_NOT_FOUND"}
    assert no_name["error_code"] == "INVALID_ARGUMENTS"
    assert outside["error_code"] == "INVALID_RESOURCE_PATH"
    assert not_found["error_code"] == "RESOURCE_NOT_FOUND"
    assert again["error_code"] == "RESOURCE_NOT_FOUND_FATAL"  # the second miss of the turn
    stored = await service.get_session(app_name="skills", user_id="u", session_id="s")
    assert stored is not None and not any(k.startswith("temp:") for k in stored.state)


async def test_a_binary_asset_is_shown_to_the_model(
    service: BaseSessionService, skills_dir: Path
) -> None:
    h = Harness(
        service,
        SkillToolset(load_skills_from_dir(skills_dir)),
        [
            Call("load_skill_resource", skill_name="csv-report", file_path="assets/chart.png"),
            "seen",
        ],
    )
    (response,) = await h.turn("show the chart")
    assert response["status"].startswith("Binary file detected")
    shown = h.model.requests[1].contents[-1]
    assert shown.parts and shown.parts[-1].inline_data is not None
    assert shown.parts[-1].inline_data.data == b"\x89PNG\r\n\x1a\n\x00"
    assert shown.parts[-1].inline_data.mime_type == "image/png"


async def test_scripts_run_with_arguments_and_save_what_they_make(
    service: BaseSessionService, skills_dir: Path
) -> None:
    toolset = SkillToolset(
        load_skills_from_dir(skills_dir),
        code_executor=UnsafeLocalCodeExecutor(),
        save_output_artifacts=True,
    )
    h = Harness(
        service,
        toolset,
        [
            [
                run_call(
                    "scripts/summary.py",
                    args={"rows": 3},
                    short_options={"s": "x"},
                    positional_args=["a", "b"],
                ),
                run_call("summary.py", args=["--rows", "7"]),
            ],
            "done",
        ],
    )
    first, second = await h.turn("report")
    assert first["stdout"] == "rows=3 s=x rest=['a', 'b']\n"
    assert (first["status"], first["stderr"]) == ("success", "")
    assert second["stdout"] == "rows=7 s=None rest=[]\n"
    assert first["saved_artifacts"] == ["report.txt", "out/deep.csv"]  # paths in its folder
    saved = await h.artifacts.load_artifact(
        app_name="skills", user_id="u", session_id="s", filename="report.txt"
    )
    assert saved is not None and saved.inline_data is not None
    assert saved.inline_data.data == b"the report"
    assert "run_skill_script" in h.declared(0)


async def test_a_script_is_stopped_at_its_timeout_and_its_output_is_capped(
    service: BaseSessionService, skills_dir: Path
) -> None:
    toolset = SkillToolset(
        load_skills_from_dir(skills_dir),
        code_executor=UnsafeLocalCodeExecutor(),
        script_timeout=0.5,
        max_script_output_bytes=1000,
    )
    h = Harness(
        service,
        toolset,
        [
            [run_call("slow.sh"), run_call("loud.py"), run_call("fails.sh"), run_call("notes.txt")],
            "done",
        ],
    )
    slow, loud, fails, unsupported = await h.turn("run them")
    assert slow["status"] == "error"
    assert "timed out after 0.5 seconds and was stopped" in slow["stderr"]
    assert loud["stdout"].startswith("x" * 1000)
    assert "the script wrote 50000 bytes; only the first 1000 are kept" in loud["stdout"]
    assert len(loud["stdout"]) < 1200
    assert fails["status"] == "error" and fails["stderr"] == "broken\nExit code 3"
    assert unsupported["error_code"] == "UNSUPPORTED_SCRIPT_TYPE"


async def test_a_script_runs_off_the_event_loop(tmp_path: Path, skills_dir: Path) -> None:
    """The script waits for a file that a task on the test's event loop writes: were the
    script run on the loop, the task could not run until the script timed out."""
    flag = tmp_path / "flag"
    toolset = SkillToolset(
        load_skills_from_dir(skills_dir),
        code_executor=UnsafeLocalCodeExecutor(),
        script_timeout=120,
    )
    h = Harness(
        InMemorySessionService(),
        toolset,
        [run_call("wait_for_flag.py", args=[str(flag)]), "done"],
    )

    async def raise_the_flag() -> None:
        while not h.model.requests:
            await asyncio.sleep(0)
        flag.write_text("up")

    (result,), _ = await asyncio.gather(h.turn("wait"), raise_the_flag())
    assert (result["status"], result["stdout"]) == ("success", "saw the flag\n")


async def test_the_agents_code_executor_runs_scripts_too(skills_dir: Path) -> None:
    toolset = SkillToolset(load_skills_from_dir(skills_dir))
    model = ScriptedLlm(script=[run_call("summary.py"), "done"])
    agent = Agent(name="a", model=model, tools=[toolset], code_executor=UnsafeLocalCodeExecutor())
    runner = Runner(app_name="x", agent=agent, session_service=InMemorySessionService())
    await runner.session_service.create_session(app_name="x", user_id="u", session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    (response,) = [r.response for e in events for r in e.get_function_responses()]
    assert response is not None and response["stdout"] == "rows=None s=None rest=[]\n"


async def test_eager_discovery_puts_the_catalog_in_the_instruction(skills_dir: Path) -> None:
    toolset = SkillToolset(
        load_skills_from_dir(skills_dir), discovery_mode=SkillDiscoveryMode.EAGER
    )
    h = Harness(InMemorySessionService(), toolset, ["hello"])
    await h.turn("hi")
    assert "list_skills" not in h.declared(0)
    instruction = str(h.model.requests[0].config.system_instruction)
    assert "<available_skills>" in instruction and "csv-report" in instruction
    assert DEFAULT_SKILL_SYSTEM_INSTRUCTION.startswith("You can use skills")


async def test_an_ephemeral_skill_is_released_after_its_turn(skills_dir: Path) -> None:
    lifecycle = SkillLifecycleConfig(default_mode=SkillLifecycleMode.EPHEMERAL)
    toolset = SkillToolset(
        load_skills_from_dir(skills_dir), additional_tools=[word_count], lifecycle_config=lifecycle
    )
    h = Harness(
        InMemorySessionService(),
        toolset,
        [
            Call("load_skill", skill_name="csv-report"),
            "loaded",
            "next turn",
            Call("unload_skill", skill_name="csv-report"),
            "ok",
        ],
    )
    (loaded,) = await h.turn("load")
    assert "released at the end of the current turn" in loaded["lifecycle_notice"]
    assert "word_count" in h.declared(1) and "unload_skill" in h.declared(0)
    await h.turn("again")
    assert "word_count" not in h.declared(2)  # another invocation: released
    pruned = [
        p.function_response.response
        for c in h.model.requests[2].contents
        for p in c.parts or []
        if p.function_response and p.function_response.name == "load_skill"
    ]
    assert pruned == [
        {"skill_name": "csv-report", "status": "unloaded", "notice": pruned[0]["notice"]}
    ]
    (unloaded,) = await h.turn("unload")
    assert unloaded == {
        "error": "Skill 'csv-report' is not active.",
        "error_code": "SKILL_NOT_ACTIVE",
    }


async def test_a_bounded_lifecycle_keeps_at_most_max_active_skills() -> None:
    def skill(name: str) -> Skill:
        return Skill(frontmatter=Frontmatter(name=name, description=name), instructions=name)

    lifecycle = SkillLifecycleConfig(default_mode=SkillLifecycleMode.BOUNDED, max_active_skills=2)
    toolset = SkillToolset([skill("a"), skill("b"), skill("c")], lifecycle_config=lifecycle)
    loads = [Call("load_skill", skill_name=n) for n in ("a", "b", "c")]
    h = Harness(InMemorySessionService(), toolset, [loads[0], loads[1], loads[2], "done"])
    _, _, third = await h.turn("load three")
    assert third["unloaded_skills"] == ["a"]
    stored = await h.service.get_session(app_name="skills", user_id="u", session_id="s")
    assert stored is not None and stored.state["_adk_activated_skill_analyst"] == ["b", "c"]


class Registry(SkillRegistry):
    async def get_skill(self, *, name: str) -> Skill:
        if name != "remote-skill":
            raise LookupError(name)
        return Skill(
            frontmatter=Frontmatter(name=name, description="From the registry."),
            instructions="Remote steps.",
            resources=Resources(scripts={"go.py": Script(src="print(1)")}),
        )

    async def search_skills(self, *, query: str) -> list[Frontmatter]:
        return [Frontmatter(name="remote-skill", description=f"Matches {query}.")]


async def test_a_registry_is_searched_and_loaded_from() -> None:
    toolset = SkillToolset(registry=Registry())
    h = Harness(
        InMemorySessionService(),
        toolset,
        [
            [
                Call("search_skills", query="reports"),
                Call("load_skill", skill_name="remote-skill"),
                Call("load_skill", skill_name="other"),
            ],
            "ok",
        ],
    )
    found, loaded, failed = await h.turn("find one")
    assert found["result"][0]["name"] == "remote-skill"
    assert loaded["instructions"] == "Remote steps."
    assert failed["error_code"] == "REGISTRY_ERROR"


def test_construction_refuses_what_cairn_cannot_do(skills_dir: Path) -> None:
    skills = load_skills_from_dir(skills_dir)
    with pytest.raises(ValueError, match="Duplicate skill name 'csv-report'"):
        SkillToolset([*skills, *skills])
    with pytest.raises(ValueError, match="give a code_executor instead"):
        SkillToolset(skills, environment=object())
    with pytest.raises(ValueError, match="revalidate_skills=True"):
        SkillToolset(skills, lifecycle_config=SkillLifecycleConfig(revalidate_skills=True))
    with pytest.raises(ValueError, match="max_active_skills must be at least 1"):
        SkillLifecycleConfig(max_active_skills=0)
    _ = LlmRequest  # the request type the toolset edits


async def test_a_registry_skill_is_fetched_once_per_turn() -> None:
    class Counting(Registry):
        fetched = 0

        async def get_skill(self, *, name: str) -> Skill:
            Counting.fetched += 1
            return await super().get_skill(name=name)

    toolset = SkillToolset(registry=Counting())
    loads = [Call("load_skill", skill_name="remote-skill")] * 3
    h = Harness(
        InMemorySessionService(),
        toolset,
        [*loads, "ok", Call("load_skill", skill_name="remote-skill"), "ok"],
    )
    await h.turn("load it three times")
    assert Counting.fetched == 1  # the loads and every later request of the turn share it
    await h.turn("and again")
    assert Counting.fetched == 2
