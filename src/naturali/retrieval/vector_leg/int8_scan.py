"""Each row's int8 estimate for the vector scan (vectors.Scan): the dot product of its codes
with the query's codes, plus its offset times a scale, in float32, by numkong's kernels on
every CPU. ``cdist`` costs ~40 ns a row whatever its width, ~1.4x what memory takes to bring
a row in; no installed library was faster for one int8 query (numkong's packed AMX kernels,
onnxruntime's ``MatMulInteger``, faiss's 8-bit scalar quantiser and usearch's exact search were
each as slow or slower; docs/benchmarks.md)."""

from __future__ import annotations

import numkong
import numpy as np
import numpy.typing as npt


def estimates(
    query: npt.NDArray[np.int8],
    rows: npt.NDArray[np.int8],
    offsets: npt.NDArray[np.float32],
    units: float,
    out: npt.NDArray[np.float32],
) -> None:
    """``out[i] = rows[i] · query + offsets[i] · units``, for C-contiguous int8 ``rows`` (n × d),
    a query of d codes, and float32 ``offsets`` and ``out`` of n each."""
    numkong.cdist(query[None], rows, metric="dot", out=out[None], out_dtype="float32")
    # One pass, in place: numpy's ``out += offsets * units`` makes a temporary and reads the
    # scores twice (0.19-0.34 ms of a cold 108k-row scan on two threads here, against 0.08-0.10).
    numkong.blend(out, offsets, alpha=1.0, beta=units, out=out)
