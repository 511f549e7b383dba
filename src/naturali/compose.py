"""The composition root: which storage, which state store and which embedder fill the
service's ports. Every entrypoint (``naturali serve``, the CLI on a data dir, ``naturali mcp``,
the benchmarks) builds its services here and nowhere else."""

from __future__ import annotations

import os
from pathlib import Path

from naturali.embed.factory import build_embedder
from naturali.ports.embedder import Embedder
from naturali.ports.storage import Storage
from naturali.service.container import Services
from naturali.settings import Settings
from naturali.storage.sqlite.catalog import SqliteStorage
from naturali.storage.sqlite.state import SqliteState


def build_services(
    settings: Settings, *, storage: Storage | None = None, embedder: Embedder | None = None
) -> Services:
    """The services of ``settings.data_dir``: SQLite catalog and state, the configured
    embedder loaded on first use. Tests and benchmarks may pass a shared ``embedder``."""
    _own_data_dir(settings.data_dir)
    return Services(
        settings,
        storage or SqliteStorage(settings.data_dir / "catalog.sqlite"),
        SqliteState,
        (lambda: embedder) if embedder is not None else (lambda: build_embedder(settings)),
    )


def _own_data_dir(data_dir: Path) -> None:
    """Everything under the data dir is the owner's alone: indexed text, tokens' hashes, vault
    records. The umask covers what SQLite, Git and the writers create later."""
    os.umask(0o077)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(data_dir, 0o700)
