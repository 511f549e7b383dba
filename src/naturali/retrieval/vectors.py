"""A project's chunk vectors for exact cosine search: the float32 rows (what similarity is)
and an int8 copy of them that is what a search scans — a quarter of the memory traffic, with
numkong's SIMD int8 kernels, read in place: one contiguous piece of the rows for each thread.

The top k is exact, not approximate. Every row's quantisation error is known (‖x − its
decoded codes‖, clipping included, its maximum kept as ``error``), and so is the query's, which
bounds how far a row's int8 score can be from its cosine: ``margin``. The k rows of best int8
score are rescored in float32 first; the least of their cosines, t, is a floor under the k-th
best cosine (k rows reach it). A row of the true top k therefore has a cosine of at least t,
and an int8 score of at least t − margin. Those rows are rescored in float32, and their best k
are the float32 top k. (The floor was the k-th best int8 score less 2·margin before; bge-small's
cosines lie close together, and that window held ~7,000 of 108,000 rows at the median query;
this one holds ~1,000, and ~480 since the loud dimensions have a second code column.)
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass

import numkong
import numpy as np
import numpy.typing as npt

from naturali.retrieval import placement

Matrix = npt.NDArray[np.float32]
Codes = npt.NDArray[np.int8]
Mask = npt.NDArray[np.bool_]
Rows = npt.NDArray[np.int64]
Share = tuple[int, int]  # a thread's rows: start, stop

_BLAS_ROWS = 4096  # more rows than this: BLAS's threads pay for themselves
# Below this share of rows a filtered subset is gathered and scored in float32 directly.
_FULL_SCAN_SHARE = 0.3
_HEADROOM = 1.25  # later rows may reach a little past the first rows' largest component
_SLACK = 1e-5  # float32 rounding in the scaled scores
# The rows are scanned on one thread per core (numkong releases the GIL), each thread at least
# this many rows: a woken thread takes ~0.3 ms to run here, a cold scan of these rows ~0.4.
# The caller scans one share; the pool has a thread for each other share, each on a CPU of its
# own (placement.py). The codes are scanned where they lie, by ``cdist``: its packed matrix
# kernel (``dots_pack``, blocks of 16k rows) read a cold 108k-row scan in 3.2 ms on two
# threads against 2.7 unpacked, and kept a second copy of the codes.
_SHARE_ROWS = 16_384
# Dimensions whose components run far larger than the others' (bge-small's largest reaches 0.52
# where most stop near 0.14) get a second code column each, so that the scale is set by the
# other dimensions' largest (_encode): at 108k SciFact chunks the rows' error went from 0.031
# to 0.016 and the rows rescored from ~1,000 to ~480 at the median query (p90 2,400 → 1,060),
# for 4 columns more (the int8 kernel takes 388 as fast as 384).
_LOUD_DIMS = 4
# The k-th best int8 score is looked for among the rows over a threshold taken from a sample
# of every 16th score, deep enough for ~3k rows to pass (_best_scored).
_SAMPLE_STRIDE = 16
_SAMPLE_SLACK = 8
_SHARDS = max(1, min(4, placement.cpu_count()))
_SCAN_POOL = ThreadPoolExecutor(
    max_workers=max(1, _SHARDS - 1),
    thread_name_prefix="naturali-scan",
    initializer=placement.own_cpu,
)


@dataclass(frozen=True)
class Nearest:
    """The best rows, best first, with their float32 cosines."""

    rows: Rows
    cosines: npt.NDArray[np.float32]


class Vectors:
    """Grows by doubling, like the index's other per-row arrays; rows are written once."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.exact: Matrix = np.zeros((0, dimension), np.float32)
        self.codes: Codes = np.zeros((0, dimension), np.int8)
        # The loud dimensions (_encode): fixed with the scale, by the first rows written.
        self.loud: Rows = np.zeros(0, np.int64)
        self.scale = 0.0  # codes = round(x · scale); fixed by the first rows written
        self.error = 0.0  # the largest ‖x − decoded codes‖ of any row
        self.norm = 0.0  # the largest ‖x‖ of any row

    @property
    def nbytes(self) -> int:
        return self.exact.nbytes + self.codes.nbytes

    def grow(self, capacity: int, used: int) -> None:
        exact = np.zeros((capacity, self.dimension), np.float32)
        codes = np.zeros((capacity, self.codes.shape[1]), np.int8)
        exact[:used], codes[:used] = self.exact[:used], self.codes[:used]
        self.exact, self.codes = exact, codes

    def put(self, start: int, rows: Matrix) -> None:
        """Write ``rows`` at ``start``: the float32 rows and their int8 codes."""
        if rows.shape[0] == 0:
            return
        stop = start + rows.shape[0]
        self.exact[start:stop] = rows
        if self.scale == 0.0:
            self._fix_scale(rows)
        codes = self._encode(rows)
        self.codes[start:stop] = codes
        residual = rows - self._decode(codes)
        self.error = max(self.error, float(np.linalg.norm(residual, axis=1).max()))
        self.norm = max(self.norm, float(np.linalg.norm(rows, axis=1).max()))

    def _fix_scale(self, rows: Matrix) -> None:
        """The loud dimensions — the ``_LOUD_DIMS`` of largest component in the first rows —
        and the scale the largest component of every other dimension sets."""
        peaks = np.abs(rows).max(axis=0)
        loud = min(_LOUD_DIMS, self.dimension - 1)
        self.loud = np.sort(np.argsort(-peaks, kind="stable")[:loud]).astype(np.int64)
        largest = float(np.delete(peaks, self.loud).max())
        self.scale = 127.0 / (largest * _HEADROOM) if largest > 0 else 127.0
        # No row has codes yet: they are laid out again, one column wider for each loud one.
        self.codes = np.zeros((self.exact.shape[0], self.dimension + loud), np.int8)

    def _encode(self, rows: Matrix) -> Codes:
        """Each row's int8 codes: round(x · scale) clipped to ±127, then for each loud
        dimension what clipping took from it (a second column the query's code is repeated
        for, so a loud component reaches ±254)."""
        scaled = np.rint(rows * self.scale)
        kept = np.clip(scaled, -127, 127)
        codes = np.empty((rows.shape[0], self.codes.shape[1]), np.int8)
        codes[:, : self.dimension] = kept
        codes[:, self.dimension :] = np.clip(scaled[:, self.loud] - kept[:, self.loud], -127, 127)
        return codes

    def _decode(self, codes: Codes) -> Matrix:
        """The vectors ``codes`` stand for."""
        values = codes[:, : self.dimension].astype(np.float32)
        values[:, self.loud] += codes[:, self.dimension :]
        decoded: Matrix = values / np.float32(self.scale)
        return decoded

    def cosines(self, rows: Rows, query: Matrix) -> npt.NDArray[np.float32]:
        """Float32 cosines of ``rows`` (vectors are unit length).

        A search's candidates (a few hundred to a few thousand rows) go through einsum on
        this thread, not BLAS: OpenBLAS splits even those across its threads, which then
        spin for a while after the call, on the core the next query's embedding needs."""
        matrix = self.exact[rows]
        if rows.size <= _BLAS_ROWS:
            small: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, query)
            return small
        out: npt.NDArray[np.float32] = matrix @ query
        return out

    def nearest(self, query: Matrix, mask: Mask, k: int) -> Nearest:
        """The exact top ``k`` rows of ``mask`` by float32 cosine."""
        subset = int(np.count_nonzero(mask))
        if subset <= k or subset < _FULL_SCAN_SHARE * mask.size or self.scale == 0.0:
            selected = np.flatnonzero(mask)
            return _best(selected, self.cosines(selected, query), k)
        return _best(*self._rescored(query, mask, k), k)

    def _rescored(self, query: Matrix, mask: Mask, k: int) -> tuple[Rows, npt.NDArray[np.float32]]:
        """The rows that may be in the top ``k`` (see the module docstring), rescored; the mask
        holds more than ``k`` rows."""
        query_scale = 127.0 / max(float(np.abs(query).max()), 1e-12)
        query_codes = np.clip(np.rint(query * query_scale), -127, 127).astype(np.int8)
        query_error = float(np.linalg.norm(query - query_codes.astype(np.float32) / query_scale))
        # Each loud dimension's code again, for its second column.
        query_codes = np.concatenate([query_codes, query_codes[self.loud]])
        scores, first = self._scan(query_codes, mask, k)
        margin = (
            float(np.linalg.norm(query)) * self.error + query_error * (self.norm + self.error)
        ) + _SLACK
        floor = float(self.cosines(first, query).min()) - margin
        # The scores stay in int8 units: the floor is scaled once instead of every score.
        candidates = np.flatnonzero(scores >= floor * (self.scale * query_scale))
        return candidates, self.cosines(candidates, query)

    def _scan(self, query_codes: Codes, mask: Mask, k: int) -> tuple[npt.NDArray[np.float32], Rows]:
        """The int8 dot product of the query with every row (-inf outside ``mask``), and the
        ``k`` rows of best product or more (rows tied with the k-th come too: any k or more
        give a floor). The threads score their shares; one partition afterwards finds the
        k-th best (a partition of each share cost ~0.4 ms more, cold)."""
        n = mask.size
        scores = np.empty(n, np.float32)
        every = bool(mask.all())
        query = query_codes[None]

        def scan(share: Share) -> None:
            start, stop = share
            out = scores[start:stop][None]
            # int8 products summed in int32: exact in float32 up to 1,040 dimensions (2^24).
            numkong.cdist(query, self.codes[start:stop], metric="dot", out=out, out_dtype="float32")
            if not every:
                scores[start:stop][~mask[start:stop]] = -np.inf

        shards = _shards(n)
        # Beside the pool threads, each on a CPU of its own (placement.py), when they help.
        # They are woken first: a woken thread takes ~0.3 ms to run here, as long as holding
        # the caller (a move to its CPU), so the two overlap.
        others = [_SCAN_POOL.submit(scan, share) for share in shards[1:]]
        with placement.held() if others else nullcontext():
            scan(shards[0])
        for other in others:
            other.result()
        return scores, _best_scored(scores, k)


