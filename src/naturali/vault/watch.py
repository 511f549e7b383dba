"""A cheap change check for a vault: Linux inotify, read without blocking at query time.

Stat-ing 10,000 files costs ~45 ms in Python; reading an empty inotify queue costs one
syscall. This is not a background worker: events queue in the kernel and are drained by the
next query. Every vault of the process is watched through one inotify instance (``_Shared``):
a user may hold 128 instances, and closing one costs the kernel ~15 ms (it waits out a grace
period), which a server closing the stores it keeps open would pay at each. Where inotify is
unavailable (not Linux, watch limit reached) ``changes`` returns None and the caller falls
back to a full stat scan; a queue overflow does the same once, for every vault.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import struct
import threading
from pathlib import Path

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
_HEADER = struct.Struct("iIII")


@functools.cache  # finding it runs ``ldconfig -p``: milliseconds, once a process
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        _ = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError):
        return None
    return libc


# Paths a vault's watch holds for its next query; more (a store written to a great deal and
# not searched meanwhile) and it falls back to a full stat scan instead of holding them all.
MAX_PENDING = 10_000


class _Shared:
    """The process's one inotify instance, and which vault's watch owns each watch
    descriptor. ``drain`` hands each event to its watch (under the lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._fd = -1
        self._owners: dict[int, tuple[VaultWatch, str]] = {}  # wd → its watch, relative dir

    def add(self, libc: ctypes.CDLL, watch: VaultWatch, directory: str, relative: str) -> int:
        """A watch on ``directory`` for ``watch`` (the caller holds the lock); -1 when the
        kernel refuses it."""
        if self._fd < 0:
            self._fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            if self._fd < 0:
                return -1
        wd = int(libc.inotify_add_watch(self._fd, os.fsencode(directory), _MASK))
        if wd >= 0:
            self._owners[wd] = (watch, relative)
        return wd

    def remove(self, libc: ctypes.CDLL, watch: VaultWatch, wds: list[int]) -> None:
        """Drop ``watch``'s watches. A folder watched again (a store reopened while its old
        handle closes) gets the same descriptor from the kernel, now owned by the new watch:
        that one stays."""
        for wd in wds:
            owner = self._owners.get(wd)
            if owner is not None and owner[0] is watch:
                del self._owners[wd]
                libc.inotify_rm_watch(self._fd, wd)

    def drain(self) -> None:
        """Read every queued event and hand it to its watch (the caller holds the lock)."""
        while self._fd >= 0:
            try:
                data = os.read(self._fd, 65536)
            except OSError as exc:
                if exc.errno != errno.EAGAIN:
                    self._break_all()
                return
            offset = 0
            while offset < len(data):
                wd, mask, _, size = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + size]
                offset += _HEADER.size + size
                if mask & IN_Q_OVERFLOW:
                    self._break_all()
                    continue
                owner = self._owners.get(wd)
                if owner is not None and not mask & IN_IGNORED:
                    name = raw.rstrip(b"\0").decode("utf-8", "surrogateescape")
                    owner[0].seen(mask, owner[1], name)

    def _break_all(self) -> None:
        for watch, _ in list(self._owners.values()):
            watch.broken = True


_SHARED = _Shared()


class VaultWatch:
    """``changes()``: relative paths touched since the last call, or None when unknown."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self._libc = _libc()
        self._wds: list[int] = []
        self._touched: set[str] = set()
        self.broken = True

    def start(self) -> None:
        """(Re)arm the watches; call before the full scan that the next changes build on."""
        self.close()
        if self._libc is None:
            return
        with _SHARED.lock:
            _SHARED.drain()  # events of the old watches, left behind
            self.broken = False
            for root, dirs, _ in os.walk(self.vault):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                relative = os.path.relpath(root, self.vault)
                wd = _SHARED.add(self._libc, self, root, "" if relative == "." else relative + "/")
                if wd < 0:
                    self.broken = True
                    break
                self._wds.append(wd)

    def changes(self) -> set[str] | None:
        if self._libc is None:
            return None
        with _SHARED.lock:
            _SHARED.drain()
            if self.broken or not self._wds:
                return None
            touched, self._touched = self._touched, set()
            return touched

    def seen(self, mask: int, directory: str, name: str) -> None:
        """An event in one of this vault's folders (``_Shared.drain``, under its lock)."""
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            self.broken = True
        elif mask & IN_ISDIR:
            created = mask & (IN_CREATE | IN_MOVED_TO) and not name.startswith(".")
            if created or mask & (IN_DELETE | IN_MOVED_FROM):
                self.broken = True  # a folder came or went: a full scan sees inside
        elif len(self._touched) < MAX_PENDING:
            self._touched.add(directory + name)
        else:
            self.broken = True

    def close(self) -> None:
        if self._libc is not None and self._wds:
            with _SHARED.lock:
                _SHARED.remove(self._libc, self, self._wds)
        self._wds = []
        self._touched = set()
        self.broken = True
