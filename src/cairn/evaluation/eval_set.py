"""An eval set: a named list of eval cases (the ``*.evalset.json`` file)."""

from __future__ import annotations

from pydantic import BaseModel

from .eval_case import EvalCase as EvalCase


class EvalSet(BaseModel):
    """A set of eval cases.

    Its own keys are snake_case in JSON (as ADK writes them); the cases inside accept and
    write camelCase too.
    """

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase]
    creation_timestamp: float = 0.0
