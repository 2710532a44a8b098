"""Code the YAML names by reference (no framework import: both frameworks load it)."""


def lookup(city: str) -> dict:
    """Looks up a city's opening hours."""
    return {"city": city, "hours": "9-17"}


def stamp(callback_context):
    callback_context.state["stamped"] = "welcome"


def tag_result(tool, args, tool_context, tool_response):
    if isinstance(tool_response, dict) and tool.name == "lookup":
        return {**tool_response, "tagged": True}
    return None
