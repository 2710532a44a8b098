"""Given the same judge replies, cairn's judged metrics score like google-adk's own.

The prompts differ (cairn writes its own), so the comparison feeds both the same replies in
the same order and compares scores, statuses and rubric scores. cairn adds a rubric score
``error`` saying why an invocation was not evaluated; ADK gives none, so it is left out here.
"""

from __future__ import annotations

import inspect
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from tests.support.scripted_judges import ScriptedJudges

from cairn.evaluation.app_details import AgentDetails, AppDetails
from cairn.evaluation.eval_case import Invocation, InvocationEvent, InvocationEvents
from cairn.evaluation.eval_metrics import BaseCriterion, EvalMetric
from cairn.evaluation.eval_rubrics import RubricScore
from cairn.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry

ADK_PYTHON = Path(__file__).resolve().parents[2] / "bench" / ".peers" / "adk" / "bin" / "python"
JUDGE = "parity-judge"


def content(role: str, *parts: types.Part) -> types.Content:
    return types.Content(role=role, parts=list(parts))


def turn(question: str, answer: str, **more: Any) -> Invocation:
    return Invocation(
        user_content=content("user", types.Part(text=question)),
        final_response=content("model", types.Part(text=answer)),
        **more,
    )


def with_tool(city: str, answer: str, said_first: str | None = None, **more: Any) -> Invocation:
    call = types.FunctionCall(id=f"c-{city}", name="get_weather", args={"city": city})
    result = types.FunctionResponse(
        id=f"c-{city}", name="get_weather", response={"sky": "sunny", "celsius": 18}
    )
    first = [types.Part(text=said_first)] if said_first else []
    return turn(
        f"Weather in {city}?",
        answer,
        intermediate_data=InvocationEvents(
            invocation_events=[
                InvocationEvent(
                    author="weather_agent",
                    content=content("model", *first, types.Part(function_call=call)),
                ),
                InvocationEvent(
                    author="weather_agent",
                    content=content("user", types.Part(function_response=result)),
                ),
            ]
        ),
        app_details=AppDetails(
            agent_details={
                "weather_agent": AgentDetails(
                    name="weather_agent", instructions="Answer weather questions."
                )
            }
        ),
        **more,
    )


def rubric(rubric_id: str, text: str, kind: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"rubric_id": rubric_id, "rubric_content": {"text_property": text}}
    if kind:
        out["type"] = kind
    return out


def verdicts(*answers: tuple[str | None, str, str]) -> str:
    return "\n\n".join(
        (f"ID: {rid}\n" if rid else "") + f"Property: {prop}\nRationale: because.\nVerdict: {v}"
        for rid, prop, v in answers
    )


def frm(valid: str) -> str:
    return f'{{\n  "reasoning": "Same facts.",\n  "is_the_agent_response_valid": "{valid}"\n}}'


def validation(*labels: tuple[str, str]) -> str:
    return "\n".join(
        f"sentence: {s}\nlabel: {label}\nrationale: r\nsupporting_excerpt: null\n"
        "contradicting_excerpt: null"
        for s, label in labels
    )


def judged(samples: int, **more: Any) -> dict[str, Any]:
    return {
        "threshold": 0.5,
        "judge_model_options": {"judge_model": JUDGE, "num_samples": samples},
        **more,
    }


PARIS, ROME = turn("Paris?", "Sunny, 18C."), turn("Rome?", "No data.")
PARIS_X, ROME_X = turn("Paris?", "Paris is sunny, 18°C."), turn("Rome?", "Cloudy, 21°C.")
CONCISE = rubric("concise", "The response is at most two sentences.")
UNITS = rubric("units", "The response gives the unit.")
CITY = rubric("city", "The response names the city.", "FINAL_RESPONSE_QUALITY")
GEO = rubric("geo", "The geocoder is called.", "TOOL_USE_QUALITY")
TRAJ = rubric("calls", "get_weather is called each turn.", "TRAJECTORY_QUALITY")
SENTENCES = ["Paris is sunny.", "It is 30 degrees.", "Enjoy!"]

