"""A full disk is an answer, not a crash: every write first checks that the data dir's file
system has more than ``min_free_bytes`` free (507 ``insufficient_storage`` otherwise, with
nothing written), ``/readyz`` says so (503), and a write that runs out of space half-way is
recognised by its error (``is_disk_full``) and answered 507 too — its transaction rolled
back, so nothing is half-written. Searches only read, and keep answering."""

from __future__ import annotations

import errno
import shutil
import time
from pathlib import Path

from naturali.errors import InsufficientStorage

CHECK_SECONDS = 1.0  # free space is read again at most this often
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_FULL_WORDS = ("database or disk is full", "disk full", "no space left on device")
_PG_DISK_FULL = "53100"


class DiskSpace:
    def __init__(self, path: Path, floor_bytes: int) -> None:
        self._path = path
        self._floor = floor_bytes
        self._free = 0
        self._read_at = -CHECK_SECONDS

    def free(self) -> int:
        now = time.monotonic()
        if now - self._read_at >= CHECK_SECONDS:
            self._free = shutil.disk_usage(self._path).free
            self._read_at = now
        return self._free

    def low(self) -> bool:
        return self.free() < self._floor

    def check(self) -> None:
        """Before a write: refuse it now rather than fail it half-way."""
        if self.low():
            raise full(f"only {self.free() // 1024} KiB free, under {self._floor // 1024} KiB")


def full(detail: str) -> InsufficientStorage:
    return InsufficientStorage(
        f"the server's disk is full ({detail}); nothing was written — retry once an operator "
        "has freed space (searches still answer)",
        code="insufficient_storage",
    )


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc``, or what caused it, is a file system or database out of space."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in _FULL_ERRNOS:
            return True
        if getattr(seen, "sqlstate", None) == _PG_DISK_FULL:
            return True
        if any(word in str(seen).lower() for word in _FULL_WORDS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
