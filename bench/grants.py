"""A caller granted some paths (model.py Grant) searches as fast as the same search narrowed
by ``document_paths``: the grant is part of the selection before ranking, not a filter after.

One project of ``--chunks`` chunks: SciFact's and NFCorpus's texts cut in passages of ~60
words, their vectors random unit ones (written with the chunks, nothing embedded: the vector
leg's cost does not depend on what the vectors say), each document under a bucket
``/b<NN>/`` (its number mod 100). Each question of SciFact and NFCorpus is searched (the
real query embedding, no vector cache) by the owner with ``document_paths`` and by a caller
granted the same paths, the two interleaved, alternating which goes first; at 1% and 30% of
the project. It prints each p50/p95 and, last, exactly:

    grants: chunks=<n> ratio_1pct=<granted p50 / document_paths p50> ratio_30pct=<…>

    python bench/grants.py [--chunks 100000] [--queries 300] [--database-url postgresql://…]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import DATA, corpus, median, percentile, queries, save_copy, service  # noqa: E402
from naturali.model import ChunkDraft, Grant, User  # noqa: E402
from naturali.ports.storage import EmbeddedChunk  # noqa: E402
from naturali.service.container import Services  # noqa: E402
from naturali.service.corpus.documents import Upload  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402

PASSAGE_WORDS = 60
CHUNKS_A_DOCUMENT = 10
SETS = ("scifact", "nfcorpus")


def _passages() -> list[str]:
    words = (w for name in SETS for doc in corpus(DATA / name) for w in doc.get("text", "").split())
    cut = iter(lambda: list(itertools.islice(words, PASSAGE_WORDS)), [])
    return [" ".join(p) for p in cut if len(p) == PASSAGE_WORDS]


def _fill(naturali: Services, user: User, project_id: str, chunks: int) -> None:
    passages = _passages()
    rng = np.random.default_rng(7)
    seed = Upload(b"# Seed\n\nseed", "seed.md", "/seed.md")
    template = naturali.documents.create(user, project_id, seed)
    dimension = naturali.embedder().dimension
    for n in range(chunks // CHUNKS_A_DOCUMENT):
        vectors = rng.standard_normal((CHUNKS_A_DOCUMENT, dimension)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        written = []
        for k in range(CHUNKS_A_DOCUMENT):
            text = passages[(n * CHUNKS_A_DOCUMENT + k) % len(passages)]
            written.append(EmbeddedChunk(ChunkDraft(k, text, 0, len(text), None), vectors[k]))
        save_copy(naturali, template, written, project_id, f"/b{n % 100:02d}/d{n}.md")


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    naturali, user = service(database_url=args.database_url, query_vector_cache_entries=0)
    project_id = naturali.projects.create(user, "grants")[0].id
    started = time.perf_counter()
    _fill(naturali, user, project_id, args.chunks)
    print(f"{args.chunks} chunks written in {time.perf_counter() - started:.0f} s")
    asked = [q for name in SETS for q in queries(DATA / name).values()][: args.queries]
    search = naturali.search.search
    search(user, project_id, SearchRequest(query=asked[0]))  # the index loaded
    print(f"CPU: {_cpu()}, {args.queries} questions")
    ratios = {}
    for name, paths in (("1pct", ("/b00/",)), ("30pct", tuple(f"/b{i:02d}/" for i in range(30)))):
        granted = replace(user, grant=Grant(paths, None))
        took: dict[str, list[float]] = {"document_paths": [], "granted": []}
        for i, text in enumerate(asked):
            runs = [
                ("document_paths", user, SearchRequest(query=text, document_paths=list(paths))),
                ("granted", granted, SearchRequest(query=text)),
            ]
            for kind, caller, request in runs[:: 1 if i % 2 else -1]:
                begun = time.perf_counter()
                search(caller, project_id, request)
                took[kind].append((time.perf_counter() - begun) * 1000)
        for kind, ms in took.items():
            print(
                f"{name:>6} {kind:<15} p50 {median(ms):6.2f} ms  p95 {percentile(ms, 95):6.2f} ms"
            )
        ratios[name] = median(took["granted"]) / median(took["document_paths"])
    naturali.close()
    print(
        f"grants: chunks={args.chunks} ratio_1pct={ratios['1pct']:.3f} "
        f"ratio_30pct={ratios['30pct']:.3f}"
    )


if __name__ == "__main__":
    main()
