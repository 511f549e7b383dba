"""Long real documents: public companies' annual and quarterly reports (10-K, 10-Q, earnings
releases) as PDFs, and questions whose answers are on a known page of one of them.

Reads FinanceBench's open-source set (github.com/patronus-ai/financebench: its ``pdfs/``
folder and ``data/financebench_open_source.jsonl``, 150 questions with the pages their
evidence is on) from a checkout given by ``--financebench`` (nothing is downloaded). The
filings of the first ``--filings`` of its documents (in the order its questions name them) are
uploaded into one project; each question about them is asked over the whole project and again
limited to its filing (``document_paths``). Prints the right filing in the top 10, the right
page in the top 10 over the whole project and within the filing, and the page's MRR@10.

    python bench/filings.py --financebench PATH [--filings 84] [--rerank] [--data-dir DIR]

With --data-dir the ingested filings are kept there and reused by the next run (~100 s of
CPU a filing here: its passages' embeddings).

Run it on two checkouts to compare them (``PYTHONPATH=OTHER/src python bench/filings.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from common import service  # noqa: E402
from naturali.service.corpus.documents import Upload  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402


@dataclass(frozen=True)
class Question:
    filing: str
    text: str
    pages: frozenset[int]  # 1-indexed


def questions(root: Path, filings: int) -> tuple[list[str], list[Question]]:
    rows = [json.loads(line) for line in (root / "data/financebench_open_source.jsonl").open()]
    names: list[str] = []
    for row in rows:  # a checkout whose largest files are absent: their questions left out
        if row["doc_name"] not in names and (root / "pdfs" / f"{row['doc_name']}.pdf").exists():
            names.append(row["doc_name"])
    chosen = set(names[:filings])
    asked = [
        Question(
            row["doc_name"],
            row["question"],
            frozenset(e["evidence_page_num"] + 1 for e in row["evidence"]),
        )
        for row in rows
        if row["doc_name"] in chosen
    ]
    return [n for n in names if n in chosen], asked


def ingested(naturali: Any, user: Any, root: Path, names: list[str]) -> str:
    """The project of these filings, uploaded once."""
    name = f"filings-{len(names)}"
    for project, _ in naturali.projects.list(user):
        if project.name == name:
            return str(project.id)
    project, _ = naturali.projects.create(user, name)
    for filing in names:
        data = (root / "pdfs" / f"{filing}.pdf").read_bytes()
        upload = Upload(data, f"{filing}.pdf", f"/filings/{filing}.pdf", None)
        naturali.documents.create_many(user, project.id, [upload])
    while naturali.ingestion.run_once():
        pass
    return str(project.id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--financebench", type=Path, required=True)
    parser.add_argument("--filings", type=int, default=84)
    parser.add_argument("--rerank", action="store_true")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    names, asked = questions(args.financebench, args.filings)
    naturali, user = service(args.data_dir or Path(tempfile.mkdtemp(prefix="naturali-filings-")))
    started = time.perf_counter()
    project_id = ingested(naturali, user, args.financebench, names)
    ingest = time.perf_counter() - started
    filing_hits, whole, within, reciprocal = [], [], [], []
    for q in asked:
        path = f"/filings/{q.filing}.pdf"
        request = SearchRequest(query=q.text, limit=10, include_memories=False, rerank=args.rerank)
        hits = naturali.search.search(user, project_id, request)
        right = [h for h in hits if h.path == path]
        on_page = [h for h in right if h.page in q.pages]
        filing_hits.append(bool(right))
        whole.append(bool(on_page))
        reciprocal.append(1 / (hits.index(on_page[0]) + 1) if on_page else 0.0)
        limited = request.model_copy(update={"document_paths": [path]})
        inside = naturali.search.search(user, project_id, limited)
        within.append(any(h.page in q.pages for h in inside))
    print(
        f"filings: documents={len(names)} questions={len(asked)} rerank={args.rerank} "
        f"filing@10={statistics.fmean(filing_hits):.3f} page@10={statistics.fmean(whole):.3f} "
        f"page@10_within={statistics.fmean(within):.3f} mrr@10={statistics.fmean(reciprocal):.3f} "
        f"ingest_s={ingest:.0f}"
    )
    naturali.close()


if __name__ == "__main__":
    main()
