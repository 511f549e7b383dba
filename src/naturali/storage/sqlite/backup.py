"""``naturali admin backup`` and ``restore`` of an embedded data dir, while its server runs
(compose.py hands these to the CLI: they are the embedded backend's own).

Order makes the copy consistent: the catalog first, by SQLite's online backup API; then the
uploaded files, which are written before the catalog row that names them, so every file the
copied catalog names is there; then each memory store under its own write lock (the flock its
writers take, across processes), its ``state.sqlite`` by the backup API and its vault with its
Git history copied whole, so a store's journal, receipts, files and commits agree. Writes to
other stores, and to the catalog, go on meanwhile. The cache dir is not copied: it is rebuilt.
On PostgreSQL the catalog is the database's: docs/operations.md gives pg_dump's procedure."""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from naturali.errors import Conflict, InvalidRequest
from naturali.settings import Settings
from naturali.vault.files import TEMP_PREFIX, TEMP_SUFFIX

TOP_FILES = ("owner-token", "naturali.toml")


def backup(settings: Settings, dest: Path, say: Callable[[str], None] = lambda _: None) -> None:
    if settings.database_url:
        raise InvalidRequest(
            "the catalog is in PostgreSQL: back it up with pg_dump (docs/operations.md) and "
            "copy the data dir's files/ and stores/",
            code="backup_not_embedded",
        )
    source = settings.data_dir
    _empty_or_new(dest)
    dest.mkdir(parents=True, exist_ok=True, mode=0o700)
    copy_database(source / "catalog.sqlite", dest / "catalog.sqlite")
    say("catalog copied")
    if (source / "files").exists():
        # A file still being written (its temporary name) belongs to no copied row, and is
        # renamed away while the copy goes on.
        being_written = shutil.ignore_patterns(f"{TEMP_PREFIX}*{TEMP_SUFFIX}")
        shutil.copytree(source / "files", dest / "files", ignore=being_written, dirs_exist_ok=True)
    say("files copied")
    for name in TOP_FILES:
        if (source / name).exists():
            shutil.copy2(source / name, dest / name)
    stores = source / "stores"
    for store in sorted(p for p in stores.iterdir() if p.is_dir()) if stores.exists() else []:
        _copy_store(store, dest / "stores" / store.name)
        say(f"store {store.name} copied")
    owner_only(dest)


def restore(backup_dir: Path, data_dir: Path) -> None:
    """Bring a backup into an empty data dir (the server stopped, or not yet started)."""
    if not (backup_dir / "catalog.sqlite").exists():
        raise InvalidRequest(f"{backup_dir} is not a naturali backup", code="not_a_backup")
    _empty_or_new(data_dir)
    shutil.copytree(backup_dir, data_dir, dirs_exist_ok=True)
    owner_only(data_dir)


def owner_only(root: Path) -> None:
    """Every folder and file under ``root`` readable by its owner alone, like the data dir
    (copies take the umask of whoever ran the command; a record or a token is no one else's)."""
    os.chmod(root, 0o700)
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o700)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode & 0o700)


def _copy_store(store: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with (store / "write.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the store's writers wait; other stores go on
        try:
            if (store / "state.sqlite").exists():
                copy_database(store / "state.sqlite", target / "state.sqlite")
            if (store / "vault").exists():
                shutil.copytree(store / "vault", target / "vault", symlinks=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _empty_or_new(path: Path) -> None:
    if path.exists() and any(path.iterdir()):
        raise Conflict(f"{path} is not empty", code="not_empty", param="dest")


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a live SQLite database through SQLite's online backup API: pages
    copied while other connections keep writing, restarted by SQLite if they change."""
    src = sqlite3.connect(source)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
