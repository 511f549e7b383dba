"""Every ranking variant tried for issue 15, per leg and fused, on SciFact train and test.

The product's ranking is reproduced outside the service on the same data (the ingested
chunks' text and vectors, naturali's tokenizer and stems, each query embedded alone by the
query model as a search does): a document counts at its best
chunk, each leg proposes its top 100 chunks, fusion runs over their union — the row
"hybrid, min-max blend (shipped)" equals `bench/beir.py`'s "hybrid, naturali". Choices were
made on train only; test is printed beside it to show nothing was lost there.

    python bench/variants.py [--data-dir DIR] [--titled-vectors]

--titled-vectors also embeds every chunk after a document's first with its title in front
(~4,600 passages, a few minutes here) for the "title carried into chunk vectors" variant.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from beir import ensure_ingested, ndcg_at  # noqa: E402
from common import DATA, project_documents, qrels, queries, service  # noqa: E402
from naturali.model import SourceType  # noqa: E402
from naturali.service.container import Services  # noqa: E402
from naturali.text.tokens import STOPWORDS, query_terms, stem, terms  # noqa: E402

Scores = np.ndarray


class BM25:
    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b, self.n = k1, b, len(docs)
        self.lengths = np.array([len(d) for d in docs], np.float32)
        postings: dict[str, list[tuple[int, int]]] = {}
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                postings.setdefault(term, []).append((i, tf))
        self.postings = {
            t: (np.array([r for r, _ in p]), np.array([f for _, f in p], np.float32))
            for t, p in postings.items()
        }

    def idf(self, term: str) -> float:
        n = self.postings[term][0].size
        return math.log(1 + (self.n - n + 0.5) / (n + 0.5))

    def bound(self, query: list[str]) -> float:
        """The score no chunk reaches: each term's idf × (k1 + 1), its saturation limit."""
        return sum(self.idf(t) * (self.k1 + 1) for t in query if t in self.postings)

    def score(self, query: list[str]) -> Scores:
        out = np.zeros(self.n, np.float32)
        avgdl = float(self.lengths.mean())
        for term in query:
            if term not in self.postings:
                continue
            rows, tfs = self.postings[term]
            idf = self.idf(term)
            norm = self.k1 * (1 - self.b + self.b * self.lengths[rows] / avgdl)
            out[rows] += idf * tfs * (self.k1 + 1) / (tfs + norm)
        return out


def top(scores: Scores, k: int = 100) -> np.ndarray:
    hits = np.flatnonzero(scores > -np.inf)
    if hits.size > k:
        hits = hits[np.argpartition(-scores[hits], k)[:k]]
    return hits[np.argsort(-scores[hits], kind="stable")]


def minmax(x: Scores) -> Scores:
    low, high = float(x.min()), float(x.max())
    return (x - low) / (high - low) if high - low > 1e-9 else np.ones_like(x)


class Collection:
    """SciFact's chunks as naturali stored them, and the queries' vectors."""

    def __init__(self, naturali: Services, project_id: str, titled_vectors: bool) -> None:
        storage = naturali.storage
        user = storage.oldest_user()
        assert user is not None
        docs = project_documents(naturali, user, project_id)
        chunks = storage.owner_chunks(project_id, SourceType.DOCUMENT, [d.id for d in docs])
        by_doc = {d.id: d for d in docs}
        self.ids = sorted({d.path.rsplit("/", 1)[1].removesuffix(".md") for d in docs})
        index = {d: i for i, d in enumerate(self.ids)}
        owner = [by_doc[c.owner_id] for c in chunks]
        self.doc_of = np.array([index[o.path.rsplit("/", 1)[1].removesuffix(".md")] for o in owner])
        self.texts = [c.text for c in chunks]
        self.titles = [o.title or "" for o in owner]
        self.ordinals = [c.ordinal for c in chunks]
        self.vectors = np.stack([np.frombuffer(c.vector, np.float32) for c in chunks])
        embedder = naturali.embedder()
        self.vector_weight = embedder.vector_weight  # the product's blend for this model
        texts = queries(DATA / "scifact")
        self.splits = {s: qrels(DATA / "scifact", s) for s in ("train", "test")}
        self.query_ids = sorted({q for split in self.splits.values() for q in split})
        self.query_text = {q: texts[q] for q in self.query_ids}
        vectors = [embedder.embed_query(texts[q]) for q in self.query_ids]  # as a search does
        self.query_vector = dict(zip(self.query_ids, vectors, strict=True))
        self.tokens = [terms(t) for t in self.texts]
        self.titled_vectors = None
        if titled_vectors:
            later = [i for i, o in enumerate(self.ordinals) if o > 0 and self.titles[i]]
            self.titled_vectors = self.vectors.copy()
            self.titled_vectors[later] = embedder.embed(
                [f"# {self.titles[i]}\n\n{self.texts[i]}" for i in later]
            )

    def by_document(self, chunk_scores: Scores) -> Scores:
        best = np.full(len(self.ids), -np.inf, np.float32)
        np.maximum.at(best, self.doc_of, chunk_scores)
        return best

    def evaluate(self, rank: Callable[[str], Scores], split: str) -> float:
        out = []
        for qid, relevant in self.splits[split].items():
            scores = rank(qid)
            order = [i for i in np.argsort(-scores, kind="stable")[:10] if np.isfinite(scores[i])]
            out.append(ndcg_at([self.ids[i] for i in order], relevant))
        return float(np.mean(out))


