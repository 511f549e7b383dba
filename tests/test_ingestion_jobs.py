"""Ingestion in the background: a version of more than a few chunks is answered 202 and
embedded by a durable job; search sees it whole or not at all; a job whose server died is
taken again and written once; two workers never hold one job."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import Api
from naturali.service.corpus import documents as documents_module
from naturali.service.corpus.ingestion import IngestionWorker
from server import start, stop

ROOT = Path(__file__).resolve().parents[1]


def _long_text(topic: str, sections: int = 40) -> str:
    """A chunk per section: every heading starts one."""
    return "\n\n".join(
        f"## {topic} {n}\n\nThe {topic} team ships release {n} with care, documented step "
        f"by step for operators who run {topic} in production."
        for n in range(sections)
    )


def _wait(api: Api, project: str, document_id: str, timeout: float = 120) -> dict[str, Any]:
    return api.ready(project, document_id, timeout)


def _contents(api: Api, project: str, query: str) -> list[str]:
    results = api.search(project, query=query, limit=100).json()["results"]
    return [r["content"] for r in results]


def test_a_large_upload_is_accepted_then_followed_to_ready(api: Api) -> None:
    project = api.project()
    r = api.upload(project, "/ops/guide.md", _long_text("kafka").encode(), "guide.md")
    assert r.status_code == 202, r.text
    accepted = r.json()
    assert accepted["status"] == "processing" and accepted["version"] == 0
    assert accepted["chunks_total"] > documents_module.INLINE_CHUNKS
    ready = _wait(api, project, accepted["id"])
    assert ready["status"] == "ready" and ready["version"] == 1
    assert ready["chunk_count"] == accepted["chunks_total"] and ready["error"] is None
    assert any("kafka" in c for c in _contents(api, project, "kafka release steps"))
    small = api.upload(project, "/ops/note.md", b"Kafka needs three brokers.", "note.md")
    assert small.status_code == 201 and small.json()["status"] == "ready"  # embedded at once


def test_a_document_read_as_its_job_ends_is_never_its_old_version_ready(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The document is read, then its job looked for: a job that ends between the two (its
    version written as it is deleted) must not leave the old version shown as ready."""
    project = api.project()
    r = api.upload(project, "/ops/guide.md", _long_text("kafka").encode(), "guide.md")
    document_id = r.json()["id"]
    storage = api.naturali.documents._storage
    looked_for = storage.ingest_progress

    def after_the_job(project_id: str, ids: Any) -> Any:
        deadline = time.monotonic() + 120
        while storage.get_document(project, document_id).version == 0:
            assert time.monotonic() < deadline, "the job never ended"
            time.sleep(0.05)
        return looked_for(project_id, ids)

    monkeypatch.setattr(storage, "ingest_progress", after_the_job)
    for read in (
        api.get(f"/v1/projects/{project}/documents/{document_id}").json(),
        api.get(f"/v1/projects/{project}/documents").json()["data"][0],
    ):
        assert (read["status"], read["version"]) == ("ready", 1)


def test_a_finished_job_leaves_its_projects_index_saved_before_any_search(
    api: Api, tmp_path: Path
) -> None:
    """The job's commit tells the indexes (``IndexRegistry.written``): the project's first
    search, here or after a restart, reads a snapshot holding every chunk."""
    project = api.project()
    r = api.upload(project, "/ops/guide.md", _long_text("kafka").encode(), "guide.md")
    assert r.status_code == 202, r.text
    ready = _wait(api, project, r.json()["id"])
    meta = tmp_path / "data" / "cache" / "indexes" / project / "meta.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if meta.is_file() and json.loads(meta.read_text())["n"] == ready["chunk_count"]:
            break
        time.sleep(0.1)
    assert json.loads(meta.read_text())["n"] == ready["chunk_count"]
    assert project not in api.naturali.indexes.cache.loaded()  # saved, not loaded


