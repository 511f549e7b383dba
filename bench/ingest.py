"""Ingest a BEIR corpus (SciFact by default) through the service layer.

Prints documents/s and chunks/s for the whole pipeline (extract, chunk, embed, write), the
bare embedder's passages/s on the same chunk texts measured in the same run, their ratio, and
the process's peak RSS.

    python bench/ingest.py [--corpus ../shared/data/scifact] [--limit N] [--batch 256]
                           [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import DATA, as_upload, corpus, peak_rss_mib, service  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=DATA / "scifact")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--batch", type=int, default=256, help="documents per create_many")
    parser.add_argument("--sample", type=int, default=1000, help="chunks for the bare baseline")
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="keep the store here (bench/beir.py reuses it)"
    )
    args = parser.parse_args()

    naturali, user = service(args.data_dir)
    # Named as bench/beir.py names its project, so the evaluation can reuse this store.
    project, _ = naturali.projects.create(user, f"beir-{args.corpus.name}")
    embedder = naturali.embedder()
    docs = list(islice(corpus(args.corpus), args.limit))
    print(f"{len(docs)} documents from {args.corpus}")

    started = time.perf_counter()
    chunks = 0
    for i in range(0, len(docs), args.batch):
        batch = [as_upload(d) for d in docs[i : i + args.batch]]
        chunks += sum(
            d.chunk_count for d in naturali.documents.create_many(user, project.id, batch)
        )
        done = min(i + args.batch, len(docs))
        print(f"\r  {done}/{len(docs)} documents, {chunks} chunks", end="", flush=True)
    elapsed = time.perf_counter() - started
    print()

    # The bare embedder on a sample of the same chunk texts, same batch size, same process.
    with naturali.indexes.synced(project.id) as index:
        seqs = [int(s) for s in index.seqs[: index.n]]
    sample = random.Random(7).sample(seqs, min(args.sample, len(seqs)))
    texts = [c.text for c in naturali.storage.get_chunks(project.id, sample).values()]
    bare_started = time.perf_counter()
    embedder.embed(texts)
    bare = len(texts) / (time.perf_counter() - bare_started)

    pipeline = chunks / elapsed
    print(
        f"pipeline   {len(docs) / elapsed:8.1f} documents/s  {pipeline:8.1f} chunks/s  "
        f"({elapsed:.1f} s in all)"
    )
    print(f"embedder   {bare:8.1f} passages/s (bare, {len(texts)} of the same chunks)")
    print(f"ratio      {pipeline / bare:8.2f} (pipeline chunks/s ÷ bare passages/s)")
    print(f"peak RSS   {peak_rss_mib():8.0f} MiB")
    naturali.close()


if __name__ == "__main__":
    main()
