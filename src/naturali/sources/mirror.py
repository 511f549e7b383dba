"""What a sync changes so that a source's documents mirror it: from the files the source has
now (logical path → the key of their content: a blob id, an ETag) and the documents the
source made before (logical path → document id and key), the paths to create, to update
and the documents to delete — nothing else under the prefix or outside it is touched."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

import pathspec

MAX_PATTERNS = 100


@dataclass(frozen=True)
class Plan:
    create: list[str] = field(default_factory=list)
    update: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)  # document ids
    unchanged: int = 0


def plan(now: dict[str, str], before: dict[str, tuple[str, str]]) -> Plan:
    """``now``: path → key; ``before``: path → (document id, key)."""
    create = sorted(p for p in now if p not in before)
    update = sorted(p for p in now if p in before and before[p][1] != now[p])
    delete = sorted(before[p][0] for p in before if p not in now)
    return Plan(create, update, delete, len(now) - len(create) - len(update))


@dataclass(frozen=True)
class Selection:
    """Which of a source's files it mirrors: those its ``include`` patterns match (all when
    none) and no ``exclude`` pattern does — both relative to the source's folder, as
    ``naturali sync``'s are to its folder — that the repository's ``.gitignore`` does not
    ignore (it speaks of the repository's paths), and no hidden file or folder (a dot name).
    Patterns are gitignore's (``pathspec``)."""

    include: pathspec.GitIgnoreSpec | None
    exclude: pathspec.GitIgnoreSpec
    ignored: pathspec.GitIgnoreSpec

    @classmethod
    def of(cls, include: list[str], exclude: list[str], gitignore: str = "") -> Selection:
        spec = pathspec.GitIgnoreSpec.from_lines
        return cls(spec(include) if include else None, spec(exclude), spec(gitignore.splitlines()))

    def takes(self, inside: str, in_repository: str) -> bool:
        """``inside``: the file's path under the folder; ``in_repository``: from the root."""
        if any(part.startswith(".") for part in PurePosixPath(in_repository).parts):
            return False
        if self.include is not None and not self.include.match_file(inside):
            return False
        return not (self.exclude.match_file(inside) or self.ignored.match_file(in_repository))


def logical(prefix: str, folder: str, path: str) -> str:
    """A repository file's logical path: under ``prefix``, relative to ``folder``."""
    inside = path[len(folder.strip("/")) :].lstrip("/") if folder.strip("/") else path
    return prefix.rstrip("/") + "/" + inside
