"""The query model: the same network with its matrix products in int8, for one short text.

The shipped model stores int8 weights but multiplies in float32 (onnxruntime dequantizes the
weights at load). For a 20-word query that is ~9 ms of CPU, most of a search. Quantizing the
activations on the fly too (onnxruntime's dynamic quantization, per output channel) runs the
products as int8 kernels: ~4 ms, and the vector stays within cosine 0.98 of the exact one
(SciFact nDCG@10, train / test: the vector leg 0.678 / 0.666 against 0.678 / 0.667, the fused
ranking 0.741 / 0.736 against 0.743 / 0.733; docs/benchmarks.md). Passages are always
embedded by the exact model, so stored vectors never depend on this file.

Built from the verified shipped model on first use (~3 s) and kept under the cache dir, named
by what it was made from; a file that does not load is rebuilt.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import onnx
import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic

log = logging.getLogger(__name__)

RECIPE = "dynamic-int8-per-channel-1"


def query_model(source: Path, source_sha256: str, directory: Path | None) -> bytes:
    """The int8 query model made from ``source``, serialised: cached in ``directory`` (built
    there if absent or unreadable), or built in a temporary directory when there is none."""
    key = hashlib.sha256(f"{source_sha256}\0{RECIPE}\0{versions()}".encode()).hexdigest()[:16]
    return cached(directory, f"query-{key}.onnx", lambda target: _build(source, target))


def versions() -> str:
    """What a built model depends on beside its source: the quantiser's and the runtime's."""
    return f"{ort.__version__}\0{onnx.__version__}"


def cached(directory: Path | None, name: str, build: Callable[[Path], None]) -> bytes:
    """The model ``name`` in ``directory`` when it holds a whole one, else ``build`` writes
    it there first (into a temporary directory when there is none); its bytes."""
    if directory is None:
        with tempfile.TemporaryDirectory(prefix="naturali-query-model-") as work:
            target = Path(work) / name
            build(target)
            return target.read_bytes()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / name
    found = _cached(target)
    if found is not None:
        return found
    build(target)
    return target.read_bytes()


def _cached(path: Path) -> bytes | None:
    """The file's bytes when it holds a whole model; None when it is absent or does not."""
    if not path.exists():
        return None
    data = path.read_bytes()
    try:
        onnx.checker.check_model(data)
    except Exception as error:  # a torn or foreign file: rebuild it
        log.warning("query model %s does not load (%s); rebuilding it", path, error)
        return None
    return data


def _build(source: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".building-") as work:
        folded = Path(work) / "folded.onnx"
        options = ort.SessionOptions()
        # Basic optimisations fold the weights' int8 → float32 casts into plain initializers,
        # which is what the quantizer recognises; they are the same on every CPU.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        quantized(folded, target)


def quantized(source: Path, target: Path) -> None:
    """``source`` with its matrix products in int8 (dynamic, per output channel), written to
    ``target`` whole or not at all (servers may share the cache dir)."""
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".quantising-") as work:
        built = Path(work) / "query.onnx"
        logging.disable(logging.WARNING)  # its advice to pre-process is for calibrated models
        try:
            quantize_dynamic(source, built, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.disable(logging.NOTSET)
        with built.open("rb") as fh:
            os.fsync(fh.fileno())
        os.replace(built, target)
