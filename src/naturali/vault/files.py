"""Vault files on disk: atomic writes."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

TEMP_PREFIX, TEMP_SUFFIX = ".tmp-", ".part"


def remove_temp_files(vault: Path, older_than: float = 0.0) -> list[Path]:
    """Temp files an interrupted atomic write left behind: all of them while no write runs
    (under the store's lock), or without the lock those older than any write takes."""
    cutoff = time.time() - older_than
    found = []
    # Never into .git: Git packs and prunes its object folders meanwhile (a folder gone
    # between listing and reading failed the write that looked), and a store of thousands of
    # commits holds thousands of them. A folder that vanishes is skipped (os.walk's default).
    for folder, subfolders, names in os.walk(vault):
        subfolders[:] = [name for name in subfolders if name != ".git"]
        for name in names:
            path = Path(folder, name)
            temporary = name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)
            if temporary and (not older_than or _mtime(path) < cutoff):
                found.append(path)
    for path in found:
        path.unlink(missing_ok=True)
    return found


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return float("inf")


def atomic_write(path: Path, data: bytes) -> None:
    """Temp file in the same directory, fsync, rename: a reader sees the old or the new file,
    never a torn one, even across a crash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
