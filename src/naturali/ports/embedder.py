"""The embedder port: texts in, L2-normalised float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    model_id: str
    dimension: int
    # The fused ranking's share for the vector leg: how far this model's cosines are trusted
    # against BM25 (``fusion.blend``).
    vector_weight: float
    # How the ingest worker counts this model's word pieces when it cuts passages:
    # "wordpiece" (the shipped models' tokenizer) or "words" (a stand-in for an unknown one).
    token_counter: str

    def embed(self, texts: Sequence[str], *, urgent: bool = False) -> Vectors:
        """Return one unit-length row per text (shape ``len(texts) × dimension``).

        ``urgent``: a search or a write's answer is waiting on these few texts, so they are
        embedded now, at the searches' priority, not queued behind bulk passages."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """One search query's unit vector (shape ``dimension``), comparable with the
        passages' vectors; it may come from a faster approximation of the same model."""
        ...

    def count_tokens(self, text: str) -> int:
        """Word pieces the model would see for ``text`` (without special tokens)."""
        ...

    def queued(self) -> int:
        """Passage batches waiting for a thread to embed them (for metrics)."""
        ...
