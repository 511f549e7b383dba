"""Vault files on disk: atomic writes and the scan that finds every record file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def atomic_write(path: Path, data: bytes) -> None:
    """Temp file in the same directory, fsync, rename: a reader sees the old or the new file,
    never a torn one, even across a crash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=path.parent)
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


def record_files(vault: Path) -> Iterator[Path]:
    """Every ``*.md`` under the vault, skipping hidden files and folders (``.git``, temp files)."""
    if not vault.is_dir():
        return
    for root, dirs, files in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith("."):
                yield Path(root) / name
