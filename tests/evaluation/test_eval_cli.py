"""``cairn eval``: the shipped example's eval set, failing cases, bad files, results on disk."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.databases import mariadb_database, postgres_database

from cairn.artifacts.session_store_artifact_service import SessionStoreArtifactService
from cairn.cli import main
from cairn.evaluation.eval_result import EvalSetResult
from cairn.evaluation.store_eval_set_results_manager import StoreEvalSetResultsManager
from cairn.sessions.factory import session_service_from_url

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "weather_eval"


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    """A copy of examples/weather_eval, so results written beside it stay in tmp_path."""
    copy = tmp_path / "weather_eval"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".adk", "__pycache__"))
    return copy


def cairn(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_the_example_eval_set_passes_and_its_results_are_written(agent_dir: Path) -> None:
    code, out = cairn("eval", str(agent_dir), str(agent_dir / "weather.evalset.json"))
    assert code == 0, out
    assert "3 of 3 cases passed" in out
    for case in ("hangzhou", "unit_then_city", "unknown_city"):
        assert case in out
    (saved,) = (agent_dir / ".adk" / "eval_history").glob("*.evalset_result.json")
    result = json.loads(saved.read_text())
    assert result["eval_set_id"] == "weather"
    assert {c["eval_id"] for c in result["eval_case_results"]} == {
        "hangzhou",
        "unit_then_city",
        "unknown_city",
    }


def test_a_failing_case_exits_1_and_details_show_what_differed(agent_dir: Path) -> None:
    cases = json.loads((agent_dir / "weather.evalset.json").read_text())
    lisbon = cases["eval_cases"][1]["conversation"][1]
    lisbon["final_response"]["parts"][0]["text"] = "Lisbon is freezing, take a coat."
    (agent_dir / "changed.evalset.json").write_text(json.dumps(cases))
    code, out = cairn(
        "eval",
        str(agent_dir),
        f"{agent_dir / 'changed.evalset.json'}:unit_then_city,hangzhou",
        "--print-detailed-results",
    )
    assert code == 1, out
    assert "1 of 2 cases passed" in out
    assert "unknown_city" not in out  # only the cases named after the colon ran
    assert "freezing" in out  # the expected response, beside the actual one
    assert "Metric: response_match_score, Status: FAILED" in out


def test_a_config_names_the_criteria(agent_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "strict.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 1.0}}))
    code, out = cairn(
        "eval", str(agent_dir), str(agent_dir / "weather.evalset.json"), "--config", str(config)
    )
    assert code == 0, out
    assert "response_match_sc" in out and "tool_trajectory" not in out


def test_bad_input_is_refused_with_a_message_that_names_it(agent_dir: Path) -> None:
    broken = agent_dir / "broken.evalset.json"
    broken.write_text('{"eval_set_id": "x", "eval_cases": [{"conversation": []}]}')
    code, out = cairn("eval", str(agent_dir), str(broken))
    assert code == 2, out
    assert "broken.evalset.json" in out and "eval_id" in out
    code, out = cairn("eval", str(agent_dir), str(agent_dir / "missing.evalset.json"))
    assert code == 1, out
    assert "missing.evalset.json" in out


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "eval.db")
        return
    fresh = postgres_database if request.param == "postgres" else mariadb_database
    async with fresh() as url:  # type: ignore[attr-defined]
        yield url


def test_cases_run_in_the_store_given_and_stay_there(agent_dir: Path, store: str) -> None:
    code, out = cairn(
        "eval", str(agent_dir), str(agent_dir / "weather.evalset.json"), "--store", str(store)
    )
    assert code == 0, out

    async def stored() -> tuple[int, EvalSetResult]:
        service = session_service_from_url(store)
        try:
            listed = await service.list_sessions(app_name="weather_eval")
            keeper = StoreEvalSetResultsManager(SessionStoreArtifactService(service))
            (result_id,) = await keeper.list_eval_set_results("weather_eval")
            return len(listed.sessions), await keeper.get_eval_set_result("weather_eval", result_id)
        finally:
            await service.close()

    sessions, result = asyncio.run(stored())
    assert sessions == 3
    # The results are kept beside the sessions, each case naming the session it ran in.
    assert result.eval_set_id == "weather"
    assert len({case.session_id for case in result.eval_case_results}) == 3
    assert f"results kept in the store as {result.eval_set_result_id}" in out
