"""``GET /metrics``: Prometheus' text format behind the metrics token, with requests by route
template (never an id), latency, a search's stages and what the server holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import Api, make_api
from naturali.embed.onnx import OnnxEmbedder

METRICS_TOKEN = "nk_metrics_test_3Hd9Vq2Lx7Pm4Rs8Tw1Ky5"


@pytest.fixture
def metered(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    yield from make_api(tmp_path / "metered", embedder, backend, metrics_token=METRICS_TOKEN)


def _samples(api: Api) -> dict[str, list[Any]]:
    r = api.http.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    out: dict[str, list[Any]] = {}
    for family in text_string_to_metric_families(r.text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append(sample)
    return out


def test_metrics_count_requests_by_route_and_time_the_search(metered: Api) -> None:
    project = metered.project()
    metered.doc(project, "/a.md", "Refunds take five days.")
    assert metered.search(project, query="how long do refunds take").status_code == 200
    samples = _samples(metered)
    searches = [
        s
        for s in samples["naturali_http_requests_total"]
        if s.labels["route"] == "/v1/projects/{project_id}/knowledge/search"
    ]
    assert searches and searches[0].labels == {
        "method": "POST",
        "route": "/v1/projects/{project_id}/knowledge/search",
        "status": "200",
    }
    labels = {v for s in samples["naturali_http_requests_total"] for v in s.labels.values()}
    assert not any(project in v for v in labels)  # no id, user or query in a label
    stages = {s.labels["stage"] for s in samples["naturali_search_stage_seconds_count"]}
    assert stages == {"lexical", "query_embedding", "vector", "fusion"}
    assert samples["naturali_http_request_seconds_bucket"]
    assert samples["naturali_indexes_loaded"][0].value == 1
    assert samples["naturali_index_memory_bytes"][0].value > 0
    jobs = {s.labels["state"]: s.value for s in samples["naturali_ingest_jobs"]}
    assert jobs == {"queued": 0, "running": 0, "failed": 0}
    assert samples["naturali_embedder_queue_depth"][0].value >= 0


def test_metrics_need_their_token(metered: Api) -> None:
    assert metered.http.get("/metrics").status_code == 401
    wrong = metered.http.get("/metrics", headers={"Authorization": f"Bearer {metered.token}"})
    assert wrong.status_code == 401


def test_metrics_are_off_without_a_token_set(api: Api) -> None:
    assert api.http.get("/metrics").status_code == 404


def test_the_index_budget_evicts_by_bytes_and_the_metrics_show_it(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    """With a budget smaller than two indexes, searching a second project drops the first
    (its bytes counted), and searching the first again brings it back with the same results."""
    for api in make_api(
        tmp_path, embedder, None, metrics_token=METRICS_TOKEN, index_memory_bytes=1
    ):
        first, second = api.project(), api.project()
        api.doc(first, "/a.md", "Refunds take five days.")
        api.doc(second, "/b.md", "Invoices are sent monthly.")
        before = api.search(first, query="refunds").json()
        api.search(second, query="invoices")
        samples = _samples(api)
        assert samples["naturali_index_evictions_total"][0].value == 1
        assert samples["naturali_index_evicted_bytes_total"][0].value > 0
        assert samples["naturali_index_memory_budget_bytes"][0].value == 1
        assert samples["naturali_indexes_loaded"][0].value == 1
        assert api.search(first, query="refunds").json() == before
