"""A store URL whose database or user the server does not have: one line naming it and the
fix, and exit code 2 (the store refused), from ``cairn sessions`` and ``cairn api-server``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from tests.support.databases import MARIADB, POSTGRES, mariadb_database, postgres_database
from tests.support.waiting import BOUND_SECONDS

from cairn.cli._errors import EXIT_ERROR

AGENTS = Path(__file__).resolve().parents[1] / "server" / "agents"


def with_part(server: str, *, database: str, user: str | None = None) -> str:
    url = make_url(f"{server}/{database}")
    if user is not None:
        url = url.set(username=user)
    return url.render_as_string(hide_password=False)


CASES = {
    "postgres-database": (
        postgres_database,
        with_part(POSTGRES, database="cairn_no_such_db"),
        ['database "cairn_no_such_db" does not exist', "CREATE DATABASE cairn_no_such_db"],
    ),
    "postgres-role": (
        postgres_database,
        with_part(POSTGRES, database="postgres", user="cairn_no_such_role"),
        ['role "cairn_no_such_role" does not exist', "CREATE ROLE cairn_no_such_role LOGIN"],
    ),
    "mariadb-database": (
        mariadb_database,
        with_part(MARIADB, database="cairn_no_such_db"),
        ["Unknown database 'cairn_no_such_db'", "CREATE DATABASE cairn_no_such_db"],
    ),
}
COMMANDS = {
    "sessions-list": ["sessions", "list"],
    "api-server": ["api-server", str(AGENTS), "--port", "0"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", CASES)
async def test_a_missing_database_or_user_is_one_line_naming_it_and_the_fix(
    case: str, command: str
) -> None:
    server_is_up, url, wanted = CASES[case]
    async with server_is_up():  # type: ignore[operator]
        result = subprocess.run(
            [sys.executable, "-m", "cairn.cli", *COMMANDS[command], "--store", url],
            capture_output=True,
            text=True,
            timeout=BOUND_SECONDS,
        )
    assert result.returncode == EXIT_ERROR, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: cannot use the session store")
    for part in wanted:
        assert part in lines[0]
    assert "Traceback" not in result.stdout
