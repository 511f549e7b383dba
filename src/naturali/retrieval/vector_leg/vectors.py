"""A project's chunk vectors for exact cosine search: the float32 rows (what similarity is)
and an int8 copy of them that is what a search scans — a quarter of the memory traffic, with
SIMD int8 kernels (int8_scan.py), read in place: one contiguous piece of the rows for each thread.

The codes are of each row less the rows' mean, ``centre`` (μ). bge-small's vectors share a
large common part (‖μ‖ ≈ 0.78, a few dimensions of it up to 0.38), which set the scale for
every dimension before; without it the scale is set by how the rows differ. A cosine is
q·x = (q − μ)·(x − μ) + μ·(x − μ) + q·μ: the int8 scan estimates the first term from the
row's codes and the query's codes of q − μ (which leaves out the queries' own common part,
most of μ, so that the query's codes are finer too), the second is the row's ``offset``, kept
in float32, and the third is the same for every row.

The top k is exact, not approximate. Every row's quantisation error is known (‖y − its
decoded codes‖ for y = x − μ, clipping included, its maximum kept as ``error``), and so is the
query's, which bounds how far a row's int8 estimate can be from its cosine: ``margin``. The k
rows of best estimate are rescored in float32 first; the least of their cosines, t, is a floor
under the k-th best cosine (k rows reach it). A row of the true top k therefore has a cosine of
at least t, and an estimate of at least t − margin. Those rows are rescored in float32, and
their best k are the float32 top k. At 108k SciFact chunks that window holds ~200 rows at the
median query (p90 ~290), where the codes of x itself, with a second column for each of the four
loudest dimensions, held ~480 (p90 ~1,070) — and 388 columns scan as slowly as 448 with
numkong's kernel (a masked tail of 64 bytes), 384 a sixth faster.

The float32 rows are read only to rescore that window, a few hundred rows a search, so they
need not be in the process's memory: rows a snapshot holds are read from its file, mapped
(``adopt``; the OS pages in what is read and shares those pages between the processes of one
host), and only rows appended since are held here (``_tail``). The codes, scanned in full by
every search, are held here: 388 bytes a row with their offsets.
"""

from __future__ import annotations

import itertools
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from naturali.retrieval.vector_leg import int8_scan

Matrix = npt.NDArray[np.float32]
Codes = npt.NDArray[np.int8]
Mask = npt.NDArray[np.bool_]
Rows = npt.NDArray[np.int64]
Share = tuple[int, int]  # a thread's rows: start, stop

_BLAS_ROWS = 4096  # more rows than this: BLAS's threads pay for themselves
# Below this share of rows a filtered subset is gathered and scored in float32 directly; above
# it the int8 scan reads every row, the rows outside the filter masked. At 300k chunks a 10%
# filter took 48 ms gathered and 20 scanned, a 30% one 78 and 21; 1%, 11 either way.
_FULL_SCAN_SHARE = 0.02
_HEADROOM = 1.25  # later rows may reach a little past the first rows' largest component
# The centre and the scale are fixed by the first rows, once the index holds this many: fewer
# are scanned in float32 (~0.1 ms). A thousand rows fit the scale well enough that later rows
# are almost never clipped; a few hundred clip some and double the rounding error.
FIT_ROWS = 1024
_SLACK = 1e-5  # float32 rounding in the scaled scores
# The rows are scanned on one thread per core (numkong's kernel releases the GIL), each thread
# at least this many rows: a woken thread takes ~0.3 ms to run here, a cold scan of these rows
# ~0.4. The caller scans the first share and the scan pool the others. The codes are scanned
# where they lie: numkong's packed matrix kernel (``dots_pack``, blocks of 16k rows) read a
# cold 108k-row scan in 3.2 ms on two threads against 2.7 unpacked, and kept a second copy.
_SHARE_ROWS = 16_384
# The k-th best int8 score is looked for among the rows over a threshold taken from a sample
# of every 16th score, deep enough for about 3·k rows to pass (_over).
_SAMPLE_STRIDE = 16
_SAMPLE_SLACK = 8


