"""Choose the embedder named by the settings."""

from __future__ import annotations

from concurrent.futures import Executor

from naturali.embed.http import HttpEmbedder
from naturali.embed.models import DEFAULT_MODEL
from naturali.embed.onnx import OnnxEmbedder
from naturali.embed.rerank import OnnxReranker
from naturali.ports.embedder import Embedder
from naturali.ports.reranker import Reranker
from naturali.settings import Settings


def build_embedder(settings: Settings) -> Embedder:
    """The configured embedder (``onnx`` by default, or an ``http`` endpoint)."""
    if settings.embedder == "onnx":
        return OnnxEmbedder(
            threads=settings.embedder_threads,
            batch_size=settings.embedder_batch_size,
            model=settings.embedder_model or DEFAULT_MODEL,
            int8_queries=settings.embedder_int8_queries,
            cache_dir=settings.local_cache_dir / "models",
        )
    # "http": Settings refuse any other embedder when they are read.
    if not settings.embedder_url or not settings.embedder_model:
        raise ValueError("embedder 'http' needs embedder_url and embedder_model")
    return HttpEmbedder(settings.embedder_url, settings.embedder_model, settings.embedder_api_key)


def build_reranker(settings: Settings, pool: Executor | None = None) -> Reranker:
    """The second stage's cross-encoder: the shipped one, or the operator's directory; its
    pairs run on ``pool`` when given (the composition root's)."""
    return OnnxReranker(
        settings.reranker_dir, settings.reranker_sha256, settings.embedder_threads, pool
    )
