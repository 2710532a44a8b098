"""Semantic memory search: the real MiniLM model and sqlite-vec, finding what words cannot."""

from __future__ import annotations

import math
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from google.genai import types

from cairn.events import Event
from cairn.memory import (
    BaseEmbedder,
    EmbeddingMismatchError,
    MiniLmEmbedder,
    SearchMemoryResponse,
    SemanticSearchUnavailableError,
    SemanticSqliteMemoryService,
    SqliteMemoryService,
)
from cairn.memory.semantic_sqlite_memory_service import DEFAULT_MIN_SIMILARITY

MEMORIES = [
    "I was freezing on the walk yesterday",
    "I love pizza with extra cheese",
    "My daughter's birthday is on March 3rd",
    "I'm allergic to peanuts",
    "I prefer window seats on flights",
    "My car broke down last week",
]


def said(text: str, timestamp: float | None = None) -> Event:
    event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text=text)]))
    if timestamp is not None:
        event.timestamp = timestamp
    return event


def texts(response: SearchMemoryResponse) -> list[str]:
    return [part.text or "" for m in response.memories for part in m.content.parts or []]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


class RecordingEmbedder(BaseEmbedder):
    """The real model, noting what it was asked to embed and on which thread."""

    def __init__(self, inner: BaseEmbedder) -> None:
        self.inner = inner
        self.model = inner.model
        self.dimension = inner.dimension
        self.texts: list[str] = []
        self.threads: set[int] = set()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        self.threads.add(threading.get_ident())
        return self.inner.embed(texts)


class TinyEmbedder(BaseEmbedder):
    """Another model: 8-dimensional vectors of letter counts."""

    def __init__(self, model: str = "tiny-letter-counts", dimension: int = 8) -> None:
        self.model = model
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [
            [float(text.lower().count(c)) + 0.1 for c in "abcdefgh"[: self.dimension]]
            for text in texts
        ]


@pytest.fixture
async def semantic(tmp_path: Path, embedder: MiniLmEmbedder) -> SemanticSqliteMemoryService:
    service = SemanticSqliteMemoryService(tmp_path / "memory.db", embedder=embedder)
    await service.add_events_to_memory(
        app_name="a", user_id="u", events=[said(text) for text in MEMORIES]
    )
    return service


async def test_a_paraphrase_is_found_that_keyword_search_misses(
    tmp_path: Path, semantic: SemanticSqliteMemoryService
) -> None:
    keyword = SqliteMemoryService(tmp_path / "keyword.db")
    await keyword.add_events_to_memory(
        app_name="a", user_id="u", events=[said(text) for text in MEMORIES]
    )

    by_words = await keyword.search_memory(app_name="a", user_id="u", query="cold weather")
    by_meaning = await semantic.search_memory(app_name="a", user_id="u", query="cold weather")

    assert texts(by_words) == []
    assert texts(by_meaning) == ["I was freezing on the walk yesterday"]
    for query, expected in [
        ("when is my kid's birthday", "My daughter's birthday is on March 3rd"),
        ("food allergy", "I'm allergic to peanuts"),
        ("airplane seat preference", "I prefer window seats on flights"),
        ("vehicle problems", "My car broke down last week"),
    ]:
        found = await semantic.search_memory(app_name="a", user_id="u", query=query)
        assert texts(found) == [expected], query
    await keyword.close()
    await semantic.close()


async def test_results_are_ranked_by_cosine_similarity(
    tmp_path: Path, embedder: MiniLmEmbedder
) -> None:
    memories = [
        "It snowed all night and the roads are icy",
        "I was freezing on the walk yesterday",
        "Summer is hot.",
        "Winter trips are fun.",
        "I love pizza with extra cheese",
    ]
    service = SemanticSqliteMemoryService(
        tmp_path / "memory.db", embedder=embedder, min_similarity=-1.0
    )
    await service.add_events_to_memory(
        app_name="a", user_id="u", events=[said(text) for text in memories]
    )

    found = await service.search_memory(app_name="a", user_id="u", query="cold winter")

    query, *vectors = embedder.embed(["cold winter", *memories])
    by_similarity = sorted(memories, key=lambda m: -cosine(query, vectors[memories.index(m)]))
    assert texts(found) == by_similarity
    assert by_similarity[-1] == "I love pizza with extra cheese"
    await service.close()


