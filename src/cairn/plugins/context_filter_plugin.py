"""ContextFilterPlugin: send the model only the most recent turns of the conversation."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from google.genai import types

from cairn.agents.context import Context
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.plugins.base_plugin import BasePlugin

logger = logging.getLogger(__name__)


class ContextFilterPlugin(BasePlugin):
    """Trims each model request's contents (never the log: the session keeps everything).

    ``num_invocations_to_keep``: keep that many of the latest user turns (a turn starts with
    the user's message and runs through the model's tool calls until the next one). The
    contents are trimmed only once they hold ``remove_amount`` turns more than that, so the
    prompt prefix changes in steps (kinder to context caches). A cut never separates a
    function response from its call. ``custom_filter(contents) -> contents`` runs after.
    """

    def __init__(
        self,
        num_invocations_to_keep: int | None = None,
        custom_filter: Callable[[list[types.Content]], list[types.Content]] | None = None,
        name: str = "context_filter_plugin",
        remove_amount: int = 1,
    ) -> None:
        if remove_amount < 1:
            raise ValueError(f"remove_amount must be at least 1, got {remove_amount}")
        super().__init__(name)
        self._num_invocations_to_keep = num_invocations_to_keep
        self._custom_filter = custom_filter
        self._remove_amount = remove_amount

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        try:
            contents = list(llm_request.contents)
            keep = self._num_invocations_to_keep
            if keep is not None and keep > 0:
                starts = _turn_starts(contents)
                if len(starts) >= keep + self._remove_amount:
                    contents = contents[_keeping_pairs(contents, starts[-keep]) :]
            if self._custom_filter is not None:
                contents = self._custom_filter(contents)
            llm_request.contents = contents
        except Exception:
            logger.exception("ContextFilterPlugin could not trim the request; it is sent whole")
        return None


def _is_user_message(content: types.Content) -> bool:
    """A message the user wrote (a function response has role user too, but is not one)."""
    return content.role == "user" and not any(
        part.function_response is not None for part in content.parts or []
    )


def _turn_starts(contents: Sequence[types.Content]) -> list[int]:
    """Where each user turn begins: the first of consecutive user messages."""
    starts: list[int] = []
    previous = False
    for index, content in enumerate(contents):
        current = _is_user_message(content)
        if current and not previous:
            starts.append(index)
        previous = current
    return starts


def _keeping_pairs(contents: Sequence[types.Content], cut: int) -> int:
    """``cut`` moved earlier until no kept function response lacks its call."""
    waiting: set[str] = set()
    for index in range(len(contents) - 1, -1, -1):
        for part in reversed(contents[index].parts or []):
            if part.function_response is not None and part.function_response.id:
                waiting.add(part.function_response.id)
            if part.function_call is not None and part.function_call.id:
                waiting.discard(part.function_call.id)
        if index <= cut and not waiting:
            return index
    return 0
