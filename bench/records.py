"""The records tools at 1,000 and 10,000 records: first index, warm grep, one changed file.

Vaults are written as files: pages, claims and relationships with SciFact titles and
abstracts as bodies (varied sizes), aliases on every fifth record, and supersession chains on
every tenth. Each size prints the first full index time (scan, parse, eligibility, FTS5
build), knowledge_grep p50/p95 when nothing changed (the change check included), and p50/p95
when one file changed before each query. Queries are the first three content words of SciFact
queries, in the default mode (all) and in mode any.

    python bench/records.py [--sizes 1000 10000] [--queries 100]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import DATA, corpus, median, percentile, queries, service  # noqa: E402
from naturali.service.requests import GrepRequest  # noqa: E402
from naturali.text.tokens import STOPWORDS, words  # noqa: E402
from records_vault import write  # noqa: E402

KINDS = [
    ("page", "topic"),
    ("claim", "fact"),
    ("claim", "decision"),
    ("page", "person"),
    ("relationship", "mentions"),
]


def build_vault(vault: Path, size: int) -> None:
    docs = list(itertools.islice(corpus(DATA / "scifact"), size))
    for i, doc in enumerate(docs):
        kind, type_ = KINDS[i % len(KINDS)]
        front: dict[str, object] = {
            "kind": kind,
            "type": type_,
            "title": doc["title"][:200],
            "tags": [f"t{i % 7}"],
        }
        if kind == "relationship":
            front.update({"from": f"rec_{i - 1:05d}", "to": f"rec_{i - 2:05d}"})
        if i % 5 == 0:
            front["aliases"] = [" ".join(doc["title"].split()[:3])]
        day = date(2020, 1, 1) + timedelta(days=i % 2000)
        if kind == "page":
            front["fields"] = {"occurred_at": day.isoformat()}
        elif i % 3:
            front["occurred_at"] = f"{day.isoformat()}T{i % 24:02d}:15:00Z"
        front["recorded_at"] = f"{day.isoformat()}T08:00:00Z"
        if kind == "claim":
            front["entities"] = [f"rec_{(i // 50) * 50:05d}"]
        if i % 10 == 0 and i + 1 < len(docs):
            front.update({"lifecycle": "superseded", "superseded_by": f"rec_{i + 1:05d}"})
        write(vault, f"rec_{i:05d}", doc["text"], **front)


def timed_grep(
    naturali: Any, user: Any, project: str, store: str, text: str, mode: str = "all"
) -> float:
    started = time.perf_counter()
    naturali.records.grep(user, project, store, GrepRequest(query=text, mode=mode, limit=20))
    return (time.perf_counter() - started) * 1000


def run(size: int, texts: list[str]) -> float:
    naturali, user = service(Path(tempfile.mkdtemp(prefix="naturali-records-")))
    project, _ = naturali.projects.create(user, "records")
    store = naturali.memories.create_store(user, project.id, "kb", None)
    vault = naturali.memories.vault(store.id)
    build_vault(vault, size)
    first = timed_grep(naturali, user, project.id, store.id, texts[0])
    warm = [timed_grep(naturali, user, project.id, store.id, q) for q in texts]
    warm_any = [timed_grep(naturali, user, project.id, store.id, q, "any") for q in texts]
    dated = date_queries(naturali, user, project.id, store.id, len(texts))
    files = sorted(vault.glob("*.md"))
    rng = random.Random(3)
    changed = []
    for i, q in enumerate(texts):
        target = rng.choice(files)
        target.write_text(target.read_text() + f"\nedit {i}\n")
        changed.append(timed_grep(naturali, user, project.id, store.id, q))
    print(
        f"{size:>6} records: first index {first / 1000:6.2f} s | warm grep p50 "
        f"{median(warm):6.2f} ms p95 {percentile(warm, 95):6.2f} ms (mode any: p50 "
        f"{median(warm_any):6.2f} p95 {percentile(warm_any, 95):6.2f}) | one file changed "
        f"p50 {median(changed):6.2f} ms p95 {percentile(changed, 95):6.2f} ms"
    )
    for name, values in dated.items():
        print(
            f"{'':>15}{name:<34} p50 {median(values):6.2f} ms p95 {percentile(values, 95):6.2f} ms"
        )
    naturali.close()
    return median(warm)


def date_queries(
    naturali: Any, user: Any, project: str, store: str, n: int
) -> dict[str, list[float]]:
    """Warm timeline and chronicle calls (the first call, which projects dates, is not
    counted)."""
    from naturali.service.memory.record_requests import (
        ChronicleDayRequest,
        ChronicleSinceRequest,
        LastSeenRequest,
        TimelineRequest,
    )

    dates = naturali.dates
    calls = {
        "timeline, one year": lambda i: dates.timeline(
            user,
            project,
            store,
            TimelineRequest(since=f"{2020 + i % 5}-01-01", until=f"{2020 + i % 5}-12-31", limit=20),
        ),
        "timeline, entity": lambda i: dates.timeline(
            user, project, store, TimelineRequest(entity=f"rec_{(i * 50) % 10000:05d}", limit=20)
        ),
        "chronicle day (week, Europe/Berlin)": lambda i: dates.chronicle_day(
            user,
            project,
            store,
            ChronicleDayRequest(
                date=(date(2021, 1, 1) + timedelta(days=i * 7)).isoformat(),
                week=True,
                timeZone="Europe/Berlin",
            ),
        ),
        "chronicle since (30 days)": lambda i: dates.chronicle_since(
            user,
            project,
            store,
            ChronicleSinceRequest(
                since=(date(2021, 1, 1) + timedelta(days=i * 3)).isoformat(),
                until=(date(2021, 1, 31) + timedelta(days=i * 3)).isoformat(),
            ),
        ),
        "chronicle last seen": lambda i: dates.last_seen(
            user, project, store, LastSeenRequest(entity=f"rec_{(i * 50) % 10000:05d}")
        ),
    }
    calls["timeline, one year"](0)
    out: dict[str, list[float]] = {}
    for name, call in calls.items():
        out[name] = []
        for i in range(n):
            started = time.perf_counter()
            call(i)
            out[name].append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    # Agent-style keyword queries: the first three content words of each SciFact query.
    texts = [
        " ".join([w for w in words(q) if w not in STOPWORDS][:3])
        for q in list(queries(DATA / "scifact").values())[: args.queries]
    ]
    results = {size: run(size, texts) for size in args.sizes}
    if len(results) >= 2:
        small, large = min(results), max(results)
        print(
            f"warm grep growth {small} → {large} records: "
            f"×{results[large] / results[small]:.2f} for ×{large / small:.0f} records"
        )


if __name__ == "__main__":
    main()
