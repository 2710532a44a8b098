"""Guarantee 10 for state values: every store gives back exactly the JSON value it was given
(type included: ``1.0`` stays a float, ``-0.0`` keeps its sign, big integers stay integers),
or refuses it up front with a typed error naming the key, storing nothing."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn import Event, InvalidEventError, InvalidStateValueError
from cairn.sessions import BaseSessionService, Session
from cairn.sessions.verify import verify_store

APP, USER = "lossless", "u1"

EDGE_VALUES: dict[str, Any] = {
    "int64_overflow": 2**64,
    "int64_max": 2**63 - 1,
    "int64_min": -(2**63),
    "below_int64": -(2**70),
    "beyond_double": 2**53 + 1,
    "many_digits": 10**4299,
    "negative_zero": -0.0,
    "float_one": 1.0,
    "huge_float": 1e308,
    "negative_huge": -1e308,
    "exponent_float": 1e16,
    "tiny": 5e-324,
    "small": 1e-7,
    "precise": 0.1 + 0.2,
    "numeric_text": "3",
    "nested": [-0.0, {"one": 1.0, "big": 2**64, "zero": [-0.0]}],
}


def typed(value: Any) -> Any:
    """``value`` with every number's type and sign showing (Python has ``1 == 1.0 == True``
    and ``0.0 == -0.0``), and dict keys in a fixed order."""
    if isinstance(value, dict):
        return sorted((k, typed(v)) for k, v in value.items())
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, value)


def scoped(values: dict[str, Any]) -> dict[str, Any]:
    """The values under session keys and under ``user:`` and ``app:`` keys."""
    return {
        **values,
        **{f"user:{k}": v for k, v in values.items()},
        **{f"app:{k}": v for k, v in values.items()},
    }


async def reload(store: BaseSessionService, session_id: str) -> Session:
    loaded = await store.get_session(app_name=APP, user_id=USER, session_id=session_id)
    assert loaded is not None
    return loaded


async def test_lossless_json_state_values_come_back_exactly(store: BaseSessionService) -> None:
    initial = {f"initial_{k}": v for k, v in EDGE_VALUES.items()}
    session = await store.create_session(
        app_name=APP, user_id=USER, session_id="s1", state=scoped(initial)
    )
    event = Event(author="agent", state=scoped(EDGE_VALUES))
    await store.append_event(session, event)
    expected = typed({**scoped(initial), **scoped(EDGE_VALUES)})

    loaded = await reload(store, "s1")
    assert typed(loaded.state) == expected
    assert typed(session.state) == expected
    listed = (await store.list_sessions(app_name=APP, user_id=USER)).sessions
    assert [typed(s.state) for s in listed] == [expected]
    page = await store.list_sessions_page(app_name=APP, user_id=USER)
    assert [typed(s.state) for s in page.sessions] == [expected]
    stored_initial = await store.get_initial_state(app_name=APP, user_id=USER, session_id="s1")
    assert typed(stored_initial) == typed(scoped(initial))
    # The event's own JSON (its state delta included) is exact too.
    events = (await store.list_events(app_name=APP, user_id=USER, session_id="s1")).events
    for read_back in (loaded.events[0], events[0]):
        assert read_back.to_json() == event.to_json()
        assert typed(read_back.actions.state_delta) == typed(scoped(EDGE_VALUES))
    # ...so the fold of the log equals the stored state (cairn verify).
    report = await verify_store(store, app_name=APP)
    assert report.ok, [d.describe() for d in report.differences]


def self_referencing() -> dict[str, Any]:
    value: dict[str, Any] = {"name": "loop"}
    value["self"] = value
    return value


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"down": value}
    return value


REFUSED: list[tuple[Any, str]] = [
    (math.nan, "non-finite float nan"),
    (math.inf, "non-finite float inf"),
    ([-math.inf], "non-finite float -inf"),
    (10**4300, "more than 4300 digits"),
    ("a\ud800b", "lone surrogate"),
    ({"k\x00": 1}, "NUL"),
    (self_referencing(), "contains itself"),
    ([self_referencing()], "contains itself"),
    (nested(10_000), "nested more than 100 levels"),
    (nested(101), "nested more than 100 levels"),
]


@pytest.mark.parametrize(("value", "problem"), REFUSED, ids=[p for _, p in REFUSED])
async def test_lossless_json_what_json_cannot_hold_is_refused_naming_the_key(
    store: BaseSessionService, value: Any, problem: str
) -> None:
    session = await store.create_session(app_name=APP, user_id=USER, session_id="s1")
    await store.append_event(session, Event(author="a", state={"kept": 1}))
    for key in ("bad", "user:bad", "app:bad"):
        with pytest.raises(InvalidStateValueError, match=rf"'{key}'.*{problem}"):
            await store.append_event(session, Event(author="a", state={"ok": 2, key: value}))
        with pytest.raises(InvalidStateValueError, match=rf"'{key}'.*{problem}"):
            await store.create_session(
                app_name=APP, user_id=USER, session_id="s2", state={"ok": 2, key: value}
            )
        with pytest.raises(InvalidStateValueError, match=rf"'{key}'.*{problem}"):
            await store.import_session(
                app_name=APP, user_id=USER, session_id="s3", events=[], state={key: value}
            )
    # Nothing partial was stored, and the store goes on working.
    assert await store.get_session(app_name=APP, user_id=USER, session_id="s2") is None
    assert await store.get_session(app_name=APP, user_id=USER, session_id="s3") is None
    loaded = await reload(store, "s1")
    assert loaded.state == {"kept": 1} and len(loaded.events) == 1 and loaded.revision == 1
    await store.append_event(session, Event(author="a", state={"after": [nested(99)]}))
    assert (await reload(store, "s1")).state["after"] == [nested(99)]


async def test_lossless_json_an_event_too_deep_to_read_back_is_refused(
    store: BaseSessionService,
) -> None:
    session = await store.create_session(app_name=APP, user_id=USER, session_id="s1")
    deep = Event(author="a", output=nested(250))
    with pytest.raises(InvalidEventError, match=rf"{deep.id}.*nest too deeply"):
        await store.append_event(session, deep)
    await store.append_event(session, Event(author="a", output=nested(150)))
    loaded = await reload(store, "s1")  # the session still loads
    assert [e.output for e in loaded.events] == [nested(150)]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00")),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(st.characters(codec="utf-8", exclude_characters="\x00")), children
        )
    ),
    max_leaves=12,
)


def drawn_values(count: int) -> list[Any]:
    """``count`` JSON values hypothesis chose (its edge cases among them)."""
    values: list[Any] = []

    @settings(max_examples=count, database=None, deadline=None)
    @given(json_values)
    def collect(value: Any) -> None:
        values.append(value)

    collect()
    return values


async def test_lossless_json_any_json_value_comes_back_exactly(store: BaseSessionService) -> None:
    session = await store.create_session(app_name=APP, user_id=USER, session_id="s1")
    values = {f"v{i}": value for i, value in enumerate(drawn_values(150))}
    keys = list(values)
    for start in range(0, len(keys), 25):
        delta = {f"user:{k}" if i % 2 else k: values[k] for i, k in enumerate(keys[start:][:25])}
        await store.append_event(session, Event(author="a", state=delta))
    loaded = await reload(store, "s1")
    for i, key in enumerate(keys):
        stored = loaded.state[f"user:{key}" if i % 25 % 2 else key]
        assert typed(stored) == typed(values[key]), values[key]
