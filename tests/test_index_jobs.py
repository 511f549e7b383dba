"""The registry's background queue: one job of a kind a project waits at a time, and a change
that arrives while its job runs is not lost."""

import threading

from naturali.retrieval.indexes.jobs import IndexJobs


def test_a_job_queued_while_its_kind_runs_runs_again_after() -> None:
    jobs = IndexJobs()
    jobs.wake = lambda: None  # stepped here, by hand
    started, release = threading.Event(), threading.Event()
    runs: list[str] = []

    def first() -> None:
        started.set()
        release.wait(5)
        runs.append("first")

    jobs.add("prepare", "p", first)
    worker = threading.Thread(target=jobs.step)
    worker.start()
    assert started.wait(5)
    jobs.add("prepare", "p", lambda: runs.append("second"))  # the write after it read
    jobs.add("prepare", "p", lambda: runs.append("third"))  # already queued: dropped
    release.set()
    worker.join(5)
    assert jobs.step()
    assert not jobs.step()
    assert runs == ["first", "second"]
    assert jobs.idle(timeout=1)
