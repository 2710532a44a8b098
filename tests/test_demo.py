"""The README's demo: seed 1's weather scenario, printed as a readable trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_weather_demo_prints_the_scenario(tmp_path: Path) -> None:
    def demo() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(ROOT / "examples" / "weather" / "demo.py")],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )

    result = demo()
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
    # The default embedded store is a SQLite file, read back by a second store object.
    assert (tmp_path / ".cairn" / "weather-demo.db").exists()
    assert "s1 has 8 events, revision 8" in result.stdout
    reread = next(line for line in lines if "stored tool-result event's delta" in line)
    assert "last_city" in reread and "temp:" not in reread.split("):", 1)[1]
    # Each run starts from a fresh file, so a second run tells the same story.
    assert demo().stdout == result.stdout
