"""Artifacts through a Runner: tools and agents save them, instructions and the model read them."""

from __future__ import annotations

import io
import zipfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn import (
    BaseAgent,
    Context,
    Event,
    InMemoryRunner,
    InvocationContext,
    LlmAgent,
    Runner,
    ToolContext,
)
from cairn.artifacts import (
    ArtifactServiceMissingError,
    InMemoryArtifactService,
    SessionStoreArtifactService,
)
from cairn.sessions import InMemorySessionService, SqliteSessionService
from cairn.testing import Call, ScriptedLlm
from cairn.tools import FunctionTool, load_artifacts
from cairn.tools.load_artifacts_tool import LoadArtifactsTool


def message(value: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=value)])


async def run(runner: Runner, value: str, session_id: str = "s") -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session_id, new_message=message(value)
        )
    ]


async def write_report(topic: str, tool_context: ToolContext) -> dict[str, Any]:
    """Writes a report about a topic and keeps it as an artifact."""
    version = await tool_context.save_artifact(
        "report.txt", types.Part(text=f"All about {topic}."), custom_metadata={"topic": topic}
    )
    return {"version": version}


async def test_a_tool_saves_an_artifact_and_its_event_records_the_version(tmp_path: Path) -> None:
    async with SqliteSessionService(tmp_path / "store.db") as store:
        artifacts = SessionStoreArtifactService(store)
        llm = ScriptedLlm(
            script=[Call("write_report", topic="owls"), Call("write_report", topic="bats"), "ok"]
        )
        agent = LlmAgent(name="writer", model=llm, tools=[FunctionTool(write_report)])
        runner = Runner(
            app_name="demo",
            agent=agent,
            session_service=store,
            artifact_service=artifacts,
            auto_create_session=True,
        )
        events = await run(runner, "write")
        deltas = [e.actions.artifact_delta for e in events if e.actions.artifact_delta]
        assert deltas == [{"report.txt": 0}, {"report.txt": 1}]
        stored = await store.get_session(app_name="demo", user_id="u", session_id="s")
        assert stored is not None
        committed = [e.actions.artifact_delta for e in stored.events if e.actions.artifact_delta]
        assert committed == deltas
        part = await artifacts.load_artifact(
            app_name="demo", user_id="u", session_id="s", filename="report.txt", version=0
        )
        assert part == types.Part(text="All about owls.")
        info = await artifacts.get_artifact_version(
            app_name="demo", user_id="u", session_id="s", filename="report.txt"
        )
        assert info is not None and info.custom_metadata == {"topic": "bats"}


