"""How long ``naturali --help`` takes to start: median of runs, next to a bare Python start
(the baseline, in the same process run). Run: ``python bench/startup.py [RUNS]``."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _median_seconds(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    bare = _median_seconds([sys.executable, "-c", "pass"], runs)
    cli = _median_seconds([sys.executable, "-m", "naturali.cli.main", "--help"], runs)
    records = _median_seconds(
        [sys.executable, "-m", "naturali.cli.main", "knowledge", "grep", "--help"], runs
    )
    print(f"python -c pass            median {bare * 1000:6.0f} ms (baseline)")
    print(f"naturali --help           median {cli * 1000:6.0f} ms  ({cli / bare:.1f}x)")
    print(f"naturali knowledge grep --help  {records * 1000:6.0f} ms  ({records / bare:.1f}x)")


if __name__ == "__main__":
    main()
