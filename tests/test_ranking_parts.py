"""The ranking's parts on their own: the int8 scan's top k is the float32 top k, the BM25
index survives a
snapshot, the index's readers-writer gate neither blocks syncs on waiting searches nor
starves them, and searches selecting rows side by side change nothing in the index."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, replace
from typing import Any

import numpy as np
import pytest

from naturali.model import Chunk, SourceType
from naturali.retrieval.hybrid import Asked, Ranking, rank
from naturali.retrieval.index import ProjectIndex, Selection
from naturali.retrieval.indexes.gate import Gate
from naturali.retrieval.lexical import LexicalIndex
from naturali.retrieval.owners import OwnerAttrs, owner_key
from naturali.retrieval.vector_leg import int8_scan
from naturali.retrieval.vector_leg import vectors as vectors_module
from naturali.retrieval.vector_leg.vectors import FIT_ROWS, ScanPool, Vectors
from naturali.text.tokens import query_term_counts


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _float32_top(matrix: np.ndarray, mask: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    scores = matrix @ query
    scores[~mask] = -np.inf
    return np.sort(scores)[::-1][: min(k, int(mask.sum()))]


@pytest.mark.parametrize(("rows", "share"), [(6000, 1.0), (6000, 0.6), (6000, 0.05), (40_000, 0.9)])
def test_the_int8_scan_returns_the_float32_top_k(rows: int, share: float) -> None:
    """40,000 rows: two threads' shares, one of them masked in part."""
    rng = np.random.default_rng(7)
    # Clustered rows, so many cosines sit close to the k-th and quantisation could swap them.
    centres = rng.standard_normal((20, 64))
    matrix = _unit(centres[rng.integers(0, 20, rows)] + 0.3 * rng.standard_normal((rows, 64)))
    # The first rows are spread evenly (small components): the scale they fix clips later rows.
    matrix[:3000] = _unit(
        centres[rng.integers(0, 20, 3000)] + 2.0 * rng.standard_normal((3000, 64))
    )
    vectors = Vectors(64)
    vectors.grow(rows, 0)
    vectors.put(0, matrix[:3000])
    vectors.put(3000, matrix[3000:])
    mask = rng.random(rows) < share
    for trial in range(40):
        query = _unit(centres[trial % 20][None] + 0.2 * rng.standard_normal((1, 64)))[0]
        for k in (1, 10, 100):
            found = vectors.nearest(query, mask, k)
            assert mask[found.rows].all()
            assert np.allclose(found.cosines, matrix[found.rows] @ query)
            # Tie-aware: the scores found are the float32 top k's scores, best first.
            assert np.allclose(found.cosines, _float32_top(matrix, mask, query, k), atol=1e-6)


def test_rows_whose_cosines_lie_close_together_are_rescored_in_a_narrow_window() -> None:
    """Cosines as bge-small's lie (the 100th best 0.85, the median 0.77): the rows rescored
    are those within one margin of the least cosine among the int8 top k, not two margins of
    its k-th int8 score, which would take several times as many."""
    rng = np.random.default_rng(3)
    centre = rng.standard_normal(64)
    matrix = _unit(centre + 0.6 * rng.standard_normal((20_000, 64)))
    vectors = Vectors(64)
    vectors.grow(20_000, 0)
    vectors.put(0, matrix)
    query = _unit((centre + 0.6 * rng.standard_normal(64))[None])[0]
    mask = np.ones(20_000, bool)
    rows, cosines = vectors.scan(mask, 100)._rescored(query, None)
    scores = np.sort(matrix @ query)[::-1]
    assert set(np.argsort(-(matrix @ query))[:100]) <= set(rows.tolist())  # exact
    kth_int8_window = int(np.count_nonzero(scores >= scores[99] - 2 * 2 * vectors.error))
    assert rows.size < 1500 and rows.size * 3 < kth_int8_window


