"""State: the dict-like view code reads and writes during an invocation."""

from __future__ import annotations

from cairn import State


def test_reads_overlay_pending_writes_on_the_stored_value() -> None:
    value = {"a": 1, "b": 2}
    delta: dict[str, object] = {}
    state = State(value, delta)
    state["b"] = 20
    state["c"] = 30
    assert (state["a"], state["b"], state["c"]) == (1, 20, 30)
    # As in ADK, the invocation's session state shows them at once; the delta is what the
    # event commits (and what makes them durable).
    assert value == {"a": 1, "b": 20, "c": 30}
    assert delta == {"b": 20, "c": 30}
    assert state.to_dict() == {"a": 1, "b": 20, "c": 30}
    assert "c" in state and "zzz" not in state
    assert len(state) == 3 and sorted(state) == ["a", "b", "c"]


def test_discarded_writes_leave_the_session_state_as_it_was() -> None:
    value = {"a": 1, "items": [1]}
    delta: dict[str, object] = {}
    state = State(value, delta)
    state["a"] = 2
    state["a"] = 3
    state["new"] = "x"
    state["items"].append(2)
    state.flush_in_place_edits()
    assert value == {"a": 3, "new": "x", "items": [1, 2]}
    other = State(value, {})
    other["new"] = "someone else's"  # written since by another step: kept
    state.discard()
    assert value == {"a": 1, "items": [1], "new": "someone else's"} and delta == {}


def test_get_setdefault_update() -> None:
    delta: dict[str, object] = {}
    state = State({"a": 1}, delta)
    assert state.get("a") == 1 and state.get("missing") is None and state.get("m", 5) == 5
    assert state.setdefault("a", 99) == 1
    assert state.setdefault("n", []) == []
    state.update({"x": 1, "user:y": 2})
    assert delta == {"n": [], "x": 1, "user:y": 2}
    assert State.APP_PREFIX == "app:" and State.USER_PREFIX == "user:"
    assert State.TEMP_PREFIX == "temp:"


def test_missing_key_raises_key_error() -> None:
    state = State({}, {})
    try:
        state["nope"]
    except KeyError as exc:
        assert "nope" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected KeyError")


def test_in_place_edits_are_recorded_as_writes_without_touching_the_session() -> None:
    value = {"items": [1, 2], "profile": {"name": "a"}, "n": 1}
    delta: dict[str, object] = {}
    state = State(value, delta)
    assert not state.has_delta()
    state["items"].append(3)
    state["profile"]["name"] = "b"
    assert state["items"] == [1, 2, 3], "repeated reads see the edited copy"
    assert value == {"items": [1, 2], "profile": {"name": "a"}, "n": 1}
    assert state.has_delta()
    assert delta == {"items": [1, 2, 3], "profile": {"name": "b"}}


def test_reading_without_editing_records_nothing() -> None:
    delta: dict[str, object] = {}
    state = State({"items": [1], "cfg": {"a": 1}}, delta)
    _ = state["items"], state["cfg"], state.to_dict()
    assert not state.has_delta() and delta == {}


def test_deleting_a_key_hides_it_and_records_the_deletion() -> None:
    value = {"a": 1, "b": 2}
    delta: dict[str, object] = {}
    state = State(value, delta)
    del state["a"]
    assert "a" not in state and state.get("a") is None and state.to_dict() == {"b": 2}
    assert value == {"b": 2} and delta == {"a": None}  # None: ADK's tombstone in the delta
    assert state.removed_keys() == {"a"} and state.has_delta() and len(state) == 1
    state["a"] = 3  # set again: no longer deleted
    assert state["a"] == 3 and state.removed_keys() == set()


def test_deleting_a_missing_key_raises_key_error_and_changes_nothing() -> None:
    state = State({}, {})
    try:
        del state["nope"]
    except KeyError:
        pass
    else:
        raise AssertionError("del of a missing key must raise KeyError")
    assert not state.has_delta()


def test_pop_returns_the_value_or_the_default() -> None:
    state = State({"a": [1]}, {})
    assert state.pop("a") == [1] and "a" not in state
    assert state.pop("a", "gone") == "gone"
    try:
        state.pop("a")
    except KeyError:
        pass
    else:
        raise AssertionError("pop of a missing key without a default must raise KeyError")


def test_a_discarded_deletion_gives_the_key_back() -> None:
    value = {"a": 1}
    state = State(value, {})
    del state["a"]
    state.discard()
    assert value == {"a": 1} and state["a"] == 1