class Archivist(BaseAgent):
    """Saves the user's message as an artifact, then reads it back and lists what it has."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        step = Context(ctx)
        said = ctx.user_content.parts[0].text if ctx.user_content and ctx.user_content.parts else ""
        await step.save_artifact("user:last.txt", types.Part(text=said or ""))
        loaded = await step.load_artifact("user:last.txt")
        listed = await step.list_artifacts()
        reply = f"{loaded.text if loaded else None} {listed}"
        yield Event(
            content=types.Content(role="model", parts=[types.Part(text=reply)]),
            actions=step.actions,
        )


async def test_a_custom_agent_saves_and_loads_through_its_context() -> None:
    runner = InMemoryRunner(agent=Archivist(name="archivist"), app_name="demo")
    assert isinstance(runner.artifact_service, InMemoryArtifactService)
    for session_id in ("s1", "s2"):
        await runner.session_service.create_session(
            app_name="demo", user_id="u", session_id=session_id
        )
    first = await run(runner, "hello", "s1")
    second = await run(runner, "again", "s2")
    assert first[-1].actions.artifact_delta == {"user:last.txt": 0}
    assert second[-1].actions.artifact_delta == {"user:last.txt": 1}  # shared by the user
    assert second[-1].content is not None and second[-1].content.parts is not None
    assert second[-1].content.parts[0].text == "again ['user:last.txt']"


async def test_without_an_artifact_service_the_error_says_how_to_fix_it() -> None:
    session_service = InMemorySessionService()
    runner = Runner(
        app_name="demo",
        agent=Archivist(name="archivist"),
        session_service=session_service,
        auto_create_session=True,
    )
    with pytest.raises(
        ArtifactServiceMissingError, match=r"save_artifact\(\) in agent 'archivist'"
    ):
        await run(runner, "hello")


async def test_artifact_placeholders_fill_the_instruction() -> None:
    llm = ScriptedLlm(script=["done"])
    agent = LlmAgent(
        name="reviewer",
        model=llm,
        instruction="Review this report:\n{artifact.report.txt}\nNotes: {artifact.notes.txt?}|",
    )
    runner = InMemoryRunner(agent=agent, app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    await runner.artifact_service.save_artifact(
        app_name="demo",
        user_id="u",
        session_id="s",
        filename="report.txt",
        artifact=types.Part(text="Q3 revenue rose 4%."),
    )
    await run(runner, "review it")
    assert llm.requests[0].system_instruction_text == (
        "Review this report:\nQ3 revenue rose 4%.\nNotes: |"
    )


async def test_the_load_artifacts_tool_shows_the_model_what_it_asks_for() -> None:
    llm = ScriptedLlm(script=[Call("load_artifacts", artifact_names=["notes.md"]), "Got it."])
    agent = LlmAgent(name="reader", model=llm, tools=[load_artifacts])
    runner = InMemoryRunner(agent=agent, app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    for filename, part in (
        ("notes.md", types.Part(text="# Notes\nBuy milk.")),
        (
            "user:photo.png",
            types.Part(inline_data=types.Blob(data=b"\x89PNG", mime_type="image/png")),
        ),
    ):
        await runner.artifact_service.save_artifact(
            app_name="demo", user_id="u", session_id="s", filename=filename, artifact=part
        )
    events = await run(runner, "what do my notes say?")
    first, second = llm.requests
    assert "load_artifacts" in [d.name for d in first.function_declarations]
    assert '["notes.md", "user:photo.png"]' in first.system_instruction_text
    assert "Buy milk." not in first.system_instruction_text
    # As in ADK, the next request carries the artifact as a user content after the result.
    assert "Buy milk." not in second.system_instruction_text
    shown = second.contents[-1]
    assert shown.role == "user"
    assert [p.text for p in shown.parts] == ["Artifact notes.md is:", "# Notes\nBuy milk."]
    responses = [
        p.function_response
        for e in events
        if e.content and e.content.parts
        for p in e.content.parts
        if p.function_response
    ]
    assert responses[0].response is not None
    assert responses[0].response["artifact_names"] == ["notes.md"]
    # The log keeps the names only, not the artifact's contents.
    assert "Buy milk." not in "".join(e.model_dump_json() for e in events)


async def test_the_load_artifacts_tool_without_artifacts_adds_no_instruction() -> None:
    llm = ScriptedLlm(script=["nothing here"])
    runner = InMemoryRunner(
        agent=LlmAgent(name="r", model=llm, tools=[load_artifacts]), app_name="d"
    )
    await runner.session_service.create_session(app_name="d", user_id="u", session_id="s")
    await run(runner, "hi")
    assert "artifacts" not in llm.requests[0].system_instruction_text


async def shown_to_model(tool: LoadArtifactsTool, filename: str, part: types.Part) -> types.Part:
    """What the model is shown for ``filename`` after asking load_artifacts for it."""
    llm = ScriptedLlm(script=[Call("load_artifacts", artifact_names=[filename]), "ok"])
    runner = InMemoryRunner(agent=LlmAgent(name="r", model=llm, tools=[tool]), app_name="d")
    await runner.session_service.create_session(app_name="d", user_id="u", session_id="s")
    await runner.artifact_service.save_artifact(
        app_name="d", user_id="u", session_id="s", filename=filename, artifact=part
    )
    await run(runner, "look")
    heading, shown = llm.requests[1].contents[-1].parts
    assert heading.text == f"Artifact {filename} is:"
    return shown


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


WORD = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
SHEET = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


async def test_load_artifacts_shows_each_kind_of_artifact_as_a_model_accepts_it() -> None:
    tool = LoadArtifactsTool()
    # An image goes to the model inline (a multimodal model sees it), its MIME type
    # lower-cased.
    image = types.Part(inline_data=types.Blob(data=b"\x89PNG", mime_type="Image/PNG"))
    shown = await shown_to_model(tool, "photo.png", image)
    assert shown.inline_data is not None and shown.inline_data.mime_type == "image/png"
    # Text-like data and a Word document become text; other binary data is described.
    csv = types.Part(inline_data=types.Blob(data=b"a,b\n1,2", mime_type="text/csv"))
    assert (await shown_to_model(tool, "t.csv", csv)).text == "a,b\n1,2"
    docx = zipped(
        {
            "word/document.xml": f"<w:document {WORD}><w:body><w:p><w:r><w:t>Dear Ann,</w:t>"
            "</w:r></w:p><w:p><w:r><w:t>the report is </w:t></w:r><w:r><w:t>late.</w:t>"
            "</w:r></w:p></w:body></w:document>"
        }
    )
    word = types.Part(inline_data=types.Blob(data=docx, mime_type="application/octet-stream"))
    assert (await shown_to_model(tool, "letter.docx", word)).text == (
        "Dear Ann,\nthe report is late."
    )
    blob = types.Part(inline_data=types.Blob(data=b"\0" * 2048, mime_type="application/x-tar"))
    assert (await shown_to_model(tool, "a.tar", blob)).text == (
        "[Binary artifact: a.tar, type: application/x-tar, size: 2.0 KB. Content cannot be "
        "displayed inline.]"
    )


async def test_spreadsheets_are_read_on_request_and_process_artifact_decides() -> None:
    xlsx = zipped(
        {
            "xl/sharedStrings.xml": (
                f"<sst {SHEET}><si><t>city</t></si><si><t>Lisbon</t></si></sst>"
            ),
            "xl/worksheets/sheet1.xml": f"<worksheet {SHEET}><sheetData>"
            '<row><c t="s"><v>0</v></c><c t="inlineStr"><is><t>temp</t></is></c></row>'
            '<row><c t="s"><v>1</v></c><c><v>19</v></c></row></sheetData></worksheet>',
        }
    )
    sheet = types.Part(inline_data=types.Blob(data=xlsx, mime_type="application/vnd.ms-excel"))
    described = await shown_to_model(LoadArtifactsTool(), "t.xlsx", sheet)
    assert described.text is not None and described.text.startswith("[Binary artifact: t.xlsx")
    parsed = await shown_to_model(
        LoadArtifactsTool(enable_spreadsheet_parsing=True), "t.xlsx", sheet
    )
    assert parsed.text == "Sheet 1:\ncity,temp\nLisbon,19"

    seen: list[str] = []

    async def redact(part: types.Part, name: str) -> types.Part:
        seen.append(name)
        return types.Part(text=f"[{name} withheld]")

    text = types.Part(text="secret")
    shown = await shown_to_model(LoadArtifactsTool(process_artifact=redact), "n.txt", text)
    assert (shown.text, seen) == ("[n.txt withheld]", ["n.txt"])