@dataclass(frozen=True)
class ScanPool:
    """Where a scan's shares run (built by the composition root, compose.py): ``threads``
    shares at most, the caller's own thread scanning the first and ``executor`` the others."""

    executor: Executor
    threads: int


@dataclass(frozen=True)
class Nearest:
    """The best rows, best first, with their float32 cosines."""

    rows: Rows
    cosines: npt.NDArray[np.float32]


class LegScan(Protocol):
    """One search's vector leg over a mask, made ready before its query vector exists."""

    def nearest(self, query: Matrix, pool: ScanPool | None = None) -> Nearest:
        """The top k rows of the mask by float32 cosine, best first."""
        ...


class VectorLeg(Protocol):
    """Where a project's vector leg is answered: this server's memory (``Vectors``), or the
    store (retrieval/vector_leg/stored_vectors.py)."""

    def scan(self, mask: Mask, k: int) -> LegScan: ...

    def cosines(self, rows: Rows, query: Matrix) -> npt.NDArray[np.float32]: ...

    def exact(self, rows: Rows) -> Matrix:
        """The float32 vectors of ``rows`` (zeros for a row another model embedded)."""
        ...


class Vectors:
    """Grows by doubling, like the index's other per-row arrays; rows are written once."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        # Float32 rows [0, m) read from a snapshot's file (m = len(_mapped)), and the rows
        # from m on held here; a row is written once, so a mapped one never changes.
        self._mapped: Matrix = np.zeros((0, dimension), np.float32)
        self._tail: Matrix = np.zeros((0, dimension), np.float32)
        self.codes: Codes = np.zeros((0, dimension), np.int8)
        self.offsets: npt.NDArray[np.float32] = np.zeros(0, np.float32)  # μ·(x − μ) a row
        # Fixed by the first FIT_ROWS rows (_fit); until then a scale of 0: no codes yet.
        self.centre: Matrix = np.zeros(dimension, np.float32)
        self.scale = 0.0  # codes = round((x − centre) · scale)
        self.error = 0.0  # the largest ‖(x − centre) − decoded codes‖ of any row
        self.norm = 0.0  # the largest ‖x − centre‖ of any row
        self._written = 0  # rows written: a snapshot's, then those put since

    @property
    def nbytes(self) -> int:
        """What the process holds: the codes and offsets of the rows written, and the float32
        rows not mapped (capacity not yet written is zeroed pages the OS has not given; a small
        snapshot's rows are read, and held)."""
        m, d = int(self._mapped.shape[0]), self.dimension
        return self._written * (d + 4) + (self._written - m) * d * 4 + self._read_bytes()

    def _read_bytes(self) -> int:
        return 0 if isinstance(self._mapped, np.memmap) else self._mapped.nbytes

    @property
    def mapped_bytes(self) -> int:
        """The float32 rows read from a file: in the page cache as far as they were read."""
        return self._mapped.nbytes - self._read_bytes()

    def adopt(self, mapped: Matrix) -> None:
        """Read the float32 rows [0, len(mapped)) from ``mapped`` (a snapshot's file, mapped
        read-only), no longer from memory. The caller holds the index for writing."""
        held, m = self._mapped.shape[0], mapped.shape[0]
        written = max(self._written, m)  # a restored snapshot's rows are all mapped
        assert held <= m, "a mapping holds at least the rows mapped before"
        tail = np.zeros((written - m, self.dimension), np.float32)
        tail[:] = self._tail[m - held : written - held]
        self._mapped, self._tail, self._written = mapped, tail, written

    def exact(self, rows: Rows) -> Matrix:
        """The float32 rows ``rows``, gathered."""
        m = self._mapped.shape[0]
        if rows.size == 0 or int(rows.max()) < m:
            gathered: Matrix = self._mapped[rows]
            return gathered
        if m == 0:
            held: Matrix = self._tail[rows]
            return held
        out = np.empty((rows.size, self.dimension), np.float32)
        low = rows < m
        out[low], out[~low] = self._mapped[rows[low]], self._tail[rows[~low] - m]
        return out

    def leading(self, n: int) -> Matrix:
        """The first ``n`` float32 rows, where they lie when they are in one part."""
        pieces = self.pieces(n)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def pieces(self, n: int) -> list[Matrix]:
        """The first ``n`` float32 rows as they lie: mapped, then held."""
        m = min(self._mapped.shape[0], n)
        return [p for p in (self._mapped[:m], self._tail[: n - m]) if p.shape[0]]

    def grow(self, capacity: int, used: int) -> None:
        """Room for ``capacity`` rows' codes (the float32 rows make their own, in ``put``)."""
        codes = np.zeros((capacity, self.dimension), np.int8)
        offsets = np.zeros(capacity, np.float32)
        codes[:used], offsets[:used] = self.codes[:used], self.offsets[:used]
        self.codes, self.offsets = codes, offsets

    def _hold(self, stop: int) -> None:
        """Room in the held float32 rows up to row ``stop``, grown by doubling."""
        m, room = self._mapped.shape[0], self._tail.shape[0]
        if stop - m <= room:
            return
        tail = np.zeros((max(stop - m, 2 * room, 1024), self.dimension), np.float32)
        tail[: self._written - m] = self._tail[: self._written - m]
        self._tail = tail

    def put(self, start: int, rows: Matrix) -> None:
        """Write ``rows`` at ``start``: the float32 rows and, once the scale is fixed, their
        int8 codes (the rows before them too, when these are the rows that fix it)."""
        if rows.shape[0] == 0:
            return
        stop, m = start + rows.shape[0], self._mapped.shape[0]
        assert start == self._written, "rows are appended in order, once"
        self._hold(stop)
        self._tail[start - m : stop - m] = rows
        self._written = stop
        if self.scale == 0.0:
            if stop < FIT_ROWS:
                return
            start = 0
            centred = self._fit(self.leading(stop))
        else:
            centred = rows - self.centre
        self._encode(start, centred)

    def _fit(self, rows: Matrix) -> Matrix:
        """Fix the centre, the rows' mean, and the scale the largest component of any row
        less the centre sets (fixed from then on: a search may be scanning the codes); the
        rows less the centre."""
        self.centre = rows.mean(axis=0, dtype=np.float64).astype(np.float32)
        centred: Matrix = rows - self.centre
        largest = max(float(centred.max()), -float(centred.min()))
        self.scale = 127.0 / (largest * _HEADROOM) if largest > 0 else 127.0
        return centred

    def _encode(self, start: int, centred: Matrix) -> None:
        """The codes and offsets of the rows from ``start`` whose centred vectors are
        ``centred``, and the error and norm with them."""
        stop = start + centred.shape[0]
        codes = _int8(centred, self.scale)
        self.codes[start:stop] = codes
        # By einsum, not BLAS: OpenBLAS would split even a few rows over its threads, which
        # then spin on the cores the passages' and queries' models need (see cosines).
        self.offsets[start:stop] = np.einsum("ij,j->i", centred, self.centre)
        residual = centred - self._decode(codes)
        self.error = max(self.error, float(np.linalg.norm(residual, axis=1).max()))
        self.norm = max(self.norm, float(np.linalg.norm(centred, axis=1).max()))

    def _decode(self, codes: Codes) -> Matrix:
        """The centred vectors ``codes`` stand for."""
        decoded: Matrix = codes.astype(np.float32) / np.float32(self.scale)
        return decoded

    def cosines(self, rows: Rows, query: Matrix) -> npt.NDArray[np.float32]:
        """Float32 cosines of ``rows`` (vectors are unit length).

        A search's candidates (a few hundred to a few thousand rows) go through einsum on
        this thread, not BLAS: OpenBLAS splits even those across its threads, which then
        spin for a while after the call, on the core the next query's embedding needs."""
        return _dot(self.exact(rows), query)

    def leading_cosines(self, n: int, query: Matrix) -> npt.NDArray[np.float32]:
        """Float32 cosines of the first ``n`` rows, read where they lie: 0.09 ms for 1,000
        rows here, against 0.26 when they are gathered first (``cosines``)."""
        return _dot(self.leading(n), query)

    def nearest(self, query: Matrix, mask: Mask, k: int, pool: ScanPool | None = None) -> Nearest:
        """The exact top ``k`` rows of ``mask`` by float32 cosine (scanned on this thread
        alone without a ``pool``)."""
        return self.scan(mask, k).nearest(query, pool)

    def scan(self, mask: Mask, k: int) -> Scan:
        """A search's exact top ``k`` of ``mask``, made ready before its query vector exists."""
        return Scan(self, mask, k)


@dataclass(frozen=True)
class _QueryCodes:
    """A query's codes: of q − centre, for the scan's estimates of (q − μ)·(x − μ)."""

    vector: Matrix
    codes: Codes  # one row
    scale: float
    error: float  # ‖(q − μ) − codes / scale‖
    length: float  # ‖q − μ‖
    shift: float  # q·μ, the same for every row
    units: float  # the scan's units: an estimate times this is the cosine's int8 score


class Scan:
    """One search's exact top k over a mask: quantise the query, scan the int8 codes in shares
    over the scan pool (the caller takes the first), rescore the window exactly."""

    def __init__(self, vectors: Vectors, mask: Mask, k: int) -> None:
        self._vectors, self._mask, self._k = vectors, mask, k
        subset = int(np.count_nonzero(mask))
        self.scans = not (
            subset <= k or subset < _FULL_SCAN_SHARE * mask.size or vectors.scale == 0.0
        )
        self._every = subset == mask.size

    def nearest(self, query: Matrix, pool: ScanPool | None = None) -> Nearest:
        """The exact top k rows of the mask by float32 cosine."""
        if not self.scans:
            if self._every:
                every = np.arange(self._mask.size)
                return best(every, self._vectors.leading_cosines(every.size, query), self._k)
            selected = np.flatnonzero(self._mask)
            return best(selected, self._vectors.cosines(selected, query), self._k)
        return best(*self._rescored(query, pool), self._k)

    def _rescored(
        self, query: Matrix, pool: ScanPool | None
    ) -> tuple[Rows, npt.NDArray[np.float32]]:
        """The rows that may be in the top k (see the module docstring), rescored."""
        vectors, k = self._vectors, self._k
        codes = _quantised(vectors, query)
        scores = self._scores(codes, pool)
        margin = (
            codes.length * vectors.error + codes.error * (vectors.norm + vectors.error) + _SLACK
        )
        over, threshold = _over(scores, k)
        estimates = scores[over]
        best = _top_of(estimates, k)  # positions in ``over``
        first = over[best]
        known = vectors.cosines(first, query)
        # The scores stay in int8 units, without q·μ: the floor is brought to them once
        # instead of every score to cosines.
        cut = (float(known.min()) - margin - codes.shift) * codes.units
        if cut < threshold:  # rare: rows under the threshold may reach the cut, so every row
            over, estimates, best = np.arange(scores.size), scores, first
        window = estimates >= cut
        window[best] = False  # rescored already
        rest = over[window]
        return np.concatenate([first, rest]), np.concatenate([known, vectors.cosines(rest, query)])

    def _scores(self, codes: _QueryCodes, pool: ScanPool | None) -> npt.NDArray[np.float32]:
        """Every row's estimate, the shares mapped over the pool and this thread."""
        scores = np.empty(self._mask.size, np.float32)
        if pool is None:  # this thread alone: one share
            self._scan_share((0, self._mask.size), codes, scores)
            return scores
        first, *others = _shards(self._mask.size, pool.threads)
        pooled = [pool.executor.submit(self._scan_share, s, codes, scores) for s in others]
        self._scan_share(first, codes, scores)
        for done in pooled:
            done.result()
        return scores

    def _scan_share(self, share: Share, codes: _QueryCodes, out: npt.NDArray[np.float32]) -> None:
        """Each of the share's rows' estimate in int8 units: the int8 dot product of the
        query's codes with the row's, plus its offset (-inf outside the mask)."""
        start, stop = share
        scores = out[start:stop]
        # int8 products summed in int32: exact in float32 up to 1,040 dimensions (2^24).
        rows, offsets = self._vectors.codes[start:stop], self._vectors.offsets[start:stop]
        int8_scan.estimates(codes.codes[0], rows, offsets, codes.units, scores)
        if not self._every:
            scores[~self._mask[start:stop]] = -np.inf


def _dot(matrix: Matrix, query: Matrix) -> npt.NDArray[np.float32]:
    """``matrix @ query``, by einsum on this thread up to _BLAS_ROWS rows (Vectors.cosines)."""
    if matrix.shape[0] <= _BLAS_ROWS:
        small: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, query)
        return small
    out: npt.NDArray[np.float32] = matrix @ query
    return out


