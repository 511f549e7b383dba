"""The query embedding pool's hand-over: a lone submitter waits until its job has begun; one
with another job in flight goes on at once."""

from __future__ import annotations

import threading

import pytest

from naturali.service import embedding_pool
from naturali.service.embedding_pool import EmbeddingPool


@pytest.fixture(autouse=True)
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    # Long enough that a submitter which waits is seen to wait, whatever the machine's load.
    monkeypatch.setattr(embedding_pool, "HANDOFF_WAIT", 60.0)


def test_a_lone_submitter_returns_once_its_job_has_begun() -> None:
    pool = EmbeddingPool(workers=1)
    begun = threading.Event()
    release = threading.Event()

    def job() -> str:
        begun.set()
        release.wait(10)
        return "vector"

    future = pool.submit(job)
    assert begun.is_set()  # not merely queued: the pool's thread runs it
    release.set()
    assert future.result(timeout=10) == "vector"


def test_a_submitter_beside_a_job_in_flight_does_not_wait() -> None:
    pool = EmbeddingPool(workers=1)
    release = threading.Event()
    first = pool.submit(lambda: release.wait(10))
    second_begun = threading.Event()
    returned: list[object] = []
    # The only worker is busy, so the second job cannot begin until the first ends: a
    # submitter that waited for it would still be waiting (for HANDOFF_WAIT, a minute).
    submitter = threading.Thread(
        target=lambda: returned.append(pool.submit(lambda: second_begun.set() or "second"))
    )
    submitter.start()
    submitter.join(timeout=10)
    assert returned and not second_begun.is_set()
    release.set()
    assert first.result(timeout=10) is True
    assert returned[0].result(timeout=10) == "second"  # type: ignore[attr-defined]


def test_the_count_in_flight_falls_back_when_a_job_fails() -> None:
    pool = EmbeddingPool(workers=1)

    def broken() -> None:
        raise RuntimeError("no model")

    with pytest.raises(RuntimeError):
        pool.submit(broken).result(timeout=10)
    begun = threading.Event()
    pool.submit(begun.set)
    assert begun.is_set()  # alone again: it waited for its job, so the count went back to 0
