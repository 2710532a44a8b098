"""ADK's exception classes exist in cairn.errors with the bases ADK code catches them by."""

from __future__ import annotations

import pytest
from google.genai.types import Part

from cairn.artifacts import InMemoryArtifactService
from cairn.errors import (
    AlreadyExistsError,
    InputValidationError,
    InvocationNotFoundError,
    NotFoundError,
    SessionNotFoundError,
    StaleSessionError,
    ToolErrorType,
    ToolExecutionError,
)
from cairn.events import Event
from cairn.sessions import InMemorySessionService


def test_adk_style_construction_and_message() -> None:
    # ADK code raises these itself, with a message or none, and reads `.message`.
    assert NotFoundError().message == "The requested item was not found."
    assert AlreadyExistsError("taken").message == "taken"
    assert InputValidationError().message == "Invalid input."
    assert isinstance(InputValidationError("bad"), ValueError)
    error = SessionNotFoundError("Session s1 not found.")
    assert str(error) == "Session s1 not found." and isinstance(error, ValueError)
    assert isinstance(StaleSessionError("stale"), ValueError)
    invocation = InvocationNotFoundError()
    assert isinstance(invocation, NotFoundError) and isinstance(invocation, ValueError)


def test_tool_execution_error_keeps_its_type_as_a_string() -> None:
    assert ToolExecutionError("slow", ToolErrorType.REQUEST_TIMEOUT).error_type == "REQUEST_TIMEOUT"
    assert ToolExecutionError("boom", "500").error_type == "500"
    assert ToolExecutionError("x").error_type is None
    assert ToolErrorType.NOT_FOUND == "NOT_FOUND"


async def test_cairn_raises_them_where_adk_code_catches_them() -> None:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="app", user_id="u")
    await sessions.delete_session(app_name="app", user_id="u", session_id=session.id)
    with pytest.raises(ValueError, match="does not exist") as missing:
        await sessions.append_event(session, Event(author="user"))
    assert isinstance(missing.value, SessionNotFoundError | NotFoundError)
    with pytest.raises(InputValidationError):  # ADK's artifact services raise this type
        await InMemoryArtifactService().save_artifact(
            app_name="app", user_id="u", session_id="s", filename="a\x00b", artifact=Part(text="")
        )
