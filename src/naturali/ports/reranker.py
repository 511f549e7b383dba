"""The reranker port: a query and passages in, one relevance score per passage out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        """One score per passage, higher is more relevant (comparable within one call)."""
        ...
