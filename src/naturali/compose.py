"""The composition root: which storage, which state store and which embedder fill the
service's ports. Every entrypoint (``naturali serve``, the CLI on a data dir, ``naturali mcp``,
the benchmarks) builds its services here and nowhere else."""

from __future__ import annotations

import os
from pathlib import Path

from naturali.embed.factory import build_embedder
from naturali.ports.embedder import Embedder
from naturali.ports.state import StateFactory
from naturali.ports.storage import Storage
from naturali.service.container import Services
from naturali.settings import Settings
from naturali.storage.sqlite.catalog import SqliteStorage
from naturali.storage.sqlite.state import SqliteState


def build_services(settings: Settings, *, embedder: Embedder | None = None) -> Services:
    """The services of ``settings.data_dir``: the SQLite catalog and state, or PostgreSQL
    when ``database_url`` is set; the configured embedder loaded on first use. Tests and
    benchmarks may pass a shared ``embedder``."""
    _own_data_dir(settings.data_dir)
    storage, state = _stores(settings)
    return Services(
        settings,
        storage,
        state,
        (lambda: embedder) if embedder is not None else (lambda: build_embedder(settings)),
    )


def _stores(settings: Settings) -> tuple[Storage, StateFactory]:
    if settings.database_url is None:
        return SqliteStorage(settings.data_dir / "catalog.sqlite"), SqliteState
    # Imported here: psycopg and pgvector are the optional ``postgres`` extra (a documented
    # lazy import; the default install does not have them).
    from naturali.storage.postgres.catalog import PostgresStorage
    from naturali.storage.postgres.state import state_factory

    catalog = PostgresStorage(settings.database_url)
    return catalog, state_factory(catalog.db, settings.local_cache_dir)


def migrate_database(settings: Settings) -> None:
    """Run the configured store's schema migrations alone (opening a store runs them)."""
    _own_data_dir(settings.data_dir)
    storage, _ = _stores(settings)
    storage.close()


def _own_data_dir(data_dir: Path) -> None:
    """Everything under the data dir is the owner's alone: indexed text, tokens' hashes, vault
    records. The umask covers what SQLite, Git and the writers create later."""
    os.umask(0o077)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(data_dir, 0o700)
