"""OCR: pages a second on this machine, and what a scan costs search. A report of ``--pages``
pages made with fpdf2 from SciFact abstracts (one a page, so each question's answer page is
known), and its scanned copy (each page rendered at 144 dpi and put back as an image, as a
scanner would); both ingested through the service, then SciFact's test questions whose
abstract is in the report are asked of each: the page hit@3 on the scan against the original
(target ≥ 0.9× of it).

    python bench/ocr.py [--pages 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import DATA, corpus, qrels, queries, service  # noqa: E402
from naturali.service.corpus.documents import Upload  # noqa: E402
from naturali.service.requests import SearchRequest  # noqa: E402
from pdfs import scanned_copy, text_pdf  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()
    answers = qrels(DATA / "scifact")
    asked = queries(DATA / "scifact")
    wanted = {d for relevant in answers.values() for d in relevant}
    docs = [d for d in corpus(DATA / "scifact") if d["_id"] in wanted][: args.pages]
    page_of = {d["_id"]: n for n, d in enumerate(docs, start=1)}
    questions = [(asked[q], page_of[d]) for q, rel in answers.items() for d in rel if d in page_of]
    # helvetica is Latin-1: what it cannot draw is dropped, in both copies alike
    pages = [f"{d['title']}. {d['text'][:1500]}" for d in docs]
    original = text_pdf([p.encode("latin-1", "ignore").decode("latin-1") for p in pages])
    scan = scanned_copy(original)
    naturali, user = service()
    hits = {}
    for name, data in (("original", original), ("scan", scan)):
        project = naturali.projects.create(user, name)[0].id
        started = time.perf_counter()
        made = naturali.documents.create(user, project, Upload(data, f"{name}.pdf", "/r.pdf"))
        while naturali.documents.get(user, project, made.id).status == "processing":
            time.sleep(0.1)  # a scan's pages are read by OCR in the background job
        took = time.perf_counter() - started
        hits[name] = sum(_hit(naturali, user, project, q, page) for q, page in questions)
        print(
            f"{name}: searchable after {took:.1f} s ({args.pages / took:.2f} pages/s), "
            f"page hit@3 {hits[name] / len(questions):.3f} over {len(questions)} questions"
        )
    ratio = hits["scan"] / max(hits["original"], 1)
    print(f"ocr: pages={args.pages} questions={len(questions)} scan_vs_original_hit3={ratio:.2f}")
    naturali.close()


def _hit(naturali, user, project: str, question: str, page: int) -> bool:  # type: ignore[no-untyped-def]
    results = naturali.search.search(user, project, SearchRequest(query=question, limit=3))
    return any(getattr(r, "page", None) == page for r in results)


if __name__ == "__main__":
    main()