CASES: list[dict[str, Any]] = [
    {  # majority votes, an unreadable sample left out of the vote
        "metric": "final_response_match_v2",
        "criterion": judged(3),
        "actual": [PARIS, ROME],
        "expected": [PARIS_X, ROME_X],
        "replies": [
            *(frm("valid"), frm("invalid"), frm("valid")),
            *(frm("invalid"), "garbage", frm("invalid")),
        ],
    },
    {  # a failing judge call
        "metric": "final_response_match_v2",
        "criterion": judged(2),
        "actual": [PARIS, ROME],
        "expected": [PARIS_X, ROME_X],
        "replies": [frm("valid"), {"error": "429 quota"}, frm("valid"), frm("valid")],
    },
    {  # nothing readable
        "metric": "final_response_match_v2",
        "criterion": judged(2),
        "actual": [PARIS],
        "expected": [PARIS_X],
        "replies": ["nope", '{"is_the_agent_response_valid": "Valid"}'],
    },
    {  # votes per rubric; criterion and invocation rubrics; a property matched by its text
        "metric": "rubric_based_final_response_quality_v1",
        "criterion": judged(3, rubrics=[CONCISE, UNITS]),
        "actual": [with_tool("Paris", "Paris is sunny.", rubrics=[CITY, GEO])],
        "expected": None,
        "replies": [
            verdicts(
                ("concise", "x", "yes"),
                (None, "**The response gives the unit.**", "no"),
                ("city", "x", "yes"),
            ),
            verdicts(("concise", "x", "yes"), ("units", "x", "yes"), ("city", "x", "no")),
            verdicts(("concise", "x", "no"), ("units", "x", "no"), ("city", "x", "No.")),
        ],
    },
    {  # a reply whose blocks do not pair up
        "metric": "rubric_based_final_response_quality_v1",
        "criterion": judged(1, rubrics=[CONCISE, UNITS]),
        "actual": [with_tool("Paris", "Sunny.")],
        "expected": None,
        "replies": [verdicts(("concise", "x", "yes")) + "\nProperty: units\nRationale: r"],
    },
    {
        "metric": "rubric_based_tool_use_quality_v1",
        "criterion": judged(1, rubrics=[rubric("called", "get_weather is called.")]),
        "actual": [with_tool("Paris", "Sunny.", rubrics=[GEO, CITY])],
        "expected": None,
        "replies": [verdicts(("called", "x", "yes"), ("geo", "x", "no"))],
    },
    {
        "metric": "rubric_based_multi_turn_trajectory_quality_v1",
        "criterion": judged(2, rubrics=[CONCISE]),
        "actual": [with_tool("Paris", "Sunny."), with_tool("Rome", "Sunny.", rubrics=[TRAJ])],
        "expected": None,
        "replies": [
            verdicts(("concise", "x", "yes"), ("calls", "x", "yes")),
            verdicts(("concise", "x", "no"), ("calls", "x", "yes")),
        ],
    },
    {
        "metric": "hallucinations_v1",
        "criterion": judged(5, evaluate_intermediate_nl_responses=True),
        "actual": [with_tool("Paris", " ".join(SENTENCES), said_first="Checking.")],
        "expected": None,
        "replies": [
            "<sentence>Checking.</sentence>",
            validation(("Checking.", "not_applicable")),
            "".join(f"<sentence>{s}</sentence>" for s in SENTENCES),
            validation(
                (SENTENCES[0], "supported"),
                (SENTENCES[1], "contradictory"),
                (SENTENCES[2], "not_applicable"),
            ),
        ],
    },
    {  # a failing segmenter, then a validator reply with no blocks
        "metric": "hallucinations_v1",
        "criterion": judged(1),
        "actual": [with_tool("Paris", "Sunny."), with_tool("Rome", "Sunny."), PARIS],
        "expected": None,
        "replies": [
            {"error": "503"},
            "<sentence>Sunny.</sentence>",
            "I cannot tell.",
            "<sentence>Sunny, 18C.</sentence>",
            validation(("Sunny, 18C.", "unsupported")),
        ],
    },
]


def _rubric_scores(scores: list[RubricScore] | None) -> list[list[Any]] | None:
    kept = [[s.rubric_id, s.score] for s in scores or [] if s.rubric_id != "error"]
    return kept or (None if not scores else [])


def _normal(scores: list[list[Any]] | None) -> list[list[Any]] | None:
    return scores or None


async def _cairn_answer(case: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    judges = ScriptedJudges(monkeypatch)
    script = [RuntimeError(r["error"]) if isinstance(r, dict) else r for r in case["replies"]]
    judges.add(JUDGE, *script)
    metric = EvalMetric(
        metric_name=case["metric"], criterion=BaseCriterion.model_validate(case["criterion"])
    )
    evaluator = MetricEvaluatorRegistry().get_evaluator(metric)
    outcome = evaluator.evaluate_invocations(case["actual"], case["expected"])
    result = await outcome if inspect.isawaitable(outcome) else outcome
    return {
        "scores": [r.score for r in result.per_invocation_results],
        "statuses": [r.eval_status.name for r in result.per_invocation_results],
        "rubric_scores": [
            _normal(_rubric_scores(r.rubric_scores)) for r in result.per_invocation_results
        ],
        "overall": result.overall_score,
        "status": result.overall_eval_status.name,
        "overall_rubric_scores": _normal(_rubric_scores(result.overall_rubric_scores)),
        "replies_left": len(judges.built[0].script) - len(judges.built[0].requests),
    }


def _dump(invocations: list[Invocation] | None) -> list[dict[str, Any]] | None:
    if invocations is None:
        return None
    return [i.model_dump(mode="json", exclude_none=True) for i in invocations]


async def test_adks_judged_metrics_give_the_same_scores_for_the_same_replies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not ADK_PYTHON.exists():
        pytest.skip(f"google-adk's venv is missing ({ADK_PYTHON}); make it with bench/peers.py")
    ours = []
    for case in CASES:
        with monkeypatch.context() as patch:
            ours.append(await _cairn_answer(case, patch))
    requests = [
        {**case, "actual": _dump(case["actual"]), "expected": _dump(case["expected"])}
        for case in CASES
    ]
    done = subprocess.run(
        [str(ADK_PYTHON), str(Path(__file__).with_name("adk_judges.py"))],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout)
    for answer in theirs:
        answer["rubric_scores"] = [_normal(r) for r in answer["rubric_scores"]]
        answer["overall_rubric_scores"] = _normal(answer["overall_rubric_scores"])
    for index, (mine, adk) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == adk, f"case {index} ({CASES[index]['metric']})"
