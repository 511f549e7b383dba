"""An OpenAI-compatible ``/embeddings`` endpoint (a GPU box, a hosted API) as the embedder."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from naturali.embed.tokenizer import count_words
from naturali.ports.embedder import Vectors


class HttpEmbedder:
    def __init__(
        self, url: str, model: str, api_key: str | None = None, batch_size: int = 64
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=60.0)
        self._model = model
        self._batch_size = batch_size
        self.model_id = f"http:{model}"
        self.token_counter = "words"  # its tokenizer is unknown here
        self.vector_weight = 0.5  # a model not measured here: both legs weigh the same
        self.dimension = len(self._request(["dimension probe"])[0])

    def queued(self) -> int:
        return 0  # each call is the caller's own request to the endpoint

    def count_tokens(self, text: str) -> int:
        return count_words(text)

    def embed(self, texts: Sequence[str], *, urgent: bool = False) -> Vectors:
        # The endpoint has no priorities to choose between: urgent or not, one path.
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            rows.extend(self._request(list(texts[start : start + self._batch_size])))
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: Vectors = (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed([text])[0]
        return vector

    def _request(self, texts: list[str]) -> list[list[float]]:
        response = self._client.post("/embeddings", json={"model": self._model, "input": texts})
        response.raise_for_status()
        data = sorted(response.json()["data"], key=lambda item: item["index"])
        return [item["embedding"] for item in data]
