"""Whether a model reads back from its stored JSON as an equal object, without the round trip.

A store keeps an event as its JSON (``Event.to_json``: camelCase, ``None`` fields left out)
and gives back what parsing it makes. For most events that is an object equal to the one
appended; not for one holding a tuple, a set or a datetime where any value may go, a
subclass where a model is declared, a non-finite float, ... ``reads_back_equal`` says,
from the object alone, that the round trip would change nothing: a caller that holds the
appended objects may then use them as what the log holds, without reading and parsing it
(the Runner's ``InvocationOutcome.events``). It is conservative: anything it does not
know to survive (an unusual annotation, a private or extra attribute) answers False.
"""

from __future__ import annotations

import enum
import functools
import math
import types as pytypes
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

Check = Callable[[Any], bool]


def reads_back_equal(model: BaseModel) -> bool:
    """Whether parsing ``model``'s JSON (``exclude_none``, by alias) gives an equal object."""
    return _model_check(type(model))(model)


def _native(value: Any, depth: int = 0) -> bool:
    """Plain JSON that parses back to an equal value (what a field of type ``Any`` holds)."""
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth > 100:
        return False  # the JSON reader stops at 200 levels; never near it on this path
    if kind is list:
        return all(_native(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(k) is str and _native(v, depth + 1) for k, v in value.items())
    return False


def _never(value: Any) -> bool:
    return False


def _json_shaped(annotation: Any) -> bool:
    """A type of plain JSON values only: str, int, float, bool, or lists of them."""
    if annotation in (str, int, float, bool):
        return True
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is list and len(args) == 1:
        inner = args[0]
        if typing.get_origin(inner) in (typing.Union, pytypes.UnionType):
            return all(_json_shaped(arg) for arg in typing.get_args(inner))
        return _json_shaped(inner)
    return False


@functools.cache
def _check_for(annotation: Any) -> Check:
    """How to check a non-None value of a field declared ``annotation``."""
    if annotation is Any or annotation is object:
        return _native
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, pytypes.UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        if len(kept) == 1:
            return _check_for(kept[0])
        if all(_json_shaped(arg) for arg in kept):
            # Plain JSON only: the parse picks the member of the value's own type.
            members = [_check_for(arg) for arg in kept]
            return lambda value: _native(value) and any(check(value) for check in members)
        return _never  # which member a parse picks is not known here
    if origin is typing.Annotated:
        return _check_for(args[0])
    if origin is typing.Literal:
        choices = args
        return lambda value: type(value) in (str, int, bool) and value in choices
    if origin is list:
        item = _check_for(args[0]) if args else _native

        def check_list(value: Any) -> bool:
            if type(value) is not list:
                return False
            for each in value:  # noqa: SIM110 - a loop: no generator per list
                if each is None or not item(each):
                    return False
            return True

        return check_list
    if origin is dict:
        if args and args[0] is not str:
            return _never
        entry = _check_for(args[1]) if args else _native
        none_ok = entry is _native

        def check_dict(value: Any) -> bool:
            if type(value) is not dict:
                return False
            for key, item in value.items():
                if type(key) is not str or (item is None and not none_ok) or not entry(item):
                    return False
            return True

        return check_dict
    if origin is set:
        if args and args[0] is str:
            return lambda value: type(value) is set and all(type(v) is str for v in value)
        return _never
    if origin is not None:
        return _never
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return _model_check(annotation)
        if issubclass(annotation, enum.Enum):
            return lambda value: type(value) is annotation
        if annotation is float:
            return lambda value: type(value) is float and math.isfinite(value)
        if annotation in (str, int, bool, bytes):
            return lambda value: type(value) is annotation
    return _never


@functools.cache
def _model_check(cls: type[BaseModel]) -> Check:
    """The check of a value declared as the model ``cls``: exactly that class, no private
    or extra attributes, every field as its annotation allows. None passes only where None
    is the field's default: the JSON leaves a None out, and the parse gives the default."""
    if cls.model_computed_fields or any(f.exclude for f in cls.model_fields.values()):
        return _never  # a computed field would not parse; an excluded one reads as default
    not_none = [
        name
        for name, field in cls.model_fields.items()
        if not (field.default_factory is None and field.default is None)
    ]
    # Per field: the one type a value must have when a type check is all it takes (a str,
    # int, bool or bytes field), else None and the check to call. Filled at the first check:
    # models refer to each other.
    plan: dict[str, tuple[type | None, Check]] = {}

    def check(value: Any) -> bool:
        if type(value) is not cls:
            return False
        if value.__pydantic_extra__ or getattr(value, "__pydantic_private__", None):
            return False
        if not plan:
            plan.update({n: _plan_for(f.annotation) for n, f in cls.model_fields.items()})
        fields = value.__dict__
        for name in not_none:
            if fields.get(name) is None:
                return False
        for name, found in fields.items():
            if found is None:
                continue
            exact, inner = plan[name]
            if exact is not None:
                if type(found) is not exact:
                    return False
            elif not inner(found):
                return False
        return True

    return check


_EXACT = (str, int, bool, bytes)


def _plan_for(annotation: Any) -> tuple[type | None, Check]:
    """``_check_for(annotation)``, with the type to compare inline when that is the check."""
    kept = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, pytypes.UnionType) and len(kept) == 1:
        annotation = kept[0]
    exact = annotation if annotation in _EXACT else None
    return exact, _check_for(annotation)
