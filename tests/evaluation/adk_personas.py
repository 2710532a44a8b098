"""Run by google-adk's own python: print each pre-built persona's behaviours, by the names of
their PreBuiltBehaviors members, as JSON {persona id: [member name, ...]}."""

import json
import sys

from google.adk.evaluation.simulation.pre_built_personas import (
    PreBuiltBehaviors,
    get_default_persona_registry,
)


def member(behavior: object) -> str:
    return next(m.name for m in PreBuiltBehaviors if m.value == behavior)


personas = get_default_persona_registry().get_registered_personas()
json.dump({p.id: [member(b) for b in p.behaviors] for p in personas}, sys.stdout)
