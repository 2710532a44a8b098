"""InMemoryMemoryService finds words in scripts written without spaces, and in any
Unicode normal form."""

from __future__ import annotations

import unicodedata

import pytest
from google.genai import types

from cairn.events import Event
from cairn.memory import InMemoryMemoryService
from cairn.sessions import Session


async def _count(text: str, query: str) -> int:
    memory = InMemoryMemoryService()
    event = Event(author="user", content=types.Content(parts=[types.Part(text=text)]))
    await memory.add_session_to_memory(Session(id="s", app_name="a", user_id="u", events=[event]))
    found = await memory.search_memory(app_name="a", user_id="u", query=query)
    return len(found.memories)


@pytest.mark.parametrize(
    ("text", "query", "expected"),
    [
        ("私の名前は太郎です", "太郎", 1),  # inside a Japanese run
        ("私の名前は太郎です", "天気", 0),
        ("我喜欢机器学习", "机器学习", 1),
        ("私はPythonでADKを使っています", "python", 1),  # a Latin word amid Japanese
        ("私はPythonでADKを使っています", "thon", 0),  # still whole words in Latin
        ("Меня зовут Алексей", "Алексей", 1),
        (unicodedata.normalize("NFD", "Meet at the Café"), "Café", 1),
        ("Meet at the Café", unicodedata.normalize("NFD", "Café"), 1),
    ],
)
async def test_matching_across_scripts(text: str, query: str, expected: int) -> None:
    assert await _count(text, query) == expected
