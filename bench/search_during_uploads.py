"""Searches while documents are uploaded: what an upload's embedding takes from searches.

A real ``naturali serve`` (the repository's code, or ``--src`` another checkout's) with 300
SciFact abstracts; 4 clients search (every text distinct, so each is embedded) for
``--seconds``, first alone, then beside 2 clients uploading six abstracts per document, twice
over. Prints searches/s and p50/p99 in each phase, and the uploads done.

    python bench/search_during_uploads.py [--src DIR] [--seconds 30]
"""

from __future__ import annotations

import argparse
import random
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import DATA, corpus, percentile, queries  # noqa: E402
from load import start_server  # noqa: E402
from server import free_port  # noqa: E402

SEARCHERS = 4
UPLOADERS = 2
ABSTRACTS_PER_UPLOAD = 6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, default=None)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    docs = list(corpus(DATA / "scifact"))
    texts = list(queries(DATA / "scifact").values())
    token = "nk_load_" + secrets.token_urlsafe(32)
    with tempfile.TemporaryDirectory() as work:
        port = free_port()
        cache = {"NATURALI_CACHE_DIR": f"{work}/cache"}
        server = start_server(args.src, Path(work) / "data", port, token, cache)
        try:
            bench = Bench(f"http://127.0.0.1:{port}", token, texts, iter(docs[300:]))
            bench.ingest(docs[:300])
            for uploaders in (0, UPLOADERS, 0, UPLOADERS):
                bench.phase(uploaders, args.seconds)
        finally:
            server.terminate()
            server.wait(30)


class Bench:
    def __init__(self, base: str, token: str, texts: list[str], spare: Iterator[dict[str, str]]):
        self.base, self.texts, self.spare = base, texts, spare
        self.headers = {"Authorization": f"Bearer {token}"}
        self.lock = threading.Lock()
        self.project = self.client().post("/v1/projects", json={"name": "b"}).json()["id"]

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers=self.headers, timeout=300)

    def ingest(self, docs: list[dict[str, str]]) -> None:
        http = self.client()
        for d in docs:
            body = {"path": f"/c/{d['_id']}.md", "content": d["text"]}
            http.post(f"/v1/projects/{self.project}/documents", json=body).raise_for_status()

    def phase(self, uploaders: int, seconds: float) -> None:
        latencies: list[float] = []
        uploads = [0]
        deadline = time.perf_counter() + seconds

        def search(seed: int) -> None:
            rng, http, n = random.Random(seed), self.client(), 0
            while time.perf_counter() < deadline:
                n += 1
                body = {"query": f"{rng.choice(self.texts)} ({seed}-{n}-{uploaders})", "limit": 10}
                started = time.perf_counter()
                http.post(f"/v1/projects/{self.project}/knowledge/search", json=body)
                with self.lock:
                    latencies.append((time.perf_counter() - started) * 1000)

        def upload() -> None:
            http = self.client()
            while time.perf_counter() < deadline:
                with self.lock:
                    batch = [next(self.spare) for _ in range(ABSTRACTS_PER_UPLOAD)]
                content = "\n\n".join(f"## {d['title']}\n\n{d['text']}" for d in batch)
                body = {"path": f"/u/{batch[0]['_id']}.md", "content": content}
                http.post(f"/v1/projects/{self.project}/documents", json=body).raise_for_status()
                with self.lock:
                    uploads[0] += 1

        threads = [threading.Thread(target=search, args=(i,)) for i in range(SEARCHERS)]
        threads += [threading.Thread(target=upload) for _ in range(uploaders)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(
            f"{uploaders} uploading: {len(latencies) / seconds:6.1f} searches/s, "
            f"p50 {percentile(latencies, 50):5.1f} ms, p99 {percentile(latencies, 99):5.1f} ms; "
            f"{uploads[0]} uploads of {ABSTRACTS_PER_UPLOAD} abstracts"
        )


if __name__ == "__main__":
    main()
