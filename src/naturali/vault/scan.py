"""Scan a vault: parse and validate every record file, find duplicates, and decide which
records are eligible. Files whose size, mtime and inode are unchanged are not re-read, and a
scan in which nothing changed is reused whole (its ``scanned_at`` stays)."""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from naturali.model import utcnow
from naturali.vault.dates import date_issues
from naturali.vault.fronts import FrontMemory, Recall
from naturali.vault.record import Record, RecordFormatError, normalize, parse, parsed_front
from naturali.vault.watch import VaultWatch

Stat = tuple[int, int, int]
_GENERATIONS = itertools.count(1)


@dataclass(frozen=True)
class Issue:
    path: str
    message: str


@dataclass(frozen=True)
class ScannedRecord:
    record: Record
    path: str  # relative to the vault, with '/' separators
    sha256: str
    text: str
    body_line: int  # zero-based line where the body starts (front matter lines before it)
    id: str = ""
    references: frozenset[str] = frozenset()  # declared dependencies, endpoints, entities
    token: int = 0  # 128 bits of sha256(id, content hash), summed into snapshots
    # The file and its content: what anything derived from this record depends on (caches
    # of derived values are keyed on it).
    key: tuple[str, str] = ("", "")

    def __post_init__(self) -> None:
        # Computed once per parse: queries read these for every record.
        object.__setattr__(self, "id", self.record.id)
        object.__setattr__(self, "key", (self.path, self.sha256))
        object.__setattr__(self, "references", frozenset(_references(self.record.front)))
        digest = hashlib.sha256(f"{self.id}\0{self.sha256}".encode()).digest()
        object.__setattr__(self, "token", int.from_bytes(digest[:16], "big"))


def _references(front: dict[str, Any]) -> set[str]:
    refs: set[str] = set()
    for key in ("dependencies", "entities"):
        value = front.get(key)
        if isinstance(value, list):
            refs |= {str(v) for v in value}
    for key in ("from", "to"):
        if front.get(key) is not None:
            refs.add(str(front[key]))
    return refs


@dataclass
class Scan:
    records: dict[str, ScannedRecord]  # valid, unique ids
    issues: list[Issue]
    scanned_at: str
    stats: dict[str, Stat] = field(default_factory=dict)
    duplicates: frozenset[str] = frozenset()  # ids more than one file claims
    # Every file (duplicates included) whose own lifecycle is withdrawn or superseded: such
    # an edit made outside the service still earns its record a guard.
    retired: tuple[ScannedRecord, ...] = ()
    # Which scan this is: each scan that saw a change has a new, never reused number, so
    # caches of what was derived from a scan compare generations, never object ids.
    generation: int = field(default_factory=lambda: next(_GENERATIONS))


