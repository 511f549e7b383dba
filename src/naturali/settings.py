"""One settings object, read once per entrypoint (composition root) and passed down.

Sources, lowest to highest precedence: defaults, a TOML file (``NATURALI_CONFIG`` or
``<data_dir>/naturali.toml``), ``NATURALI_*`` environment variables, explicit overrides (CLI
flags).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

MiB = 1024 * 1024
# The embedding models naturali ships (embed/models.py loads them by these names); the first
# is the default.
BGE_SMALL, MINILM = SHIPPED_MODELS = ("bge-small-en-v1.5", "all-MiniLM-L6-v2")
# What a project may choose to be embedded with (embed/factory.py): the English default, and
# multilingual-e5-small (the ``multilingual`` extra).
MULTILINGUAL = "multilingual-e5-small"
PROJECT_MODELS = (BGE_SMALL, MULTILINGUAL)


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path(".naturali")
    host: str = "127.0.0.1"
    port: int = 8600
    max_upload_bytes: int = 50 * MiB
    max_json_bytes: int = 1 * MiB  # every JSON request body (uploads go by max_upload_bytes)
    # A version that makes more passages than this is refused (413 too_many_chunks) with
    # nothing stored: ~20 MB of prose, a 5,000-page book.
    max_chunks_per_document: int = 20_000
    # Writes are refused (507 insufficient_storage) and /readyz answers 503 while the data
    # dir's file system has less than this free; searches keep answering.
    min_free_bytes: int = 100 * MiB
    bootstrap_token: str | None = None
    # Embedder: "onnx" (a shipped model, run here) or "http" (OpenAI-compatible /embeddings).
    # embedder_model names the model: for "onnx" bge-small-en-v1.5 (None: that default) or
    # all-MiniLM-L6-v2; for "http" the endpoint's model (required).
    embedder: str = "onnx"
    embedder_threads: int = 2
    embedder_batch_size: int = 8  # measured best on 2 cores (bench/ingest.py)
    embedder_url: str | None = None
    embedder_model: str | None = None
    embedder_api_key: str | None = None
    # MiniLM's search queries through its int8 query model (built once into
    # <cache_dir>/models): ~2x less CPU per query; passages are always embedded by the exact
    # model. bge-small's products are int8 already, so this changes nothing for it.
    embedder_int8_queries: bool = True
    # The second stage (``rerank: true`` on a search): how many of the fused ranking's top
    # candidates the cross-encoder rescores, and which one — the shipped
    # ms-marco-MiniLM-L-12-v2 unless reranker_dir names a directory of model.onnx and
    # tokenizer.json (reranker_sha256, when set, pins its model file).
    rerank_depth: int = 20
    reranker_dir: Path | None = None
    reranker_sha256: str | None = None
    # Vault writes: commit each mutation to the vault's own Git repository.
    vault_git: bool = True
    git_binary: str = "git"
    # A vault with more record files than this is refused, never searched in part.
    vault_max_files: int = 200_000
    # Memory stores kept while unused (each one's scan, its inotify watches and one database
    # connection); the least recently used beyond this are closed, reopened when asked.
    open_stores: int = 256
    # Seconds a search may spend indexing vault files edited by other means (the rest waits
    # for the next search); writes through naturali index on the writer's time.
    reconcile_budget_seconds: float = 2.0
    # Per token, on this server (api/rate_limits.py): requests per window ("20/second",
    # "600/minute"; unset: no limit) and searches in flight (0: no limit). Over: 429.
    rate_limit: str | None = None
    searches_in_flight: int = 0
    # Per project, shared by every server (0: no quota): stored bytes of the documents'
    # current versions, documents, chunks and memories. A write over one is 409.
    quota_bytes: int = 0
    quota_documents: int = 0
    quota_chunks: int = 0
    quota_memories: int = 0
    # GET /metrics (Prometheus) answers the bearer of this token; unset, the metrics are off.
    metrics_token: str | None = None
    # On SIGTERM a server stops taking connections and waits this long for the requests in
    # flight before it closes (naturali serve).
    shutdown_grace_seconds: float = 30.0
    # A server holds an ingestion job on a lease it renews at every batch of chunks; a job
    # whose server stopped is taken again once its lease runs out (service/corpus/ingestion.py).
    ingest_lease_seconds: float = 15.0
    # Passages a project may have waiting to be embedded (~50 min of one server's embedding);
    # an upload beyond it is 429 with Retry-After, so one team cannot queue days of work.
    ingest_queue_chunks: int = 100_000
    # Sources (Git repositories and web sites a project mirrors): by default only public
    # addresses are fetched; sources_allow opens exactly what it lists — host names and CIDR
    # ranges, comma-separated (sources/addresses.py); local repositories are read only under
    # the folders sources_local_roots lists (never the data or cache dir). A deploy key for
    # ssh URLs (sources_ssh_key), never shown by the API.
    sources_allow: str = ""
    sources_local_roots: str = ""
    sources_ssh_key: Path | None = None
    # What one sync may take: a page's whole fetch (connect and every read), a run's time and
    # its pages; a run cut by either is marked truncated and resumes at the next. Syncs run on
    # sources_workers threads a server, one sync of a project at a time.
    sources_page_seconds: float = 60.0
    sources_run_seconds: float = 600.0
    sources_run_pages: int = 2000
    sources_workers: int = 4
    # OCR's budget: pages read by OCR in one document, and in one project an hour on each
    # server; the pages over either are listed in the document's warnings as not read.
    ocr_document_pages: int = 300
    ocr_project_pages_per_hour: int = 600
    # PostgreSQL (``postgresql://…``, needs the ``postgres`` extra) instead of catalog.sqlite:
    # the shared store of several servers. Without it everything stays in the data dir.
    database_url: str | None = None
    # Per-server rebuildable state (keyword and temporal projections); <data_dir>/cache when
    # unset. With PostgreSQL each server needs its own (the data dir is shared).
    cache_dir: Path | None = None
    # In-memory search indexes beyond this are dropped, least recently searched first, and
    # reloaded from their snapshots on demand. 1 GiB holds a project of ~1.9M chunks, or
    # ~3,300 projects of 100; with the rest of a server (~0.7 GB at 10,000 projects) it
    # stays under 2 GB.
    index_memory_bytes: int = 1024 * MiB
    # A search index is saved to <cache_dir>/indexes once this many chunks were added since
    # its last save (and on shutdown), so a restart reads only what changed since.
    index_snapshot_rows: int = 10_000
    # With PostgreSQL, a project of at least this many chunks has its vector leg answered by
    # the database (pgvector HNSW, a partial index per project) instead of each server
    # holding its vectors (docs/scale.md); 0: every server holds every searched project's.
    database_vector_rows: int = 0
    # Query vectors kept for repeated queries (by a hash of the text; 0 turns this off).
    query_vector_cache_entries: int = 4096
    # Searches the HTTP API runs at once (0: one per CPU the server may run on); more wait
    # for one of them, up to 0.1 s, then run beside them (api/search_lanes.py).
    search_threads: int = 0
    # Client side (CLI, MCP over HTTP).
    base_url: str = "http://127.0.0.1:8600"
    token: str | None = None

    def __post_init__(self) -> None:
        # Every path absolute, once: git runs in the vault and workers in their own
        # directories, so a path relative to where the server started would mean another
        # place to each of them.
        object.__setattr__(self, "data_dir", self.data_dir.expanduser().resolve())
        for name in ("cache_dir", "reranker_dir", "sources_ssh_key"):
            if (path := getattr(self, name)) is not None:
                object.__setattr__(self, name, Path(path).expanduser().resolve())
        if self.embedder not in ("onnx", "http"):
            raise ValueError(f"unknown embedder {self.embedder!r} (expected 'onnx' or 'http')")
        if self.embedder == "onnx" and self.embedder_model not in (None, *SHIPPED_MODELS):
            raise ValueError(
                f"embedder_model {self.embedder_model!r} is not a shipped model"
                f" (one of {', '.join(SHIPPED_MODELS)})"
            )
        if self.bootstrap_token is not None:
            _check_secret(self.bootstrap_token)
        if self.database_url is not None and not self.database_url.startswith(
            ("postgresql://", "postgres://")
        ):
            raise ValueError("database_url must be a postgresql:// URL")
        if self.index_snapshot_rows < 1 or self.query_vector_cache_entries < 0:
            raise ValueError(
                "index_snapshot_rows must be at least 1 and query_vector_cache_entries at least 0"
            )
        if not 1 <= self.rerank_depth <= 100:
            raise ValueError("rerank_depth must be between 1 and 100")
        if self.database_vector_rows < 0:
            raise ValueError("database_vector_rows must be at least 0 (0: never)")
        if self.max_chunks_per_document < 1:
            raise ValueError("max_chunks_per_document must be at least 1")
        if self.search_threads < 0:
            raise ValueError("search_threads must be at least 0 (0: one per CPU)")
        if (
            min(self.sources_page_seconds, self.sources_run_seconds) <= 0
            or min(self.sources_run_pages, self.sources_workers) < 1
        ):
            raise ValueError("the sources' deadlines, page budget and workers must be positive")
        if self.ocr_document_pages < 0 or self.ocr_project_pages_per_hour < 0:
            raise ValueError("the OCR budgets must be at least 0 (0: no OCR)")

    @property
    def local_cache_dir(self) -> Path:
        """Where this server keeps what it can rebuild."""
        return self.cache_dir or self.data_dir / "cache"

    @classmethod
    def load(
        cls, overrides: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
    ) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        config_file = env.get("NATURALI_CONFIG")
        if config_file:
            values.update(_read_toml(Path(config_file).expanduser().resolve()))
        values.update(_from_env(env))
        values.update({k: v for k, v in (overrides or {}).items() if v is not None})
        settings = cls()._with(values)
        if not config_file:
            local = settings.data_dir / "naturali.toml"
            if local.is_file():
                file_values = _read_toml(local)
                settings = cls()._with({**file_values, **values})
        return settings

    def _with(self, values: Mapping[str, Any]) -> Settings:
        known = {f.name: f for f in fields(self)}
        typed: dict[str, Any] = {}
        for key, raw in values.items():
            if key not in known:
                raise ValueError(f"unknown setting {key!r}")
            typed[key] = _coerce(getattr(self, key), known[key].type, raw)
        return replace(self, **typed)


def user_cache_dir() -> Path:
    """The user's cache (``$XDG_CACHE_HOME``, else ``~/.cache``): what a client command keeps
    between runs (``naturali sync``'s memory of refused files)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


MIN_SECRET_CHARS = 32
MIN_SECRET_DISTINCT = 12


def _check_secret(token: str) -> None:
    """The bootstrap token is the owner's key to every project: a guessable one is refused
    (at least 32 characters, at least 12 different ones; ``naturali serve`` prints a random
    one when none is set)."""
    if len(token) < MIN_SECRET_CHARS or len(set(token)) < MIN_SECRET_DISTINCT:
        raise ValueError(
            f"bootstrap_token must be at least {MIN_SECRET_CHARS} characters with at least "
            f"{MIN_SECRET_DISTINCT} different ones (e.g. `python3 -c 'import secrets; "
            "print(secrets.token_urlsafe(32))'`)"
        )


def _read_toml(path: Path) -> dict[str, Any]:
    with path.open("rb") as fh:
        return dict(tomllib.load(fh))


def _from_env(env: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in fields(Settings):
        key = "NATURALI_" + f.name.upper()
        if key in env and env[key] != "":
            out[f.name] = env[key]
    return out


def _coerce(default: Any, annotation: Any, raw: Any) -> Any:
    if isinstance(default, Path) or annotation in ("Path", Path, "Path | None"):
        return Path(raw).expanduser()
    if isinstance(default, bool):
        return str(raw).lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    return None if raw is None else str(raw)
