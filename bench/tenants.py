"""Many small teams on one server: what one more project costs, cold and warm.

For each N: a fresh data dir holding N projects of M chunks each (SciFact's chunks as naturali
ingested them, text and vectors, spread over the projects: project i holds the M chunks from
i·M on, modulo the collection) and one memory store of K memories in each of the first S
projects (written through the service and embedded; each store's vault then committed to its
Git repository once — a commit a memory would make the 10,000-store build an hour). Then a
real ``naturali serve`` on it, and:

- at rest: bytes on disk and files a project (the data dir's, over N), project and store
  creation time (p50, through the service);
- restart to ready (``/readyz`` 200), RSS and open descriptors of the idle server;
- the first search of 200 cold projects (p50/p99), then the same again, warm;
- C clients for T seconds, each searching a random project (uniform, then Zipf s = 1.1) and
  uploading a document one time in 20: p50/p99 of the searches and of the uploads, evictions
  a second (``naturali_index_evictions_total``), RSS and descriptors after; then the uniform
  workload again with every query new;
- a restart, every project searched having its index saved by then: to ready, and the uniform
  workload again, RSS and descriptors after it;

then each figure's exponent against N (a least-squares fit of log figure on log N; 1 is
linear), and last, exactly, for the largest N:

    tenants: projects=N cold_p50_ms=… warm_p50_ms=… p99_ms=… rss_mib=… ready_s=… fds=…

Queries are SciFact's 1,109, so in a workload most texts come back and the server's query
vector cache answers them without running the model, as it does an agent's repeated
questions; "every query new" numbers each text (as ``bench/load.py --distinct-queries``
does), so each is embedded, as a host's many teams' questions mostly are. The cold and warm
searches are new texts too: what a first search costs.

    python bench/tenants.py [--projects 100,1000] [--chunks 100] [--stores 100]
        [--memories 3] [--clients 8] [--seconds 20] [--data-dir DIR] [--scifact-dir DIR]
        [--database-url URL --servers 2] [--reuse]

``--projects 100,1000,10000`` is the issue's curve (10,000 projects of 100 chunks is 1M
chunks copied and a long build here: run it by hand). ``--reuse`` measures the data dirs an
earlier run left, brought up to this version, instead of building them again. With
``--database-url`` (a PostgreSQL, e.g. ``bench/pgserver.py``'s) the projects are stored there
and ``--servers`` K servers share it and the data dir, each with its own cache; the workloads
then run twice from servers started on empty caches, each search sent to the server its
project id hashes to (rendezvous hashing, as a load balancer would route), then to a random
one, and the table gives both and each server's loaded indexes.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import secrets
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from beir import ensure_ingested  # noqa: E402
from common import (  # noqa: E402
    DATA,
    as_written,
    median,
    percentile,
    queries,
    save_copy,
    service,
    stored_chunks,
)
from load import start_server  # noqa: E402
from naturali.model import Document  # noqa: E402
from naturali.ports.storage import EmbeddedChunk  # noqa: E402
from naturali.vault.git import VaultGit  # noqa: E402

_METRICS = {"Authorization": "Bearer " + secrets.token_hex(16)}
NEW_QUERIES = "uniform, every query new"


@dataclass
class Figures:
    projects: int
    bytes_per_project: float = 0.0
    files_per_project: float = 0.0
    create_project_ms: float = 0.0
    create_store_ms: float = 0.0
    ready_s: float = 0.0
    idle_rss_mib: float = 0.0
    idle_fds: int = 0
    cold_p50_ms: float = 0.0
    cold_p99_ms: float = 0.0
    warm_p50_ms: float = 0.0
    warm_p99_ms: float = 0.0
    # per workload: search p50, p99 ms, evictions a second, upload p50, p99 ms
    workload: dict[str, tuple[float, ...]] = field(default_factory=dict)
    rss_mib: float = 0.0
    fds: int = 0
    restart_s: float = 0.0  # to ready again, every searched project's index saved
    restart_rss_mib: float = 0.0
    restart_fds: int = 0
    loaded: list[int] = field(default_factory=list)  # indexes in memory, per server
    loaded_at_random: list[int] = field(default_factory=list)  # after the random workloads


def source_chunks(scifact_dir: Path) -> list[tuple[Document, list[EmbeddedChunk]]]:
    """SciFact's documents with their chunks as naturali stored them (text and vectors)."""
    naturali, user = service(scifact_dir)
    project = ensure_ingested(naturali, user, DATA / "scifact", None)
    docs = [(doc, as_written(chunks)) for doc, chunks in stored_chunks(naturali, user, project)]
    naturali.close()
    return docs


