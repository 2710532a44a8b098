"""Memory in a SQLite file, found by meaning: sentence embeddings compared with sqlite-vec."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from cairn.memory._text import MemoryRow
from cairn.memory._vector_sqlite import check_installed, connect, float32_blob
from cairn.memory.base_memory_service import DEFAULT_MAX_RESULTS
from cairn.memory.embedder import BaseEmbedder
from cairn.memory.errors import EmbeddingMismatchError
from cairn.memory.minilm_embedder import MiniLmEmbedder
from cairn.memory.sqlite_memory_service import (
    _SCHEMA,
    DEFAULT_PATH,
    SqliteMemoryService,
    insert_memory,
    memory_rows,
)
from cairn.sessions.sql.sqlite_file import prepare_sqlite_file

DEFAULT_MIN_SIMILARITY = 0.4
"""With all-MiniLM-L6-v2, paraphrases of a query score about 0.4 to 0.8 and unrelated text
below 0.25; text on the same topic that does not answer it often scores 0.3 to 0.4."""

_BATCH = 256
"""Texts embedded (and rows written) at a time when catching up on memories without vectors."""

_VECTOR_SCHEMA = """
CREATE TABLE IF NOT EXISTS cairn_memory_vectors (
    memory_id INTEGER PRIMARY KEY REFERENCES cairn_memory (id),
    embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS cairn_memory_embedding (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL
);
"""
_STORED = """
SELECT event_id FROM cairn_memory
WHERE app_name = ? AND user_id = ? AND event_id IN ({marks})
"""
_WITHOUT_VECTORS = """
SELECT m.id, f.text
FROM cairn_memory AS m
JOIN cairn_memory_fts AS f ON f.rowid = m.id
LEFT JOIN cairn_memory_vectors AS v ON v.memory_id = m.id
WHERE m.app_name = ? AND m.user_id = ? AND v.memory_id IS NULL
ORDER BY m.id
LIMIT ?
"""
# Exact nearest neighbours among this app and user's memories (a vector sqlite-vec cannot
# compare, such as all zeros, is never close).
_SEARCH = """
SELECT m.event_id, m.session_id, m.author, m.timestamp, f.text, m.content, m.custom_metadata
FROM (
    SELECT m.id, COALESCE(vec_distance_cosine(v.embedding, :vector), 2.0) AS distance
    FROM cairn_memory AS m JOIN cairn_memory_vectors AS v ON v.memory_id = m.id
    WHERE m.app_name = :app_name AND m.user_id = :user_id
) AS s
JOIN cairn_memory AS m ON m.id = s.id
JOIN cairn_memory_fts AS f ON f.rowid = s.id
WHERE s.distance <= :max_distance
ORDER BY s.distance, m.timestamp DESC
LIMIT :limit
"""


class SemanticSqliteMemoryService(SqliteMemoryService):
    """Memories in a SQLite file, found by meaning: "cold weather" finds "I was freezing".

    Each remembered event's text is embedded once, when it is added, by
    ``embedder`` (default: ``MiniLmEmbedder()``, run locally) and its vector
    kept beside it. A search embeds the query's words and returns the user's
    memories whose cosine similarity to it is at least ``min_similarity``,
    most similar first (newer first among equals), at most ``max_results``:
    exact nearest neighbours, computed by sqlite-vec over that user's
    memories only.

    The file keeps ``SqliteMemoryService``'s tables, plus
    ``cairn_memory_vectors`` and ``cairn_memory_embedding`` (which model made
    the vectors, and their dimension): opening it with an embedder of another
    model raises ``EmbeddingMismatchError``. Memories without a vector (say,
    written by a ``SqliteMemoryService``) are embedded at their user's next
    search. Embedding and SQL run on the service's own thread, never on the
    event loop. Needs ``pip install 'cairn[semantic]'``.
    """

    def __init__(
        self,
        db_path: str | Path = DEFAULT_PATH,
        *,
        embedder: BaseEmbedder | None = None,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
        max_results: int = DEFAULT_MAX_RESULTS,
        busy_timeout: float = 30.0,
    ) -> None:
        super().__init__(db_path, max_results=max_results, busy_timeout=busy_timeout)
        if not -1.0 <= min_similarity <= 1.0:
            raise ValueError(
                f"min_similarity is a cosine similarity, from -1 to 1; got {min_similarity}"
            )
        check_installed()
        self.embedder = embedder if embedder is not None else MiniLmEmbedder()
        model = getattr(self.embedder, "model", None)
        dimension = getattr(self.embedder, "dimension", None)
        if not isinstance(model, str) or not model:
            raise TypeError(
                f"embedder {self.embedder!r} has no model name: set its 'model' attribute to "
                "the name of the model that makes its vectors"
            )
        if not isinstance(dimension, int) or dimension < 1:
            raise TypeError(
                f"embedder {model!r} has no valid dimension ({dimension!r}): set its "
                "'dimension' attribute to the length of the vectors it returns"
            )
        self.min_similarity = min_similarity

    def _connect(self) -> sqlite3.Connection:
        prepare_sqlite_file(self.path, busy_timeout=self.busy_timeout, connect=connect)
        # sqlite3's API, from sqlite3 or sqlean (see _vector_sqlite).
        connection: sqlite3.Connection = connect(self.path, timeout=self.busy_timeout)
        try:
            # One writer creates the tables and records the model; others wait, then check it.
            connection.execute("BEGIN IMMEDIATE")
            for statement in (_SCHEMA + _VECTOR_SCHEMA).split(";"):
                if statement.strip():
                    connection.execute(statement)
            stored = connection.execute(
                "SELECT model, dimension FROM cairn_memory_embedding"
            ).fetchone()
            if stored is None:
                connection.execute(
                    "INSERT INTO cairn_memory_embedding (id, model, dimension) VALUES (1, ?, ?)",
                    (self.embedder.model, self.embedder.dimension),
                )
            elif tuple(stored) != (self.embedder.model, self.embedder.dimension):
                raise EmbeddingMismatchError(
                    self.path,
                    stored_model=stored[0],
                    stored_dimension=stored[1],
                    model=self.embedder.model,
                    dimension=self.embedder.dimension,
                )
            connection.execute("COMMIT")
        except BaseException:
            connection.close()  # rolls back an open transaction
            raise
        return connection

    def _vectors(self, texts: list[str]) -> list[bytes]:
        """The embedder's vectors of ``texts``, checked, as sqlite-vec blobs."""
        vectors = self.embedder.embed(texts)
        if len(vectors) != len(texts):
            raise ValueError(
                f"embedder {self.embedder.model!r} returned {len(vectors)} vectors "
                f"for {len(texts)} texts"
            )
        for vector in vectors:
            if len(vector) != self.embedder.dimension:
                raise ValueError(
                    f"embedder {self.embedder.model!r} declares dimension "
                    f"{self.embedder.dimension} but returned a vector of {len(vector)} floats"
                )
        return [float32_blob(vector) for vector in vectors]

    async def _add(self, app_name: str, user_id: str, rows: list[MemoryRow]) -> None:
        def add(connection: Any) -> None:
            new = _not_stored(connection, app_name, user_id, rows)
            if not new:
                return
            # Embedding is slow: done before the write lock is taken.
            blobs = self._vectors([row.text for row in new])
            connection.execute("BEGIN IMMEDIATE")
            try:
                for row, blob in zip(new, blobs, strict=True):
                    memory_id = insert_memory(connection, app_name, user_id, row)
                    if memory_id is not None:
                        connection.execute(
                            "INSERT INTO cairn_memory_vectors (memory_id, embedding) VALUES (?, ?)",
                            (memory_id, blob),
                        )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise

        await self._on_thread(add)

    async def _search(self, app_name: str, user_id: str, query_words: list[str]) -> list[MemoryRow]:
        def search(connection: Any) -> list[MemoryRow]:
            self._embed_missing(connection, app_name, user_id)
            [vector] = self._vectors([" ".join(query_words)])
            found = connection.execute(
                _SEARCH,
                {
                    "vector": vector,
                    "app_name": app_name,
                    "user_id": user_id,
                    "max_distance": 1.0 - self.min_similarity,
                    "limit": self.max_results,
                },
            )
            return memory_rows(found)

        return await self._on_thread(search)

    def _embed_missing(self, connection: Any, app_name: str, user_id: str) -> None:
        """Give a vector to each of the user's memories without one (a keyword store wrote it)."""
        while True:
            missing = connection.execute(_WITHOUT_VECTORS, (app_name, user_id, _BATCH)).fetchall()
            if not missing:
                return
            blobs = self._vectors([text for _id, text in missing])
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(
                    "INSERT OR IGNORE INTO cairn_memory_vectors (memory_id, embedding) "
                    "VALUES (?, ?)",
                    [
                        (memory_id, blob)
                        for (memory_id, _text), blob in zip(missing, blobs, strict=True)
                    ],
                )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise


def _not_stored(
    connection: Any, app_name: str, user_id: str, rows: list[MemoryRow]
) -> list[MemoryRow]:
    """The rows whose event this app and user has not remembered yet."""
    stored: set[str] = set()
    ids = [row.event_id for row in rows]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        query = _STORED.format(marks=", ".join("?" * len(chunk)))
        stored.update(
            event_id for (event_id,) in connection.execute(query, (app_name, user_id, *chunk))
        )
    return [row for row in rows if row.event_id not in stored]
