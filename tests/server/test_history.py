"""cairn's session routes: paging, summary, rewind, fork, verify, app graph, node statuses."""

from __future__ import annotations

import httpx
from tests.server.harness import run_body, server_app

from cairn.events.rewind import rewound_event_ids

CAIRN = "/cairn/apps/echo/users/ada/sessions"


async def converse(api: httpx.AsyncClient, session: str, *messages: str) -> list[str]:
    """Send each message; return the invocation ids."""
    ids = []
    for message in messages:
        (reply,) = (await api.post("/run", json=run_body("echo", session, message))).json()
        ids.append(reply["invocationId"])
    return ids


async def test_sessions_page_newest_first_with_cursor_and_total(api: httpx.AsyncClient) -> None:
    for name in ("a", "b", "c"):
        await api.post("/apps/echo/users/ada/sessions", json={"sessionId": name})
    await api.post("/apps/echo/users/bob/sessions", json={"sessionId": "d"})
    first = (await api.get(CAIRN, params={"limit": 2})).json()
    assert [s["id"] for s in first["sessions"]] == ["c", "b"] and first["total"] == 3
    rest = (await api.get(CAIRN, params={"limit": 2, "cursor": first["nextCursor"]})).json()
    assert [s["id"] for s in rest["sessions"]] == ["a"] and "nextCursor" not in rest
    everyone = (await api.get("/cairn/apps/echo/users/*/sessions")).json()
    assert {s["id"] for s in everyone["sessions"]} == {"a", "b", "c", "d"}
    assert everyone["total"] == 4
    bad = await api.get(CAIRN, params={"cursor": "garbage"})
    assert bad.status_code == 422 and "cursor" in bad.json()["detail"]
    too_many = await api.get(CAIRN, params={"limit": 0})
    assert too_many.status_code == 422 and too_many.json()["detail"][0]["loc"] == ["query", "limit"]


async def test_events_page_in_both_directions(api: httpx.AsyncClient) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    await converse(api, "s", "one", "two")
    everything = (await api.get("/apps/echo/users/ada/sessions/s")).json()["events"]
    forward = (await api.get(CAIRN + "/s/events", params={"limit": 3})).json()
    assert forward["events"] == everything[:3]
    more = await api.get(CAIRN + "/s/events", params={"limit": 3, "cursor": forward["nextCursor"]})
    assert more.json()["events"] == everything[3:] and "nextCursor" not in more.json()
    backward = await api.get(CAIRN + "/s/events", params={"direction": "backward", "limit": 1})
    assert backward.json()["events"] == everything[-1:]
    wrong = await api.get(CAIRN + "/s/events", params={"direction": "sideways"})
    assert wrong.status_code == 422 and wrong.json()["detail"][0]["loc"] == ["query", "direction"]
    assert (await api.get(CAIRN + "/nope/events")).status_code == 404


async def test_rewind_then_summary_lists_the_rewound_events(api: httpx.AsyncClient) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s", "state": {"x": 1}})
    _, second = await converse(api, "s", "one", "two")
    rewind = await api.post(CAIRN + "/s/rewind", json={"invocationId": second})
    assert rewind.status_code == 200
    assert rewind.json()["actions"]["rewindBeforeInvocationId"] == second
    summary = (await api.get(CAIRN + "/s", params={"rewound": "true"})).json()
    # Without rewound=true the summary reads no events: the timeline route marks them.
    assert "rewoundEventIds" not in (await api.get(CAIRN + "/s")).json()
    service = server_app(api).state.cairn.sessions
    stored = await service.get_session(app_name="echo", user_id="ada", session_id="s")
    taken = rewound_event_ids(stored.events)
    assert summary["rewoundEventIds"] == [e.id for e in stored.events if e.id in taken]
    assert len(summary["rewoundEventIds"]) == 2
    assert summary["initialState"] == {"x": 1}
    assert summary["eventCount"] == 5
    assert summary["session"]["state"] == {"x": 1, "turns": 1}
    assert summary["session"]["events"] == []
    again = await api.post(CAIRN + "/s/rewind", json={"invocationId": "e-unknown"})
    assert again.status_code == 404
    missing_field = await api.post(CAIRN + "/s/rewind", json={})
    assert missing_field.json()["detail"][0]["loc"] == ["body", "invocationId"]


async def test_fork_copies_a_prefix_of_the_history(api: httpx.AsyncClient) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    await converse(api, "s", "one", "two")
    events = (await api.get("/apps/echo/users/ada/sessions/s")).json()["events"]
    fork = await api.post(
        CAIRN + "/s/fork", json={"upToEventId": events[1]["id"], "newSessionId": "f"}
    )
    assert fork.status_code == 200
    assert fork.json()["id"] == "f" and fork.json()["state"] == {"turns": 1}
    copied = (await api.get("/apps/echo/users/ada/sessions/f")).json()["events"]
    assert [e["id"] for e in copied] == [e["id"] for e in events[:2]]
    taken = await api.post(CAIRN + "/s/fork", json={"newSessionId": "f"})
    assert taken.status_code == 409
    no_event = await api.post(CAIRN + "/s/fork", json={"upToEventId": "nope"})
    assert no_event.status_code == 404 and "'nope'" in no_event.json()["detail"]
    whole = await api.post(CAIRN + "/s/fork")
    assert whole.json()["state"] == {"turns": 2}


