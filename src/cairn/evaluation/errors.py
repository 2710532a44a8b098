"""Typed errors of the evaluation: each names the file or metric and says how to fix it."""

from __future__ import annotations

from cairn.errors import CairnError, NotFoundError


class EvalFileError(CairnError, ValueError):
    """An eval set, results or config file that cannot be read; names the file and field."""

    def __init__(self, *, path: str, field: str | None, problem: str, fix: str) -> None:
        self.path = path
        self.field = field
        where = f"{path}, field `{field}`" if field else path
        super().__init__(f"{where}: {problem}. {fix}")


class UnknownMetricError(NotFoundError, ValueError):
    """A metric name that no evaluator is registered under."""

    def __init__(self, *, metric_name: str, known: list[str]) -> None:
        self.metric_name = metric_name
        super().__init__(
            f"No evaluator is registered for metric `{metric_name}` (registered: "
            f"{', '.join(sorted(known)) or 'none'}). Check the name in the eval config's "
            "`criteria`, or register an evaluator with "
            "MetricEvaluatorRegistry.register_evaluator."
        )


class UserSimulationError(CairnError, RuntimeError):
    """A model-driven simulated user whose model gave no message to send."""


class AgentRunError(CairnError, RuntimeError):
    """An eval case's run ended in an error event (a failed model call, say): the case's
    inference fails, with the agent's error code and message."""

    def __init__(self, *, author: str, error_code: str | None, error_message: str | None) -> None:
        self.author = author
        self.error_code = error_code
        super().__init__(
            f"agent `{author}` stopped with an error ({error_code or 'no code'}): "
            f"{error_message or 'no message'}"
        )


class JudgeModelError(CairnError, RuntimeError):
    """A judge model that failed to give a verdict; names the model and what to check."""

    def __init__(self, *, judge_model: str, problem: str, fix: str) -> None:
        self.judge_model = judge_model
        super().__init__(f"The judge model `{judge_model}`: {problem}. {fix}")


class CustomMetricFunctionError(CairnError, ImportError):
    """The function of a custom metric cannot be found or is not a function."""

    def __init__(self, *, path: str, problem: str) -> None:
        self.path = path
        super().__init__(
            f"Custom metric function `{path}`: {problem}. Name it by its dotted path, "
            'module then function (e.g. "my_package.metrics.exact_answer"), in the eval '
            "config's `custom_metrics` (`code_config.name`), and make sure the module imports."
        )
