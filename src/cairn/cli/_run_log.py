"""What ``cairn run`` shows of cairn's log: a quiet line per warning, tracebacks only with
``--verbose``.

A failure the framework logs with its traceback (a model call that raised, a
toolset that failed to load) usually reaches the user a second time as an error
event, which the run prints in one line. So without ``--verbose`` such a record
is held, not printed: the error event that reports it takes its exception (to
say more, e.g. which variable a missing API key goes in), and a held record no
event reported is printed as one line when the invocation ends.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.text import Text

LOGGER = "cairn"
VERBOSE_FORMAT = "%(levelname)s %(name)s: %(message)s"


@dataclasses.dataclass(frozen=True)
class Failure:
    """A logged failure with its exception: what was being done, and what was raised."""

    message: str
    error: BaseException

    def line(self) -> str:
        return f"{self.message}: {type(self.error).__name__}: {self.error}"


class RunLog(logging.Handler):
    """Prints cairn's log records on ``console`` (stderr) while a ``cairn run`` lasts."""

    def __init__(self, console: Console, *, verbose: bool) -> None:
        super().__init__(logging.INFO if verbose else logging.WARNING)
        self.console, self.verbose = console, verbose
        self.held: list[Failure] = []
        self.setFormatter(logging.Formatter(VERBOSE_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self.verbose:
                self.console.print(Text(self.format(record), style="dim"))
                return
            error = record.exc_info[1] if record.exc_info else None
            if error is not None:
                self.held.append(Failure(record.getMessage(), error))
                return
            style = "yellow" if record.levelno == logging.WARNING else "red"
            self.console.print(Text(f"{record.levelname.lower()}: {record.getMessage()}", style))
        except Exception:  # a log line must never break the run
            self.handleError(record)

    def take(self, error_message: str) -> Failure | None:
        """The held failure that ``error_message`` (an error event's) reports, if any."""
        for failure in self.held:
            if str(failure.error) and str(failure.error) in error_message:
                self.held.remove(failure)
                return failure
        return None

    def flush_held(self) -> list[Failure]:
        """The failures no error event reported, forgotten here."""
        held, self.held = self.held, []
        return held


@contextmanager
def run_log(console: Console, *, verbose: bool) -> Iterator[RunLog]:
    """``RunLog`` on the ``cairn`` logger for the block; the logger is as it was after."""
    logger = logging.getLogger(LOGGER)
    handler = RunLog(console, verbose=verbose)
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(handler.level)
    logger.propagate = False  # the records are shown here, not by the root's handlers too
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
