"""``cairn eval create``: make an eval case of a stored session and add it to an eval set file."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from cairn.cli._errors import CommandError, NotFoundError, refused_code
from cairn.cli._loading import load_target
from cairn.cli._options import store_option
from cairn.errors import CairnError, InvocationNotFoundError
from cairn.evaluation.eval_case import EvalCase
from cairn.evaluation.local_eval_sets_manager import LocalEvalSetsManager
from cairn.evaluation.session_cases import eval_case_from_session
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.sqlite_session_service import DEFAULT_PATH

EVAL_SET_SUFFIX = ".evalset.json"
"""How an eval set file's name ends; the part before it is the eval set id (ADK's naming)."""


@click.command("create")
@click.argument("agent_dir", type=click.Path(path_type=Path))
@click.argument("eval_set_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--from-session",
    "session_id",
    required=True,
    metavar="SESSION_ID",
    help="The stored session whose user turns become the case.",
)
@click.option(
    "--invocation",
    "invocation_ids",
    multiple=True,
    metavar="ID",
    help="Keep only the turns of this invocation (repeatable; default: every turn).",
)
@click.option("--eval-id", default=None, help="The case's id (default: session_<SESSION_ID>).")
@store_option
@click.option(
    "--app",
    "app_name",
    default=None,
    help="App name the session is stored under (default: as `cairn run AGENT_DIR` names it).",
)
@click.option(
    "--user", "user_id", default=None, help="The session's user (default: whoever has it)."
)
def create(
    agent_dir: Path,
    eval_set_file: Path,
    session_id: str,
    invocation_ids: tuple[str, ...],
    eval_id: str | None,
    store: str | None,
    app_name: str | None,
    user_id: str | None,
) -> None:
    """Add the session SESSION_ID, as it ran, to the eval set EVAL_SET_FILE as one eval case.

    Each user message and each answer to a pause (a confirmation, a long-running
    tool, a credential, an input request) is one turn of the case, with the tool
    calls, responses and final response the agent gave. The case starts from the
    session's state before its first kept turn. EVAL_SET_FILE (NAME.evalset.json)
    is created when missing, with eval set id NAME.

    \b
    Examples:
      cairn eval create shop/ shop/smoke.evalset.json --from-session 5f0c1e9a
      cairn eval create shop/ shop/refunds.evalset.json --from-session 5f0c1e9a \\
          --invocation e-1b2c3d --eval-id refund_approved

    \b
    Exit codes:
      0  added
      1  not found: AGENT_DIR, its agent, the session or an --invocation
      2  refused: a bad file name, an eval id the set already has, a session without
         user turns, or the store refused (a cairn error)
      5  the SQLite store file is damaged
    """
    try:
        case, path = asyncio.run(
            _create(
                agent_dir,
                eval_set_file,
                session_id,
                list(invocation_ids) or None,
                eval_id,
                store,
                app_name,
                user_id,
            )
        )
    except CommandError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except CairnError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(refused_code(exc))
    turns = len(case.conversation or [])
    click.echo(f"added eval case {case.eval_id!r} ({turns} turn(s)) to {path}")


def _eval_set_id(eval_set_file: Path) -> str:
    name = eval_set_file.name
    if not name.endswith(EVAL_SET_SUFFIX) or name == EVAL_SET_SUFFIX:
        raise CommandError(
            f"{eval_set_file}: an eval set file is named NAME{EVAL_SET_SUFFIX} (NAME is the "
            f"eval set id); rename it, e.g. {eval_set_file.stem.split('.')[0]}{EVAL_SET_SUFFIX}"
        )
    return name.removesuffix(EVAL_SET_SUFFIX)


def _store_label(store: str | None) -> str:
    if store is None:
        return str(DEFAULT_PATH)
    return store.split("://", 1)[0] + "://***" if "@" in store else store


async def _create(
    agent_dir: Path,
    eval_set_file: Path,
    session_id: str,
    invocation_ids: list[str] | None,
    eval_id: str | None,
    store: str | None,
    app_name: str | None,
    user_id: str | None,
) -> tuple[EvalCase, Path]:
    eval_set_id = _eval_set_id(eval_set_file)
    app = app_name or load_target(agent_dir).name
    service = session_service_from_url(store)
    try:
        case = await _case(
            service, app, user_id, session_id, invocation_ids, eval_id, _store_label(store)
        )
    finally:
        await service.close()
    path = eval_set_file.expanduser().resolve()
    _add(path, eval_set_id, case)
    return case, path


async def _case(
    service: BaseSessionService,
    app: str,
    user_id: str | None,
    session_id: str,
    invocation_ids: list[str] | None,
    eval_id: str | None,
    store: str,
) -> EvalCase:
    where = f"app {app!r} of store {store}"
    if user_id is None:
        listed = await service.list_sessions(app_name=app)
        owners = sorted({s.user_id for s in listed.sessions if s.id == session_id})
        if len(owners) > 1:
            raise CommandError(
                f"users {', '.join(map(repr, owners))} each have a session {session_id!r} in "
                f"{where}; pick one with --user"
            )
        if not owners:
            raise NotFoundError(
                f"session {session_id!r} does not exist in {where}. Check --store and --app; "
                f"`cairn sessions list --app {app}` lists its sessions."
            )
        user_id = owners[0]
    session = await service.get_session(app_name=app, user_id=user_id, session_id=session_id)
    initial = await service.get_initial_state(app_name=app, user_id=user_id, session_id=session_id)
    if session is None or initial is None:
        raise NotFoundError(
            f"session {session_id!r} of user {user_id!r} does not exist in {where}. Check "
            "--store, --app and --user."
        )
    try:
        return eval_case_from_session(
            session, invocation_ids=invocation_ids, eval_id=eval_id, initial_state=initial
        )
    except InvocationNotFoundError as exc:
        raise NotFoundError(str(exc)) from None


def _add(path: Path, eval_set_id: str, case: EvalCase) -> None:
    """Add ``case`` to the eval set file, made first when missing; a taken id is refused."""
    # The managers keep <agents_dir>/<app_name>/<eval_set_id>.evalset.json: the file's
    # folder plays the app's.
    manager = LocalEvalSetsManager(agents_dir=str(path.parent.parent))
    folder = path.parent.name
    try:
        eval_set = manager.get_eval_set(folder, eval_set_id)
        if eval_set is None:
            manager.create_eval_set(folder, eval_set_id)
        elif any(known.eval_id == case.eval_id for known in eval_set.eval_cases):
            raise CommandError(
                f"{path} already has an eval case {case.eval_id!r}; pass another --eval-id "
                "(or delete that case from the file first)"
            )
        manager.add_eval_case(folder, eval_set_id, case)
    except ValueError as exc:
        if isinstance(exc, CairnError):
            raise
        raise CommandError(f"{path}: {exc}") from None
