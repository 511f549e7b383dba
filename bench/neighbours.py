"""Neighbours on one server: what a hostile team costs another.

A real ``naturali serve`` (the repository's code, or ``--src`` another checkout's). Team B has
300 SciFact abstracts and searches them with 2 clients, first alone (idle), then while team
A uploads a hostile folder — a CSV whose header is 40,000 columns wide, one a million columns
wide, a megabyte of brackets, a megabyte without whitespace, a PDF content stream that
inflates to 5 GB, a 150-page report — and 200 ordinary files (SciFact abstracts, six to a
file). During it B uploads one small document and waits for it to be searchable. Prints B's
search p50/p99 against idle, B's upload-to-ready time, the server's peak RSS, A's answers by
status, and any 5xx. Targets (#64): 0 5xx, p99 ≤ 2× idle, ready within 30 s, RSS ≤ 1.5 GB.

With ``--sources``, the sources instead: team B's Git repository is changed and synced on
request, ``--rounds`` times alone, then as often, ``--spacing`` seconds apart, while team A's
sources — a page that sends a
byte every half second, an endless site — sync over and over on the same server. Prints B's
request-to-synced time alone and beside A (p50, worst) and B's worst delay (worst beside A
less the median alone): a slow or endless source must delay only its own project.

    python bench/neighbours.py [--src DIR] [--idle-seconds 20]
    python bench/neighbours.py --sources [--rounds 12] [--spacing 5]
"""

from __future__ import annotations

import argparse
import collections
import random
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import DATA, corpus, percentile, queries  # noqa: E402
from load import start_server  # noqa: E402
from pdfs import BOMB_BYTES, pdf_bomb, text_pdf  # noqa: E402
from server import free_port  # noqa: E402
from sites import Hostile  # noqa: E402

SEARCHERS = 2
ORDINARY = 200


