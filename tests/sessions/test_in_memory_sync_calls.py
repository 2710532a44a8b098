"""InMemorySessionService's synchronous calls (ADK's *_sync), usable inside a running loop."""

from __future__ import annotations

from cairn.sessions import InMemorySessionService


def _round_trip(service: InMemorySessionService) -> None:
    made = service.create_session_sync(app_name="a", user_id="u", state={"k": 1}, session_id="s")
    got = service.get_session_sync(app_name="a", user_id="u", session_id="s")
    assert got is not None and got.id == made.id == "s" and got.state == {"k": 1}
    assert [s.id for s in service.list_sessions_sync(app_name="a", user_id="u").sessions] == ["s"]
    service.delete_session_sync(app_name="a", user_id="u", session_id="s")
    assert service.get_session_sync(app_name="a", user_id="u", session_id="s") is None


def test_sync_calls_outside_an_event_loop() -> None:
    _round_trip(InMemorySessionService())


async def test_sync_calls_inside_a_running_event_loop() -> None:
    _round_trip(InMemorySessionService())
