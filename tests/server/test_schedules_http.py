"""Schedules over HTTP against a real server (uvicorn, SQLite store): create, list, read
and delete a user's cron schedules; what is wrong in one is a 422 naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.server.harness import uvicorn_server
from tests.support.waiting import BOUND_SECONDS

SCHEDULES = "/cairn/apps/echo/users/ada/schedules"
REQUEST = {"newMessage": {"role": "user", "parts": [{"text": "good morning"}]}}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home: Path = tmp_path_factory.mktemp("schedules")
    with uvicorn_server({"CAIRN_STORE": str(home / "sessions.db")}, log=home / "server.log") as url:
        yield url


def test_a_schedule_is_created_listed_read_and_deleted(base: str) -> None:
    with httpx.Client(base_url=base, timeout=BOUND_SECONDS) as client:
        created = client.post(
            SCHEDULES,
            json={"cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "request": REQUEST},
        )
        assert created.status_code == 201, created.text
        schedule = created.json()
        assert schedule["cron"] == "0 7 * * 1-5" and schedule["timezone"] == "Europe/Paris"
        assert schedule["request"]["newMessage"] == REQUEST["newMessage"]
        assert schedule["nextRunAt"] > schedule["createdAt"]
        ident = schedule["scheduleId"]
        listed = client.get(SCHEDULES).json()["schedules"]
        assert ident in [s["scheduleId"] for s in listed]
        assert client.get(f"{SCHEDULES}/{ident}").json() == schedule
        assert client.delete(f"{SCHEDULES}/{ident}").status_code == 204
        gone = client.get(f"{SCHEDULES}/{ident}")
        assert gone.status_code == 404 and ident in gone.text
        assert client.delete(f"{SCHEDULES}/{ident}").status_code == 404
        assert ident not in [s["scheduleId"] for s in client.get(SCHEDULES).json()["schedules"]]


def test_a_chosen_id_is_kept_and_taken_once(base: str) -> None:
    with httpx.Client(base_url=base, timeout=BOUND_SECONDS) as client:
        body = {"cron": "*/5 * * * *", "request": REQUEST, "scheduleId": "every-five"}
        assert client.post(SCHEDULES, json=body).json()["scheduleId"] == "every-five"
        again = client.post(SCHEDULES, json=body)
        assert again.status_code == 409 and "every-five" in again.text


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"cron": "61 * * * *"}, "cron"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"webhook": "ftp://example.com/hook"}, "webhook"),
        ({"request": {"newMessage": "not a content"}}, "request"),
    ],
)
def test_what_is_wrong_in_a_schedule_is_a_422_naming_it(
    base: str, change: dict[str, object], named: str
) -> None:
    with httpx.Client(base_url=base, timeout=BOUND_SECONDS) as client:
        refused = client.post(SCHEDULES, json={"cron": "0 7 * * *", "request": REQUEST, **change})
        assert refused.status_code == 422, refused.text
        assert named in refused.text


def test_a_schedule_of_an_app_not_served_is_a_404(base: str) -> None:
    with httpx.Client(base_url=base, timeout=BOUND_SECONDS) as client:
        missing = client.post(
            "/cairn/apps/nope/users/ada/schedules", json={"cron": "0 7 * * *", "request": REQUEST}
        )
        assert missing.status_code == 404 and "nope" in missing.text
