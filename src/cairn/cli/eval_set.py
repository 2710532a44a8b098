"""``cairn eval_set``: ADK's ``adk eval_set``, eval sets saved beside an agent folder."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import click
from pydantic import ValidationError

from cairn.cli._errors import EXIT_ERROR
from cairn.evaluation.conversation_scenarios import ConversationScenarios
from cairn.evaluation.eval_case import EvalCase, SessionInput
from cairn.evaluation.local_eval_sets_manager import LocalEvalSetsManager

_AGENT_DIR = click.Path(exists=True, file_okay=False, resolve_path=True, path_type=Path)
_FILE = click.Path(exists=True, dir_okay=False, resolve_path=True, path_type=Path)


@click.group("eval_set", context_settings={"help_option_names": ["-h", "--help"]})
def eval_set() -> None:
    """Make eval sets, saved as AGENT_DIR/<EVAL_SET_ID>.evalset.json (as ADK saves them).

    \b
    Examples:
      cairn eval_set create my_agent smoke
      cairn eval_set add_eval_case my_agent smoke --scenarios_file scenarios.json \\
          --session_input_file session_input.json
      cairn eval my_agent smoke

    \b
    Exit codes:
      0  done
      2  refused: a bad eval set id, an eval set that exists (create) or does not (add),
         or a malformed file
    """


def _manager(agent_dir: Path) -> tuple[LocalEvalSetsManager, str]:
    return LocalEvalSetsManager(agents_dir=str(agent_dir.parent)), agent_dir.name


def _refuse(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@eval_set.command("create")
@click.argument("agent_dir", type=_AGENT_DIR)
@click.argument("eval_set_id")
def create(agent_dir: Path, eval_set_id: str) -> None:
    """Create the empty eval set EVAL_SET_ID of the agent in AGENT_DIR.

    \b
    Examples:
      cairn eval_set create my_agent smoke
    """
    sets, app_name = _manager(agent_dir)
    try:
        sets.create_eval_set(app_name=app_name, eval_set_id=eval_set_id)
    except ValueError as error:
        _refuse(str(error))
    click.echo(f"Eval set '{eval_set_id}' created for app '{app_name}'.")


@eval_set.command("add_eval_case")
@click.argument("agent_dir", type=_AGENT_DIR)
@click.argument("eval_set_id")
@click.option(
    "--scenarios_file",
    "--scenarios-file",
    "scenarios_file",
    type=_FILE,
    required=True,
    help='ConversationScenarios as JSON: {"scenarios": [{"starting_prompt": ..., '
    '"conversation_plan": ...}]}.',
)
@click.option(
    "--session_input_file",
    "--session-input-file",
    "session_input_file",
    type=_FILE,
    required=True,
    help="The SessionInput every case starts from, as JSON (app_name, user_id, state).",
)
def add_eval_case(
    agent_dir: Path, eval_set_id: str, scenarios_file: Path, session_input_file: Path
) -> None:
    """Add a simulated-user case per conversation scenario to EVAL_SET_ID.

    A case's id is made from its scenario, so adding the same scenario again is skipped.

    \b
    Examples:
      cairn eval_set add_eval_case my_agent smoke --scenarios_file scenarios.json \\
          --session_input_file session_input.json
    """
    sets, app_name = _manager(agent_dir)
    try:
        session_input = SessionInput.model_validate_json(session_input_file.read_text())
        scenarios = ConversationScenarios.model_validate_json(scenarios_file.read_text())
    except (ValidationError, ValueError) as error:
        _refuse(f"{scenarios_file.name} or {session_input_file.name}: {error}")
        return
    if sets.get_eval_set(app_name, eval_set_id) is None:
        _refuse(
            f"app {app_name!r} has no eval set {eval_set_id!r}; make it with "
            f"`cairn eval_set create {agent_dir} {eval_set_id}`"
        )
    for scenario in scenarios.scenarios:
        digest = json.dumps(scenario.model_dump(mode="json"), sort_keys=True).encode("utf-8")
        eval_id = hashlib.sha256(digest).hexdigest()[:8]
        if sets.get_eval_case(app_name, eval_set_id, eval_id) is not None:
            click.echo(
                f"Eval case '{eval_id}' already exists in eval set '{eval_set_id}', skipped."
            )
            continue
        sets.add_eval_case(
            app_name=app_name,
            eval_set_id=eval_set_id,
            eval_case=EvalCase(
                eval_id=eval_id,
                conversation_scenario=scenario,
                session_input=session_input,
                creation_timestamp=time.time(),
            ),
        )
        click.echo(f"Eval case '{eval_id}' added to eval set '{eval_set_id}'.")
