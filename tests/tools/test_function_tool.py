"""FunctionTool: the schema a model sees, and how calls are checked and run."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel

from cairn import FunctionTool, LongRunningFunctionTool, ToolContext


class Unit(enum.Enum):
    CELSIUS = "C"
    FAHRENHEIT = "F"


class Place(BaseModel):
    city: str
    country: str | None = None


def plan_trip(
    places: list[Place],
    unit: Unit = Unit.CELSIUS,
    days: int | None = None,
    tags: list[str] | None = None,
    budget: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Plan a trip through several places.

    Args:
        places: where to go, in order.
        unit: temperature unit for forecasts.
        days: how many days (optional).
        tags: free-form labels
            that may span lines.
        budget: amount per category.

    Returns:
        The plan.
    """
    return {
        "stops": [p.city for p in places],
        "unit": unit.value,
        "days": days,
        "tags": tags,
        "budget": budget,
    }


def test_schema_from_type_hints_and_docstring() -> None:
    declaration = FunctionTool(plan_trip).declaration()
    assert declaration.name == "plan_trip"
    assert declaration.description == "Plan a trip through several places."
    schema = declaration.parameters_json_schema
    properties = schema["properties"]
    assert schema["required"] == ["places"]
    assert properties["places"]["type"] == "array"
    assert properties["places"]["description"] == "where to go, in order."
    place = schema["$defs"]["Place"]
    assert place["required"] == ["city"] and "country" in place["properties"]
    assert schema["$defs"]["Unit"]["enum"] == ["C", "F"]
    assert properties["unit"]["default"] == "C"
    assert properties["tags"]["description"] == "free-form labels that may span lines."
    assert properties["budget"]["anyOf"][0]["additionalProperties"] == {"type": "number"}


def test_each_declaration_is_the_same_and_its_own() -> None:
    # The schema is made once per tool; a caller that edits one declaration's schema (a
    # before_model_callback trimming it, say) does not change the next model call's.
    tool = FunctionTool(plan_trip)
    first = tool.declaration()
    assert first.parameters_json_schema is not None
    first.parameters_json_schema["properties"].pop("budget")
    first.parameters_json_schema["$defs"]["Unit"]["enum"].append("K")
    second = tool.declaration()
    assert (
        second.parameters_json_schema
        == FunctionTool(plan_trip).declaration().parameters_json_schema
    )
    assert "budget" in second.parameters_json_schema["properties"]
    assert second.parameters_json_schema["$defs"]["Unit"]["enum"] == ["C", "F"]
    # The name and description are read at each call, as before.
    tool.description = "Plan a journey."
    assert tool.declaration().description == "Plan a journey."


async def test_valid_calls_get_typed_arguments() -> None:
    tool = FunctionTool(plan_trip)
    result = await tool.run_async(
        args={"places": [{"city": "Lisbon"}, {"city": "Porto", "country": "PT"}], "unit": "F"},
        tool_context=None,
    )
    assert result == {
        "stops": ["Lisbon", "Porto"],
        "unit": "F",
        "days": None,
        "tags": None,
        "budget": None,
    }


async def test_wrong_arguments_are_explained_to_the_model() -> None:
    tool = FunctionTool(plan_trip)
    missing = await tool.run_async(args={}, tool_context=None)
    assert "places" in missing["error"] and "Field required" in missing["error"]
    wrong = await tool.run_async(
        args={"places": [{"town": "x"}], "unit": "K", "extra": 1}, tool_context=None
    )
    for expected in ("places.0.city", "unit", "extra"):
        assert expected in wrong["error"]


async def test_context_is_injected_by_annotation_or_by_name() -> None:
    def by_annotation(key: str, ctx: ToolContext) -> str:
        return f"{key}:{ctx}"

    def by_name(key: str, tool_context) -> str:  # type: ignore[no-untyped-def]
        return f"{key}:{tool_context}"

    for func in (by_annotation, by_name):
        tool = FunctionTool(func)
        assert list(tool.declaration().parameters_json_schema["properties"]) == ["key"]
        assert await tool.run_async(args={"key": "k"}, tool_context="CTX") == "k:CTX"


async def test_async_functions_and_long_running_tools() -> None:
    async def fetch(url: str) -> str:
        """Fetch a page."""
        return url.upper()

    assert await FunctionTool(fetch).run_async(args={"url": "x"}, tool_context=None) == "X"
    long = LongRunningFunctionTool(fetch)
    assert long.is_long_running and "long-running" in long.declaration().description
    assert FunctionTool(fetch, name="get_page", description="Custom.").declaration().name == (
        "get_page"
    )


def test_a_result_that_is_not_a_dict_goes_under_result_as_in_adk() -> None:
    from cairn.tools.function_tool import to_json_result

    class Forecast(BaseModel):
        city: str
        celsius: int
        note: str | None = None

    assert to_json_result({"city": "Paris"}) == {"city": "Paris"}
    # A model's None fields are left out, as ADK's stored events leave them out.
    assert to_json_result(Forecast(city="Paris", celsius=21)) == {
        "result": {"city": "Paris", "celsius": 21}
    }
    assert to_json_result([1, 2]) == {"result": [1, 2]}
    assert to_json_result(None) == {"result": None}
