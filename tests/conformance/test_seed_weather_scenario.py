"""Seed 1's scenario: app weather, user u1, sessions s1 and s2.

Invocation i1 in s1 writes one delta touching every scope; s2 then sees the
user's temperature unit and the app's provider, but not s1's last city, and
nobody sees the temp: key.
"""

from __future__ import annotations

from cairn import Event
from cairn.sessions import BaseSessionService


async def test_seed_weather_scenario(store: BaseSessionService) -> None:
    s1 = await store.create_session(app_name="weather", user_id="u1", session_id="s1")
    s2 = await store.create_session(app_name="weather", user_id="u1", session_id="s2")
    other_user = await store.create_session(app_name="weather", user_id="u2", session_id="s3")
    await store.append_event(
        s1,
        Event(
            invocation_id="i1",
            author="weather_agent",
            state={
                "app:weather_provider": "provider-a",
                "user:temperature_unit": "C",
                "last_city": "Hangzhou",
                "temp:lookup_attempt": 1,
            },
        ),
    )
    # A Session object read before the write does not change by itself: re-read it.
    assert s2.state == {}
    s2 = await store.get_session(app_name="weather", user_id="u1", session_id="s2")
    assert s2 is not None
    assert s2.state == {"app:weather_provider": "provider-a", "user:temperature_unit": "C"}
    assert "last_city" not in s2.state

    s1_read = await store.get_session(app_name="weather", user_id="u1", session_id="s1")
    assert s1_read is not None
    assert s1_read.state == {
        "app:weather_provider": "provider-a",
        "user:temperature_unit": "C",
        "last_city": "Hangzhou",
    }
    third = await store.get_session(app_name="weather", user_id="u2", session_id="s3")
    assert third is not None and other_user.id == "s3"
    assert third.state == {"app:weather_provider": "provider-a"}