def _best_scored(scores: npt.NDArray[np.float32], k: int) -> Rows:
    """The rows whose score is at least the ``k``-th best, in row order.

    A partition of every score took 0.85 ms of a 108k-row scan's 2.9 here (numpy 2.4, Zen 4).
    Every ``_SAMPLE_STRIDE``-th score is partitioned instead, for a threshold that ~3k rows
    pass; the k-th best is then found among those alone. Should fewer than ``k`` pass (a
    sample unlike the whole), every score is partitioned, as before: the rows are the same."""
    n = scores.size
    sample = scores[::_SAMPLE_STRIDE]
    deep = min(sample.size, 3 * k // _SAMPLE_STRIDE + _SAMPLE_SLACK)
    above = np.empty(0, np.int64)
    if sample.size > deep:
        threshold = np.partition(sample, sample.size - deep)[sample.size - deep]
        above = np.flatnonzero(scores >= threshold)
    if above.size < k:
        kth = np.partition(scores, n - k)[n - k]
        return np.flatnonzero(scores >= kth)
    passed = scores[above]
    kth = np.partition(passed, passed.size - k)[passed.size - k]
    best: Rows = above[passed >= kth]
    return best


def _shards(n: int) -> list[Share]:
    """``n`` rows cut into one contiguous piece a thread, as many rows each."""
    count = max(1, min(_SHARDS, n // _SHARE_ROWS))
    cuts = np.linspace(0, n, count + 1).astype(int).tolist()
    return list(itertools.pairwise(cuts))


def _best(rows: Rows, cosines: npt.NDArray[np.float32], k: int) -> Nearest:
    """The ``k`` best of ``rows``, best first (ties by row, for a stable order)."""
    if rows.size > k:
        part = np.argpartition(-cosines, k - 1)[:k]
        rows, cosines = rows[part], cosines[part]
    order = np.lexsort((rows, -cosines))
    return Nearest(rows[order], cosines[order])
