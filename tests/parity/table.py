"""Print the parity table: each app on cairn against google-adk 2.13.0.

    .venv/bin/python tests/parity/table.py [app ...]

Columns: the app, its feature, whether cairn matches ADK with the app ported by rewriting
`google.adk` to `cairn` only, whether it matches once the ADK module paths cairn lacks are
served from where cairn has the names (drive.py --alias-missing; the names it served are
listed below the table), and the recorded reason (cases.DIFFERS) or the first difference.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.parity import harness
from tests.parity.cases import DIFFERS, FEATURES


def main() -> None:
    apps = sys.argv[1:] or harness.app_names()
    adk = harness.run_driver(harness.adk_python(), "adk", apps)
    cairn = harness.run_driver(sys.executable, "cairn", apps)
    aliased = harness.run_driver(sys.executable, "cairn", [*apps, "--alias-missing"])
    served: set[str] = set()
    rows = [("app", "feature", "ported as is", "with module paths", "difference")]
    for app in apps:
        served.update(aliased[app].pop("aliased", []))
        strict = "matches" if adk[app] == cairn[app] else "differs"
        loose = "matches" if adk[app] == aliased[app] else "differs"
        reason = DIFFERS.get(app, "")
        if strict == "differs" and not reason:
            reason = "unrecorded: " + harness.first_difference(adk[app], cairn[app])
        if strict == "matches" and reason:
            reason = "matches now: remove it from cases.DIFFERS (was: " + reason + ")"
        if loose == "differs" and strict == "matches":
            reason = harness.first_difference(adk[app], aliased[app])
        rows.append((app, FEATURES.get(app, "?"), strict, loose, reason))
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print(" | ".join([*cells, row[4]]))
    matching = sum(row[2] == "matches" for row in rows[1:])
    print(f"\n{matching} of {len(rows) - 1} apps match as ported; ", end="")
    print(f"{sum(row[3] == 'matches' for row in rows[1:])} with the module paths served.")
    if served:
        print("\nADK paths served from elsewhere in cairn (--alias-missing):")
        for line in sorted(served):
            print(f"  {line}")


if __name__ == "__main__":
    main()