def test_a_new_version_is_searched_only_once_it_is_whole(api: Api) -> None:
    project = api.project()
    first = api.upload(project, "/ops/runbook.md", _long_text("postgres").encode(), "runbook.md")
    document_id = first.json()["id"]
    _wait(api, project, document_id)
    api.naturali.ingestion.close()  # no worker: the new version waits in its job
    url = f"/v1/projects/{project}/documents/{document_id}"
    files = {"file": ("runbook.md", _long_text("redis").encode())}
    r = api.put(url, files=files)
    assert r.status_code == 202, r.text
    assert r.json()["version"] == 1 and r.json()["status"] == "processing"
    contents = _contents(api, project, "release steps for operators")
    assert contents and all("postgres" in c for c in contents)  # the old version, all of it
    worker = IngestionWorker(api.naturali.storage, api.naturali.embedders.of)
    assert worker.run_once()
    ready = api.get(url).json()
    assert ready["status"] == "ready" and ready["version"] == 2
    contents = _contents(api, project, "release steps for operators")
    assert contents and all("redis" in c for c in contents)  # the new one, none of the old
    chunks = api.naturali.storage.owner_chunks(project, "document", [document_id])  # type: ignore[arg-type]
    assert len(chunks) == ready["chunk_count"] and {c.version for c in chunks} == {2}


def test_a_job_whose_lease_ran_out_is_taken_again_and_written_once(api: Api) -> None:
    project = api.project()
    api.naturali.ingestion.close()
    r = api.upload(project, "/ops/guide.md", _long_text("nginx").encode(), "guide.md")
    document_id = r.json()["id"]
    storage = api.naturali.storage
    dead = storage.claim_ingest("worker_dead", lease_seconds=0.0)  # claimed, then its server died
    assert dead is not None
    time.sleep(0.01)
    worker = IngestionWorker(storage, api.naturali.embedders.of)
    assert worker.run_once()  # the lease ran out: taken again
    document = dead.document
    assert not storage.finish_ingest(dead.id, "worker_dead", document, [], "m")  # too late
    ready = api.get(f"/v1/projects/{project}/documents/{document_id}").json()
    chunks = storage.owner_chunks(project, "document", [document_id])  # type: ignore[arg-type]
    assert ready["status"] == "ready" and len(chunks) == ready["chunk_count"] == len(dead.drafts)


