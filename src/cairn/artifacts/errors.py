"""Errors of the artifact services."""

from __future__ import annotations

from cairn.errors import CairnError, InputValidationError


class InvalidArtifactNameError(InputValidationError):
    """An artifact filename (or app, user, session id) that a store refuses, and why (an
    ``InputValidationError``, as ADK raises for such names)."""

    def __init__(self, name: str, rule: str, *, what: str = "artifact filename") -> None:
        self.name = name
        self.rule = rule
        super().__init__(
            f"the {what} {name!r} is refused: {rule}. Use a plain name such as 'report.txt' "
            "(optionally prefixed with 'user:' for a user-scoped artifact)."
        )


class UnsupportedArtifactError(CairnError, ValueError):
    """An artifact ``Part`` that carries neither ``inline_data`` nor ``text``."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        super().__init__(
            f"artifact {filename!r} is neither inline data nor text: save a "
            "types.Part(inline_data=types.Blob(data=..., mime_type=...)) or a "
            "types.Part(text=...)."
        )


class ArtifactServiceMissingError(CairnError, ValueError):
    """A context was asked to save or load an artifact, but the Runner has no artifact service."""

    def __init__(self, operation: str, agent_name: str) -> None:
        self.operation = operation
        self.agent_name = agent_name
        super().__init__(
            f"Artifact service is not initialized. {operation}() in agent {agent_name!r} needs "
            "an artifact service, and the Runner "
            "has none: give the Runner artifact_service=InMemoryArtifactService(), "
            "FileArtifactService(root) or SessionStoreArtifactService(session_service) "
            "(InMemoryRunner has an in-memory one)."
        )