def build(
    data_dir: Path, token: str, n: int, args: argparse.Namespace, docs: list[Any]
) -> tuple[list[str], Figures]:
    naturali, user = service(data_dir, args.database_url, bootstrap_token=token, vault_git=False)
    if not (data_dir / "owner-token").exists():  # no owner made: the catalog was not empty
        raise SystemExit(f"{args.database_url} holds a catalog already: use a new --database")
    figures, created, stored = Figures(n), [], []
    at, ids = 0, []
    for i in range(n):
        started = time.perf_counter()
        project, _ = naturali.projects.create(user, f"team-{i}")
        created.append(time.perf_counter() - started)
        ids.append(project.id)
        held = 0
        while held < args.chunks:
            doc, chunks = docs[at % len(docs)]
            at += 1
            save_copy(naturali, doc, chunks, project.id, f"/t{i}{doc.path}")
            held += len(chunks)
        naturali.indexes.written(project.id)  # what an upload's commit tells the indexes
        if i < args.stores:
            started = time.perf_counter()
            store = naturali.memories.create_store(user, project.id, "agent", None)
            stored.append(time.perf_counter() - started)
            for k in range(args.memories):
                naturali.memories.create(user, project.id, store.id, f"Team {i} note {k}.")
            git = VaultGit(naturali.memories.vault(store.id))
            git.commit(f"{args.memories} memories")
        if (i + 1) % 100 == 0:
            print(f"\r  {i + 1}/{n} projects", end="", flush=True)
    print()
    figures.create_project_ms = median(created) * 1000
    figures.create_store_ms = median(stored) * 1000 if stored else 0.0
    naturali.close()
    size, files = _disk(data_dir)
    figures.bytes_per_project, figures.files_per_project = size / n, files / n
    return ids, figures


def upgraded(data_dir: Path, n: int, args: argparse.Namespace) -> tuple[list[str], Figures]:
    """An earlier run's data dir (``--reuse``) as this version's writes would have left it:
    each project's index prepared (``IndexRegistry.written``), each store's records read once
    (their front matter kept, ``vault/fronts.py``). Creation times are not measured again."""
    token = (data_dir / "owner-token").read_text().strip()
    naturali, user = service(data_dir, args.database_url, bootstrap_token=token, vault_git=False)
    ids = [project.id for project, _ in naturali.projects.list(user)]
    assert len(ids) == n, f"{data_dir} holds {len(ids)} projects, not {n}"
    for project_id in ids:
        naturali.indexes.written(project_id)
        for store in naturali.storage.list_memory_stores(project_id):
            with naturali.stores.opened(store.id) as opened:
                opened.view()
    naturali.close()  # once every project is prepared
    figures = Figures(n)
    size, files = _disk(data_dir)
    figures.bytes_per_project, figures.files_per_project = size / n, files / n
    return ids, figures


def _disk(path: Path) -> tuple[int, int]:
    size = files = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                size += os.lstat(os.path.join(folder, name)).st_blocks * 512
                files += 1
            except FileNotFoundError:
                continue
    return size, files


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _metric(base: str, name: str) -> float:
    for line in httpx.get(base + "/metrics", headers=_METRICS).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return 0.0