def test_two_workers_never_take_one_job(api: Api) -> None:
    project = api.project()
    api.naturali.ingestion.close()
    for n in range(6):
        r = api.upload(project, f"/ops/{n}.md", _long_text(f"topic{n}").encode(), f"{n}.md")
        assert r.status_code == 202
    storage = api.naturali.storage
    taken: dict[str, list[str]] = {"a": [], "b": []}

    def claim(owner: str) -> None:
        while (job := storage.claim_ingest(owner, lease_seconds=60)) is not None:
            taken[owner].append(job.id)

    threads = [threading.Thread(target=claim, args=(o,)) for o in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not set(taken["a"]) & set(taken["b"])
    assert len(taken["a"]) + len(taken["b"]) == 6


def test_a_failed_job_is_reported_in_the_error_shape(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = api.project()
    api.naturali.ingestion.close()
    r = api.upload(project, "/ops/guide.md", _long_text("vault").encode(), "guide.md")
    worker = IngestionWorker(api.naturali.storage, api.naturali.embedders.of)
    embedder = api.naturali.embedder()

    def broken(texts: list[str], urgent: bool = False) -> Any:
        raise RuntimeError("the embedder ran out of memory")

    monkeypatch.setattr(embedder, "embed", broken)
    assert worker.run_once()
    failed = api.get(f"/v1/projects/{project}/documents/{r.json()['id']}").json()
    assert failed["status"] == "failed" and failed["version"] == 0
    assert failed["error"]["code"] == "ingest_failed"
    assert "ran out of memory" in failed["error"]["message"]
    assert api.search(project, query="vault release").json()["results"] == []


def test_deleting_a_document_cancels_its_job(api: Api) -> None:
    project = api.project()
    api.naturali.ingestion.close()
    r = api.upload(project, "/ops/guide.md", _long_text("consul").encode(), "guide.md")
    assert api.delete(f"/v1/projects/{project}/documents/{r.json()['id']}").status_code == 200
    assert api.naturali.storage.claim_ingest("worker_x", 60) is None


def test_a_job_survives_kill_9_and_resumes_on_restart(tmp_path: Path) -> None:
    """A real server killed mid-job; the restarted one finishes it, with no chunk twice."""
    data = tmp_path / "data"
    env = {"NATURALI_INGEST_LEASE_SECONDS": "3"}
    server = start(data, tmp_path, env=env)
    headers = {"Authorization": f"Bearer {server.token}"}
    url = f"{server.base_url}/v1/projects/{server.demo_project}/documents"
    text = _long_text("kubernetes", sections=400).encode()
    r = httpx.post(url, headers=headers, files={"file": ("k8s.md", text)}, data={"path": "/k8s.md"})
    assert r.status_code == 202, r.text
    document_id, total = r.json()["id"], r.json()["chunks_total"]
    deadline = time.monotonic() + 60
    while httpx.get(f"{url}/{document_id}", headers=headers).json()["chunks_done"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()
    server = start(data, tmp_path, token=server.token, env=env, log_name="server2.log")
    url = f"{server.base_url}/v1/projects/{server.demo_project}/documents"
    try:
        deadline = time.monotonic() + 120
        while (doc := httpx.get(f"{url}/{document_id}", headers=headers).json())[
            "status"
        ] != "ready":
            assert doc["status"] == "processing" and time.monotonic() < deadline
            time.sleep(0.2)
        assert doc["chunk_count"] == total
    finally:
        stop(server)
    with sqlite3.connect(data / "catalog.sqlite") as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM chunks WHERE owner_id = ?", (document_id,)
        ).fetchone()
    assert count == total


def test_projects_take_turns_a_batch_each(api: Api) -> None:
    """Another project's folder queued first does not hold this project's upload: the worker
    embeds a batch of each project's job in turn."""
    crowd, team = api.project("crowd"), api.project("team")
    api.naturali.ingestion.close()
    for n in range(4):
        r = api.upload(crowd, f"/bulk/{n}.md", _long_text(f"bulk{n}", 80).encode(), f"{n}.md")
        assert r.status_code == 202
    mine = api.upload(team, "/ops/note.md", _long_text("kafka", 40).encode(), "note.md")
    url = f"/v1/projects/{team}/documents/{mine.json()['id']}"
    worker = IngestionWorker(api.naturali.storage, api.naturali.embedders.of)
    steps = 0
    while api.get(url).json()["status"] != "ready":
        assert worker.step()
        steps += 1
    crowd_ready = [
        d for d in api.get(f"/v1/projects/{crowd}/documents").json()["data"] if d["version"] > 0
    ]
    assert len(crowd_ready) <= 1, (steps, mine.json()["chunks_total"])  # without turns: 4
    assert steps <= 2 * -(-mine.json()["chunks_total"] // 32) + 1
    worker.run_once()


@pytest.fixture
def short_queue(tmp_path: Path, embedder: Any, backend: dict[str, Any]) -> Any:
    from conftest import make_api

    yield from make_api(tmp_path, embedder, backend, ingest_queue_chunks=60)


def test_a_project_queue_over_its_cap_is_429_with_retry_after(short_queue: Api) -> None:
    api = short_queue
    project, other = api.project(), api.project("other")
    api.naturali.ingestion.close()
    first = api.upload(project, "/a.md", _long_text("alpha", 40).encode(), "a.md")
    assert first.status_code == 202
    r = api.upload(project, "/b.md", _long_text("beta", 40).encode(), "b.md")
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert r.json()["error"]["code"] == "ingest_queue_full"
    assert api.get(f"/v1/projects/{project}/documents").json()["data"][-1]["path"] == "/a.md"
    # Another project's queue is its own.
    assert api.upload(other, "/b.md", _long_text("beta", 40).encode(), "b.md").status_code == 202
