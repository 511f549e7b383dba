"""A cheap change check for a vault: Linux inotify, read without blocking at query time.

Stat-ing 10,000 files costs ~45 ms in Python; reading an empty inotify queue costs one
syscall. This is not a background worker: events queue in the kernel and are drained by the
next query. Where inotify is unavailable (not Linux, watch limit reached) ``changes`` returns
None and the caller falls back to a full stat scan; a queue overflow does the same once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import struct
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


class VaultWatch:
    """``changes()``: relative paths touched since the last call, or None when unknown."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self._libc = _libc()
        self._fd = -1
        self._dirs: dict[int, str] = {}  # watch descriptor → relative dir ("" or "a/b/")
        self._broken = True

    def start(self) -> None:
        """(Re)arm the watches; call before the full scan that the next changes build on."""
        self.close()
        if self._libc is None:
            return
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return
        self._fd = fd
        self._broken = False
        for root, dirs, _ in os.walk(self.vault):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            relative = os.path.relpath(root, self.vault)
            self._add(root, "" if relative == "." else relative + "/")

    def _add(self, directory: str, relative: str) -> None:
        assert self._libc is not None
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(directory), _MASK)
        if wd < 0:
            self._broken = True
        else:
            self._dirs[wd] = relative

    def changes(self) -> set[str] | None:
        if self._broken or self._fd < 0:
            return None
        touched: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return touched
            except OSError as exc:
                if exc.errno == errno.EAGAIN:
                    return touched
                self._broken = True
                return None
            if not self._parse(data, touched):
                self._broken = True
                return None

    def _parse(self, data: bytes, touched: set[str]) -> bool:
        offset = 0
        while offset < len(data):
            wd, mask, _, size = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + size]
            offset += _HEADER.size + size
            if mask & IN_Q_OVERFLOW or mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                return False
            if mask & IN_IGNORED or wd not in self._dirs:
                continue
            name = raw.rstrip(b"\0").decode("utf-8", "surrogateescape")
            relative = self._dirs[wd] + name
            if mask & IN_ISDIR:
                if mask & (IN_CREATE | IN_MOVED_TO) and not name.startswith("."):
                    return False  # a new folder: let a full scan pick up what is inside
                if mask & (IN_DELETE | IN_MOVED_FROM):
                    return False
                continue
            touched.add(relative)
        return True

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._dirs.clear()
        self._broken = True
