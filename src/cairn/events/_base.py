"""The pydantic base shared by every event-layer model: camelCase JSON, snake_case accepted."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Fields are snake_case in Python and camelCase in JSON; both spellings are accepted."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="forbid",
        arbitrary_types_allowed=True,
    )
