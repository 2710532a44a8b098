"""Rubrics: testable statements a judge checks a response or a trajectory against."""

from __future__ import annotations

from pydantic import Field

from .common import EvalBaseModel


class RubricContent(EvalBaseModel):
    """What a rubric asserts, as text."""

    text_property: str | None = Field(
        default=None, description="The property checked, e.g. 'The answer names a city.'"
    )


class Rubric(EvalBaseModel):
    """One rubric: an id, what it asserts, and optionally how to read it and its kind."""

    rubric_id: str = Field(description="The rubric's unique id.")
    rubric_content: RubricContent = Field(description="What the rubric asserts.")
    description: str | None = Field(
        default=None, description="How an assessment of this rubric should be read."
    )
    type: str | None = Field(
        default=None,
        description="An UPPER_SNAKE_CASE kind, e.g. 'TOOL_USE_QUALITY'.",
    )


class RubricScore(EvalBaseModel):
    """A judge's verdict on one rubric."""

    rubric_id: str = Field(description="The id of the rubric assessed.")
    rationale: str | None = Field(default=None, description="Why the judge scored it so.")
    score: float | None = Field(
        default=None, description="The score; None when the rubric was not assessed."
    )
