"""The quality scoreboard: every development collection, one table.

For each collection (BEIR format, ``../shared/data``): the corpus is ingested as documents of
one project (``/corpus/<id>.md``, title as heading; bench/beir.py), each test query is one
search with limit 100 and no memories, a document counts at its best-ranked chunk, and nDCG@10
(gain = the judgement) and Recall@100 are averaged. Rows: ``bm25s`` off the shelf (English
stopwords, Snowball stemmer, title and text as one field, its default Lucene BM25), each of
naturali's legs alone, reciprocal rank fusion of the legs, naturali's hybrid, and the hybrid
with its second stage (``rerank: true``).

    python bench/quality.py [--data-dir DIR] [--collections scifact,nfcorpus,cisi,med]
                            [--no-rerank] [--markdown] [--model multilingual-e5-small]

XQuAD's collections (``--collections xquad/de,xquad/en-zh,…``) are anchored by BM25 over
each language's own analysis (``bm25s_language_search``); English questions over another
language's paragraphs have no anchor (its row reads 0).

With --data-dir the ingested projects are kept there and reused by the next run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from beir import doc_ranking, ensure_ingested, ndcg_at, recall_at  # noqa: E402
from common import DATA, corpus, qrels, queries, service  # noqa: E402
from naturali.retrieval.hybrid import Ranking  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402
from rankings import LEXICAL, RRF, VECTOR  # noqa: E402

COLLECTIONS = ("scifact", "nfcorpus", "cisi", "med")
Search = Callable[[str], list[str]]  # a query → BEIR document ids, best first


@dataclass(frozen=True)
class Row:
    ndcg: float
    recall: float
    p50_ms: float


def bm25s_search(path: Path) -> Search:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    docs = list(corpus(path))
    ids = [d["_id"] for d in docs]
    texts = [f"{d.get('title', '')} {d.get('text', '')}" for d in docs]
    retriever = bm25s.BM25()
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever.index(tokens, show_progress=False)

    def search(query: str) -> list[str]:
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            return []
        found, _ = retriever.retrieve(tokens, k=min(100, len(ids)), show_progress=False)
        return [ids[i] for i in found[0]]

    return search


# The anchor of a language's collection (../shared/data/README.md): words lower-cased, stemmed
# by the language's Snowball stemmer where PyStemmer has one, pairs of characters for scripts
# written without spaces, no stopwords.
SNOWBALL = {"en": "english", "de": "german", "es": "spanish", "ru": "russian", "ar": "arabic"}
UNSPACED = {"zh", "ja", "th"}


def bm25s_language_search(path: Path, lang: str) -> Search:
    import re

    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer(SNOWBALL[lang]) if lang in SNOWBALL else None

    def analyse(text: str) -> list[str]:
        words = re.findall(r"\w+", text.lower())
        if lang in UNSPACED:
            return [w[i : i + 2] for w in words for i in range(max(1, len(w) - 1))]
        return stemmer.stemWords(words) if stemmer else words

    docs = list(corpus(path))
    ids = [d["_id"] for d in docs]
    retriever = bm25s.BM25()
    retriever.index([analyse(f"{d.get('title', '')} {d.get('text', '')}") for d in docs])

    def search(query: str) -> list[str]:
        tokens = analyse(query)
        if not tokens:
            return []
        found, _ = retriever.retrieve([tokens], k=min(100, len(ids)), show_progress=False)
        return [ids[i] for i in found[0]]

    return search


def anchor(path: Path) -> Search | None:
    """BM25 with the collection's language's analysis (None across languages: no anchor)."""
    if path.parent.name != "xquad":
        return bm25s_search(path)
    return None if "-" in path.name else bm25s_language_search(path, path.name)


def naturali_search(
    naturali: Any, user: Any, project_id: str, ranking: Ranking, rerank: bool = False
) -> Search:
    def search(query: str) -> list[str]:
        request = SearchRequest(query=query, limit=100, include_memories=False, rerank=rerank)
        results = naturali.search.search(user, project_id, request, ranking)
        return doc_ranking([r.path for r in results if r.source_type == "document"])

    return search


def evaluate(search: Search, texts: dict[str, str], judged: dict[str, dict[str, int]]) -> Row:
    ndcg, recall, took = [], [], []
    for qid, relevant in judged.items():
        started = time.perf_counter()
        ranked = search(texts[qid])
        took.append(time.perf_counter() - started)
        ndcg.append(ndcg_at(ranked, relevant))
        recall.append(recall_at(ranked, relevant))
    return Row(statistics.fmean(ndcg), statistics.fmean(recall), statistics.median(took) * 1000)


def rows_of(
    naturali: Any, user: Any, path: Path, rerank: bool, model: str | None = None
) -> dict[str, Row]:
    project_id = ensure_ingested(naturali, user, path, None, model)
    texts, judged = queries(path), qrels(path, "test")
    bm25 = anchor(path)
    variants: dict[str, Search] = {
        "bm25s (Lucene BM25)": bm25 if bm25 is not None else (lambda query: []),
        "lexical leg": naturali_search(naturali, user, project_id, LEXICAL),
        "vector leg": naturali_search(naturali, user, project_id, VECTOR),
        "RRF of the legs": naturali_search(naturali, user, project_id, RRF),
        "naturali": naturali_search(naturali, user, project_id, Ranking()),
    }
    if rerank:
        variants["naturali + rerank"] = naturali_search(
            naturali, user, project_id, Ranking(), rerank=True
        )
    return {name: evaluate(search, texts, judged) for name, search in variants.items()}


def table(results: dict[str, dict[str, Row]], markdown: bool) -> str:
    names = list(next(iter(results.values())))
    collections = list(results)
    head = ["", *[f"{c} nDCG@10 / R@100" for c in collections], "mean nDCG@10"]
    lines = []
    for name in names:
        cells = [
            f"{results[c][name].ndcg:.3f} / {results[c][name].recall:.3f}" for c in collections
        ]
        mean = statistics.fmean(results[c][name].ndcg for c in collections)
        lines.append([name, *cells, f"{mean:.3f}"])
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(out + ["| " + " | ".join(line) + " |" for line in lines])
    widths = [max(len(str(r[i])) for r in [head, *lines]) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            str(cell).rjust(w) if i else str(cell).ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [head, *lines]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--collections", default=",".join(COLLECTIONS))
    parser.add_argument("--no-rerank", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--model", default=None, help="the projects' embedding_model (default: the server's)"
    )
    args = parser.parse_args()
    naturali, user = service(args.data_dir)
    results: dict[str, dict[str, Row]] = {}
    for name in args.collections.split(","):
        results[name] = rows_of(
            naturali, user, DATA / name, rerank=not args.no_rerank, model=args.model
        )
        print(f"{name}: done", flush=True)
    print(table(results, args.markdown))
    if not args.no_rerank:
        p50 = {
            c: results[c]["naturali + rerank"].p50_ms - results[c]["naturali"].p50_ms
            for c in results
        }
        print(
            "rerank's p50 cost per query (ms): " + ", ".join(f"{c} {v:.0f}" for c, v in p50.items())
        )
    naturali.close()


if __name__ == "__main__":
    main()
