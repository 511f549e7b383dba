"""Single-record saves through the service layer, with and without Git commits.

Each save is a real mutation (journal, atomic write with fsync, receipt, history) on one
store; "with Git" adds the commit to the vault's repository. Prints saves/s and p50/p95
latency for each, measured in the same run.

    python bench/writes.py [--saves 300]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import median, percentile  # noqa: E402
from naturali.compose import build_services  # noqa: E402
from naturali.service.requests import SaveRequest  # noqa: E402
from naturali.settings import Settings  # noqa: E402


def run(saves: int, git: bool) -> tuple[float, list[float]]:
    naturali = build_services(
        Settings(data_dir=Path(tempfile.mkdtemp(prefix="naturali-writes-")), vault_git=git)
    )
    naturali.bootstrap()
    user = naturali.storage.oldest_user()
    assert user is not None
    project, _ = naturali.projects.create(user, "writes")
    store = naturali.memories.create_store(user, project.id, "kb", None)
    latencies = []
    started = time.perf_counter()
    for i in range(saves):
        t = time.perf_counter()
        naturali.mutations.save(
            user,
            project.id,
            store.id,
            SaveRequest(
                requestId=f"w{i}",
                record={
                    "kind": "claim",
                    "type": "fact",
                    "title": f"Note {i}",
                    "tags": ["bench"],
                    "body": f"Observation number {i}.",
                },
            ),
        )
        latencies.append((time.perf_counter() - t) * 1000)
    elapsed = time.perf_counter() - started
    naturali.close()
    return saves / elapsed, latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=300)
    args = parser.parse_args()
    for label, git in (("without Git", False), ("with Git commits", True)):
        rate, latencies = run(args.saves, git)
        print(
            f"{label:18} {rate:7.1f} saves/s  p50 {median(latencies):6.2f} ms  "
            f"p95 {percentile(latencies, 95):6.2f} ms"
        )


if __name__ == "__main__":
    main()
