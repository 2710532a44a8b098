"""The base of the evaluation data model: camelCase JSON names, snake_case Python names."""

from __future__ import annotations

import pydantic
from pydantic import alias_generators


class EvalBaseModel(pydantic.BaseModel):
    """A model that reads and writes camelCase JSON keys and also accepts snake_case ones.

    Unknown keys are rejected, so a misspelt field in an eval file is an error, not a silent
    default.
    """

    model_config = pydantic.ConfigDict(
        alias_generator=alias_generators.to_camel,
        populate_by_name=True,
        extra="forbid",
        arbitrary_types_allowed=True,
    )
