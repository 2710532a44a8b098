"""Custom metrics: a function of the user's, named by dotted path in the eval config's
``custom_metrics``, computes the metric.

The function is called as ``function(eval_metric, actual_invocations, expected_invocations,
conversation_scenario)`` and returns an EvaluationResult, or an awaitable of one (an async
function). It gets a copy of the metric whose older ``threshold`` field is cleared; the
threshold is in ``eval_metric.criterion``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeAlias, cast

from typing_extensions import override

from .errors import CustomMetricFunctionError
from .eval_case import ConversationScenario, Invocation
from .eval_metrics import EvalMetric
from .evaluator import EvaluationResult, Evaluator

_MetricFunction: TypeAlias = Callable[
    [EvalMetric, list[Invocation], list[Invocation] | None, ConversationScenario | None],
    EvaluationResult | Awaitable[EvaluationResult],
]


def _get_metric_function(custom_function_path: str) -> _MetricFunction:
    """The function at ``module.function``; CustomMetricFunctionError (an ImportError) when
    the module does not import, has no such name, or the name is not callable."""
    module_name, dot, function_name = custom_function_path.rpartition(".")
    if not dot or not module_name or not function_name:
        raise CustomMetricFunctionError(
            path=custom_function_path, problem="it is not a dotted path (module.function)"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise CustomMetricFunctionError(
            path=custom_function_path, problem=f"module `{module_name}` does not import ({error})"
        ) from error
    function = getattr(module, function_name, None)
    if function is None:
        raise CustomMetricFunctionError(
            path=custom_function_path,
            problem=f"module `{module_name}` has no `{function_name}`",
        )
    if not callable(function):
        raise CustomMetricFunctionError(
            path=custom_function_path, problem=f"`{function_name}` is not a function"
        )
    return cast(_MetricFunction, function)


class _CustomMetricEvaluator(Evaluator):
    """Runs the user's metric function."""

    def __init__(self, eval_metric: EvalMetric, custom_function_path: str) -> None:
        self._eval_metric = eval_metric
        self._metric_function = _get_metric_function(custom_function_path)

    @override
    async def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        eval_metric = self._eval_metric.model_copy(deep=True)
        eval_metric.threshold = None
        result = self._metric_function(
            eval_metric, actual_invocations, expected_invocations, conversation_scenario
        )
        if inspect.isawaitable(result):
            return await result
        return result
