"""Prometheus metrics (``GET /metrics``, behind ``metrics_token``): requests by route template
and status, their latency, each ranked search's stages, and what the server holds — ingestion
jobs by state, chunks embedded by them, the embedder's queue, index memory and loaded projects.
Labels are bounded: a route's template, never a project, user or query."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from naturali.service.container import Services

LATENCY_BUCKETS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30)
STAGE_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


class Metrics:
    def __init__(self, naturali: Services) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "naturali_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "naturali_http_request_seconds",
            "Time to answer an HTTP request, by method and route template.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.search_stages = Histogram(
            "naturali_search_stage_seconds",
            "A ranked search's stages: lexical leg, the wait for the query's embedding, "
            "vector leg, fusion.",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=self.registry,
        )
        self.rate_limited = Counter(
            "naturali_rate_limited_requests",
            "Requests refused with 429 by a rate or concurrency limit.",
            registry=self.registry,
        )
        self.registry.register(_Held(naturali))
        naturali.search.observe = self.observe_search

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)
        if status == 429:
            self.rate_limited.inc()

    def observe_search(self, timings: dict[str, float]) -> None:
        for stage, seconds in timings.items():
            self.search_stages.labels(stage).observe(seconds)

    def text(self) -> bytes:
        return generate_latest(self.registry)


class _Held(Collector):
    """What the server holds, read when scraped."""

    def __init__(self, naturali: Services) -> None:
        self._naturali = naturali

    def collect(self) -> Iterator[Metric]:
        naturali = self._naturali
        jobs = GaugeMetricFamily(
            "naturali_ingest_jobs", "Ingestion jobs in the catalog by state.", labels=["state"]
        )
        for state, count in naturali.storage.ingest_job_counts().items():
            jobs.add_metric([state], count)
        yield jobs
        yield CounterMetricFamily(
            "naturali_ingest_chunks_embedded",
            "Chunks this server's ingestion worker embedded.",
            value=naturali.ingestion.chunks_embedded,
        )
        yield GaugeMetricFamily(
            "naturali_embedder_queue_depth",
            "Passage batches waiting for the embedders' threads (every model loaded).",
            value=naturali.embedders.queued(),
        )
        loaded = naturali.indexes.cache.loaded()
        yield GaugeMetricFamily(
            "naturali_index_memory_bytes",
            "Bytes the in-memory search indexes hold.",
            value=sum(loaded.values()),
        )
        yield GaugeMetricFamily(
            "naturali_indexes_loaded", "Projects whose search index is in memory.", len(loaded)
        )
        indexes = naturali.indexes
        yield GaugeMetricFamily(
            "naturali_index_memory_budget_bytes",
            "index_memory_bytes: past it, the least recently searched indexes are dropped.",
            value=indexes.cache.budget,
        )
        yield CounterMetricFamily(
            "naturali_index_evictions",
            "Indexes the memory budget dropped (each reloaded on its next search).",
            value=indexes.cache.evictions,
        )
        yield CounterMetricFamily(
            "naturali_index_evicted_bytes",
            "Bytes of the indexes the memory budget dropped.",
            value=indexes.cache.evicted_bytes,
        )