class ScanLimitExceeded(Exception):
    """The vault holds more record files than the scan may read; nothing partial is served."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the vault holds more than {limit} record files")
        self.limit = limit


class VaultScanner:
    """One per vault directory; thread-safe; keeps the last scan for reuse."""

    def __init__(
        self, vault: Path, max_files: int = 200_000, fronts: FrontMemory | None = None
    ) -> None:
        self.vault = vault
        self.max_files = max_files
        self._fronts = fronts
        self._lock = threading.Lock()
        self._files: dict[str, tuple[Stat, ScannedRecord | Issue]] = {}
        self._last: Scan | None = None
        self._watch = VaultWatch(vault)
        # Kept in step file by file, so a scan where one file changed costs little.
        self._paths_by_id: dict[str, set[str]] = {}
        self._unique: dict[str, ScannedRecord] = {}
        self._invalid: dict[str, Issue] = {}
        self._retired: dict[str, ScannedRecord] = {}
        # Valid records with dates no timeline can place: reported, still searchable.
        self._warnings: dict[str, list[Issue]] = {}

    def scan(self) -> Scan:
        with self._lock:
            stats = self._current_stats()
            if len(stats) > self.max_files:
                self._last = None  # the changes seen are spent: the next scan stats them all
                raise ScanLimitExceeded(self.max_files)
            if self._last is not None and stats == self._last.stats:
                return self._last
            whole = not self._files  # every file is read: what the memory holds else is stale
            for gone in self._files.keys() - stats.keys():
                self._drop(gone)
            changed = {
                relative: _bytes(self.vault, relative)
                for relative, stat in stats.items()
                if (cached := self._files.get(relative)) is None or cached[0] != stat
            }
            recall = Recall(self._fronts, [d for d in changed.values() if isinstance(d, bytes)])
            for relative, data in changed.items():
                self._drop(relative)
                item = data if isinstance(data, Issue) else parsed(relative, data, recall.front)
                self._add(relative, stats[relative], item)
            recall.keep(whole)
            duplicates = frozenset(i for i, paths in self._paths_by_id.items() if len(paths) > 1)
            self._last = Scan(
                dict(self._unique),
                self._issues(),
                utcnow(),
                stats,
                duplicates,
                tuple(self._retired.values()),
            )
            return self._last

    def learn(self, written: Iterable[bytes]) -> None:
        """Files the service just wrote: their front matter known before the next scan reads
        them, and by the next server (``vault/fronts.py``)."""
        recall = Recall(self._fronts, written)
        recall.read_all()
        recall.keep(whole=False)

    def _add(self, relative: str, stat: Stat, item: ScannedRecord | Issue) -> None:
        self._files[relative] = (stat, item)
        if isinstance(item, Issue):
            self._invalid[relative] = item
            return
        if item.record.lifecycle != "active":
            self._retired[relative] = item
        kind = str(item.record.front.get("kind"))
        warnings = [
            Issue(relative, f"{message}; the record is left off date queries")
            for _, message in date_issues(kind, item.record.front)
        ]
        if warnings:
            self._warnings[relative] = warnings
        paths = self._paths_by_id.setdefault(item.id, set())
        paths.add(relative)
        if len(paths) == 1:
            self._unique[item.id] = item
        else:
            self._unique.pop(item.id, None)

    def _drop(self, relative: str) -> None:
        old = self._files.pop(relative, None)
        if old is None:
            return
        item = old[1]
        if isinstance(item, Issue):
            self._invalid.pop(relative, None)
            return
        self._retired.pop(relative, None)
        self._warnings.pop(relative, None)
        paths = self._paths_by_id[item.id]
        paths.discard(relative)
        self._unique.pop(item.id, None)
        if not paths:
            del self._paths_by_id[item.id]
        elif len(paths) == 1:
            remaining = self._files[next(iter(paths))][1]
            assert isinstance(remaining, ScannedRecord)
            self._unique[item.id] = remaining

    def _issues(self) -> list[Issue]:
        issues = list(self._invalid.values())
        issues += [w for warnings in self._warnings.values() for w in warnings]
        for record_id, paths in self._paths_by_id.items():
            if len(paths) > 1:
                listed = ", ".join(sorted(paths))
                issues += [Issue(p, f"duplicate id {record_id!r} (in {listed})") for p in paths]
        return sorted(issues, key=lambda i: (i.path, i.message))

    def _current_stats(self) -> dict[str, Stat]:
        """Stats of every record file: from the last scan plus the files inotify saw change,
        or from a full stat scan when the watch cannot say."""
        touched = self._watch.changes() if self._last is not None else None
        if touched is None:
            self._watch.start()  # armed before the full scan, so nothing falls between
            return file_stats(self.vault, self.max_files)
        if not touched:
            return self._last.stats if self._last is not None else {}
        stats = dict(self._last.stats) if self._last is not None else {}
        for relative in touched:
            if not relative.endswith(".md") or relative.rsplit("/", 1)[-1].startswith("."):
                continue
            try:
                st = os.stat(self.vault / relative)
            except FileNotFoundError:
                stats.pop(relative, None)
                continue
            stats[relative] = (st.st_size, st.st_mtime_ns, st.st_ino)
        return stats

    def close(self) -> None:
        self._watch.close()


def file_stats(vault: Path, max_files: int) -> dict[str, Stat]:
    """Size, mtime and inode of every record file (the change check run before each query;
    os.scandir keeps it to one stat call per file). Stops once past ``max_files``."""
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
                if len(out) > max_files:
                    return out
    return out


def _bytes(vault: Path, relative: str) -> bytes | Issue:
    try:
        return (vault / relative).read_bytes()
    except OSError as exc:
        return Issue(relative, f"unreadable: {exc.strerror}")


def parsed(
    relative: str, data: bytes, read_front: Callable[[str], Any] = parsed_front
) -> ScannedRecord | Issue:
    """One record file's content as a scan reads it (a file, or a revision from history)."""
    try:
        text = normalize(data.decode("utf-8"))
        record = parse(text, read_front)
    except UnicodeDecodeError:
        return Issue(relative, "the file is not valid UTF-8")
    except RecordFormatError as exc:
        return Issue(relative, str(exc))
    body_line = text[: len(text) - len(record.body)].count("\n")
    return ScannedRecord(record, relative, hashlib.sha256(data).hexdigest(), text, body_line)