def variants(c: Collection) -> dict[str, dict[str, Callable[[str], Scores]]]:
    """Name → per-query document scores, grouped as the README's table is."""
    stop = {stem(w) for w in STOPWORDS}
    titled = [(terms(c.titles[i]) if c.ordinals[i] > 0 else []) + t for i, t in enumerate(c.tokens)]
    whole = [terms(corpus_text) for corpus_text in _whole_documents(c)]

    def lexical(index: BM25) -> Callable[[str], Scores]:
        return lambda q: index.score(query_terms(c.query_text[q]))

    def vector(matrix: np.ndarray) -> Callable[[str], Scores]:
        return lambda q: matrix @ c.query_vector[q]

    plain, shipped = BM25(c.tokens), BM25(titled, 0.9, 0.4)

    def l_bound(q: str) -> float:
        """The most BM25 the shipped leg could give this query: every term saturated."""
        return shipped.bound(query_terms(c.query_text[q])) or 1.0

    document = BM25(whole)
    cos = vector(c.vectors)
    lex = lexical(shipped)

    def docs(chunk: Callable[[str], Scores]) -> Callable[[str], Scores]:
        return lambda q: c.by_document(chunk(q))

    def blend(
        v: Callable[[str], Scores],
        l_: Callable[[str], Scores],
        alpha: float = 0.5,
        pool: int = 100,
        norm: str = "minmax",
    ) -> Callable[[str], Scores]:
        def run(q: str) -> Scores:
            vs, ls = v(q), l_(q)
            vc, lc = top(vs, pool), top(np.where(ls > 0, ls, -np.inf), pool)
            cand = np.union1d(vc, lc)
            out = np.full(vs.size, -np.inf, np.float32)
            if norm == "rrf":
                r = np.zeros(vs.size, np.float32)
                r[vc] += 1 / (61 + np.arange(vc.size))
                r[lc] += 1 / (61 + np.arange(lc.size))
                out[cand] = r[cand]
            elif norm == "minmax":
                out[cand] = alpha * minmax(vs[cand]) + (1 - alpha) * minmax(ls[cand])
            elif norm == "tm2c2":  # theoretical minimum (cosine −1, BM25 0), observed maximum
                x, y = vs[cand], ls[cand]
                out[cand] = alpha * (x + 1) / (x.max() + 1) + (1 - alpha) * y / max(y.max(), 1e-9)
            elif norm == "bounded":  # raw cosine; BM25 over the query's most possible score
                bound = l_bound(q)
                out[cand] = alpha * vs[cand] + (1 - alpha) * ls[cand] / bound
            elif norm == "z":
                x, y = vs[cand], ls[cand]
                out[cand] = alpha * (x - x.mean()) / (x.std() + 1e-9) + (1 - alpha) * (
                    y - y.mean()
                ) / (y.std() + 1e-9)
            return c.by_document(out)

        return run

    def several_chunks(weight: float) -> Callable[[str], Scores]:
        def run(q: str) -> Scores:
            s = cos(q)
            best = c.by_document(s)
            total = np.zeros_like(best)
            np.add.at(total, c.doc_of, s)
            count = np.bincount(c.doc_of, minlength=best.size)
            others = np.where(count > 1, (total - best) / np.maximum(count - 1, 1), best)
            return best + weight * others

        return run

    def prf(m: int, beta: float) -> Callable[[str], Scores]:
        def run(q: str) -> Scores:
            v = c.query_vector[q]
            expanded = v + beta * c.vectors[top(c.vectors @ v, m)].mean(0)
            return c.by_document(c.vectors @ (expanded / np.linalg.norm(expanded)))

        return run

    def bigrams(weight: float) -> Callable[[str], Scores]:
        def pairs(words: list[str]) -> list[str]:
            kept = [w for w in words if w not in stop]
            return [a + "_" + b for a, b in zip(kept, kept[1:], strict=False)]

        index = BM25([pairs(t) for t in titled], 0.9, 0.4)
        return lambda q: lex(q) + weight * index.score(pairs(terms(c.query_text[q])))

    table: dict[str, dict[str, Callable[[str], Scores]]] = {
        "lexical leg": {},
        "vector leg": {},
        "fused": {},
    }
    lexical_leg = table["lexical leg"]
    lexical_leg["chunk BM25, k1 1.2 b 0.75 (before)"] = docs(lexical(plain))
    for k1, b in [
        (0.9, 0.4),
        (0.9, 0.75),
        (1.2, 0.5),
        (1.2, 0.9),
        (1.5, 0.75),
        (2.0, 0.75),
        (1.2, 1.0),
    ]:
        lexical_leg[f"chunk BM25, k1 {k1} b {b}"] = docs(lexical(BM25(c.tokens, k1, b)))
    lexical_leg["stopwords out of the index too"] = docs(
        lexical(BM25([[w for w in t if w not in stop] for t in c.tokens]))
    )
    lexical_leg["title carried into every chunk"] = docs(lexical(BM25(titled)))
    lexical_leg["title twice into every chunk"] = docs(
        lexical(BM25([terms(c.titles[i]) + t for i, t in enumerate(titled)]))
    )
    for k1, b in [(1.2, 0.5), (0.7, 0.3), (1.2, 0.4)]:
        lexical_leg[f"title carried, k1 {k1} b {b}"] = docs(lexical(BM25(titled, k1, b)))
    lexical_leg["title carried, k1 0.9 b 0.4 (shipped)"] = docs(lex)
    lexical_leg["title carried, stopwords out, k1 0.9 b 0.4"] = docs(
        lexical(BM25([[w for w in t if w not in stop] for t in titled], 0.9, 0.4))
    )
    lexical_leg["whole-document BM25"] = lexical(document)
    for weight in (0.3, 0.5, 1.0):
        lexical_leg[f"chunk + {weight} x whole-document BM25"] = lambda q, w=weight: c.by_document(
            lexical(plain)(q) + w * document.score(query_terms(c.query_text[q]))[c.doc_of]
        )
    for weight in (0.1, 0.2, 0.35):
        lexical_leg[f"shipped + {weight} x adjacent-word pairs"] = docs(bigrams(weight))

    vector_leg = table["vector leg"]
    vector_leg["chunk cosine, document at its best chunk (shipped)"] = docs(cos)
    if c.titled_vectors is not None:
        vector_leg["title carried into chunk vectors"] = docs(vector(c.titled_vectors))
    for weight in (0.1, 0.3, 0.5):
        vector_leg[f"best chunk + {weight} x mean of the others"] = several_chunks(weight)
    for m, beta in [(3, 0.5), (5, 0.5), (10, 0.5), (5, 1.0), (5, 0.3)]:
        vector_leg[f"pseudo-relevance feedback, top {m}, beta {beta}"] = prf(m, beta)

    fused = table["fused"]
    fused["RRF over the legs before (baseline)"] = blend(cos, lexical(plain), norm="rrf")
    fused["min-max blend 0.5 over the legs before"] = blend(cos, lexical(plain))
    fused["RRF over the shipped legs"] = blend(cos, lex, norm="rrf")
    for alpha in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85):
        if alpha != c.vector_weight:
            fused[f"min-max blend {alpha}"] = blend(cos, lex, alpha)
    for pool in (50, 200, 400):
        fused[f"min-max blend 0.5, {pool} candidates a leg"] = blend(cos, lex, pool=pool)
    for alpha in (0.5, 0.6, 0.7, 0.8):
        fused[f"convex combination, TM2C2 normalisation, {alpha}"] = blend(
            cos, lex, alpha, norm="tm2c2"
        )
    for alpha in (0.5, 0.6, 0.7):
        fused[f"convex combination, z-scores, {alpha}"] = blend(cos, lex, alpha, norm="z")
    for alpha in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55):
        fused[f"convex combination, cosine and BM25 over its bound, {alpha}"] = blend(
            cos, lex, alpha, norm="bounded"
        )
    fused[f"min-max blend {c.vector_weight} (shipped)"] = blend(cos, lex, c.vector_weight)
    return table


def _whole_documents(c: Collection) -> list[str]:
    from common import corpus

    texts = {d["_id"]: f"{d.get('title', '')}\n{d['text']}" for d in corpus(DATA / "scifact")}
    return [texts[i] for i in c.ids]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--titled-vectors", action="store_true")
    args = parser.parse_args()
    naturali, user = service(args.data_dir)
    project_id = ensure_ingested(naturali, user, DATA / "scifact", None)
    collection = Collection(naturali, project_id, args.titled_vectors)
    print(
        f"SciFact nDCG@10: {len(collection.splits['train'])} train, "
        f"{len(collection.splits['test'])} test queries"
    )
    for group, entries in variants(collection).items():
        print(f"\n{group:58} {'train':>7} {'test':>7}")
        for name, rank in entries.items():
            train = collection.evaluate(rank, "train")
            test = collection.evaluate(rank, "test")
            print(f"{name:58} {train:7.3f} {test:7.3f}", flush=True)
    naturali.close()


if __name__ == "__main__":
    main()
