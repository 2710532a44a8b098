"""Property: any plain-JSON state value written to a SQLite file through cairn's value column
reads back exactly, type included (SQLite's numeric affinity turned `2**64` into a float and
`-0.0` and `1.0` into integers before the column held JSON text)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, create_engine, delete, insert, select
from tests.conformance.test_lossless_values import json_values, typed

from cairn.sessions.sql.schema import SESSION_SCOPE, metadata, state


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path: Path = tmp_path_factory.mktemp("values") / "values.db"
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    yield engine
    engine.dispose()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values | st.integers() | st.floats(allow_nan=False, allow_infinity=False))
def test_a_state_value_reads_back_exactly(engine: Engine, value: Any) -> None:
    row = {"app_name": "a", "scope": SESSION_SCOPE, "user_id": "u", "session_id": "s", "key": "k"}
    with engine.begin() as connection:
        connection.execute(delete(state))
        connection.execute(insert(state).values(**row, value=value))
        stored = connection.execute(select(state.c.value)).scalar_one()
    assert typed(stored) == typed(value)
