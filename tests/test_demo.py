"""The README's demo: seed 1's weather scenario, printed as a readable trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_weather_demo_prints_the_scenario() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "weather" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # The tool result's delta touches every scope, temp: included (the caller sees it) ...
    assert any("temp:lookup_attempt" in line and "app:weather_provider" in line for line in lines)
    # ... but no state read back from the store carries a temp: key.
    states = [line for line in lines if "state s" in line and "sees:" in line]
    assert states and not any("temp:" in line for line in states)
    s2_before = next(line for line in states if "state s2 sees" in line)
    assert '"user:temperature_unit": "C"' in s2_before and "last_city" not in s2_before
    assert "Hangzhou: 23°C" in result.stdout and "Which city do you mean?" in result.stdout
