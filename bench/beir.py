"""Evaluate a BEIR-format collection through the search API.

The corpus is ingested as documents of one project (`/corpus/<id>.md`, title as heading),
then every test query is searched with limit 100. Chunks map to their document; a document
counts at its best-ranked chunk. Prints nDCG@10 and Recall@100 for the lexical leg only, the
vector leg only, reciprocal rank fusion (the baseline to beat), the blend with one α for every
query (before ``fusion.query_alpha``) and naturali's hybrid, which is also run through the HTTP
API to show it is the same ranking.

    python bench/beir.py [--corpus ../shared/data/scifact] [--data-dir DIR]

With --data-dir the ingested store is kept there and reused by the next run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from itertools import islice
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from common import DATA, as_upload, corpus, qrels, queries, service  # noqa: E402
from naturali.retrieval.hybrid import Ranking  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402
from rankings import LEXICAL, RRF, VECTOR  # noqa: E402


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def doc_ranking(paths: list[str]) -> list[str]:
    """BEIR document ids in rank order from the hits' paths (a document at its best chunk)."""
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(path.rsplit("/", 1)[1].removesuffix(".md"), None)
    return list(seen)


def ensure_ingested(
    naturali: Any, user: Any, path: Path, limit: int | None, model: str | None = None
) -> str:
    """The collection's project (embedded with ``model``; None: the server's), ingested once."""
    name = f"beir-{path.parent.name}-{path.name}" + (f"@{model}" if model else "")
    for project, _ in naturali.projects.list(user):
        if project.name == name:
            return str(project.id)
    project, _ = naturali.projects.create(user, name, model)
    docs = list(islice(corpus(path), limit))
    started = time.perf_counter()
    for i in range(0, len(docs), 256):
        naturali.documents.create_many(user, project.id, [as_upload(d) for d in docs[i : i + 256]])
        print(f"\r  ingested {min(i + 256, len(docs))}/{len(docs)}", end="", flush=True)
    print(f"  ({time.perf_counter() - started:.0f} s)")
    return str(project.id)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=DATA / "scifact")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="ingest only N documents")
    args = parser.parse_args()

    naturali, user = service(args.data_dir)
    project_id = ensure_ingested(naturali, user, args.corpus, args.limit)
    texts = queries(args.corpus)
    judged = qrels(args.corpus, "test")
    runs: dict[str, list[tuple[float, float]]] = {}
    variants: dict[str, dict[str, Any]] = {
        "lexical (BM25, stemmed)": {"ranking": LEXICAL},
        "vector (cosine)": {"ranking": VECTOR},
        "hybrid, RRF (baseline)": {"ranking": RRF},
        "hybrid, blend, fixed alpha": {"ranking": Ranking(confident_shift=0.0)},
        "hybrid, naturali": {"ranking": Ranking()},
        "hybrid, naturali + rerank top 20": {"ranking": Ranking(), "rerank": True},
    }
    for name, options in variants.items():
        scores = []
        for qid, relevant in judged.items():
            request = SearchRequest(
                query=texts[qid],
                limit=100,
                include_memories=False,
                rerank=bool(options.get("rerank")),
            )
            results = naturali.search.search(user, project_id, request, options["ranking"])
            ranked = doc_ranking([r.path for r in results if r.source_type == "document"])
            scores.append((ndcg_at(ranked, relevant), recall_at(ranked, relevant)))
        runs[name] = scores

    from fastapi.testclient import TestClient

    from naturali.api.app import create_app

    token = naturali.users.new_token(user.id)
    http_scores = []
    with TestClient(create_app(naturali)) as http:
        for qid, relevant in judged.items():
            response = http.post(
                f"/v1/projects/{project_id}/knowledge/search",
                headers={"Authorization": f"Bearer {token}"},
                json={"query": texts[qid], "limit": 100},
            )
            ranked = doc_ranking([r["path"] for r in response.json()["results"]])
            http_scores.append((ndcg_at(ranked, relevant), recall_at(ranked, relevant)))
    runs["hybrid, naturali via HTTP"] = http_scores

    print(f"\n{args.corpus.name}: {len(judged)} test queries")
    print(f"{'':30} {'nDCG@10':>8} {'Recall@100':>11}")
    for name, scores in runs.items():
        ndcg = sum(s[0] for s in scores) / len(scores)
        recall = sum(s[1] for s in scores) / len(scores)
        print(f"{name:30} {ndcg:8.3f} {recall:11.3f}")
    naturali.close()


if __name__ == "__main__":
    main()
