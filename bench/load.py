"""Load on a real ``naturali serve``: N concurrent clients for T seconds, searches mixed with
document uploads and record saves, over 300 SciFact documents.

Prints search throughput, p50/p99 latency per kind, errors, and the server's peak RSS. The
server is started here (its own data dir, the repository's code unless --src points at
another checkout's ``src``), so a before/after comparison runs the same script twice.

    python bench/load.py [--clients 8] [--seconds 60] [--documents 300] [--src DIR]
        [--database-url postgresql://… [--servers 2]] [--distinct-queries] [--searches-only]
        [--against OTHER_SRC [--pairs 3]]

With --against, runs alternate between this code (or --src) and the checkout whose ``src`` is
given, --pairs times each, the order swapped every pair (A B, B A, A B, …), and the end prints
each pair's searches/s and ratio and their median: on the VMs this was measured on, the same
code ran ±20% apart from one run to the next, so a ratio is taken within a pair, not across
hours.

Searches draw their text from SciFact's 1,109 queries, so most texts come back several times
in a run (as an agent's questions do) and the server's query vector cache answers those
without running the model; --distinct-queries numbers every text, so each one is embedded.

With --database-url the servers share a new database on that PostgreSQL server, made for the
run and dropped after it (the load bootstraps its own owner, which only an empty database
accepts), and one data dir (each its own cache dir); with --servers N the clients are spread
over N servers, round robin.

Each server's output goes to bench/results/load-server-N.log (the last run's). A request that
gets no answer (a reset connection, a timeout) is counted and printed, and its client goes on.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import DATA, corpus, percentile, queries  # noqa: E402
from server import free_port  # noqa: E402

MIX = (("search", 0.9), ("upload", 0.05), ("save", 0.05))
LOGS = Path(__file__).parent / "results"  # each server's output, kept for the last run
SEARCHES_ONLY = (("search", 1.0),)
SPARE_DOCUMENTS = 3000  # uploads a run may make: ~10 minutes at 5 a second


def start_server(
    src: Path | None,
    data_dir: Path,
    port: int,
    token: str,
    extra: dict[str, str] | None = None,
    log: Path | None = None,
) -> subprocess.Popen[bytes]:
    """``naturali serve`` on ``port``; its output goes to ``log`` (else nowhere)."""
    env = {
        **os.environ,
        "NATURALI_BOOTSTRAP_TOKEN": token,
        "NATURALI_DATA_DIR": str(data_dir),
        **(extra or {}),
    }
    if src is not None:
        env["PYTHONPATH"] = str(src)
    with log.open("wb") if log else open(os.devnull, "wb") as out:  # the child keeps its copy
        process = subprocess.Popen(
            [sys.executable, "-m", "naturali.cli.main", "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    for _ in range(240):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.5)
    process.kill()
    raise RuntimeError("the server did not start")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--src", type=Path, default=None)
    parser.add_argument(
        "--bombs", type=int, default=0, help="extra clients uploading PDF bombs all along"
    )
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--servers", type=int, default=1)
    parser.add_argument(
        "--distinct-queries",
        action="store_true",
        help="make every search's text unique (a numbered suffix), so none is a repeat the "
        "server's query vector cache could answer",
    )
    parser.add_argument(
        "--searches-only",
        action="store_true",
        help="no uploads or saves: what the server answers when it only searches",
    )
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="another checkout's src: runs alternate with it, and each pair's ratio is printed",
    )
    parser.add_argument("--pairs", type=int, default=3, help="pairs of runs with --against")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    if args.against is None:
        measure(args, args.src)
        return
    pairs: list[tuple[float, float]] = []
    for i in range(args.pairs):
        order = [(args.src, "this"), (args.against, "against")]
        rates: dict[str, float] = {}
        for src, name in order if i % 2 == 0 else order[::-1]:
            print(f"\n== pair {i + 1}, {name}: {src or 'this checkout'}", flush=True)
            rates[name] = measure(args, src)
        pairs.append((rates["this"], rates["against"]))
    ratios = [this / against if against else float("inf") for this, against in pairs]
    print("\npair  searches/s (this, against)  ratio")
    for i, ((this, against), ratio) in enumerate(zip(pairs, ratios, strict=True), 1):
        print(f"{i:4d}  {this:8.1f} {against:8.1f}          {ratio:5.2f}x")
    print(f"median ratio {statistics.median(ratios):.2f}x over {len(pairs)} pairs")


def measure(args: argparse.Namespace, src: Path | None) -> float:
    """One run against a fresh server (or servers) on ``src``'s code: searches/s."""
    scifact = DATA / "scifact"
    # Spare documents for the uploads: 200 ran out ~40 s into a 60 s run at 5 uploads/s, and
    # the rest of the run was searches and saves alone (a faster server's tail flattered).
    docs = [
        d for _, d in zip(range(args.documents + SPARE_DOCUMENTS), corpus(scifact), strict=False)
    ]
    texts = list(queries(scifact).values())
    token = "nk_load_" + secrets.token_urlsafe(32)
    database = fresh_database(args.database_url) if args.database_url else nullcontext(None)
    with tempfile.TemporaryDirectory() as work, database as database_url:
        servers: list[tuple[subprocess.Popen[bytes], int]] = []
        LOGS.mkdir(exist_ok=True)
        try:
            for i in range(args.servers):  # one after the other: the first bootstraps
                port = free_port()
                extra = {"NATURALI_CACHE_DIR": str(Path(work) / f"cache-{i}")}
                if database_url:
                    extra["NATURALI_DATABASE_URL"] = database_url
                data = Path(work) / "data"
                log = LOGS / f"load-server-{i}.log"
                servers.append((start_server(src, data, port, token, extra, log), port))
            return run(args, servers, token, docs, texts)
        finally:
            for server, _ in servers:
                server.terminate()
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:  # requests still in flight (a PDF worker)
                    server.kill()
                    server.wait()


