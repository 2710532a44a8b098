"""Ids that become file names must be single path segments."""

from __future__ import annotations

import re

_DRIVE = re.compile(r"[A-Za-z]:")


def validate_path_segment(value: str, field_name: str) -> None:
    """ValueError unless ``value`` is one non-empty path segment (no separators, no ``..``)."""
    problem = None
    if not value:
        problem = "is empty"
    elif "\x00" in value:
        problem = "contains a null byte"
    elif "/" in value or "\\" in value:
        problem = "contains a path separator"
    elif _DRIVE.match(value):
        problem = "starts with a drive letter"
    elif value in (".", ".."):
        problem = "is a relative path segment"
    if problem:
        raise ValueError(
            f"{field_name} {value!r} {problem}; it names a file, so use letters, digits and "
            "underscores."
        )