def hostile_files() -> list[tuple[str, bytes]]:
    wide = ",".join(f"column_{i}" for i in range(40_000))
    rows = "\n".join(f"{i},refund,{i * 3}" for i in range(2_000))
    widest = ",".join(f"c{i}" for i in range(1_000_000)) + "\n" + "1,2,3\n" * 2_000
    report = [f"Section {p}. Revenue grew in quarter {p % 4 + 1}. " * 40 for p in range(150)]
    return [
        ("wide.csv", f"{wide}\n{rows}\n".encode()),
        ("widest.csv", widest.encode()),
        ("brackets.json", b"[" * 500_000 + b"]" * 500_000),
        ("one-word.txt", b"x" * 1_000_000),
        ("bomb.pdf", pdf_bomb(BOMB_BYTES)),
        ("report.pdf", text_pdf(report)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, default=None)
    parser.add_argument("--idle-seconds", type=float, default=20)
    parser.add_argument("--sources", action="store_true", help="the sources' neighbours")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--spacing", type=float, default=5.0, help="seconds between B's syncs")
    args = parser.parse_args()
    if args.sources:
        sources_neighbours(args)
        return
    docs = list(corpus(DATA / "scifact"))
    texts = list(queries(DATA / "scifact").values())
    token = "nk_load_" + secrets.token_urlsafe(32)
    hostile = hostile_files()
    with tempfile.TemporaryDirectory() as work:
        port = free_port()
        server = start_server(args.src, Path(work) / "data", port, token)
        try:
            run(f"http://127.0.0.1:{port}", token, server.pid, docs, texts, hostile, args)
        finally:
            server.terminate()
            server.wait(30)


def run(base, token, pid, docs, texts, hostile, args) -> None:  # type: ignore[no-untyped-def]
    headers = {"Authorization": f"Bearer {token}"}
    http = httpx.Client(base_url=base, headers=headers, timeout=600)
    team_a = http.post("/v1/projects", json={"name": "a"}).json()["id"]
    team_b = http.post("/v1/projects", json={"name": "b"}).json()["id"]
    for d in docs[:300]:
        body = {"path": f"/c/{d['_id']}.md", "content": d["text"]}
        http.post(f"/v1/projects/{team_b}/documents", json=body).raise_for_status()
    peak = [rss_mib(pid)]
    statuses: collections.Counter[int] = collections.Counter()
    idle = searches(base, headers, team_b, texts, args.idle_seconds, peak, pid, statuses)

    stop = threading.Event()
    busy: list[float] = []
    searcher = threading.Thread(
        target=lambda: busy.extend(
            searches(base, headers, team_b, texts, None, peak, pid, statuses, stop)
        )
    )
    searcher.start()
    uploader = threading.Thread(target=upload_folder, args=(base, headers, team_a, hostile, docs))
    uploader.start()
    time.sleep(5)  # team A's folder is on its way
    ready = upload_and_wait(http, team_b)
    uploader.join()
    stop.set()
    searcher.join()
    errors = sum(n for status, n in statuses.items() if status >= 500)
    print(f"idle:  p50 {percentile(idle, 50):6.1f} ms  p99 {percentile(idle, 99):6.1f} ms")
    print(f"busy:  p50 {percentile(busy, 50):6.1f} ms  p99 {percentile(busy, 99):6.1f} ms")
    ratio = percentile(busy, 99) / percentile(idle, 99)
    print(f"B's p99 busy / idle {ratio:.2f} (target ≤ 2)")
    print(f"B's upload ready in {ready:.1f} s (target ≤ 30)")
    print(f"peak RSS {max(peak):.0f} MiB (target ≤ 1536); answers by status {dict(statuses)}")
    print(
        f"neighbours: p99_ratio={ratio:.2f} ready_s={ready:.1f} "
        f"peak_rss_mib={max(peak):.0f} errors_5xx={errors}"
    )


def searches(base, headers, project, texts, seconds, peak, pid, statuses, stop=None):  # type: ignore[no-untyped-def]
    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + (seconds or 1e9)

    def client(seed: int) -> None:
        rng, n = random.Random(seed), 0
        with httpx.Client(base_url=base, headers=headers, timeout=600) as http:
            while time.perf_counter() < deadline and not (stop and stop.is_set()):
                n += 1  # every text distinct: each query is embedded, none cached
                body = {"query": f"{rng.choice(texts)} ({seed}-{n})", "limit": 10}
                started = time.perf_counter()
                r = http.post(f"/v1/projects/{project}/knowledge/search", json=body)
                with lock:
                    latencies.append((time.perf_counter() - started) * 1000)
                    statuses[r.status_code] += 1
                    peak.append(rss_mib(pid))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(SEARCHERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def upload_folder(base, headers, project, hostile, docs) -> None:  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=base, headers=headers, timeout=600) as http:
        files = list(hostile)
        for n in range(ORDINARY):
            batch = docs[300 + 6 * n : 306 + 6 * n]
            text = "\n\n".join(f"## {d['title']}\n\n{d['text']}" for d in batch)
            files.append((f"note-{n}.md", text.encode()))
        for name, data in files:
            r = http.post(
                f"/v1/projects/{project}/documents",
                files={"file": (name, data)},
                data={"path": f"/folder/{name}"},
            )
            if r.status_code >= 500 or name in dict(hostile):
                print(f"  A {name}: {r.status_code} {r.text[:120]}")


def upload_and_wait(http: httpx.Client, project: str) -> float:
    started = time.perf_counter()
    text = "\n\n".join(
        f"## Step {i}\n\nThe zebra rota rotates weekly, item {i}." for i in range(20)
    )
    r = http.post(f"/v1/projects/{project}/documents", json={"path": "/rota.md", "content": text})
    r.raise_for_status()
    url = f"/v1/projects/{project}/documents/{r.json()['id']}"
    while http.get(url).json()["status"] != "ready":
        time.sleep(0.2)
    return time.perf_counter() - started


def sources_neighbours(args: argparse.Namespace) -> None:
    token = "nk_load_" + secrets.token_urlsafe(32)
    site = Hostile(drip_seconds=600)
    with tempfile.TemporaryDirectory() as work:
        repo = Path(work) / "repos" / "b"
        _git(repo.parent, "init", "-q", "-b", "main", str(repo))
        port = free_port()
        extra = {
            "NATURALI_SOURCES_ALLOW": "127.0.0.1",
            "NATURALI_SOURCES_LOCAL_ROOTS": str(repo.parent),
        }
        server = start_server(args.src, Path(work) / "data", port, token, extra)
        try:
            with httpx.Client(
                base_url=f"http://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {token}"},
                timeout=600,
            ) as http:
                team_b = http.post("/v1/projects", json={"name": "b"}).json()["id"]
                _commit(repo, 0)
                made = {"kind": "git", "url": str(repo), "path": "/b/"}
                source = http.post(f"/v1/projects/{team_b}/sources", json=made).json()["id"]
                alone = [_sync_b(http, repo, team_b, source, n) for n in range(1, args.rounds)]
                team_a = http.post("/v1/projects", json={"name": "a"}).json()["id"]
                for url in (f"{site.url}/drip/index.html", f"{site.url}/endless/0.html"):
                    body = {"kind": "web", "url": url, "path": "/a/", "every": "1m"}
                    http.post(f"/v1/projects/{team_a}/sources", json=body).raise_for_status()
                time.sleep(2)  # A's first sync holds a worker
                beside = []
                for n in range(args.rounds, 2 * args.rounds):  # over A's drip and crawl
                    beside.append(_sync_b(http, repo, team_b, source, n))
                    time.sleep(args.spacing)
                runs = http.get(f"/v1/projects/{team_a}/sources").json()["data"]
        finally:
            server.terminate()
            server.wait(30)
            site.close()
    print(f"B alone:  p50 {percentile(alone, 50):6.2f} s  worst {max(alone):6.2f} s")
    print(f"B beside: p50 {percentile(beside, 50):6.2f} s  worst {max(beside):6.2f} s")
    for run in runs:
        last = run["last_run"] or {}
        said = last.get("truncated") or last.get("failed") or "still running"
        print(f"  A {run['url']}: created {last.get('created', 0)}; {said}")
    delay = max(beside) - percentile(alone, 50)
    print(f"neighbours_sources: worst_delay_s={delay:.2f} (B's sync beside A, over B's alone)")


def _sync_b(http: httpx.Client, repo: Path, project: str, source: str, n: int) -> float:
    """Change B's repository, ask for a sync, and wait for it: the seconds it took."""
    _commit(repo, n)
    url = f"/v1/projects/{project}/sources/{source}"
    before = (http.get(url).json()["last_run"] or {}).get("at", "")
    started = time.perf_counter()
    http.post(url + "/sync").raise_for_status()
    while True:
        got = http.get(url).json()
        if (got["last_run"] or {}).get("at", "") > before and not got["sync_requested"]:
            return time.perf_counter() - started
        time.sleep(0.05)


def _commit(repo: Path, n: int) -> None:
    (repo / f"note-{n}.md").write_text(f"# Note {n}\n\nThe rota changes in week {n}.")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", str(n))


def _git(where: Path, *args: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "-C", str(where), *args], check=True, capture_output=True)


def rss_mib(pid: int) -> float:
    """The server process's resident memory (its parser workers are bounded on their own)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


if __name__ == "__main__":
    main()
