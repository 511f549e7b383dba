"""Memory retrieval on LoCoMo-dev, per question category, for every ranking variant tried.

The protocol is `../shared/data/locomo-dev/README.md`'s (what the held-out check runs): each
conversation is one memory store, each turn one memory `[<session date_time>] <speaker>:
<text>` tagged `{"dia": "<dia_id>"}`; each question of categories 1–4 is one search of its
store with limit 10; evidence recall@k is the share of its evidence turns among the top k.

    python bench/memory.py [--data-dir DIR] [--variants all|shipped] [--latency]

Then the fusion choices on the conversations' turns as documents (nDCG@10), a collection
other than the SciFact train split they were chosen on. With --data-dir the ingested stores
are kept there and reused by the next run. --latency prints the p50/p95 of a memory search
over one store of 6,000 turns, without and with the second stage (``rerank``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from beir import ndcg_at  # noqa: E402
from common import DATA, median, percentile, service  # noqa: E402
from naturali.retrieval.conversation import Conversation  # noqa: E402
from naturali.retrieval.hybrid import PRODUCT, Ranking  # noqa: E402
from naturali.service.corpus.documents import Upload  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402
from rankings import LEXICAL, RRF, VECTOR  # noqa: E402

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LOCOMO = DATA / "locomo-dev" / "locomo-dev.json"


def turns(conversation: dict[str, Any]) -> list[tuple[str, str]]:
    """(dia_id, content) of every turn, in order, as the protocol writes them."""
    out = []
    session = 1
    while f"session_{session}" in conversation:
        when = conversation[f"session_{session}_date_time"]
        for turn in conversation[f"session_{session}"]:
            out.append((turn["dia_id"], f"[{when}] {turn['speaker']}: {turn['text']}"))
        session += 1
    return out


def ensure_stores(naturali: Any, user: Any, samples: list[dict[str, Any]]) -> dict[str, Any]:
    """sample id → (project id, store id, memory id → dia id), ingesting what is missing."""
    projects = {p.name: p for p, _ in naturali.projects.list(user)}
    project = projects.get("locomo-dev") or naturali.projects.create(user, "locomo-dev")[0]
    stores = {s.name: s for s in naturali.memories.list_stores(user, project.id)}
    out = {}
    for sample in samples:
        name = sample["sample_id"]
        store = stores.get(name)
        if store is None:
            store = naturali.memories.create_store(user, project.id, name, None)
            started = time.perf_counter()
            for dia, content in turns(sample["conversation"]):
                naturali.memories.create(user, project.id, store.id, content, tags={"dia": dia})
            print(f"  {name}: ingested ({time.perf_counter() - started:.0f} s)", flush=True)
        memories = naturali.memories.list(user, project.id, store.id)
        out[name] = (project.id, store.id, {m.id: m.tags.get("dia") for m in memories})
    return out


def questions(sample: dict[str, Any]) -> list[tuple[str, int, set[str]]]:
    """(question, category, evidence dia ids that name a turn) of categories 1–4."""
    known = {dia for dia, _ in turns(sample["conversation"])}
    out = []
    for qa in sample["qa"]:
        evidence = {e for e in qa.get("evidence", []) if e in known}
        if qa["category"] in CATEGORIES and evidence:
            out.append((qa["question"], qa["category"], evidence))
    return out


def evaluate(
    naturali: Any,
    user: Any,
    samples: list[dict[str, Any]],
    stores: dict[str, Any],
    variant: Variant,
) -> dict[str, float]:
    """Evidence recall@10 per category and overall."""
    ranking, depth = variant
    if depth:
        naturali.search.second_stage.depth = depth
    per: dict[int, list[float]] = {c: [] for c in CATEGORIES}
    for sample in samples:
        project_id, store_id, dia_of = stores[sample["sample_id"]]
        for question, category, evidence in questions(sample):
            request = SearchRequest(
                query=question,
                memory_store_ids=[store_id],
                include_documents=False,
                limit=10,
                rerank=bool(depth),
            )
            results = naturali.search.search(user, project_id, request, ranking)
            found = {dia_of.get(r.memory_id) for r in results}
            per[category].append(len(evidence & found) / len(evidence))
    scores = {CATEGORIES[c]: sum(v) / len(v) for c, v in per.items()}
    every = [s for v in per.values() for s in v]
    scores["overall"] = sum(every) / len(every)
    return scores


Variant = tuple[Ranking, int]  # the ranking, and the rerank depth (0: no second stage)


def variants(which: str) -> dict[str, Variant]:
    shipped: dict[str, Variant] = {"shipped": (PRODUCT, 0)}
    if which == "shipped":
        return shipped
    rankings = {
        "vector only": VECTOR,
        "lexical only": LEXICAL,
        "hybrid, RRF": RRF,
        "hybrid, blend, fixed alpha, no conversation": replace(
            PRODUCT, confident_shift=0.0, conversation=None
        ),
        "hybrid, blend, no conversation": replace(PRODUCT, conversation=None),
        "neighbours only": replace(PRODUCT, conversation=Conversation(unnamed_factor=1.0)),
        "names only": replace(PRODUCT, conversation=Conversation(neighbour_weight=0.0)),
        **{
            f"neighbours {w}, names {f}": replace(PRODUCT, conversation=Conversation(w, f))
            for w, f in ((0.1, 0.8), (0.2, 0.8), (0.15, 0.7), (0.15, 0.9))
        },
    }
    reranked = {f"shipped + rerank, top {d}": (PRODUCT, d) for d in (10, 20, 30, 50)}
    return {**{name: (r, 0) for name, r in rankings.items()}, **reranked, **shipped}


def latency(naturali: Any, user: Any, samples: list[dict[str, Any]], count: int) -> None:
    """p50/p95 of a memory search over one store of ``count`` turns (the conversations'
    turns, repeated as needed)."""
    project, _ = naturali.projects.create(user, f"locomo-latency-{count}-{time.time_ns()}")
    store = naturali.memories.create_store(user, project.id, "all", None)
    every = [(dia, content) for sample in samples for dia, content in turns(sample["conversation"])]
    for i in range(count):
        dia, content = every[i % len(every)]
        tags = {"dia": dia, "copy": str(i // len(every))}
        naturali.memories.create(user, project.id, store.id, content, tags=tags)
    asked = [q for s in samples for q, _, _ in questions(s)][:300]
    for depth in (0, 10, 20):
        naturali.search.second_stage.depth = depth or 20
        took = []
        for question in asked:
            request = SearchRequest(
                query=question,
                memory_store_ids=[store.id],
                include_documents=False,
                limit=10,
                rerank=bool(depth),
            )
            started = time.perf_counter()
            naturali.search.search(user, project.id, request)
            took.append((time.perf_counter() - started) * 1000)
        stage = f", rerank top {depth}" if depth else ""
        print(
            f"memory search over {count} turns{stage}: p50 {median(took):.1f} ms, "
            f"p95 {percentile(took, 95):.1f} ms ({len(took)} questions)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--variants", choices=("all", "shipped"), default="all")
    parser.add_argument("--latency", action="store_true")
    args = parser.parse_args()
    samples = json.loads(LOCOMO.read_text())
    naturali, user = service(args.data_dir)
    stores = ensure_stores(naturali, user, samples)
    count = sum(len(questions(s)) for s in samples)
    print(f"\nLoCoMo-dev: {len(samples)} conversations, {count} questions; evidence recall@10")
    header = ["variant", *CATEGORIES.values(), "overall"]
    print(f"{header[0]:46}" + "".join(f"{h:>12}" for h in header[1:]))
    for name, variant in variants(args.variants).items():
        scores = evaluate(naturali, user, samples, stores, variant)
        print(f"{name:46}" + "".join(f"{scores[h]:12.3f}" for h in header[1:]), flush=True)
    as_documents(naturali, user, samples)
    if args.latency:
        latency(naturali, user, samples, 6000)
    naturali.close()


def as_documents(naturali: Any, user: Any, samples: list[dict[str, Any]]) -> None:
    """The fusion choices checked on another collection than SciFact: every turn a document
    of its conversation's project (``/<dia>.md``), each question searched with limit 10 over
    documents only; nDCG@10 with the evidence turns relevant."""
    projects = {p.name: p for p, _ in naturali.projects.list(user)}
    rankings = {
        "hybrid, RRF": replace(RRF, conversation=None),
        "hybrid, blend, fixed alpha": Ranking(confident_shift=0.0, conversation=None),
        "hybrid, blend, alpha per query": Ranking(conversation=None, feedback_weight=0.0),
        "hybrid, blend, alpha per query, fed back (shipped)": Ranking(conversation=None),
    }
    scores: dict[str, list[float]] = {name: [] for name in rankings}
    for sample in samples:
        name = f"locomo-docs-{sample['sample_id']}"
        project = projects.get(name) or _ingested(naturali, user, name, sample)
        for question, _, evidence in questions(sample):
            request = SearchRequest(query=question, include_memories=False, limit=10)
            for variant, ranking in rankings.items():
                results = naturali.search.search(user, project.id, request, ranking)
                ranked = [r.path.rsplit("/", 1)[1].removesuffix(".md") for r in results]
                scores[variant].append(ndcg_at(ranked, {e: 1 for e in evidence}))
    print("\nLoCoMo-dev turns as documents: nDCG@10")
    for variant, values in scores.items():
        print(f"{variant:52}{sum(values) / len(values):6.3f}")


def _ingested(naturali: Any, user: Any, name: str, sample: dict[str, Any]) -> Any:
    project, _ = naturali.projects.create(user, name)
    uploads = [
        Upload(content.encode(), f"{dia}.md", f"/{dia}.md", None)
        for dia, content in turns(sample["conversation"])
    ]
    for i in range(0, len(uploads), 256):
        naturali.documents.create_many(user, project.id, uploads[i : i + 256])
    return project


if __name__ == "__main__":
    main()