@contextmanager
def fresh_database(url: str) -> Iterator[str]:
    """The URL of a new, empty database on the server ``url`` names; dropped afterwards."""
    import psycopg  # the postgres extra: only a run against PostgreSQL needs it

    name = "naturali_load_" + secrets.token_hex(4)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}".encode())
    try:
        yield urlsplit(url)._replace(path="/" + name).geturl()
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())


def run(
    args: argparse.Namespace,
    servers: list[tuple[subprocess.Popen[bytes], int]],
    token: str,
    docs: list[dict[str, str]],
    texts: list[str],
) -> float:
    """Prints the run's figures; returns its searches/s."""
    bases = [f"http://127.0.0.1:{port}" for _, port in servers]
    base = bases[0]
    headers = {"Authorization": f"Bearer {token}"}
    http = httpx.Client(base_url=base, headers=headers, timeout=300)
    project = http.post("/v1/projects", json={"name": "load"}).json()["id"]
    store = http.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"}).json()["id"]
    started = time.perf_counter()
    for doc in docs[: args.documents]:
        body = {"path": f"/corpus/{doc['_id']}.md", "content": f"# {doc['title']}\n\n{doc['text']}"}
        http.post(f"/v1/projects/{project}/documents", json=body).raise_for_status()
    print(f"ingested {args.documents} documents in {time.perf_counter() - started:.0f} s")
    spare = iter(docs[args.documents :])
    lock = threading.Lock()
    mix = SEARCHES_ONLY if args.searches_only else MIX
    latencies: dict[str, list[float]] = {kind: [] for kind, _ in mix}
    errors: dict[str, int] = {kind: 0 for kind, _ in mix}
    statuses: dict[int, int] = {}  # of the answers >= 400
    dropped: dict[str, int] = {kind: 0 for kind, _ in mix}  # no answer (a reset, a timeout)
    first_drop: list[str] = []  # the first such request's exception
    ran_out = [0]  # uploads not made: no spare document left
    deadline = time.perf_counter() + args.seconds

    def client(seed: int) -> None:
        rng = random.Random(seed)
        own = httpx.Client(base_url=bases[seed % len(bases)], headers=headers, timeout=300)
        n = 0

        def send(kind: str) -> httpx.Response | None:
            nonlocal n
            if kind == "search":
                query = rng.choice(texts)
                if args.distinct_queries:
                    query = f"{query} ({seed}-{n})"
                    n += 1
                body = {"query": query, "limit": 10}
                return own.post(f"/v1/projects/{project}/knowledge/search", json=body)
            if kind == "upload":
                with lock:
                    doc = next(spare, None)
                if doc is None:
                    with lock:
                        ran_out[0] += 1
                    return None
                body = {"path": f"/new/{doc['_id']}.md", "content": doc["text"]}
                return own.post(f"/v1/projects/{project}/documents", json=body)
            n += 1
            record = {"kind": "claim", "title": f"note {seed}-{n}", "body": rng.choice(texts)}
            return own.post(
                f"/v1/projects/{project}/memory_stores/{store}/knowledge/save",
                json={"requestId": f"load-{seed}-{n}", "record": record},
            )

        while time.perf_counter() < deadline:
            kind = rng.choices([k for k, _ in mix], [w for _, w in mix])[0]
            t0 = time.perf_counter()
            try:
                r = send(kind)
            except httpx.TransportError as exc:  # counted, and the client goes on
                with lock:
                    dropped[kind] += 1
                    if not first_drop:
                        first_drop.append(f"{kind}: {exc!r}")
                continue
            if r is None:
                continue
            elapsed = (time.perf_counter() - t0) * 1000
            with lock:
                latencies[kind].append(elapsed)
                if r.status_code >= 400:
                    errors[kind] += 1
                    statuses[r.status_code] = statuses.get(r.status_code, 0) + 1

    def bomber(seed: int) -> None:
        own = httpx.Client(base_url=base, headers=headers, timeout=300)
        sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
        from pdfs import pdf_bomb  # the tests' bomb (needs the dev extras)

        payload = pdf_bomb(70_000_000)
        while time.perf_counter() < deadline:
            files = {"file": ("bomb.pdf", payload)}
            r = own.post(
                f"/v1/projects/{project}/documents", files=files, data={"path": f"/b{seed}.pdf"}
            )
            with lock:
                bomb_statuses[r.status_code] = bomb_statuses.get(r.status_code, 0) + 1

    bomb_statuses: dict[int, int] = {}
    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    threads += [threading.Thread(target=bomber, args=(i,)) for i in range(args.bombs)]
    server_cpu = [cpu_seconds(server.pid) for server, _ in servers]
    client_cpu = time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client_cpu = time.process_time() - client_cpu
    server_cpu = [cpu_seconds(s.pid) - c for (s, _), c in zip(servers, server_cpu, strict=True)]
    for kind, values in latencies.items():
        if not values:
            continue
        print(
            f"{kind:7s} {len(values):6d} calls  {len(values) / args.seconds:6.1f}/s  "
            f"p50 {percentile(values, 50):7.1f} ms  p99 {percentile(values, 99):7.1f} ms  "
            f"errors {errors[kind]}"
        )
    if statuses or first_drop:
        print(f"error statuses {statuses}; no answer {dropped} (first: {first_drop})")
    if ran_out[0]:
        print(f"uploads not made, no spare document left: {ran_out[0]} (the mix was not kept)")
    if args.bombs:
        print(f"PDF bombs ({args.bombs} clients): statuses {bomb_statuses}")
    searches = len(latencies["search"])
    print(
        f"CPU over the run: server {sum(server_cpu):.1f} s "
        f"({sum(server_cpu) * 1000 / max(1, searches):.1f} ms per search, all kinds included), "
        f"load client {client_cpu:.1f} s"
    )
    rss = ", ".join(f"{peak_rss_mib(server.pid):.0f}" for server, _ in servers)
    print(
        f"{args.clients} clients, {args.seconds:.0f} s, {len(servers)} server(s); "
        f"peak RSS {rss} MiB"
    )
    return float(searches / args.seconds)


if __name__ == "__main__":
    main()