async def test_min_similarity_decides_what_is_close_enough(
    tmp_path: Path, embedder: MiniLmEmbedder
) -> None:
    events = [said(text) for text in MEMORIES]

    async def found_with(min_similarity: float) -> list[str]:
        service = SemanticSqliteMemoryService(
            tmp_path / "memory.db", embedder=embedder, min_similarity=min_similarity
        )
        await service.add_events_to_memory(app_name="a", user_id="u", events=events)
        found = await service.search_memory(app_name="a", user_id="u", query="cold weather")
        await service.close()
        return texts(found)

    assert len(await found_with(-1.0)) == len(MEMORIES)
    assert await found_with(DEFAULT_MIN_SIMILARITY) == ["I was freezing on the walk yesterday"]
    assert await found_with(0.99) == []


async def test_max_results_keeps_the_nearest(tmp_path: Path, embedder: MiniLmEmbedder) -> None:
    service = SemanticSqliteMemoryService(
        tmp_path / "memory.db", embedder=embedder, min_similarity=-1.0, max_results=3
    )
    events = [
        said(f"note number {n} about the {topic}")
        for n, topic in enumerate(
            ["snow", "rain", "tax", "cat", "ice", "dog", "budget", "frost", "lunch", "storm"]
        )
    ]
    await service.add_events_to_memory(app_name="a", user_id="u", events=events)

    found = await service.search_memory(app_name="a", user_id="u", query="freezing cold")

    assert len(found.memories) == 3
    query, *vectors = embedder.embed(["freezing cold", *(texts_of(e) for e in events)])
    nearest = sorted(range(len(events)), key=lambda i: -cosine(query, vectors[i]))[:3]
    assert [m.id for m in found.memories] == [events[i].id for i in nearest]
    await service.close()


def texts_of(event: Event) -> str:
    assert event.content is not None and event.content.parts
    return event.content.parts[0].text or ""


async def test_vectors_survive_reopen_and_are_never_computed_twice(
    tmp_path: Path, embedder: MiniLmEmbedder
) -> None:
    first_model = RecordingEmbedder(embedder)
    first = SemanticSqliteMemoryService(tmp_path / "memory.db", embedder=first_model)
    events = [said(text) for text in MEMORIES]
    await first.add_events_to_memory(app_name="a", user_id="u", events=events)
    await first.add_events_to_memory(app_name="a", user_id="u", events=events)
    await first.close()
    assert sorted(first_model.texts) == sorted(MEMORIES)  # once each, though added twice

    second_model = RecordingEmbedder(embedder)
    second = SemanticSqliteMemoryService(tmp_path / "memory.db", embedder=second_model)
    found = await second.search_memory(app_name="a", user_id="u", query="cold weather")
    await second.add_events_to_memory(app_name="a", user_id="u", events=events)
    await second.close()

    assert texts(found) == ["I was freezing on the walk yesterday"]
    assert second_model.texts == ["cold weather"]  # only the query: the vectors were stored
    with sqlite3.connect(tmp_path / "memory.db") as connection:
        (stored,) = connection.execute("SELECT count(*) FROM cairn_memory_vectors").fetchone()
        (model, dimension) = connection.execute(
            "SELECT model, dimension FROM cairn_memory_embedding"
        ).fetchone()
    assert stored == len(MEMORIES)
    assert (model, dimension) == ("sentence-transformers/all-MiniLM-L6-v2", 384)


async def test_a_file_of_another_dimension_is_refused(
    tmp_path: Path, semantic: SemanticSqliteMemoryService
) -> None:
    await semantic.close()
    path = tmp_path / "memory.db"
    other = SemanticSqliteMemoryService(path, embedder=TinyEmbedder())

    with pytest.raises(EmbeddingMismatchError) as caught:
        await other.search_memory(app_name="a", user_id="u", query="cold")

    message = str(caught.value)
    assert str(path) in message
    assert "384-dimensional" in message and "8-dimensional" in message
    assert "sentence-transformers/all-MiniLM-L6-v2" in message and "tiny-letter-counts" in message
    assert (caught.value.stored_dimension, caught.value.dimension) == (384, 8)
    with pytest.raises(EmbeddingMismatchError):  # adding is refused too, and nothing is written
        await other.add_events_to_memory(app_name="a", user_id="u", events=[said("cold")])
    await other.close()

    again = SemanticSqliteMemoryService(path, embedder=semantic.embedder)
    found = await again.search_memory(app_name="a", user_id="u", query="cold weather")
    assert texts(found) == ["I was freezing on the walk yesterday"]
    await again.close()


