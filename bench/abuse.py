"""Per-token limits under load: 16 clients of a real ``naturali serve`` started with a rate
limit and a searches-in-flight limit per token, each client with a token of its own; first
the 14 well-behaved ones alone (searches and writes, paced under their limit), then beside 2
abusive ones that send as fast as 8 threads each can. Prints the well-behaved clients'
throughput and p99 in both phases, their ratio (target: p99 within 1.5×), and the 429s the
abusive ones got.

    python bench/abuse.py [--seconds 20] [--rate 10/second] [--in-flight 2] [--src DIR]
"""

from __future__ import annotations

import argparse
import itertools
import random
import secrets
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import DATA, corpus, percentile, queries  # noqa: E402
from load import start_server  # noqa: E402
from server import free_port  # noqa: E402

WELL_BEHAVED, ABUSIVE, ABUSIVE_THREADS = 14, 2, 8


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rate", default="10/second")
    parser.add_argument("--in-flight", type=int, default=2)
    parser.add_argument("--src", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        port, owner = free_port(), "nk_abuse_" + secrets.token_hex(16)
        limits = {
            "NATURALI_RATE_LIMIT": args.rate,
            "NATURALI_SEARCHES_IN_FLIGHT": str(args.in_flight),
        }
        server = start_server(args.src, Path(work) / "data", port, owner, limits)
        try:
            run(f"http://127.0.0.1:{port}", owner, args)
        finally:
            server.terminate()
            server.wait()


def run(base: str, owner: str, args: argparse.Namespace) -> None:
    api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {owner}"}, timeout=60)
    project = api.post("/v1/projects", json={"name": "abuse"}).json()["id"]
    for doc in itertools.islice(corpus(DATA / "scifact"), 200):
        body = {"path": f"/c/{doc['_id']}.md", "content": f"# {doc['title']}\n\n{doc['text']}"}
        api.post(f"/v1/projects/{project}/documents", json=body)
        time.sleep(0.1)  # the owner's token is rate-limited too
    tokens = []
    for n in range(WELL_BEHAVED + ABUSIVE):
        time.sleep(0.2)  # under the owner's own rate
        made = api.post("/v1/tokens", json={"name": f"client-{n}", "scope": "write"})
        tokens.append(made.json()["token"])
    texts = list(queries(DATA / "scifact").values())
    alone = phase(base, project, tokens[:WELL_BEHAVED], [], texts, args.seconds)
    beside = phase(base, project, tokens[:WELL_BEHAVED], tokens[WELL_BEHAVED:], texts, args.seconds)
    for name, (rate, p99, _) in (("alone", alone), ("beside 2 abusive", beside)):
        print(f"well-behaved {name:<17} {rate:7.1f} req/s  p99 {p99:7.1f} ms")
    print(f"p99 beside ÷ alone {beside[1] / alone[1]:.2f} (target ≤ 1.5)")
    print(f"abusive clients' answers: {dict(beside[2])}")


def phase(
    base: str, project: str, good: list[str], bad: list[str], texts: list[str], seconds: float
) -> tuple[float, float, Counter[int]]:
    """(well-behaved requests/s, their p99 ms, the abusive clients' statuses)."""
    timings: list[float] = []
    abusive: Counter[int] = Counter()
    deadline = time.monotonic() + seconds

    def behaved(token: str, seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as http:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                if rng.random() < 0.9:
                    body = {"query": rng.choice(texts), "limit": 10}
                    http.post(f"/v1/projects/{project}/knowledge/search", json=body)
                else:
                    note = {"path": f"/w/{secrets.token_hex(6)}.md", "content": "A short note."}
                    http.post(f"/v1/projects/{project}/documents", json=note)
                timings.append((time.perf_counter() - started) * 1000)
                time.sleep(0.2)  # ~5 requests/s: under the limit

    def hammer(token: str, seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as http:
            while time.monotonic() < deadline:
                body = {"query": rng.choice(texts), "limit": 10}
                r = http.post(f"/v1/projects/{project}/knowledge/search", json=body)
                abusive[r.status_code] += 1

    threads = [threading.Thread(target=behaved, args=(t, i)) for i, t in enumerate(good)]
    threads += [
        threading.Thread(target=hammer, args=(t, 100 + i * ABUSIVE_THREADS + j))
        for i, t in enumerate(bad)
        for j in range(ABUSIVE_THREADS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(timings) / seconds, percentile(timings, 99), abusive


if __name__ == "__main__":
    main()
