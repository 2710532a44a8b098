"""The runtime's records of its own side effects (``RECORD_FUNCTIONS``: a RemoteA2aAgent's
``cairn_a2a_send_message``, ``cairn_a2a_await_task``) are committed to the log and not given
to the caller of ``run_async``; an event that holds anything beside them is given whole.
tests/a2a/client shows it with a real remote agent; this shows the rule on its own."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path

from google.genai import types

from cairn import BaseAgent, Event, InvocationContext, Runner
from cairn.events.interrupts import A2A_AWAIT_TASK_FUNCTION, A2A_SEND_MESSAGE_FUNCTION
from cairn.sessions import SqliteSessionService


def call(name: str, call_id: str) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args={"n": 1}))


def result(name: str, call_id: str) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response={"ok": True})
    )


class Recorder(BaseAgent):
    """Records a call, a call beside a note, both calls' results, then answers."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        said = [
            [call(A2A_SEND_MESSAGE_FUNCTION, "c1")],
            [types.Part(text="a note"), call(A2A_AWAIT_TASK_FUNCTION, "c2")],
            [result(A2A_SEND_MESSAGE_FUNCTION, "c1"), result(A2A_AWAIT_TASK_FUNCTION, "c2")],
            [types.Part(text="done")],
        ]
        for parts in said:
            yield Event(author=self.name, content=types.Content(role="model", parts=parts))


async def test_records_are_logged_and_not_yielded_and_a_mixed_event_is_yielded_whole(
    tmp_path: Path,
) -> None:
    store = tmp_path / "sessions.db"
    runner = Runner(
        app_name="app", agent=Recorder(name="recorder"), session_service=SqliteSessionService(store)
    )
    await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
    message = types.UserContent("go")
    given = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    await runner.close()
    await runner.session_service.close()

    reader = SqliteSessionService(store)
    try:
        stored = await reader.get_session(app_name="app", user_id="u", session_id="s")
    finally:
        await reader.close()
    assert stored is not None
    logged = [e for e in stored.events if e.author == "recorder"]
    assert len(logged) == 4  # every record is in the log
    mixed, done = logged[1], logged[3]
    assert [e.id for e in given] == [mixed.id, done.id]
    assert given[0].content == mixed.content  # the note with its record call, as committed
    assert [p.text for p in given[0].content.parts or []] == ["a note", None]