def route(project_id: str, servers: int) -> int:
    """The server a project's searches go to: rendezvous hashing (each server scores the
    project id; the highest wins), so adding a server moves only the projects it now wins."""
    return max(
        range(servers),
        key=lambda s: hashlib.blake2b(f"{s}/{project_id}".encode(), digest_size=8).digest(),
    )


def measure(data_dir: Path, token: str, ids: list[str], figures: Figures, args: Any) -> None:
    """A first start on the store as built (each small project's index saved as its writes
    left it, ``IndexRegistry.written``): cold, warm and the workloads; with several servers,
    each starting on an empty cache, the workloads again sent at random, from servers
    restarted on empty caches; then a restart, with every searched project's index saved, and
    the uniform workload again."""
    texts = list(queries(DATA / "scifact").values())
    bases = [f"http://127.0.0.1:{args.port + k}" for k in range(args.servers)]
    headers = {"Authorization": f"Bearer {token}"}
    if len(bases) > 1:
        _empty_caches(data_dir, len(bases))  # what an earlier run (--reuse) saved in them
    servers, figures.ready_s = _start(data_dir, token, bases, args)
    try:
        figures.idle_rss_mib = sum(_rss_mib(s.pid) for s in servers)
        figures.idle_fds = sum(_fds(s.pid) for s in servers)
        clients = [httpx.Client(base_url=b, headers=headers, timeout=60) for b in bases]
        sample = random.Random(1).sample(ids, min(200, len(ids)))
        asked = iter(range(2 * len(sample)))  # each cold and warm query a new text
        cold = [_search(clients[route(p, len(bases))], p, texts, next(asked)) for p in sample]
        warm = [_search(clients[route(p, len(bases))], p, texts, next(asked)) for p in sample]
        figures.cold_p50_ms, figures.cold_p99_ms = median(cold), percentile(cold, 99)
        figures.warm_p50_ms, figures.warm_p99_ms = median(warm), percentile(warm, 99)
        for shape in ("uniform", "zipf"):
            figures.workload[shape] = _workload(bases, headers, ids, texts, shape, True, args)
        figures.workload[NEW_QUERIES] = _workload(
            bases, headers, ids, texts, "uniform", True, args, new_queries=True
        )
        figures.loaded = [int(_metric(b, "naturali_indexes_loaded")) for b in bases]
        if len(bases) > 1:  # sent at random, from the same start: servers with empty caches
            _stop(servers)
            _empty_caches(data_dir, len(bases))
            servers, _ = _start(data_dir, token, bases, args)
            for shape in ("uniform", "zipf"):
                figures.workload[f"{shape}, to a random server"] = _workload(
                    bases, headers, ids, texts, shape, False, args
                )
            figures.loaded_at_random = [int(_metric(b, "naturali_indexes_loaded")) for b in bases]
        figures.rss_mib = sum(_rss_mib(s.pid) for s in servers)
        figures.fds = sum(_fds(s.pid) for s in servers)
    finally:
        _stop(servers)
    servers, figures.restart_s = _start(data_dir, token, bases, args)
    try:
        uniform = _workload(bases, headers, ids, texts, "uniform", True, args)
        figures.workload["uniform, after a restart"] = uniform
        figures.restart_rss_mib = sum(_rss_mib(s.pid) for s in servers)
        figures.restart_fds = sum(_fds(s.pid) for s in servers)
    finally:
        _stop(servers)


def _start(
    data_dir: Path, token: str, bases: list[str], args: Any
) -> tuple[list[subprocess.Popen[bytes]], float]:
    """The servers, and how long the first took from its start to ready."""
    started = time.perf_counter()
    servers = [start_server(None, data_dir, args.port, token, _env(data_dir, 0, args))]
    while httpx.get(bases[0] + "/readyz").status_code != 200:
        time.sleep(0.05)
    ready = time.perf_counter() - started
    servers += [
        start_server(None, data_dir, args.port + k, token, _env(data_dir, k, args))
        for k in range(1, len(bases))
    ]
    return servers, ready