async def test_verify_reports_ok_and_each_difference(api: httpx.AsyncClient) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    await converse(api, "s", "one")
    assert (await api.get(CAIRN + "/s/verify")).json() == {"ok": True, "differences": []}
    service = server_app(api).state.cairn.sessions
    # Corrupt the in-memory store behind the log's back, as a buggy writer would.
    stored = service._sessions[("echo", "ada")]["s"]
    stored.state["turns"] = 99
    report = (await api.get(CAIRN + "/s/verify")).json()
    assert report["ok"] is False
    (difference,) = report["differences"]
    assert {k: difference[k] for k in ("scope", "key", "kind", "stored", "expected")} == {
        "scope": "session",
        "key": "turns",
        "kind": "different",
        "stored": 99,
        "expected": 1,
    }
    assert "turns" in difference["description"]
    assert (await api.get(CAIRN + "/nope/verify")).status_code == 404


async def test_app_description_agent_and_workflow_graph(api: httpx.AsyncClient) -> None:
    assert (await api.get("/cairn/apps/echo")).json() == {"name": "echo", "kind": "agent"}
    review = (await api.get("/cairn/apps/review")).json()
    assert review["kind"] == "workflow"
    assert [n["name"] for n in review["graph"]["nodes"]] == [
        "__START__",
        "draft",
        "review",
        "decide",
        "send",
    ]
    assert {"from": "decide", "to": "send", "route": "approved"} in review["graph"]["edges"]
    assert {"from": "__START__", "to": "draft"} in review["graph"]["edges"]
    assert (await api.get("/cairn/apps/nope")).status_code == 404


async def test_listed_sessions_carry_names_first_messages_and_fork_lineage(
    api: httpx.AsyncClient,
) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "trip"})
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "blank"})
    await converse(api, "trip", "plan a trip", "to Lisbon")
    events = (await api.get(CAIRN + "/trip/events")).json()["events"]
    await api.post(CAIRN + "/trip/fork", json={"upToEventId": events[1]["id"], "newSessionId": "f"})
    named = await api.put(CAIRN + "/trip/name", json={"name": "  Lisbon  "})
    assert named.status_code == 200
    assert named.json() == {
        "userId": "ada",
        "sessionId": "trip",
        "name": "Lisbon",
        "firstMessage": "plan a trip",
        "title": "Lisbon",
    }
    page = (await api.get(CAIRN)).json()
    by_id = dict(zip([s["id"] for s in page["sessions"]], page["infos"], strict=True))
    assert by_id["blank"] == {"userId": "ada", "sessionId": "blank"}
    assert by_id["f"]["title"] == "plan a trip" and "name" not in by_id["f"]
    assert by_id["f"]["forkedFrom"] == {
        "sessionId": "trip",
        "exists": True,
        "eventId": events[1]["id"],
        "title": "Lisbon",
    }
    # The parent is named even when it is not on the page; a deleted one is said to be gone.
    one = (await api.get(CAIRN, params={"limit": 1})).json()
    assert [s["id"] for s in one["sessions"]] == ["f"]
    assert one["infos"][0]["forkedFrom"]["title"] == "Lisbon"
    await api.delete("/apps/echo/users/ada/sessions/trip")
    orphan = (await api.get(CAIRN + "/f")).json()["info"]
    assert orphan["forkedFrom"] == {
        "sessionId": "trip",
        "exists": False,
        "eventId": events[1]["id"],
    }
    # ADK's own list keeps its exact answer: sessions, no names.
    adk = (await api.get("/apps/echo/users/ada/sessions")).json()
    assert {s["id"] for s in adk} == {"blank", "f"} and all("infos" not in s for s in adk)


async def test_renaming_refuses_a_long_name_and_a_missing_session(api: httpx.AsyncClient) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    long = await api.put(CAIRN + "/s/name", json={"name": "x" * 201})
    assert long.status_code == 422 and "200" in long.json()["detail"]
    missing = await api.put(CAIRN + "/nope/name", json={"name": "x"})
    assert missing.status_code == 404 and "'nope'" in missing.json()["detail"]
    no_body = await api.put(CAIRN + "/s/name", json={})
    assert no_body.status_code == 422 and no_body.json()["detail"][0]["loc"] == ["body", "name"]
    cleared = await api.put(CAIRN + "/s/name", json={"name": None})
    assert cleared.json() == {"userId": "ada", "sessionId": "s"}
