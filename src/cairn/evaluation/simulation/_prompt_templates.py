"""Renders the simulator's and the judge's prompt templates (Jinja, sandboxed).

Template text may contain persona strings that themselves name variables (a behaviour that
says "send `{{ stop_signal }}`"): the ``render_string_filter`` filter renders such a string
with the variables of the template that uses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..constants import MISSING_EVAL_DEPENDENCIES_MESSAGE

if TYPE_CHECKING:
    from jinja2.sandbox import SandboxedEnvironment


def _environment() -> SandboxedEnvironment:
    try:
        from jinja2 import pass_context
        from jinja2.runtime import Context
        from jinja2.sandbox import SandboxedEnvironment
    except ImportError as error:  # pragma: no cover (jinja2 comes with the eval extra)
        raise ImportError(MISSING_EVAL_DEPENDENCIES_MESSAGE) from error
    environment = SandboxedEnvironment(keep_trailing_newline=True)

    @pass_context
    def render_string_filter(context: Context, text: str) -> str:
        return environment.from_string(text).render(context.get_all()) if text else ""

    environment.filters["render_string_filter"] = render_string_filter
    return environment


def render_template(template: str, variables: dict[str, Any]) -> str:
    """``template`` with ``variables`` filled in."""
    return _environment().from_string(template).render(variables)


def template_names_variables(template: str, required: list[str]) -> bool:
    """Whether ``template`` is valid Jinja and uses every variable in ``required``."""
    environment = _environment()  # first: it says how to install jinja2 when it is missing
    from jinja2 import TemplateSyntaxError, meta

    try:
        parsed = environment.parse(template)
    except TemplateSyntaxError:
        return False
    used = meta.find_undeclared_variables(parsed)
    return all(name in used for name in required)
