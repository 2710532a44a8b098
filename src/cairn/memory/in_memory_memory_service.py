"""Memory in a dict: keyword search, for trying things out and for tests."""

from __future__ import annotations

from cairn.memory._text import MemoryRow, is_unspaced, words
from cairn.memory.base_memory_service import BaseMemoryService


class InMemoryMemoryService(BaseMemoryService):
    """Memories kept in this process; a search matches whole words, case-insensitively.

    In scripts written without spaces (Chinese, Japanese, Thai, ...) a query word
    matches anywhere inside a run of that script ("太郎" finds "私の名前は太郎です").
    Memories that contain more of the query's words come first, then newer
    ones. Nothing survives the process: use ``SqliteMemoryService`` or
    ``PostgresMemoryService`` to keep them.
    """

    def __init__(self, *, max_results: int = 20) -> None:
        super().__init__(max_results=max_results)
        self._rows: dict[tuple[str, str], dict[str, tuple[MemoryRow, _Words]]] = {}

    async def _add(self, app_name: str, user_id: str, rows: list[MemoryRow]) -> None:
        kept = self._rows.setdefault((app_name, user_id), {})
        for row in rows:
            if row.event_id not in kept:
                kept[row.event_id] = (row, _Words(words(row.text)))

    async def _search(self, app_name: str, user_id: str, query_words: list[str]) -> list[MemoryRow]:
        scored = []
        for row, row_words in self._rows.get((app_name, user_id), {}).values():
            hits = sum(1 for word in query_words if row_words.has(word))
            if hits:
                scored.append((hits, row.timestamp, row))
        scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
        return [row for _hits, _timestamp, row in scored[: self.max_results]]


class _Words:
    """A memory's words: spaced-script words matched whole, unspaced runs by substring."""

    def __init__(self, all_words: list[str]) -> None:
        self.whole = frozenset(w for w in all_words if not is_unspaced(w))
        self.runs = tuple(w for w in all_words if is_unspaced(w))

    def has(self, word: str) -> bool:
        if is_unspaced(word):
            return any(word in run for run in self.runs)
        return word in self.whole
