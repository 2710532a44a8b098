"""The README's email-review workflow, drafting from its template (no model, no API key)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

WORKFLOW = Path(__file__).resolve().parents[4] / "examples" / "email_review" / "workflow.py"

_spec = importlib.util.spec_from_file_location("cairn_web_test_email_review", WORKFLOW)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

root_agent = _module.build_workflow(model=None)
