"""Turns a pydantic ValidationError into the field path and message a file error names."""

from __future__ import annotations

from pydantic import ValidationError, alias_generators


def first_error_location(error: ValidationError) -> tuple[str, str]:
    """The first invalid field as a snake_case path (list items as [i]), and its message."""
    first = error.errors()[0]
    path = ""
    for part in first["loc"]:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            # Union branches appear as the type's name; they are not keys of the file.
            if part and (part[0].isupper() or "[" in part or "-" in part):
                continue
            key = alias_generators.to_snake(part)
            path += f".{key}" if path else key
    return path or "(top level)", first["msg"]
