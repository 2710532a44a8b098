"""One few-shot example: a user's message and the model's answer to it."""

from __future__ import annotations

from google.genai import types
from pydantic import BaseModel


class Example(BaseModel):
    """A user message (``input``) and the turns that answer it (``output``).

    ``output`` holds the model's contents, with any function calls, and the user-role
    contents carrying those calls' function responses, in the order they happen.
    """

    input: types.Content
    output: list[types.Content]


__all__ = ["Example"]
