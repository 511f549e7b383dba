"""A folder as ``naturali sync`` sees it: the files naturali reads, by their logical paths,
and what was left out and why — files matched by ``--exclude`` or the folder's
``.naturaliignore`` (gitignore syntax, read by ``pathspec``), hidden files and folders
(``.git``, ``.venv``) unless asked for, links whose real path is outside the folder, files and
folders this user cannot read (each named with its reason: one never stops the run) — and the
files the server refused before, remembered (with their SHA-256) so that one unchanged is not
sent again on every run."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from naturali.contracts.formats import FORMATS
from naturali.settings import user_cache_dir

SUFFIXES = {s for s in FORMATS if s}
IGNORE_FILE = ".naturaliignore"


@dataclass
class Folder:
    """The files to send by logical path, and every file or folder left out by its path
    relative to the folder (a folder's ends in ``/``: nothing under it was looked at)."""

    files: dict[str, Path] = field(default_factory=dict)  # logical path → file
    outside: list[str] = field(default_factory=list)  # links out of the folder
    excluded: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # of a type naturali does not read
    unreadable: dict[str, str] = field(default_factory=dict)  # → why (permissions, …)

    @property
    def skipped(self) -> int:
        left_out = (self.outside, self.excluded, self.hidden, self.unread, self.unreadable)
        return sum(len(kind) for kind in left_out)


def scan(
    directory: Path,
    prefix: str,
    *,
    excludes: tuple[str, ...] = (),
    hidden: bool = False,
    outside: bool = False,
) -> Folder:
    """The folder's files naturali reads, and the count of each kind left out."""
    ignore_file = directory / IGNORE_FILE
    lines = ignore_file.read_text().splitlines() if ignore_file.is_file() else []
    spec = pathspec.GitIgnoreSpec.from_lines([*lines, *excludes])
    root = directory.resolve()
    found = Folder()

    def unreadable(error: OSError) -> None:
        where = Path(error.filename or directory).relative_to(directory).as_posix()
        found.unreadable[where + "/"] = error.strerror or str(error)

    for folder, dirs, names in os.walk(directory, onerror=unreadable):
        here = Path(folder).relative_to(directory)
        kept = []
        for name in sorted(dirs):
            relative = (here / name).as_posix()
            if name.startswith(".") and not hidden:
                found.hidden.append(relative + "/")
            elif spec.match_file(relative + "/"):
                found.excluded.append(relative + "/")
            else:
                kept.append(name)
        dirs[:] = kept  # not walked into
        for name in sorted(names):
            _consider(found, directory, root, here / name, prefix, spec, hidden, outside)
    return found


def _consider(
    found: Folder,
    directory: Path,
    root: Path,
    relative: Path,
    prefix: str,
    spec: pathspec.GitIgnoreSpec,
    hidden: bool,
    outside: bool,
) -> None:
    file, name = directory / relative, relative.as_posix()
    if relative.name.startswith(".") and not hidden:
        found.hidden.append(name)
    elif spec.match_file(name):
        found.excluded.append(name)
    elif file.suffix.lower() not in SUFFIXES or not file.is_file():
        found.unread.append(name)
    elif not outside and not file.resolve().is_relative_to(root):
        found.outside.append(name)  # a link to /etc/passwd is not the folder's
    elif not os.access(file, os.R_OK):
        found.unreadable[name] = os.strerror(errno.EACCES)
    else:
        found.files[prefix + name] = file


def sha256(file: Path) -> str:
    return hashlib.sha256(file.read_bytes()).hexdigest()


class Refusals:
    """Files the server refused, by logical path: their SHA-256 then and why, kept in the
    user's cache (``$XDG_CACHE_HOME/naturali/sync``), one file per server, project, folder
    and prefix."""

    def __init__(self, base_url: str, project: str, directory: Path, prefix: str) -> None:
        key = "\n".join((base_url, project, str(directory.resolve()), prefix))
        name = hashlib.sha256(key.encode()).hexdigest()[:24] + ".json"
        self.path = user_cache_dir() / "naturali" / "sync" / name
        try:
            self.known: dict[str, dict[str, str]] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.known = {}

    def unchanged(self, logical: str, digest: str) -> str | None:
        """Why the file was refused, if it was and has not changed since."""
        entry = self.known.get(logical)
        return entry["error"] if entry and entry["sha256"] == digest else None

    def save(self, refused: dict[str, tuple[str, str]], still: set[str]) -> None:
        """Remember the files refused this run (path → SHA-256, why) and those ``still``
        refused (skipped as unchanged); forget the rest (read since, changed, or gone)."""
        known = {p: e for p, e in self.known.items() if p in still}
        known |= {p: {"sha256": d, "error": e} for p, (d, e) in refused.items()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(known, indent=1, sort_keys=True))
