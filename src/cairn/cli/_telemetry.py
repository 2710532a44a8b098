"""``cairn run``'s OpenTelemetry export: set up from the ``OTEL_*`` variables when they ask
for one (the SDK is not imported otherwise), flushed before the command exits."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from cairn.cli._errors import CommandError
from cairn.telemetry.env import export_requested


@contextlib.contextmanager
def exported_telemetry() -> Iterator[None]:
    if not export_requested():
        yield
        return
    from cairn.telemetry.setup import TelemetrySetupError, flush_telemetry, setup_telemetry

    try:
        setup_telemetry()
    except TelemetrySetupError as error:
        raise CommandError(str(error)) from None
    try:
        yield
    finally:
        flush_telemetry()
