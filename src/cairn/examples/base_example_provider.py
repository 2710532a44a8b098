"""Where examples come from when they depend on the user's message."""

from __future__ import annotations

import abc

from cairn.examples.example import Example


class BaseExampleProvider(abc.ABC):
    """Picks the examples worth showing for one user message (from a store, by similarity,
    ...). ``get_examples`` may be sync or ``async``; a sync one runs off the event loop."""

    @abc.abstractmethod
    def get_examples(self, query: str) -> list[Example]:
        """The examples for ``query``, the text of the user's message."""


__all__ = ["BaseExampleProvider"]
