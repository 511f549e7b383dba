"""The vector scan's two int8 kernels (retrieval/int8_scan.py) give the same estimates: the exact
integer dot products of the codes, plus each row's offset times the scale."""

from __future__ import annotations

import numkong
import numpy as np
import pytest

from naturali.retrieval import int8_scan

_int8_dot = int8_scan._int8_dot  # None when the install built no extension
VNNI = _int8_dot is not None and _int8_dot.supported()
needs_vnni = pytest.mark.skipif(not VNNI, reason="this CPU has no AVX-512 VNNI")


def _case(n: int, d: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    rng = np.random.default_rng(seed)
    rows = rng.integers(-127, 128, (n, d), dtype=np.int8)
    rows[:2] = 127  # the extremes: sums of the largest products stay exact
    query = rng.integers(-127, 128, d, dtype=np.int8)
    offsets = rng.standard_normal(n).astype(np.float32)
    return rows, query, offsets, 37.25


def _expected(rows: np.ndarray, query: np.ndarray, offsets: np.ndarray, units: float) -> np.ndarray:
    dots = (rows.astype(np.int64) @ query.astype(np.int64)).astype(np.float32)
    return dots + offsets * np.float32(units)


def test_the_built_kernel_is_the_one_a_scan_uses_on_a_cpu_that_runs_it() -> None:
    assert ("naturali-vnni" if VNNI else "numkong") == int8_scan.KERNEL


@needs_vnni
@pytest.mark.parametrize(("n", "d"), [(0, 384), (1, 384), (7, 64), (4099, 384), (513, 1024)])
def test_the_kernel_gives_the_exact_products_plus_the_offsets(n: int, d: int) -> None:
    """Row counts around its four-row step; the widest rows it takes."""
    rows, query, offsets, units = _case(n, d)
    out = np.full(n, np.nan, np.float32)
    _int8_dot.scan(rows, d, query, offsets, units, out)
    assert np.array_equal(out, _expected(rows, query, offsets, units))


@needs_vnni
def test_the_kernel_and_the_librarys_agree() -> None:
    """The same integers; with the offsets, the same floats to float32's rounding."""
    rows, query, offsets, units = _case(10_001, 384, seed=11)
    for scale in (0.0, units):
        ours, theirs = np.empty(10_001, np.float32), np.empty(10_001, np.float32)
        _int8_dot.scan(rows, 384, query, offsets, scale, ours)
        numkong.cdist(query[None], rows, metric="dot", out=theirs[None], out_dtype="float32")
        numkong.blend(theirs, offsets, alpha=1.0, beta=scale, out=theirs)
        assert np.allclose(ours, theirs, rtol=1e-6, atol=0) and (scale or (ours == theirs).all())


@needs_vnni
@pytest.mark.parametrize(
    ("n", "d", "query_len", "out_len"),
    [(8, 100, 100, 8), (8, 2048, 2048, 8), (8, 384, 383, 8), (8, 384, 384, 7)],
)
def test_the_kernel_refuses_shapes_it_cannot_scan(
    n: int, d: int, query_len: int, out_len: int
) -> None:
    rows = np.zeros((n, d), np.int8)
    out = np.zeros(out_len, np.float32)
    with pytest.raises(ValueError):
        _int8_dot.scan(rows, d, np.zeros(query_len, np.int8), np.zeros(n, np.float32), 1.0, out)


def test_rows_the_kernel_cannot_take_go_to_the_library() -> None:
    """384 columns scan in the kernel where it runs; 100 (not whole 64-byte blocks) in numkong's."""
    for d in (384, 100):
        rows, query, offsets, units = _case(1000, d)
        out = np.empty(1000, np.float32)
        int8_scan.estimates(query, rows, offsets, units, out)
        assert np.allclose(out, _expected(rows, query, offsets, units), rtol=0, atol=1e-3)


def test_without_the_kernel_a_scan_uses_the_librarys(monkeypatch: pytest.MonkeyPatch) -> None:
    """As when the install found no C compiler (the extension is optional)."""
    monkeypatch.setattr(int8_scan, "KERNEL", "numkong")
    called: list[str] = []
    cdist = numkong.cdist
    monkeypatch.setattr(numkong, "cdist", lambda *a, **k: called.append("cdist") or cdist(*a, **k))
    rows, query, offsets, units = _case(500, 384)
    out = np.empty(500, np.float32)
    int8_scan.estimates(query, rows, offsets, units, out)
    assert called == ["cdist"]
    assert np.allclose(out, _expected(rows, query, offsets, units), rtol=0, atol=1e-3)
