"""Each row's int8 estimate for the vector scan (vectors.Scan): the dot product of its codes
with the query's codes, plus its offset times a scale, in float32.

Two kernels give the same integers: naturali's own (``_int8_dot.c``, AVX-512 VNNI, built at
install when a C compiler is there) and numkong's ``cdist`` (the library, everywhere else).
numkong's costs ~40 ns a row whatever its width, ~1.4x what memory takes to bring a row in;
at 108k rows on two threads the scan took 3.9-4.1 ms with it and 3.0 with naturali's, which
reads as fast as numpy's ``max`` over the same codes (scratch measurements, caches swept).
No installed library reached that speed for one int8 query: numkong's packed (AMX) kernels,
onnxruntime's ``MatMulInteger``, faiss's 8-bit scalar quantiser and usearch's exact search were
each as slow as ``cdist`` or slower (docs/benchmarks.md)."""

from __future__ import annotations

from types import ModuleType

import numkong
import numpy as np
import numpy.typing as npt

_int8_dot: ModuleType | None
try:
    from naturali.retrieval import _int8_dot
except ImportError:  # not built (no C compiler at install): the library's kernel
    _int8_dot = None

KERNEL = "naturali-vnni" if _int8_dot is not None and _int8_dot.supported() else "numkong"


def estimates(
    query: npt.NDArray[np.int8],
    rows: npt.NDArray[np.int8],
    offsets: npt.NDArray[np.float32],
    units: float,
    out: npt.NDArray[np.float32],
) -> None:
    """``out[i] = rows[i] · query + offsets[i] · units``, for C-contiguous int8 ``rows`` (n × d),
    a query of d codes, and float32 ``offsets`` and ``out`` of n each."""
    d = rows.shape[1]
    if KERNEL == "naturali-vnni":
        assert _int8_dot is not None
        if d % _int8_dot.BLOCK == 0 and d <= _int8_dot.MAX_DIMENSION:  # the rows it takes
            _int8_dot.scan(rows, d, query, offsets, units, out)
            return
    numkong.cdist(query[None], rows, metric="dot", out=out[None], out_dtype="float32")
    # One pass, in place: numpy's ``out += offsets * units`` makes a temporary and reads the
    # scores twice (0.19-0.34 ms of a cold 108k-row scan on two threads here, against 0.08-0.10).
    numkong.blend(out, offsets, alpha=1.0, beta=units, out=out)
