"""The vector scan's int8 estimates (retrieval/vector_leg/int8_scan.py): the exact integer dot
products of the codes, plus each row's offset times the scale, by numkong on every CPU."""

from __future__ import annotations

import numpy as np
import pytest

from naturali.retrieval.vector_leg import int8_scan


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


@pytest.mark.parametrize(("n", "d"), [(1, 384), (7, 64), (4099, 384), (513, 1024), (500, 100)])
def test_the_estimates_are_the_exact_products_plus_the_offsets(n: int, d: int) -> None:
    rows, query, offsets, units = _case(n, d)
    out = np.full(n, np.nan, np.float32)
    int8_scan.estimates(query, rows, offsets, units, out)
    assert np.allclose(out, _expected(rows, query, offsets, units), rtol=0, atol=1e-3)
