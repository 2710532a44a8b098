"""``AgentConfigError``: an agent config that cannot be loaded, located by file, line and key."""

from __future__ import annotations

from cairn.errors import CairnError


class AgentConfigError(CairnError, ValueError):
    """An agent's YAML config is wrong: ``path`` (the file), ``line`` (1-based, None when the
    file cannot be read at all), ``field`` (the key's path in the document, e.g.
    ``tools[1].name``; None for the document as a whole) and ``problem`` (what is wrong and
    how to fix it). Its text is one line: ``path:line: field: problem``."""

    def __init__(self, path: str, line: int | None, field: str | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.problem = " ".join(problem.split())
        where = path if line is None else f"{path}:{line}"
        super().__init__(
            f"{where}: {field}: {self.problem}" if field else f"{where}: {self.problem}"
        )
