"""Scan a vault: parse and validate every record file, find duplicates, and decide which
records are eligible. Files whose size, mtime and inode are unchanged are not re-read, and a
scan in which nothing changed is reused whole (its ``scanned_at`` stays)."""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from naturali.model import utcnow
from naturali.vault.record import Record, RecordFormatError, parse

Stat = tuple[int, int, int]


@dataclass(frozen=True)
class Issue:
    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass(frozen=True)
class ScannedRecord:
    record: Record
    path: str  # relative to the vault, with '/' separators
    sha256: str
    text: str
    body_line: int  # zero-based line where the body starts (front matter lines before it)

    @property
    def id(self) -> str:
        return self.record.id


@dataclass
class Scan:
    records: dict[str, ScannedRecord]  # valid, unique ids
    issues: list[Issue]
    scanned_at: str
    stats: dict[str, Stat] = field(default_factory=dict)


class VaultScanner:
    """One per vault directory; thread-safe; keeps the last scan for reuse."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self._lock = threading.Lock()
        self._files: dict[str, tuple[Stat, ScannedRecord | Issue]] = {}
        self._last: Scan | None = None

    def scan(self) -> Scan:
        with self._lock:
            stats = _stats(self.vault)
            if self._last is not None and stats == self._last.stats:
                return self._last
            parsed: dict[str, ScannedRecord | Issue] = {}
            for relative, stat in stats.items():
                cached = self._files.get(relative)
                if cached is not None and cached[0] == stat:
                    parsed[relative] = cached[1]
                else:
                    parsed[relative] = _read(self.vault, relative)
                    self._files[relative] = (stat, parsed[relative])
            for gone in set(self._files) - set(stats):
                del self._files[gone]
            self._last = _assemble(parsed, stats)
            return self._last


def _stats(vault: Path) -> dict[str, Stat]:
    """Size, mtime and inode of every record file (the change check run before each query;
    os.scandir keeps it to one stat call per file)."""
    out: dict[str, Stat] = {}
    pending = [("", str(vault))]
    while pending:
        prefix, directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue  # .git, temp files of atomic writes
            if entry.is_dir(follow_symlinks=False):
                pending.append((prefix + entry.name + "/", entry.path))
            elif entry.name.endswith(".md"):
                try:
                    st = entry.stat()
                except FileNotFoundError:
                    continue
                out[prefix + entry.name] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def _read(vault: Path, relative: str) -> ScannedRecord | Issue:
    try:
        data = (vault / relative).read_bytes()
        text = data.decode("utf-8")
        record = parse(text)
    except UnicodeDecodeError:
        return Issue(relative, "the file is not valid UTF-8")
    except RecordFormatError as exc:
        return Issue(relative, str(exc))
    except OSError as exc:
        return Issue(relative, f"unreadable: {exc.strerror}")
    body_line = text[: len(text) - len(record.body)].count("\n")
    return ScannedRecord(record, relative, hashlib.sha256(data).hexdigest(), text, body_line)


def _assemble(parsed: dict[str, ScannedRecord | Issue], stats: dict[str, Stat]) -> Scan:
    issues = [item for item in parsed.values() if isinstance(item, Issue)]
    by_id: dict[str, list[ScannedRecord]] = {}
    for item in parsed.values():
        if isinstance(item, ScannedRecord):
            by_id.setdefault(item.id, []).append(item)
    records: dict[str, ScannedRecord] = {}
    for record_id, found in by_id.items():
        if len(found) == 1:
            records[record_id] = found[0]
            continue
        paths = ", ".join(sorted(f.path for f in found))
        issues += [Issue(f.path, f"duplicate id {record_id!r} (in {paths})") for f in found]
    issues.sort(key=lambda i: (i.path, i.message))
    return Scan(records, issues, utcnow(), stats)
