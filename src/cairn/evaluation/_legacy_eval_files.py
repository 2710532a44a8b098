"""The eval data formats older than ``EvalSet``, converted to it.

Two shapes exist: a list of cases, each ``{"name", "data": [turn, ...], "initial_session"}``,
and the ``*.test.json`` file, a bare list of turns. A turn is ``{"query", "reference",
"expected_tool_use": [{"tool_name", "tool_input"}], "expected_intermediate_agent_responses":
[{"author", "text"}]}``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from google.genai import types as genai_types

from .errors import EvalFileError
from .eval_case import EvalCase, IntermediateData, Invocation, SessionInput
from .eval_set import EvalSet
from .evaluation_constants import EvalConstants

_TURN_FIX = (
    'A turn of the older format reads {"query": "...", "reference": "...", '
    '"expected_tool_use": [{"tool_name": "...", "tool_input": {...}}]}.'
)


def _required(item: Any, key: str, path: str, where: str, kind: type = str) -> Any:
    if not isinstance(item, dict) or key not in item:
        raise EvalFileError(path=path, field=f"{where}.{key}", problem="missing", fix=_TURN_FIX)
    value = item[key]
    if not isinstance(value, kind):
        raise EvalFileError(
            path=path,
            field=f"{where}.{key}",
            problem=f"must be a {kind.__name__}, not {type(value).__name__}",
            fix=_TURN_FIX,
        )
    return value


def _turn_to_invocation(turn: Any, path: str, where: str) -> Invocation:
    query = _required(turn, EvalConstants.QUERY, path, where)
    reference = turn.get(EvalConstants.REFERENCE, "")
    tool_uses = []
    for index, tool_use in enumerate(turn.get(EvalConstants.EXPECTED_TOOL_USE, [])):
        at = f"{where}.{EvalConstants.EXPECTED_TOOL_USE}[{index}]"
        tool_uses.append(
            genai_types.FunctionCall(
                name=_required(tool_use, EvalConstants.TOOL_NAME, path, at),
                args=_required(tool_use, EvalConstants.TOOL_INPUT, path, at, dict),
            )
        )
    responses = []
    for index, response in enumerate(turn.get("expected_intermediate_agent_responses", [])):
        at = f"{where}.expected_intermediate_agent_responses[{index}]"
        author = _required(response, "author", path, at)
        text = _required(response, "text", path, at)
        responses.append((author, [genai_types.Part.from_text(text=text)]))
    return Invocation(
        invocation_id=str(uuid.uuid4()),
        user_content=genai_types.Content(
            role="user", parts=[genai_types.Part.from_text(text=query)]
        ),
        final_response=genai_types.Content(
            role="model", parts=[genai_types.Part.from_text(text=reference)]
        ),
        intermediate_data=IntermediateData(tool_uses=tool_uses, intermediate_responses=responses),
        creation_timestamp=time.time(),
    )


def _session_input(initial_session: Any) -> SessionInput | None:
    if not initial_session:
        return None
    return SessionInput(
        app_name=initial_session.get("app_name", ""),
        user_id=initial_session.get("user_id", ""),
        state=initial_session.get("state", {}),
    )


def convert_cases(eval_set_id: str, cases: list[Any], path: str = "<eval data>") -> EvalSet:
    """An EvalSet from the older list-of-cases format (each case: name, data, initial_session)."""
    eval_cases = []
    for index, case in enumerate(cases):
        where = f"[{index}]"
        name = _required(case, "name", path, where)
        turns = _required(case, "data", path, where, list)
        eval_cases.append(
            EvalCase(
                eval_id=name,
                conversation=[
                    _turn_to_invocation(turn, path, f"{where}.data[{t}]")
                    for t, turn in enumerate(turns)
                ],
                session_input=_session_input(case.get("initial_session")),
                creation_timestamp=time.time(),
            )
        )
    return EvalSet(
        eval_set_id=eval_set_id,
        name=eval_set_id,
        eval_cases=eval_cases,
        creation_timestamp=time.time(),
    )


def convert_turns(
    path: str,
    turns: list[Any],
    initial_session: dict[str, Any] | None = None,
    eval_set_id: str | None = None,
) -> EvalSet:
    """An EvalSet of one case from a ``*.test.json`` list of turns; the case is named by the
    file's path (and the set gets a random id unless one is given)."""
    case = EvalCase(
        eval_id=path,
        conversation=[_turn_to_invocation(turn, path, f"[{t}]") for t, turn in enumerate(turns)],
        session_input=_session_input(initial_session),
        creation_timestamp=time.time(),
    )
    set_id = eval_set_id or str(uuid.uuid4())
    return EvalSet(
        eval_set_id=set_id, name=set_id, eval_cases=[case], creation_timestamp=time.time()
    )


def is_list_of_turns(data: list[Any]) -> bool:
    """Whether the older data is a bare list of turns (not a list of named cases)."""
    return bool(data) and all(isinstance(item, dict) and "data" not in item for item in data)