def test_clipped_rows_widen_the_margin_but_stay_exact() -> None:
    rng = np.random.default_rng(11)
    first = _unit(
        np.tile(np.eye(8, dtype=np.float32)[0], (FIT_ROWS, 1)) + 0.1 * rng.random((FIT_ROWS, 8))
    )
    vectors = Vectors(8)
    vectors.grow(FIT_ROWS + 2, 0)
    vectors.put(0, first)
    error_before = vectors.error
    later = np.zeros((2, 8), np.float32)
    later[0, 4], later[1, 5] = 1.0, 1.0
    vectors.put(FIT_ROWS, later)
    assert vectors.error > error_before  # 1.0 is past the scale the first rows fixed: clipped
    mask = np.ones(FIT_ROWS + 2, bool)
    found = vectors.nearest(later[0], mask, 1)
    assert found.rows.tolist() == [FIT_ROWS]


def test_the_first_rows_are_scanned_in_float32_until_they_fix_the_codes() -> None:
    rng = np.random.default_rng(12)
    matrix = _unit(rng.standard_normal((FIT_ROWS + 500, 16)))
    vectors = Vectors(16)
    vectors.grow(FIT_ROWS + 500, 0)
    vectors.put(0, matrix[:500])
    assert vectors.scale == 0.0 and not vectors.scan(np.ones(500, bool), 10).scans
    for mask in (np.ones(500, bool), np.arange(500) % 3 == 0):  # the rows in place; gathered
        found = vectors.nearest(matrix[7], mask, 10)
        assert np.allclose(found.cosines, _float32_top(matrix[:500], mask, matrix[7], 10))
        assert mask[found.rows].all()
    vectors.put(500, matrix[500:])  # past FIT_ROWS: every row so far gets its codes
    assert vectors.scale > 0 and np.abs(vectors.codes[:500]).max() > 0
    assert np.allclose(vectors.centre, matrix.mean(axis=0), atol=1e-6)
    mask = np.ones(FIT_ROWS + 500, bool)
    assert vectors.scan(mask, 10).scans
    found = vectors.nearest(matrix[3], mask, 10)
    assert found.rows[0] == 3
    assert np.allclose(found.cosines, _float32_top(matrix, mask, matrix[3], 10), atol=1e-6)


def test_the_codes_are_of_each_row_less_the_rows_mean() -> None:
    """As bge-small's vectors have: a large part every row shares (here dimension 3). The
    codes leave it out, so the scale is set by how rows differ and nothing clips; the shared
    part comes back as each row's offset, and the scan stays exact."""
    rng = np.random.default_rng(5)
    raw = 0.05 * rng.standard_normal((3000, 64))
    raw[:, 3] += 0.3
    matrix = _unit(raw)
    vectors = Vectors(64)
    vectors.grow(3000, 0)
    vectors.put(0, matrix)
    centred = matrix - matrix.mean(axis=0)
    assert vectors.codes.shape == (3000, 64)
    assert np.isclose(vectors.scale, 127.0 / (np.abs(centred).max() * 1.25), rtol=1e-5)
    # Rounding alone: no component is clipped.
    assert np.abs(vectors._decode(vectors.codes) - centred).max() <= 0.5 / vectors.scale + 1e-6
    assert np.allclose(vectors.offsets, centred @ vectors.centre, atol=1e-6)
    mask = np.ones(3000, bool)
    for trial in range(10):
        query = _unit(raw[trial][None] + 0.05 * rng.standard_normal((1, 64)))[0]
        found = vectors.nearest(query, mask, 10)
        assert np.allclose(found.cosines, _float32_top(matrix, mask, query, 10), atol=1e-6)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="affinity is Linux's")
