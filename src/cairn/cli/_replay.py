"""``cairn run --replay FILE``: scripted user turns, in ADK's replay format or as lines.

A file is either one JSON document or one turn per line:

- ADK's format: ``{"state": {...}, "queries": [turn, ...]}`` (``state`` is the
  initial state of the new session); a JSON list of turns is also accepted.
- Lines: each non-empty line is a turn; a line that is not a JSON string or
  object is the text of a message, as it is. In this form an object line
  ``{"state": {...}}`` may come first.

A turn is a message (a string), ``{"answer": {"id": ..., "response": ...}}``
(or a list of such answers, sent together) or ``{"continue": true}`` (or the id
of the interrupted invocation to continue).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from cairn.cli._errors import CommandError, NotFoundError


@dataclasses.dataclass(frozen=True)
class Say:
    """A user message."""

    text: str


@dataclasses.dataclass(frozen=True)
class AnswerItem:
    """The answer to one interrupt: ``id`` is the interrupt's id or the id of the call it
    is about; None means the only pending interrupt."""

    id: str | None
    response: Any


@dataclasses.dataclass(frozen=True)
class Answer:
    """Answers sent in one message."""

    items: list[AnswerItem]


@dataclasses.dataclass(frozen=True)
class Continue:
    """Continue an interrupted invocation (None: the only one)."""

    invocation_id: str | None


Turn = Say | Answer | Continue


@dataclasses.dataclass(frozen=True)
class Replay:
    state: dict[str, Any]
    turns: list[Turn]


class ReplayError(CommandError):
    """The replay file is not in a form ``cairn run --replay`` reads."""


def read_replay(path: Path) -> Replay:
    """The turns of the replay file at ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(f"replay file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplayError(f"replay file {path} cannot be read: {exc}") from None
    try:
        document = json.loads(text)
    except ValueError:
        return _lines(path, text)
    if isinstance(document, dict) and ({"queries", "state"} & document.keys()):
        return _adk_format(path, document)
    if isinstance(document, list):
        return Replay({}, [_turn(item, f"{path} item {n}") for n, item in enumerate(document, 1)])
    if isinstance(document, str | dict):
        return Replay({}, [_turn(document, str(path))])
    return _lines(path, text)


def _adk_format(path: Path, document: dict[str, Any]) -> Replay:
    unknown = sorted(document.keys() - {"state", "queries"})
    if unknown:
        raise ReplayError(
            f"replay file {path}: unknown keys {unknown}; ADK's format is "
            '{"state": {...}, "queries": ["...", ...]}'
        )
    state, queries = document.get("state", {}), document.get("queries", [])
    if not isinstance(state, dict):
        raise ReplayError(f"replay file {path}: state must be an object, got {state!r}")
    if not isinstance(queries, list):
        raise ReplayError(f"replay file {path}: queries must be a list, got {queries!r}")
    return Replay(state, [_turn(item, f"{path} query {n}") for n, item in enumerate(queries, 1)])


def _lines(path: Path, text: str) -> Replay:
    state: dict[str, Any] = {}
    turns: list[Turn] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        where = f"{path} line {number}"
        try:
            value = json.loads(line)
        except ValueError:
            value = line
        if isinstance(value, dict) and value.keys() == {"state"}:
            if turns or state:
                raise ReplayError(f"{where}: a state line must be the first line")
            if not isinstance(value["state"], dict):
                raise ReplayError(f"{where}: state must be an object")
            state = value["state"]
        elif isinstance(value, str | dict):
            turns.append(_turn(value, where))
        else:
            turns.append(Say(line))
    return Replay(state, turns)


def _turn(item: Any, where: str) -> Turn:
    if isinstance(item, str):
        return Say(item)
    if isinstance(item, dict) and item.keys() == {"answer"}:
        answers = item["answer"]
        answers = answers if isinstance(answers, list) else [answers]
        if not answers:
            raise ReplayError(f"{where}: answer has no answers")
        return Answer([_answer_item(answer, where) for answer in answers])
    if isinstance(item, dict) and item.keys() == {"continue"}:
        target = item["continue"]
        if target is True:
            return Continue(None)
        if isinstance(target, str) and target:
            return Continue(target)
        raise ReplayError(f"{where}: continue takes true or an invocation id, got {target!r}")
    raise ReplayError(
        f"{where}: expected a message (a string), "
        '{"answer": {"id": "...", "response": ...}} or {"continue": true}; got '
        f"{json.dumps(item)[:200]}"
    )


def _answer_item(answer: Any, where: str) -> AnswerItem:
    if not isinstance(answer, dict) or "response" not in answer:
        raise ReplayError(
            f'{where}: each answer is {{"id": "...", "response": ...}} ("id" may be left out '
            f"when one interrupt is pending); got {json.dumps(answer)[:200]}"
        )
    unknown = sorted(answer.keys() - {"id", "response"})
    if unknown:
        raise ReplayError(f"{where}: unknown keys {unknown} in an answer")
    interrupt_id = answer.get("id")
    if interrupt_id is not None and not isinstance(interrupt_id, str):
        raise ReplayError(f"{where}: an answer's id must be a string, got {interrupt_id!r}")
    return AnswerItem(interrupt_id, answer["response"])
