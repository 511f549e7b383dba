"""Front matter parsed once per content, across restarts.

ruamel's YAML 1.2 parser is pure Python (~1.5 ms a record): a store opened for the first time
since the server started would parse every record's front matter before its first search —
on a host of ten thousand small stores, most of a cold search. A store's state keeps what each
front matter it read parsed to, by the front matter's digest (``FrontMemory``); a scan asks it
once for every file it reads and parses only the fronts it does not know. What it holds is
derived from the files and rebuilt by reading them: a lost or stale entry costs a parse, never
a wrong answer (the digest is of the very text parsed).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Protocol

from ruamel.yaml.error import YAMLError

from naturali.vault.record import RecordFormatError, front_matter, normalize, parsed_front


class FrontMemory(Protocol):
    def known_fronts(self, digests: Collection[str]) -> dict[str, Any]:
        """The parsed front matters it holds among ``digests``."""
        ...

    def keep_fronts(self, fronts: Mapping[str, Any], live: Collection[str] | None) -> None:
        """Hold ``fronts`` (digest → parsed); with ``live`` (every digest the vault's files have
        now), forget the others."""
        ...


def digest(front_text: str) -> str:
    return hashlib.sha256(front_text.encode("utf-8", "surrogatepass")).hexdigest()


class Recall:
    """One scan's front matters: those the memory knows, asked for at once, and those parsed
    meanwhile, kept when the scan ends (``keep``)."""

    def __init__(self, memory: FrontMemory | None, files: Iterable[bytes]) -> None:
        self._memory = memory
        self._fronts = [f for data in files if (f := _front_text(data)) is not None]
        self._seen = {digest(front) for front in self._fronts}
        self._known = memory.known_fronts(self._seen) if memory and self._seen else {}
        self._parsed: dict[str, Any] = {}

    def front(self, text: str) -> Any:
        """``text``'s YAML as data: known, or parsed now (``record.parse``'s ``read_front``)."""
        key = digest(text)
        if key in self._known:
            return self._known[key]
        value = self._parsed[key] = parsed_front(text)  # raises on invalid YAML: not kept
        return value

    def read_all(self) -> None:
        """Every file's front matter known or parsed (files just written: the state and the
        in-process cache then hold them for the scans that follow)."""
        for front in self._fronts:
            with contextlib.suppress(YAMLError):
                self.front(front)

    def keep(self, whole: bool) -> None:
        """Hand the memory what was parsed; ``whole``: this scan read every file the vault
        has, so what it did not see is stale."""
        if self._memory is not None and (self._parsed or whole):
            self._memory.keep_fronts(self._parsed, self._seen if whole else None)


def _front_text(data: bytes) -> str | None:
    try:
        return front_matter(normalize(data.decode("utf-8")))[0]
    except (UnicodeDecodeError, RecordFormatError):
        return None
