"""``cairn create NAME``: scaffold an agent project that runs and is tested from the start."""

from __future__ import annotations

import json
import keyword
import shlex
import sys
from pathlib import Path

import click

from cairn import __version__
from cairn.cli import _scaffold
from cairn.cli._errors import CommandError


@click.command()
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    metavar="PARENT",
    help="Create the project in PARENT/NAME (default: the current directory).",
)
@click.option(
    "--model",
    default=_scaffold.DEFAULT_MODEL,
    show_default=True,
    help="The model string the agent uses, e.g. openai/gpt-4o-mini or anthropic/claude-sonnet-4-5; "
    "it chooses the provider whose variables .env.example lists.",
)
@click.option(
    "--type",
    "kind",
    type=click.Choice(["code", "config"]),
    default="code",
    show_default=True,
    help="code: the agent in agent.py; config: the agent declared in root_agent.yaml.",
)
@click.option("--force", is_flag=True, help="Write into NAME even if it is not empty.")
def create(name: str, parent: Path, model: str, kind: str, force: bool) -> None:
    """Create an agent project NAME: an agent with one tool, and a test that needs no API key.

    \b
    Writes:
      NAME/__init__.py         imports agent (ADK's package layout)
      NAME/agent.py            root_agent = Agent(...) with a get_weather tool
      NAME/pyproject.toml      cairn (with the model's extra) and, as the extra
                               [test], pytest and pytest-asyncio; pytest's settings
      NAME/.env.example        the model provider's variables (Gemini: GOOGLE_API_KEY
                               or Vertex AI; OpenAI: OPENAI_API_KEY or OPENAI_BASE_URL
                               for a local server; Anthropic: ANTHROPIC_API_KEY)
                               and CAIRN_STORE
      NAME/.gitignore          .env, .cairn/ and build output
      NAME/tests/test_agent.py a pytest test with cairn.testing.ScriptedLlm
      NAME/README.md           how to install, run and test it

    With --type=config the agent is declared in YAML instead (ADK's Agent Config):
      NAME/root_agent.yaml     name, model, instruction, and a tool by reference
      NAME/tools.py            get_weather, named as NAME.tools.get_weather
      NAME/pyproject.toml, .env.example, .gitignore, tests/test_agent.py, README.md

    NAME must be a Python identifier (it is imported as a package). An
    existing directory that is not empty is refused unless --force (which
    overwrites these files and leaves any others alone).

    \b
    Examples:
      cairn create weather_bot
      cairn create support --dir agents --model openai/gpt-4o-mini
      cairn create helper --model anthropic/claude-sonnet-4-5
      cairn create faq_bot --type=config

    \b
    Exit codes:
      0  created
      2  refused: the name is not usable, or NAME exists and is not empty
    """
    provider = _scaffold.provider_for(model.strip())
    try:
        target = _create(name, parent, model, force, _files(kind, provider))
    except CommandError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    shown = shlex.quote(str(target))
    written = "root_agent.yaml, tools.py" if kind == "config" else "agent.py, __init__.py"
    click.echo(f"created {target}/ with {written}, pyproject.toml, .env.example, tests/, README.md")
    steps = [
        (f"pip install -e {shlex.quote(f'{target}[test]')}", "cairn and the test tools"),
        (f"cp {shown}/.env.example {shown}/.env", f"then in .env: {provider.key_hint}"),
        (f"cairn run {shown}", "talk to the agent"),
        (f"pytest {shown}/tests", "its tests need no API key"),
    ]
    width = max(len(command) for command, _ in steps)
    click.echo("next steps:")
    for command, why in steps:
        click.echo(f"  {command.ljust(width)}  # {why}")


def _files(kind: str, provider: _scaffold.Provider) -> dict[str, str]:
    """The scaffold's files (path in NAME: template) for ``--type`` ``kind``."""
    if kind == "config":
        return {
            "root_agent.yaml": _scaffold.CONFIG_AGENT,
            "tools.py": _scaffold.CONFIG_TOOLS,
            "pyproject.toml": _scaffold.PYPROJECT,
            ".env.example": provider.env_example,
            ".gitignore": _scaffold.GITIGNORE,
            "tests/test_agent.py": _scaffold.CONFIG_TEST_AGENT,
            "README.md": _scaffold.CONFIG_README,
        }
    return {
        "__init__.py": _scaffold.INIT,
        "agent.py": _scaffold.AGENT,
        "pyproject.toml": _scaffold.PYPROJECT,
        ".env.example": provider.env_example,
        ".gitignore": _scaffold.GITIGNORE,
        "tests/__init__.py": _scaffold.TESTS_INIT,
        "tests/test_agent.py": _scaffold.TEST_AGENT,
        "README.md": _scaffold.README,
    }


def _requirement(provider: _scaffold.Provider) -> str:
    """cairn, with the extra that installs the provider's SDK, at this version or later."""
    extra = f"[{provider.extra}]" if provider.extra else ""
    return f"cairn{extra}>={__version__}"


def _create(name: str, parent: Path, model: str, force: bool, files: dict[str, str]) -> Path:
    _check_name(name)
    if not model.strip():
        raise CommandError("--model is empty; give a model string such as gemini-2.5-flash")
    target = parent / name
    if target.exists() and not target.is_dir():
        raise CommandError(f"{target} exists and is a file; choose another NAME or --dir")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise CommandError(
            f"{target} exists and is not empty; choose another NAME or --dir, or pass --force "
            "to overwrite the scaffold's files in it"
        )
    requirement = _requirement(_scaffold.provider_for(model.strip()))
    is_config = "root_agent.yaml" in files
    fields = {
        "name": name,
        "model": model,
        "name_literal": json.dumps(name),
        "model_literal": json.dumps(model),
        "requirement": requirement,
        "requirement_literal": json.dumps(requirement),
        "package_data": _scaffold.CONFIG_PACKAGE_DATA.format(name=name) if is_config else "",
    }
    try:
        for relative, template in files.items():
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            text = template.format(**fields)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write the project into {target}: {exc}") from exc
    return target


def _check_name(name: str) -> None:
    if not name.isidentifier():
        raise CommandError(
            f"{name!r} is not a Python identifier, and NAME is imported as a package: use "
            "letters, digits and underscores, not starting with a digit (e.g. "
            f"{_suggest(name)!r})"
        )
    if keyword.iskeyword(name):
        raise CommandError(f"{name!r} is a Python keyword; choose another NAME (e.g. {name}_agent)")
    if name in sys.stdlib_module_names or name in {"cairn", "google", "tests", "test"}:
        raise CommandError(
            f"{name!r} would hide the module of the same name when imported; choose another "
            f"NAME (e.g. {name}_agent)"
        )


def _suggest(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name.strip()).strip("_")
    if not cleaned:
        return "my_agent"
    return cleaned if cleaned[0].isalpha() else f"agent_{cleaned}"


__all__ = ["create"]
