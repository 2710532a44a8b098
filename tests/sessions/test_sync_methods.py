"""The in-memory session service's synchronous methods (ADK's *_sync forms)."""

from __future__ import annotations

from cairn.sessions import InMemorySessionService


def test_sync_methods_outside_an_event_loop() -> None:
    service = InMemorySessionService()
    made = service.create_session_sync(app_name="a", user_id="u", state={"k": 1})
    got = service.get_session_sync(app_name="a", user_id="u", session_id=made.id)
    assert got is not None and got.state == {"k": 1}
    assert [s.id for s in service.list_sessions_sync(app_name="a").sessions] == [made.id]
    service.delete_session_sync(app_name="a", user_id="u", session_id=made.id)
    assert service.get_session_sync(app_name="a", user_id="u", session_id=made.id) is None


async def test_sync_methods_inside_a_running_loop() -> None:
    service = InMemorySessionService()
    made = service.create_session_sync(app_name="a", user_id="u", session_id="s")
    assert made.id == "s"
    assert (await service.get_session(app_name="a", user_id="u", session_id="s")) is not None