def test_the_scan_has_a_share_for_each_cpu_the_process_may_run_on() -> None:
    """Not one for each of the machine's: a container's cpuset may hold 2 of a host's 64."""
    code = (
        "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
        "from naturali.compose import concurrency; from naturali.settings import Settings; "
        "c = concurrency(Settings()); print(c.scan.threads, c.lanes)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1 1"


def test_a_term_the_query_repeats_weighs_more_but_saturates() -> None:
    """A long question that names its subject three times is mostly about it (BM25's
    query-term weight): the passage holding that term outranks one holding a term said once,
    but a term said ten times does not drown the others."""
    index = LexicalIndex()
    for row, text in enumerate(["retrieval of documents", "library classification systems"]):
        index.add(row, text)
    mask = np.ones(2, bool)
    said = query_term_counts("classification of library retrieval: retrieval, retrieval")
    assert said == {"classif": 1, "librari": 1, "retriev": 3}
    scores = index.score(said, mask, 2).scores
    assert scores[0] > scores[1]
    once = index.score(Counter(dict.fromkeys(said, 1)), mask, 2).scores
    assert once[0] < once[1]  # two matching terms against one
    drowned = index.score(Counter({"retriev": 10, "classif": 1, "librari": 1}), mask, 2).scores
    assert drowned[0] < 3 * drowned[1]  # 9·10/(8 + 10) = 5 times, not 10 (two terms: 2)


def test_a_passage_is_as_long_as_the_words_it_says_not_how_it_says_them() -> None:
    """Stopwords stay indexed (a query of nothing else finds them) but do not lengthen a
    passage: one that wraps the same evidence in "of the… that is…" ranks level with the
    terse one, and a longer one saying more ranks under both."""
    index = LexicalIndex()
    texts = [
        "bone resorption in rats",
        "it is the resorption of the bone in these rats",
        "bone resorption in rats, mice, dogs, cattle and sheep",
    ]
    for row, text in enumerate(texts):
        index.add(row, text)
    assert index.lengths().tolist() == [3, 3, 7]
    scores = index.score(query_term_counts("bone resorption"), np.ones(3, bool), 3).scores
    assert scores[0] == pytest.approx(scores[1]) and scores[1] > scores[2]
    found = index.score(query_term_counts("the"), np.ones(3, bool), 3).scores
    assert found[1] > 0 and found[0] == 0


def test_a_fiscal_periods_year_is_a_term_of_its_own() -> None:
    """ "FY2018" asks for the report that prints "2018", and "fiscal 2018" is found by it;
    the word itself still matches whole, and a word that is no period keeps its number."""
    index = LexicalIndex()
    texts = ["FY2018 capital expenditure", "capital expenditure, fiscal 2018", "capital 2017"]
    for row, text in enumerate(texts):
        index.add(row, text)
    said = query_term_counts("FY2018 capital")
    assert said == {"fy2018": 1, "2018": 1, "capit": 1}
    scores = index.score(said, np.ones(3, bool), 3).scores
    assert scores[0] > scores[1] > scores[2] > 0
    assert query_term_counts("SHA2560 model") == {"sha2560": 1, "model": 1}
    assert index.lengths().tolist() == [3, 4, 2]  # the year is no word more


def test_a_documents_path_finds_its_passages_but_does_not_lengthen_them() -> None:
    index = LexicalIndex()
    index.add(0, "bone resorption in rats", "/corpus/MED-12.md")
    index.add(1, "bone resorption in rats")
    assert index.lengths().tolist() == [3, 3]  # scored alike for what they say
    scores = index.score(query_term_counts("bone resorption"), np.ones(2, bool), 2).scores
    assert scores[0] == pytest.approx(scores[1])
    found = index.score(query_term_counts("MED-12"), np.ones(2, bool), 2).scores
    assert found[0] > 0 and found[1] == 0


def test_a_snapshot_of_the_lexical_index_scores_the_same() -> None:
    index = LexicalIndex()
    texts = ["alpha beta gamma", "beta beta delta", "gamma epsilon", "alpha alpha alpha zeta"]
    for row, text in enumerate(texts):
        index.add(row, text)
    restored = LexicalIndex.from_arrays(index.to_arrays())
    restored.add(4, "alpha delta")
    index.add(4, "alpha delta")
    mask = np.array([True, True, False, True, True])
    for query in (["alpha"], ["beta", "delta"], ["zeta", "gamma"]):
        assert np.allclose(
            index.score(Counter(query), mask, 4).scores,
            restored.score(Counter(query), mask, 4).scores,
        )


def test_a_restored_lexical_index_saves_every_term_searched_added_to_or_not() -> None:
    """A snapshot's postings stay in its flat arrays until a term is searched or added to; a
    second snapshot holds them all, as saved, as searched, as added to and new."""
    texts = ["alpha beta gamma", "beta beta delta", "gamma epsilon"]
    index = LexicalIndex()
    for row, text in enumerate(texts):
        index.add(row, text)
    restored = LexicalIndex.from_arrays(index.to_arrays())
    restored.score(Counter(["beta"]), np.ones(3, bool), 3)  # made from the arrays
    before = restored.memory_bytes()
    restored.add(3, "delta omega")  # delta: added to; omega: a new term
    index.add(3, "delta omega")
    assert restored.memory_bytes() >= before + 250  # omega's entry counted
    again = LexicalIndex.from_arrays(restored.to_arrays())
    assert sorted(again.to_arrays().vocabulary) == sorted(index.to_arrays().vocabulary)
    mask = np.ones(4, bool)
    for term in ("alpha", "beta", "gamma", "delta", "epsilon", "omega"):
        assert np.allclose(
            index.score(Counter([term]), mask, 4).scores,
            again.score(Counter([term]), mask, 4).scores,
        ), term
        assert np.allclose(
            index.score(Counter([term]), mask, 4).scores,
            restored.score(Counter([term]), mask, 4).scores,
        ), term


def test_an_index_built_at_once_answers_as_one_appended_row_by_row() -> None:
    """A project read whole from the store is indexed at once, as flat arrays; searched,
    appended to and saved, it answers as the index appended row by row."""
    texts = ["alpha beta gamma", "beta beta delta", "gamma epsilon", "alpha alpha zeta"]
    appended = LexicalIndex()
    for row, text in enumerate(texts + ["delta omega"]):
        appended.add(row, text)
    built = LexicalIndex.built(texts)
    assert LexicalIndex.from_arrays(built.to_arrays()).lengths().tolist() == [3, 3, 2, 3]
    built.score(Counter(["beta"]), np.ones(4, bool), 4)
    built.add(4, "delta omega")
    saved = LexicalIndex.from_arrays(built.to_arrays())
    mask = np.ones(5, bool)
    for term in ("alpha", "beta", "delta", "omega", "zeta", "missing"):
        for index in (built, saved):
            assert np.allclose(
                appended.score(Counter([term]), mask, 5).scores,
                index.score(Counter([term]), mask, 5).scores,
            ), term


def test_a_waiting_sync_holds_new_readers_back() -> None:
    gate = Gate()
    events: list[str] = []
    reader_in = threading.Event()

    def writer() -> None:
        with gate.write():
            events.append("sync")

    def late_reader() -> None:
        with gate.read():
            events.append("late read")

    with gate.read():
        sync = threading.Thread(target=writer)
        sync.start()
        while not gate._writers_waiting:  # the sync is queued behind this reader
            reader_in.wait(0.01)
        late = threading.Thread(target=late_reader)
        late.start()
        reader_in.wait(0.1)
        assert events == []  # neither went ahead of the reader holding the gate
    sync.join()
    late.join()
    assert events == ["sync", "late read"]  # the sync was not starved by the later reader


def _chunks(start: int, owners: list[tuple[SourceType, str]]) -> list[Chunk]:
    vector = _unit(np.ones((1, 4), np.float32))[0].tobytes()
    return [
        Chunk(seq, f"chunk_{seq}", "p", source, owner, 1, 0, f"text {seq}", 0, 9, None, vector)
        for seq, (source, owner) in enumerate(owners, start)
    ]


def _owners(chunks: list[Chunk]) -> dict[str, OwnerAttrs]:
    return {
        owner_key(c.source_type, c.owner_id): OwnerAttrs(c.source_type, c.owner_id, store_id="s")
        for c in chunks
    }


def test_selecting_rows_changes_nothing_in_the_index() -> None:
    """Searches select side by side under the read gate, so a selection must only read."""
    index = ProjectIndex("p", 4)
    added = _chunks(1, [(SourceType.DOCUMENT, "doc_a"), (SourceType.MEMORY, "mem_a")])
    index.apply(added, [], _owners(added))
    before = {name: id(value) for name, value in vars(index).items()}
    memories = Selection(documents=False, store_tags={"s": frozenset()})
    for selection in (Selection(), memories, Selection(memories=False, document_paths=("/",))):
        index.select(selection)
    assert {name: id(value) for name, value in vars(index).items()} == before
    assert index.select(memories).tolist() == [False, True]


def _select_at_once(
    index: ProjectIndex, selection: Selection, searches: int
) -> tuple[list[list[bool]], list[BaseException]]:
    start = threading.Barrier(searches)
    masks: list[list[bool]] = []
    failures: list[BaseException] = []

    def search() -> None:
        start.wait()
        try:
            masks.append(index.select(selection).tolist())
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    threads = [threading.Thread(target=search) for _ in range(searches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return masks, failures


def test_searches_selecting_at_once_after_new_owners_agree() -> None:
    """The failure this guards against: two searches that both found new owners extended the
    owners' sources twice, and every search after failed (or filtered the wrong source)."""
    index = ProjectIndex("p", 4)
    memories = Selection(documents=False, store_tags={"s": frozenset()})
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the GIL over as often as possible
    try:
        for round_ in range(150):
            owners = [(SourceType.DOCUMENT, f"doc_{round_}"), (SourceType.MEMORY, f"m_{round_}")]
            added = _chunks(2 * round_ + 1, owners)
            index.apply(added, [], _owners(added))
            expected = [i % 2 == 1 for i in range(index.n)]
            masks, failures = _select_at_once(index, memories, 6)
            assert not failures, failures[0]
            assert masks == [expected] * 6
    finally:
        sys.setswitchinterval(switch)


def _reference_best(scores: np.ndarray, k: int) -> np.ndarray:
    kth = np.partition(scores, scores.size - k)[scores.size - k]
    return np.flatnonzero(scores >= kth)


@pytest.mark.parametrize("k", [1, 10, 100, 500])
def test_the_best_scored_rows_are_those_a_whole_partition_finds(k: int) -> None:
    """The sampled threshold finds the same rows as partitioning every score: with ties (int8
    products are whole numbers), masked rows at -inf, and a sample that misses the best rows
    (so the threshold lets fewer than k through and every score is partitioned)."""
    rng = np.random.default_rng(11)
    cases = [
        rng.standard_normal(50_000).astype(np.float32),
        np.rint(rng.standard_normal(50_000) * 20).astype(np.float32),  # many ties
        np.where(rng.random(50_000) < 0.6, -np.inf, rng.standard_normal(50_000)).astype(np.float32),
    ]
    sampled = np.arange(50_000) % vectors_module._SAMPLE_STRIDE == 0
    cases.append(np.where(sampled, 0.0, 1.0).astype(np.float32))  # the best rows unsampled
    # The sample's best are the whole's: too few pass its threshold, so every score is partitioned.
    cases.append(np.where(sampled, 1.0 + rng.random(50_000), rng.random(50_000)).astype(np.float32))
    for scores in cases:
        over, threshold = vectors_module._over(scores, k)
        best = over[vectors_module._top_of(scores[over], k)]
        assert np.array_equal(best, _reference_best(scores, k))
        # ``over``: every row at or over the threshold, which at least k reach.
        assert np.array_equal(over, np.flatnonzero(scores >= threshold)) and over.size >= k


def _scan_rows() -> tuple[Vectors, np.ndarray]:
    rng = np.random.default_rng(9)
    centres = rng.standard_normal((20, 64))
    matrix = _unit(centres[rng.integers(0, 20, 40_000)] + 0.3 * rng.standard_normal((40_000, 64)))
    vectors = Vectors(64)
    vectors.grow(40_000, 0)
    vectors.put(0, matrix)
    return vectors, matrix


def test_the_rescoring_window_is_exact_when_it_reaches_below_the_sampled_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows over the cut are looked for among the rows over the sampled threshold only when
    the cut lies above it; a threshold as high as the k-th best score makes the cut lie below
    it, and every score is compared instead."""
    vectors, matrix = _scan_rows()
    original = vectors_module._over
    thresholds: list[float] = []

    def tight(scores: np.ndarray, k: int) -> tuple[np.ndarray, float]:
        over, _ = original(scores, k)
        kth = float(np.sort(scores[over])[-k])
        thresholds.append(kth)
        return np.flatnonzero(scores >= kth), kth

    monkeypatch.setattr(vectors_module, "_over", tight)
    mask = np.ones(40_000, bool)
    for query in matrix[[11, 222, 3333]]:
        found = vectors.nearest(query, mask, 50)
        assert np.allclose(found.cosines, _float32_top(matrix, mask, query, 50), atol=1e-6)
    assert len(thresholds) == 3


def test_a_scan_maps_its_shares_over_the_pool_and_pins_no_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two shares' worth of rows: the caller scans one, the pool the other; the top k is the
    float32 top k, and every thread may still run on every CPU the process may."""
    scanned: list[str] = []
    kernel = int8_scan.estimates

    def spy(*args: Any, **kwargs: Any) -> Any:
        scanned.append(threading.current_thread().name)
        return kernel(*args, **kwargs)

    monkeypatch.setattr(int8_scan, "estimates", spy)
    rng = np.random.default_rng(5)
    matrix = _unit(rng.standard_normal((40_000, 64)))
    vectors = Vectors(64)
    vectors.grow(40_000, 0)
    vectors.put(0, matrix)
    with ThreadPoolExecutor(1, thread_name_prefix="naturali-scan") as executor:
        mask = np.ones(40_000, bool)
        found = vectors.nearest(matrix[7], mask, 10, ScanPool(executor, 2))
        assert found.rows[0] == 7
        assert np.allclose(found.cosines, _float32_top(matrix, mask, matrix[7], 10), atol=1e-6)
        assert sorted(scanned) == ["MainThread", "naturali-scan_0"]
        if hasattr(os, "sched_getaffinity"):
            cpus = os.sched_getaffinity(0)
            assert all(
                os.sched_getaffinity(t.native_id or 0) == cpus for t in threading.enumerate()
            )


def test_path_prefixes_select_what_checking_every_owner_selects() -> None:
    """The sorted paths' runs (ProjectIndex._under) against each owner's startswith."""
    index = ProjectIndex("p", 4)
    paths = ["/a/x.md", "/a/y.md", "/ab.md", "/b/z.md", "/a", "/c/é.md", "/c/\U0010ffff.md"]
    added = _chunks(1, [(SourceType.DOCUMENT, f"doc_{i}") for i in range(len(paths))])
    owners = {
        owner_key(c.source_type, c.owner_id): OwnerAttrs(SourceType.DOCUMENT, c.owner_id, path)
        for c, path in zip(added, paths, strict=True)
    }
    index.apply(added, [], owners)
    for prefixes in (("/a/",), ("/a",), ("/a/", "/b/"), ("/c/",), ("/c/\U0010ffff",), ("/z",)):
        mask = index.select(Selection(memories=False, document_paths=prefixes))
        assert mask.tolist() == [p.startswith(prefixes) for p in paths], prefixes
    tagged = Selection(memories=False, document_paths=("/a",), tags=frozenset({("k", "v")}))
    assert not index.select(tagged).any()  # the prefixes' owners still meet the tags


def test_a_new_filter_is_its_field_and_its_clause_with_no_shortcut_skipping_it() -> None:
    """A filter this code does not have (excluded path prefixes), planted as Selection's
    documentation says: the index's shortcuts (documents unfiltered; the prefixes the whole
    filter) see the field and leave the decision to ``accepts``."""
    from dataclasses import dataclass

    from naturali.retrieval import index as index_module

    assert "path_exclude" not in {f for f in Selection.__dataclass_fields__}

    @dataclass(frozen=True)
    class Planted(Selection):
        path_exclude: tuple[str, ...] = index_module._narrows((), SourceType.DOCUMENT)  # noqa: SLF001

        def accepts(self, attrs: OwnerAttrs) -> bool:
            excluded = bool(self.path_exclude) and attrs.path.startswith(self.path_exclude)
            return super().accepts(attrs) and not excluded

    index = ProjectIndex("p", 4)
    paths = ["/a/x.md", "/a/old/y.md", "/b/z.md"]
    added = _chunks(1, [(SourceType.DOCUMENT, f"doc_{i}") for i in range(len(paths))])
    owners = {
        owner_key(c.source_type, c.owner_id): OwnerAttrs(SourceType.DOCUMENT, c.owner_id, path)
        for c, path in zip(added, paths, strict=True)
    }
    index.apply(added, [], owners)
    alone = Planted.of({"path_exclude": ["/a/old/"]}, memories=False)
    assert index.select(alone).tolist() == [True, False, True]
    with_prefix = Planted.of(
        {"document_paths": ["/a/"], "path_exclude": ["/a/old/"]}, memories=False
    )
    assert index.select(with_prefix).tolist() == [True, False, False]


def test_every_search_request_field_is_a_filter_the_selection_reads_or_a_ranking_knob() -> None:
    """A request field that narrows the results but has no Selection field would be ignored in
    silence; the fields that are not filters say how to rank or what to show."""
    from naturali.service.requests import SearchRequest

    knobs = {"query", "min_similarity", "limit", "include_documents", "include_memories"}
    knobs |= {"explain", "rerank"}
    filters = {f.name for f in fields(Selection) if "narrows" in f.metadata}
    assert set(SearchRequest.model_fields) == knobs | filters


def test_the_query_fed_back_lifts_a_passage_near_the_best_answers() -> None:
    """Two passages say the query's words; of two that do not, one lies near them and one a
    little nearer the query alone. The blend alone prefers the second; fed back toward the
    passages it ranked best (``fusion.fed_back``), it prefers the first."""
    index = ProjectIndex("p", 4)
    texts = ["refund policy", "the refund policy terms", "money back", "shipping times"]
    vectors = _unit(
        np.array([[0.6, 0.8, 0, 0], [0.62, 0.78, 0, 0], [0.5, 0.87, 0, 0], [0.55, 0, 0.84, 0]])
    )
    owners = [(SourceType.DOCUMENT, f"doc_{i}") for i in range(4)]
    added = [
        replace(chunk, text=text, vector=vector.tobytes())
        for chunk, text, vector in zip(_chunks(1, owners), texts, vectors, strict=True)
    ]
    index.apply(added, [], _owners(added))
    query = np.array([1, 0, 0, 0], np.float32)

    def order(ranking: Ranking) -> list[str]:
        asked = Asked.of("refund policy", 10)
        ranked = rank(index, np.ones(4, bool), asked, lambda _: query, ranking=ranking)
        return [texts[r.row] for r in ranked][2:]

    assert order(Ranking(vector_weight=0.7, feedback_weight=0.0)) == [
        "shipping times",
        "money back",
    ]
    assert order(Ranking(vector_weight=0.7)) == ["money back", "shipping times"]