async def test_a_file_of_another_model_of_the_same_dimension_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    first = SemanticSqliteMemoryService(path, embedder=TinyEmbedder("letters-v1"))
    await first.add_events_to_memory(app_name="a", user_id="u", events=[said("abc")])
    await first.close()

    second = SemanticSqliteMemoryService(path, embedder=TinyEmbedder("letters-v2"))
    with pytest.raises(EmbeddingMismatchError, match="letters-v1"):
        await second.search_memory(app_name="a", user_id="u", query="abc")
    await second.close()


async def test_memories_of_a_keyword_store_are_embedded_at_the_next_search(
    tmp_path: Path, embedder: MiniLmEmbedder
) -> None:
    path = tmp_path / "memory.db"
    keyword = SqliteMemoryService(path)
    await keyword.add_events_to_memory(
        app_name="a", user_id="u", events=[said(text) for text in MEMORIES]
    )
    await keyword.add_events_to_memory(app_name="a", user_id="bob", events=[said("Bob is cold")])
    await keyword.close()

    recording = RecordingEmbedder(embedder)
    semantic = SemanticSqliteMemoryService(path, embedder=recording)
    found = await semantic.search_memory(app_name="a", user_id="u", query="cold weather")
    again = await semantic.search_memory(app_name="a", user_id="u", query="cold weather")
    await semantic.close()

    assert texts(found) == texts(again) == ["I was freezing on the walk yesterday"]
    # The user's memories once, each query once; bob's memories wait for bob's search.
    assert sorted(recording.texts) == sorted([*MEMORIES, "cold weather", "cold weather"])


async def test_embedding_runs_off_the_event_loop(tmp_path: Path, embedder: MiniLmEmbedder) -> None:
    recording = RecordingEmbedder(embedder)
    service = SemanticSqliteMemoryService(tmp_path / "memory.db", embedder=recording)
    await service.add_events_to_memory(app_name="a", user_id="u", events=[said("hello")])
    await service.search_memory(app_name="a", user_id="u", query="greeting")
    await service.close()

    assert recording.threads and threading.get_ident() not in recording.threads


def test_the_default_model_loads_without_the_network(tmp_path: Path) -> None:
    script = """
import socket

def refuse(*args, **kwargs):
    raise OSError("the network was used")

socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse

from cairn.memory import MiniLmEmbedder

embedder = MiniLmEmbedder(device="cpu")
[vector] = embedder.embed(["I was freezing on the walk yesterday"])
print(len(vector), round(sum(x * x for x in vector), 3))
"""
    env = {key: value for key, value in __import__("os").environ.items() if "HF_" not in key}
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["384", "1.0"]


def test_the_default_embedder_makes_unit_vectors_that_put_meanings_close(
    embedder: MiniLmEmbedder,
) -> None:
    assert embedder.embed([]) == []
    cold, freezing, pizza = embedder.embed(["cold weather", "I was freezing", "pizza"])

    assert len(cold) == embedder.dimension == 384
    assert math.isclose(sum(x * x for x in cold), 1.0, rel_tol=1e-4)
    assert cosine(cold, freezing) > cosine(cold, pizza) + 0.2


def test_missing_packages_raise_an_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)  # as if not installed
    with pytest.raises(SemanticSearchUnavailableError) as caught:
        SemanticSqliteMemoryService(tmp_path / "memory.db", embedder=TinyEmbedder())
    assert "'sqlite-vec'" in str(caught.value)
    assert "pip install 'cairn[semantic]'" in str(caught.value)
    assert isinstance(caught.value, ImportError)
    monkeypatch.undo()

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(SemanticSearchUnavailableError, match=r"sentence-transformers.*semantic"):
        MiniLmEmbedder()


def test_bad_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="min_similarity"):
        SemanticSqliteMemoryService(tmp_path / "m.db", embedder=TinyEmbedder(), min_similarity=2)
    with pytest.raises(ValueError, match="InMemoryMemoryService"):
        SemanticSqliteMemoryService(":memory:", embedder=TinyEmbedder())
    with pytest.raises(TypeError, match="dimension"):
        SemanticSqliteMemoryService(tmp_path / "m.db", embedder=TinyEmbedder(dimension=0))
    with pytest.raises(ValueError, match="batch_size"):
        MiniLmEmbedder(batch_size=0)


async def test_an_embedder_returning_wrong_vectors_is_caught(tmp_path: Path) -> None:
    class Broken(TinyEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0, 2.0] for _ in texts]

    service = SemanticSqliteMemoryService(tmp_path / "m.db", embedder=Broken())
    with pytest.raises(ValueError, match="declares dimension 8 but returned a vector of 2"):
        await service.add_events_to_memory(app_name="a", user_id="u", events=[said("x")])
    await service.close()