def _empty_caches(data_dir: Path, servers: int) -> None:
    """Each server's cache (``_env``) removed: its next start has loaded and saved nothing."""
    for k in range(servers):
        shutil.rmtree(data_dir / f"cache-{k}", ignore_errors=True)


def _stop(servers: list[subprocess.Popen[bytes]]) -> None:
    for server in servers:
        server.terminate()  # a graceful stop: it saves what changed since its snapshots
    for server in servers:
        server.wait(120)


def _env(data_dir: Path, k: int, args: Any) -> dict[str, str]:
    """Server k's settings: the shared store, its own cache (snapshots, projections)."""
    env = {"NATURALI_METRICS_TOKEN": _METRICS["Authorization"].split()[-1]}
    if args.database_url:
        env["NATURALI_DATABASE_URL"] = args.database_url
        env["NATURALI_CACHE_DIR"] = str(data_dir / f"cache-{k}")
    return env


def _search(http: httpx.Client, project_id: str, texts: list[str], new: object = None) -> float:
    """One search of a random text; numbered by ``new`` (not None), a text not asked before."""
    query = random.choice(texts)
    body = {"query": query if new is None else f"{query} ({new})", "limit": 10}
    started = time.perf_counter()
    response = http.post(f"/v1/projects/{project_id}/knowledge/search", json=body)
    took = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, response.text
    return took