def _int8(values: Matrix, scale: float) -> Codes:
    """``values · scale`` rounded and clipped to ±127: a row's codes, and a query's."""
    codes: Codes = np.clip(np.rint(values * scale), -127, 127).astype(np.int8)
    return codes


def _quantised(vectors: Vectors, query: Matrix) -> _QueryCodes:
    centred = query - vectors.centre
    scale = 127.0 / max(float(np.abs(centred).max()), 1e-12)
    codes = _int8(centred, scale)
    error = float(np.linalg.norm(centred - codes.astype(np.float32) / scale))
    return _QueryCodes(
        vector=query.copy(),
        codes=codes[None],
        scale=scale,
        error=error,
        length=float(np.linalg.norm(centred)),
        shift=float(np.einsum("i,i->", query, vectors.centre)),
        units=vectors.scale * scale,
    )


def _over(scores: npt.NDArray[np.float32], k: int) -> tuple[Rows, float]:
    """The rows, in order, whose score is at least a threshold that at least ``k`` of them
    reach (every row, when there are no more than ``k``), and that threshold.

    A partition of every score took 0.85 ms of a 108k-row scan's 2.9 here (numpy 2.4, Zen 4).
    Every ``_SAMPLE_STRIDE``-th score is partitioned instead, for a threshold that about 3·k
    rows pass. Should fewer than ``k`` pass (a sample unlike the whole), the threshold is the
    k-th best score, from a partition of every score."""
    n = scores.size
    if n <= k:
        return np.arange(n), -np.inf
    sample = scores[::_SAMPLE_STRIDE]
    deep = min(sample.size, 3 * k // _SAMPLE_STRIDE + _SAMPLE_SLACK)
    if sample.size > deep:
        threshold = float(np.partition(sample, sample.size - deep)[sample.size - deep])
        over = np.flatnonzero(scores >= threshold)
        if over.size >= k:
            return over, threshold
    threshold = _kthbest(scores, k)
    return np.flatnonzero(scores >= threshold), threshold


def _top_of(scores: npt.NDArray[np.float32], k: int) -> Rows:
    """The positions, in order, of the scores at least the ``k``-th best (ties included)."""
    if scores.size <= k:
        return np.arange(scores.size)
    return np.flatnonzero(scores >= _kthbest(scores, k))


def _kthbest(scores: npt.NDArray[np.float32], k: int) -> float:
    """The ``k``-th best of more than ``k`` scores, by a partition of them all."""
    return float(np.partition(scores, scores.size - k)[scores.size - k])


def _shards(n: int, threads: int) -> list[Share]:
    """``n`` rows cut into one contiguous piece a thread, as many rows each."""
    count = max(1, min(threads, n // _SHARE_ROWS))
    cuts = np.linspace(0, n, count + 1).astype(int).tolist()
    return list(itertools.pairwise(cuts))


def best(rows: Rows, cosines: npt.NDArray[np.float32], k: int) -> Nearest:
    """The ``k`` best of ``rows``, best first (ties by row, for a stable order)."""
    if rows.size > k:
        part = np.argpartition(-cosines, k - 1)[:k]
        rows, cosines = rows[part], cosines[part]
    order = np.lexsort((rows, -cosines))
    return Nearest(rows[order], cosines[order])
