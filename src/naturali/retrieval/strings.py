"""Texts kept as one UTF-8 byte array and offsets: no Python object a text until one is read
(an index's owners and vocabulary: thousands of objects a project otherwise)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Strings:
    """Texts as one UTF-8 byte array and each one's ``[offsets[i], offsets[i + 1])``."""

    data: npt.NDArray[np.uint8]
    offsets: npt.NDArray[np.int64]

    @classmethod
    def of(cls, texts: list[str]) -> Strings:
        encoded = [t.encode() for t in texts]
        offsets = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), np.uint8), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> str:
        return self.data[self.offsets[i] : self.offsets[i + 1]].tobytes().decode()

    def find(self, text: str) -> int | None:
        """Where ``text`` is, the texts being in sorted order (by code point, as UTF-8 bytes
        sort): a binary search that makes a dozen texts, not one per text held."""
        i = bisect.bisect_left(self, text)
        return i if i < len(self) and self[i] == text else None