def _workload(
    bases: list[str],
    headers: dict[str, str],
    ids: list[str],
    texts: list[str],
    shape: str,
    routed: bool,
    args: Any,
    new_queries: bool = False,
) -> tuple[float, ...]:
    """(search p50 ms, p99 ms, evictions a second over the servers, upload p50 ms, p99 ms) of
    C clients for T seconds, each request sent to its project's server (``routed``) or to any,
    with ``new_queries`` each search's text one not asked before. An upload is answered once
    its passages are searchable, so a client waits for it."""
    weights = [1.0 / (i + 1) ** 1.1 for i in range(len(ids))] if shape == "zipf" else None
    took: list[float] = []
    uploaded: list[float] = []
    deadline = time.monotonic() + args.seconds
    before = sum(_metric(b, "naturali_index_evictions_total") for b in bases)

    def client(seed: int) -> None:
        rng = random.Random(seed)
        own = [httpx.Client(base_url=b, headers=headers, timeout=60) for b in bases]
        asked = 0
        while time.monotonic() < deadline:
            project = rng.choices(ids, weights)[0] if weights else rng.choice(ids)
            http = own[route(project, len(bases)) if routed else rng.randrange(len(bases))]
            if rng.random() < 0.05:
                started = time.perf_counter()
                response = http.post(f"/v1/projects/{project}/documents", json=_note(rng))
                uploaded.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 201, response.text
            else:
                new = f"{seed}-{asked}" if new_queries else None
                took.append(_search(http, project, texts, new))
                asked += 1
        for http in own:
            http.close()

    threads = [threading.Thread(target=client, args=(s,)) for s in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    evicted = sum(_metric(b, "naturali_index_evictions_total") for b in bases) - before
    searched = (median(took), percentile(took, 99), evicted / args.seconds)
    return (*searched, median(uploaded), percentile(uploaded, 99))


def _note(rng: random.Random) -> dict[str, str]:
    return {"path": f"/notes/{secrets.token_hex(6)}.md", "content": f"Note {rng.random()}."}


def exponent(sizes: list[int], values: list[float]) -> float:
    if len(sizes) < 2 or min(values) <= 0:
        return float("nan")
    xs, ys = [math.log(s) for s in sizes], [math.log(v) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def report(rows: list[Figures]) -> None:
    names = [
        ("bytes on disk a project", "bytes_per_project", "{:.0f}"),
        ("files a project", "files_per_project", "{:.1f}"),
        ("create a project, p50 ms", "create_project_ms", "{:.1f}"),
        ("create a store, p50 ms", "create_store_ms", "{:.1f}"),
        ("restart to ready, s", "ready_s", "{:.2f}"),
        ("idle RSS, MiB", "idle_rss_mib", "{:.0f}"),
        ("idle open descriptors", "idle_fds", "{:d}"),
        ("first search of a cold project, p50 ms", "cold_p50_ms", "{:.1f}"),
        ("first search of a cold project, p99 ms", "cold_p99_ms", "{:.1f}"),
        ("warm search, p50 ms", "warm_p50_ms", "{:.1f}"),
        ("warm search, p99 ms", "warm_p99_ms", "{:.1f}"),
        ("RSS after the workloads, MiB", "rss_mib", "{:.0f}"),
        ("open descriptors after", "fds", "{:d}"),
        ("restart to ready, indexes saved, s", "restart_s", "{:.2f}"),
        ("RSS after a restart's workload, MiB", "restart_rss_mib", "{:.0f}"),
        ("open descriptors after it", "restart_fds", "{:d}"),
    ]
    sizes = [r.projects for r in rows]
    print(f"\n{'projects':42}" + "".join(f"{n:>12}" for n in sizes) + f"{'exponent':>10}")
    for label, attr, fmt in names:
        values = [getattr(r, attr) for r in rows]
        cells = "".join(f"{fmt.format(v):>12}" for v in values)
        print(f"{label:42}{cells}{exponent(sizes, [float(v) for v in values]):>10.2f}")
    for shape in rows[-1].workload:
        for i, what in enumerate(("p50 ms", "p99 ms", "evictions/s", "upload p50", "upload p99")):
            values = [r.workload[shape][i] for r in rows]
            cells = "".join(f"{v:>12.1f}" for v in values)
            print(f"{f'{shape}, {what}':42}{cells}")
    print(f"{'indexes loaded, per server':42}" + "".join(f"{str(r.loaded):>12}" for r in rows))
    if rows[-1].loaded_at_random:
        cells = "".join(f"{str(r.loaded_at_random):>12}" for r in rows)
        print(f"{'  after the random workloads instead':42}{cells}")
    last = rows[-1]
    print(
        f"tenants: projects={last.projects} cold_p50_ms={last.cold_p50_ms:.1f} "
        f"warm_p50_ms={last.warm_p50_ms:.1f} p99_ms={last.workload['uniform'][1]:.1f} "
        f"rss_mib={max(last.rss_mib, last.restart_rss_mib):.0f} "
        f"ready_s={max(last.ready_s, last.restart_s):.2f} fds={max(last.fds, last.restart_fds)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", default="100,1000")
    parser.add_argument("--chunks", type=int, default=100)
    parser.add_argument("--stores", type=int, default=100, help="projects with a store")
    parser.add_argument("--memories", type=int, default=3)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/naturali-tenants"))
    parser.add_argument("--scifact-dir", type=Path, default=Path("/tmp/quality"))
    parser.add_argument("--database-url", default=None, help="a PostgreSQL: store there")
    parser.add_argument("--servers", type=int, default=1, help="servers sharing it")
    parser.add_argument("--port", type=int, default=8790, help="the first server's")
    parser.add_argument(
        "--reuse", action="store_true", help="measure the data dirs an earlier run built"
    )
    args = parser.parse_args()
    docs = source_chunks(args.scifact_dir)
    rows = []
    for n in [int(x) for x in args.projects.split(",")]:
        data_dir = args.data_dir / f"tenants-{n}"
        print(f"{n} projects:")
        if args.reuse and (data_dir / "owner-token").exists():
            ids, figures = upgraded(data_dir, n, args)
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
            ids, figures = build(data_dir, "nk_bench_" + secrets.token_hex(24), n, args, docs)
        token = (data_dir / "owner-token").read_text().strip()
        measure(data_dir, token, ids, figures, args)
        rows.append(figures)
    report(rows)


if __name__ == "__main__":
    main()
