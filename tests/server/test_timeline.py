"""The timeline route: pages from the newest with cursors both ways, state changes computed
across page boundaries, rewound marks, filters that scan a bounded number of events."""

from __future__ import annotations

from typing import Any

import httpx
from tests.server.harness import run_body, server_app
from tests.support.long_sessions import event_id, seed_long_session

CAIRN = "/cairn/apps/echo/users/ada/sessions"


async def seed(api: httpx.AsyncClient, sid: str, count: int, **initial: Any) -> None:
    service = server_app(api).state.cairn.sessions
    await seed_long_session(
        service, app_name="echo", user_id="ada", session_id=sid, count=count, initial_state=initial
    )


async def page(api: httpx.AsyncClient, sid: str, **params: Any) -> dict[str, Any]:
    response = await api.get(f"{CAIRN}/{sid}/timeline", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def ids(body: dict[str, Any]) -> list[str]:
    return [e["id"] for e in body["events"]]


async def test_pages_go_from_the_newest_to_the_oldest_and_back(api: httpx.AsyncClient) -> None:
    await seed(api, "long", 23)
    newest = await page(api, "long", limit=10)
    assert ids(newest) == [event_id(i) for i in range(13, 23)]
    assert newest["positions"] == list(range(14, 24)) and newest["revision"] == 23
    older = await page(api, "long", limit=10, cursor=newest["olderCursor"])
    assert ids(older) == [event_id(i) for i in range(3, 13)]
    oldest = await page(api, "long", limit=10, cursor=older["olderCursor"])
    assert ids(oldest) == [event_id(i) for i in range(3)] and "olderCursor" not in oldest
    # Back up from the oldest page, and from the front with direction=forward.
    again = await page(api, "long", limit=10, cursor=oldest["newerCursor"])
    assert ids(again) == ids(older)
    front = await page(api, "long", limit=4, direction="forward")
    assert ids(front) == [event_id(i) for i in range(4)] and "olderCursor" not in front
    # The events are those of the events route.
    listed = (await api.get(f"{CAIRN}/long/events", params={"limit": 1000})).json()["events"]
    assert newest["events"] == listed[13:]


async def test_the_newest_pages_newer_cursor_brings_only_what_a_run_added(
    api: httpx.AsyncClient,
) -> None:
    await seed(api, "s", 8)
    newest = await page(api, "s", limit=5)
    nothing = await page(api, "s", cursor=newest["newerCursor"])
    assert nothing["events"] == [] and nothing["newerCursor"] == newest["newerCursor"]
    ran = await api.post("/run", json=run_body("echo", "s", "hello"))
    assert ran.status_code == 200, ran.text
    new = await page(api, "s", cursor=newest["newerCursor"])
    assert [e["author"] for e in new["events"]] == ["user", "echo"]
    assert new["positions"] == [9, 10] and new["revision"] == 10
    # The echo agent counts turns from the seeded session's value.
    (change,) = new["changes"][new["events"][1]["id"]]
    assert change == {
        "scope": "session", "key": "turns", "known": True, "had": True, "removed": False,
        "before": 2, "after": 3,
    }  # fmt: skip


async def test_state_changes_read_back_across_pages_to_the_initial_state(
    api: httpx.AsyncClient,
) -> None:
    await seed(api, "s", 80, **{"last_topic": "none yet", "app:mode": "calm"})
    # One event per page: its "before" comes from pages the client never read.
    reply_of_turn_20 = await page(api, "s", limit=1, text="answer 20")
    (event,) = reply_of_turn_20["events"]
    changes = {c["key"]: c for c in reply_of_turn_20["changes"][event["id"]]}
    assert changes["turns"]["before"] == 19 and changes["turns"]["after"] == 20
    assert changes["last_topic"]["before"] == "topic-19"
    # user:visits is written first at turn 10: unknown before that, known at turn 20.
    assert changes["visits"] == {
        "scope": "user", "key": "visits", "known": True, "had": True, "removed": False,
        "before": 1, "after": 2,
    }  # fmt: skip
    first = await page(api, "s", limit=1, text="answer 10")
    visits = next(c for c in first["changes"][first["events"][0]["id"]] if c["key"] == "visits")
    assert visits["known"] is False and visits["had"] is False and "before" not in visits
    # The first write of a session key: its before is the initial state.
    turn_one = await page(api, "s", limit=1, text="answer 1", direction="forward")
    topic = next(c for c in turn_one["changes"][event_id(3)] if c["key"] == "last_topic")
    assert topic["before"] == "none yet" and topic["known"] is True
    turns = next(c for c in turn_one["changes"][event_id(3)] if c["key"] == "turns")
    assert turns["had"] is False and "before" not in turns and turns["known"] is True
    # Events that change nothing have no entry.
    assert event_id(0) not in (await page(api, "s", direction="forward", limit=3))["changes"]


async def test_filters_find_old_events_and_resume_where_the_scan_stopped(
    api: httpx.AsyncClient,
) -> None:
    await seed(api, "s", 400)
    calls = await page(api, "s", kind="tool call", text='TOPIC-7"', limit=5)
    assert ids(calls) == [event_id(25)]  # turn 7's call: lookup(topic="topic-7")
    assert calls["scanned"] == 400 and "olderCursor" not in calls
    by_author = await page(api, "s", author="user", limit=3)
    assert [e["author"] for e in by_author["events"]] == ["user"] * 3
    by_node = await page(api, "s", node="answer", limit=2)
    assert [e["nodeInfo"]["path"] for e in by_node["events"]] == ["assistant/answer"] * 2
    results = await page(api, "s", text="facts about 99", limit=5)
    assert [e["id"] for e in results["events"]] == [event_id(394)]
    # A scan bound: 150 events per request; the cursor continues the same search.
    found: list[str] = []
    cursor = None
    requests = 0
    while True:
        params: dict[str, Any] = {"text": "question 2", "scan": 150}
        if cursor:
            params["cursor"] = cursor
        body = await page(api, "s", **params)
        assert body["scanned"] <= 150
        found += ids(body)
        requests += 1
        cursor = body.get("olderCursor")
        if cursor is None:
            break
    assert requests == 3
    expected = [t for t in range(1, 101) if str(t).startswith("2")]
    assert sorted(found) == sorted(event_id((t - 1) * 4) for t in expected)


async def test_bad_filters_and_cursors_are_refused_with_what_to_pass(
    api: httpx.AsyncClient,
) -> None:
    await seed(api, "s", 10)
    kind = await api.get(f"{CAIRN}/s/timeline", params={"kind": "chitchat"})
    assert kind.status_code == 422 and kind.json()["detail"][0]["loc"] == ["query", "kind"]
    events_cursor = (await api.get(f"{CAIRN}/s/events", params={"limit": 2})).json()["nextCursor"]
    wrong = await api.get(f"{CAIRN}/s/timeline", params={"cursor": events_cursor})
    assert wrong.status_code == 422 and "olderCursor" in wrong.json()["detail"]
    garbage = await api.get(f"{CAIRN}/s/timeline", params={"cursor": "garbage"})
    assert garbage.status_code == 422 and "cursor" in garbage.json()["detail"]
    assert (await api.get(f"{CAIRN}/nope/timeline")).status_code == 404


async def test_rewound_events_are_marked_on_the_newest_and_on_older_pages(
    api: httpx.AsyncClient,
) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    invocations = []
    for message in ("one", "two", "three", "four"):
        (reply,) = (await api.post("/run", json=run_body("echo", "s", message))).json()
        invocations.append(reply["invocationId"])
    rewind = await api.post(f"{CAIRN}/s/rewind", json={"invocationId": invocations[1]})
    assert rewind.status_code == 200
    everything = (await api.get("/apps/echo/users/ada/sessions/s")).json()["events"]
    taken = [e["id"] for e in everything[2:8]]  # turns two, three and four
    whole = await page(api, "s")
    assert whole["rewoundEventIds"] == taken
    # Page by page (two events each): older pages are marked by the rewind on a newer one.
    marked: list[str] = []
    body = await page(api, "s", limit=2)
    while True:
        marked = body["rewoundEventIds"] + marked
        if "olderCursor" not in body:
            break
        body = await page(api, "s", limit=2, cursor=body["olderCursor"])
    assert marked == taken
    # The summary gives the same ids when asked.
    summary = (await api.get(f"{CAIRN}/s", params={"rewound": "true"})).json()
    assert summary["rewoundEventIds"] == taken and summary["eventCount"] == 9


async def test_a_forked_session_pages_its_own_copy_of_the_history(api: httpx.AsyncClient) -> None:
    await seed(api, "s", 12)
    fork = await api.post(f"{CAIRN}/s/fork", json={"upToEventId": event_id(6), "newSessionId": "f"})
    assert fork.status_code == 200, fork.text
    newest = await page(api, "f", limit=4)
    assert ids(newest) == [event_id(i) for i in range(3, 7)] and newest["revision"] == 7
    older = await page(api, "f", limit=4, cursor=newest["olderCursor"])
    assert ids(older) == [event_id(i) for i in range(3)] and "olderCursor" not in older
    turns = next(c for c in newest["changes"][event_id(3)] if c["key"] == "turns")
    assert turns["had"] is False and turns["after"] == 1
