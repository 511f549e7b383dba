"""How soon a restarted server answers a search in a project of ≥ 100,000 chunks.

Starts ``naturali serve`` on a data dir holding the ``latency-<chunks>`` project that
``bench/search_latency.py`` builds, and times from the process start to /healthz and to the
first search of that project that returns 200 — once with the index snapshot a previous server
saved in the cache dir (a normal restart), once without it (the index is read from every
chunk; the server then saves a new snapshot).

    python bench/ready.py --data-dir DIR [--chunks 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import service  # noqa: E402
from server import free_port  # noqa: E402


def time_to_answer(data_dir: Path, project_id: str, token: str) -> tuple[float, float]:
    """Seconds from starting the server to /healthz, and to the first answered search."""
    port = free_port()
    env = {**os.environ, "NATURALI_DATA_DIR": str(data_dir)}
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "naturali.cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    healthy = answered = 0.0
    try:
        with httpx.Client(base_url=base, timeout=120) as http:
            while not healthy:
                try:
                    if http.get("/healthz").status_code == 200:
                        healthy = time.perf_counter() - started
                except httpx.HTTPError:
                    time.sleep(0.02)
            response = http.post(
                f"/v1/projects/{project_id}/knowledge/search",
                headers={"Authorization": f"Bearer {token}"},
                json={"query": "vitamin D and bone density", "include_memories": False},
            )
            response.raise_for_status()
            answered = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=120)
    return healthy, answered


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    naturali, user = service(args.data_dir)
    project_id = next(
        p.id for p, _ in naturali.projects.list(user) if p.name == f"latency-{args.chunks}"
    )
    chunks = naturali.storage.chunk_changes(project_id, 0, 0).chunk_cursor
    token = naturali.users.new_token(user.id)
    naturali.close()
    snapshots = args.data_dir / "cache" / "indexes"

    shutil.rmtree(snapshots, ignore_errors=True)
    cold = time_to_answer(args.data_dir, project_id, token)  # reads every chunk, then saves
    warm = [time_to_answer(args.data_dir, project_id, token) for _ in range(args.runs)]
    print(f"project latency-{args.chunks} (chunk cursor {chunks})")
    print(f"{'':40} {'/healthz':>9} {'first search':>13}")
    print(f"{'start without a snapshot':40} {cold[0]:8.1f}s {cold[1]:12.1f}s")
    print(
        f"{'start with the saved snapshot (median)':40} "
        f"{statistics.median(w[0] for w in warm):8.1f}s "
        f"{statistics.median(w[1] for w in warm):12.1f}s"
    )


if __name__ == "__main__":
    main()
