"""Sources: how fast a real docs site and a real repository on loopback become searchable,
and what an incremental sync costs against the full one.

The site is Valgrind's HTML manual (``/usr/share/doc/valgrind/html``, Debian's
``valgrind`` package, or ``--site DIR``) served by ``http.server``; the repository is this
one (``file://``, its Markdown and Python). Each is synced in full, then again with nothing
changed. Prints the time to the first searchable document, documents a minute, the requests
and files read, and the second sync's time as a share of the first.

    python bench/sources.py [--site DIR] [--repository DIR]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from common import service  # noqa: E402
from naturali.contracts.resources import SourceRun  # noqa: E402
from naturali.service.syncing.source_requests import SourceCreate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--site", type=Path, default=Path("/usr/share/doc/valgrind/html"))
    parser.add_argument("--repository", type=Path, default=ROOT)
    args = parser.parse_args()
    naturali, user = service(
        sources_allow="127.0.0.1", sources_local_roots=str(args.repository.resolve())
    )
    first: list[float] = []
    mirror = naturali.documents.mirror

    def timed(*a: Any, **k: Any) -> Any:  # the bench's own stopwatch on each write
        written = mirror(*a, **k)
        first.append(time.perf_counter())
        return written

    naturali.documents.mirror = timed  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0),
        functools.partial(_Quiet, directory=str(args.site)),
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    cases = {
        "docs site (web)": {"kind": "web", "url": site, "path": "/site/"},
        "repository (git)": {
            "kind": "git", "url": str(args.repository), "path": "/repo/",
            "include": ["*.md", "*.py"],
        },
    }  # fmt: skip
    for name, body in cases.items():
        project = naturali.projects.create(user, name)[0].id
        made = naturali.sources.create(user, project, SourceCreate.model_validate(body))
        full = _sync(naturali, user, project, made.id, first)
        again = _sync(naturali, user, project, made.id, first)
        run = full["run"]
        per_minute = run.created / full["seconds"] * 60
        print(
            f"{name}: {run.created} documents, first searchable after {full['first']:.1f} s, "
            f"all after {full['seconds']:.1f} s ({per_minute:.0f} documents/min); "
            f"files read {run.files_read}; nothing changed: {again['seconds']:.2f} s "
            f"({again['seconds'] / full['seconds']:.3f} of the full sync), "
            f"files read {again['run'].files_read}"
        )
    server.shutdown()
    naturali.close()


def _sync(naturali: Any, user: Any, project: str, source_id: str, first: list[float]) -> dict:  # type: ignore[type-arg]
    """A sync asked for and run by the server's worker, until its documents are searchable."""
    first.clear()
    before = naturali.sources.get(user, project, source_id).last_run
    started = time.perf_counter()
    naturali.sources.sync(user, project, source_id)
    while (source := naturali.sources.get(user, project, source_id)).last_run == before:
        time.sleep(0.05)
    while any(n for state, n in naturali.storage.ingest_job_counts().items() if state != "failed"):
        time.sleep(0.05)
    return {
        "run": SourceRun.model_validate(source.last_run),
        "seconds": time.perf_counter() - started,
        "first": (first[0] - started) if first else float("nan"),
    }


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


if __name__ == "__main__":
    main()
