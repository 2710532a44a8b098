"""The README's review workflow with two requests in one session: a second message while a
review waits starts a second run, and each review sends exactly the draft it showed.

Through the Python API (on the demo's SQLite store and in memory) and over HTTP (the
server serving ``examples/``, as ``cairn web examples/`` does).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import types
from tests.server.harness import asgi_client, run_body, sse_payloads

from cairn import Event, InMemorySessionService, Runner, SqliteSessionService
from cairn.events.interrupts import Interrupt
from cairn.models import LlmRequest
from cairn.sessions.base_session_service import BaseSessionService
from cairn.testing import ScriptedLlm
from cairn.workflow import Workflow

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
_spec = importlib.util.spec_from_file_location(
    "cairn_test_email_review_workflow", EXAMPLES / "email_review" / "workflow.py"
)
assert _spec is not None and _spec.loader is not None
email_review = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(email_review)

APP, USER, SESSION = "email_review", "ada", "s"
FIRST = "the quarterly report is ready for everyone to read"
SECOND = "the budget is cut by 10%"


def draft(request: str, feedback: str | None = None) -> str:
    revised = f"\n\n(Revised: {feedback}.)" if feedback else ""
    return f"Hello team,\n\n{request}.{revised}\n\nBest regards,\nAda"


def sent(events: list[Event]) -> list[Any]:
    """What ``send_email`` sent in these events (its completed runs' outputs)."""
    return [
        e.output
        for e in events
        if e.node_info.path.split("/")[-1].startswith("send_email@")
        and e.node_info.path in (e.node_info.output_for or [])
    ]


def store_of(kind: str, tmp_path: Path) -> BaseSessionService:
    if kind == "sqlite":
        return SqliteSessionService(tmp_path / "email-review.db")
    return InMemorySessionService()


class Reviews:
    """The workflow on one session, through ``Runner``."""

    def __init__(self, service: BaseSessionService, workflow: Workflow | None = None) -> None:
        agent = workflow if workflow is not None else email_review.build_workflow()
        self.runner = Runner(app_name=APP, agent=agent, session_service=service)

    async def run(self, message: types.Content) -> list[Event]:
        return [
            e
            async for e in self.runner.run_async(
                user_id=USER, session_id=SESSION, new_message=message
            )
        ]

    async def request(self, text: str) -> list[Event]:
        return await self.run(types.UserContent(text))

    async def answer(self, review: Interrupt, answer: str) -> list[Event]:
        reply = types.FunctionResponse(id=review.id, name=review.name, response={"result": answer})
        return await self.run(
            types.Content(role="user", parts=[types.Part(function_response=reply)])
        )

    async def pending(self) -> list[Interrupt]:
        return await self.runner.list_pending_interrupts(user_id=USER, session_id=SESSION)


@pytest.fixture(params=["sqlite", "memory"])
async def reviews(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    service = store_of(request.param, tmp_path)
    await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    yield Reviews(service)
    await service.close()


async def test_approving_the_first_review_sends_the_first_draft(reviews: Reviews) -> None:
    await reviews.request(FIRST)
    await reviews.request(SECOND)  # a second message while the first review waits
    first, second = await reviews.pending()
    assert first.invocation_id != second.invocation_id  # two runs, each paused
    assert (first.payload, second.payload) == ({"draft": draft(FIRST)}, {"draft": draft(SECOND)})

    assert sent(await reviews.answer(first, "approve")) == [f"SENT:\n{draft(FIRST)}"]
    assert [i.id for i in await reviews.pending()] == [second.id]  # still waiting, untouched
    assert sent(await reviews.answer(second, "approve")) == [f"SENT:\n{draft(SECOND)}"]
    assert await reviews.pending() == []


async def test_the_later_review_answered_first_sends_its_own_draft(reviews: Reviews) -> None:
    await reviews.request(FIRST)
    await reviews.request(SECOND)
    first, second = await reviews.pending()
    assert sent(await reviews.answer(second, "approve")) == [f"SENT:\n{draft(SECOND)}"]
    assert sent(await reviews.answer(first, "approve")) == [f"SENT:\n{draft(FIRST)}"]


async def test_feedback_revises_the_draft_of_the_review_it_answers(reviews: Reviews) -> None:
    await reviews.request(FIRST)
    await reviews.request(SECOND)
    first, second = await reviews.pending()
    await reviews.answer(first, "mention the Friday deadline")
    waiting = await reviews.pending()
    assert [i.id for i in waiting] == [second.id, waiting[1].id]  # the second waits on
    (revised,) = [i for i in waiting if i.invocation_id == first.invocation_id]
    assert revised.payload == {"draft": draft(FIRST, "mention the Friday deadline")}
    assert revised.node_path.endswith("request_review@2")

    assert sent(await reviews.answer(second, "approve")) == [f"SENT:\n{draft(SECOND)}"]
    done = await reviews.answer(revised, "approve")
    assert sent(done) == [f"SENT:\n{draft(FIRST, 'mention the Friday deadline')}"]
    assert await reviews.pending() == []


async def test_a_rejected_review_discards_only_its_own_draft(reviews: Reviews) -> None:
    await reviews.request(FIRST)
    await reviews.request(SECOND)
    first, second = await reviews.pending()
    rejected = await reviews.answer(first, "reject")
    assert sent(rejected) == [] and rejected[-1].output == "The draft was discarded."
    assert sent(await reviews.answer(second, "approve")) == [f"SENT:\n{draft(SECOND)}"]


# -- over HTTP ----------------------------------------------------------------------------------
SESSION_URL = f"/apps/{APP}/users/ada/sessions/{SESSION}"


async def answer_over_http(
    api: httpx.AsyncClient, review: dict[str, Any], answer: str
) -> list[Any]:
    response = await api.post(
        f"/cairn{SESSION_URL}/interrupts/{review['id']}", json={"response": answer}
    )
    assert response.status_code == 200, response.text
    events = [json.loads(payload) for payload in sse_payloads(response.text)]
    return [
        e["output"]
        for e in events
        if (path := e.get("nodeInfo", {}).get("path", "")).split("/")[-1].startswith("send_email@")
        and path in e["nodeInfo"].get("outputFor", [])
    ]


async def test_over_http_each_review_sends_the_draft_it_showed() -> None:
    async with asgi_client(agents_dir=EXAMPLES) as api:
        created = await api.post(f"/apps/{APP}/users/ada/sessions", json={"sessionId": SESSION})
        assert created.status_code == 200, created.text
        for request in (FIRST, SECOND):  # `/run` twice on one session
            ran = await api.post("/run", json=run_body(APP, SESSION, request))
            assert ran.status_code == 200, ran.text
        first, second = (await api.get(f"/cairn{SESSION_URL}/interrupts")).json()
        assert first["payload"] == {"draft": draft(FIRST)}
        assert second["payload"] == {"draft": draft(SECOND)}

        assert await answer_over_http(api, first, "approve") == [f"SENT:\n{draft(FIRST)}"]
        waiting = (await api.get(f"/cairn{SESSION_URL}/interrupts")).json()
        assert [i["id"] for i in waiting] == [second["id"]]
        assert await answer_over_http(api, second, "approve") == [f"SENT:\n{draft(SECOND)}"]
        assert (await api.get(f"/cairn{SESSION_URL}/interrupts")).json() == []


async def test_with_an_llm_drafting_each_review_sends_its_own_draft() -> None:
    """The LLM variant (``CAIRN_MODEL``): the agent node gets the request, or the request,
    its draft and the feedback as JSON, and outputs the draft; nothing goes through state."""

    def write(request: LlmRequest) -> str:
        asked = request.contents[-1].parts[0].text or ""
        if asked.startswith("{"):
            revision = json.loads(asked)
            return f"{revision['draft']} (now: {revision['feedback']})"
        return f"Dear all: {asked}"

    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    reviews = Reviews(service, email_review.build_workflow(ScriptedLlm(respond=write)))
    await reviews.request(FIRST)
    await reviews.request(SECOND)
    first, second = await reviews.pending()
    assert first.payload == {"draft": f"Dear all: {FIRST}"}
    await reviews.answer(first, "shorter")
    (revised,) = [i for i in await reviews.pending() if i.invocation_id == first.invocation_id]
    assert revised.payload == {"draft": f"Dear all: {FIRST} (now: shorter)"}
    assert sent(await reviews.answer(second, "approve")) == [f"SENT:\nDear all: {SECOND}"]
    assert sent(await reviews.answer(revised, "approve")) == [
        f"SENT:\nDear all: {FIRST} (now: shorter)"
    ]
    assert not (await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)).state
