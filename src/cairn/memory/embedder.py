"""The embedder interface: texts in, vectors whose cosine similarity says how close meanings are."""

from __future__ import annotations

import abc
from collections.abc import Sequence


class BaseEmbedder(abc.ABC):
    """Turns texts into vectors for semantic search.

    ``model`` names what made the vectors and ``dimension`` is their length; a
    store records both and never compares vectors of another model. ``embed``
    is blocking (it may load a model and run it), so stores call it on a
    worker thread, never on the event loop.
    """

    model: str
    """The embedding model's name, e.g. ``'sentence-transformers/all-MiniLM-L6-v2'``."""

    dimension: int
    """The length of every vector ``embed`` returns."""

    @abc.abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector of ``dimension`` floats per text, in order."""
