"""Nearest chunks answered by PostgreSQL itself (pgvector): the vector leg of a project too
large for a server to hold its vectors (retrieval/vector_leg/stored_vectors.py).

Each such project has its own HNSW index, partial — ``WHERE project_id = … AND model = …`` —
over an expression of fixed dimension (``chunks.vector`` has none: models differ), so one
project's graph holds its rows only and is searched without a filter. The partial
predicate's values are written into the statement (a bound parameter does not prove it), by
psycopg's ``sql.Literal``. Cosines are inner products (``<#>`` is their negation): the
vectors are unit length, and the server's own leg scores the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg import sql

from naturali.storage.postgres.connection import Database
from naturali.storage.rows import vector_bytes

# The graph's quality and how much of it a search reads. bench/scale.py's copies (30 near
# duplicates of every chunk at 300k, cosine ~0.98) are the hard case for HNSW: with pgvector's
# defaults (m 16, ef_construction 64) and ef_search 200 its top-10 recall there was 0.61; with
# ef_construction 200 it is 0.90 at ef_search 200, 0.99 at 800 and 1.000 at 1000, pgvector's
# largest, for ~10 ms a query (300k chunks, 100 queries). A build takes 2.3× as long (95 s at
# 300k). With iterative scans on, a search that needs more rows than ef_search reads on.
_M = 16
_EF_CONSTRUCTION = 200
_EF_SEARCH = 1000
# What an HNSW build may use before it writes its graph in pieces (slower).
_BUILD_MEMORY = "1GB"

_NEAREST = """
SELECT seq, -((vector::vector({d})) <#> %s) AS cosine FROM chunks
WHERE project_id = {project} AND model = {model}
ORDER BY (vector::vector({d})) <#> %s LIMIT %s
"""
# Exactly: ordered by the cosine itself, which no index's order matches.
_NEAREST_WITHIN = """
SELECT seq, -(vector <#> %s) AS cosine FROM chunks
WHERE project_id = %s AND model = %s AND seq = ANY(%s)
ORDER BY cosine DESC, seq LIMIT %s
"""
_COSINES = """
SELECT seq, -(vector <#> %s) AS cosine FROM chunks
WHERE project_id = %s AND model = %s AND seq = ANY(%s)
"""
_VECTORS = """
SELECT seq, vector FROM chunks WHERE project_id = %s AND model = %s AND seq = ANY(%s)
"""
_INDEX = """
CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON chunks
USING hnsw ((vector::vector({d})) vector_ip_ops) WITH (m = {m}, ef_construction = {ef})
WHERE project_id = {project} AND model = {model}
"""
_VALID = """
SELECT i.indisvalid AS valid, EXISTS (
    SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid
) AS building
FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = %s
"""


class PostgresVectorSearch:
    def __init__(self, db: Database) -> None:
        self.db = db

    def nearest_vectors(
        self,
        project_id: str,
        model_id: str,
        query: npt.NDArray[np.float32],
        limit: int,
        within: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        vector = np.asarray(query, np.float32)
        if within is not None:
            args: tuple[Any, ...] = (vector, project_id, model_id, list(within), limit)
            return self._pairs(_NEAREST_WITHIN.encode(), args)
        statement = sql.SQL(_NEAREST).format(
            d=sql.SQL(str(int(vector.size))),
            project=sql.Literal(project_id),
            model=sql.Literal(model_id),
        )
        with self.db.connection() as conn, conn.transaction():
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(_EF_SEARCH)))
            conn.execute(b"SET LOCAL hnsw.iterative_scan = strict_order")
            rows = conn.execute(statement, (vector, vector, limit), binary=True).fetchall()
        return [(int(r["seq"]), float(r["cosine"])) for r in rows]

    def vector_cosines(
        self, project_id: str, model_id: str, query: npt.NDArray[np.float32], seqs: Sequence[int]
    ) -> dict[int, float]:
        if not seqs:
            return {}
        args = (np.asarray(query, np.float32), project_id, model_id, list(seqs))
        return dict(self._pairs(_COSINES.encode(), args))

    def vectors(
        self, project_id: str, model_id: str, seqs: Sequence[int]
    ) -> dict[int, npt.NDArray[np.float32]]:
        if not seqs:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(_VECTORS.encode(), (project_id, model_id, list(seqs))).fetchall()
        return {int(r["seq"]): np.frombuffer(vector_bytes(r["vector"]), np.float32) for r in rows}

    def _pairs(self, statement: bytes, args: tuple[Any, ...]) -> list[tuple[int, float]]:
        with self.db.connection() as conn:
            rows = conn.execute(statement, args, binary=True).fetchall()
        return [(int(r["seq"]), float(r["cosine"])) for r in rows]

    def index_vectors(self, project_id: str, model_id: str, dimension: int) -> None:
        name = index_name(project_id, model_id)
        with self.db.connection() as conn:  # autocommit: a concurrent build runs outside one
            found = conn.execute(_VALID.encode(), (name,)).fetchone()
            if found is not None and (found["valid"] or found["building"]):
                return  # built, or being built by another server
            if found is not None:  # a build that was interrupted leaves an invalid index
                drop = sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}")
                conn.execute(drop.format(sql.Identifier(name)))
            conn.execute(
                sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(_BUILD_MEMORY))
            )
            try:
                conn.execute(
                    sql.SQL(_INDEX).format(
                        name=sql.Identifier(name),
                        d=sql.SQL(str(int(dimension))),
                        m=sql.Literal(_M),
                        ef=sql.Literal(_EF_CONSTRUCTION),
                        project=sql.Literal(project_id),
                        model=sql.Literal(model_id),
                    )
                )
            finally:
                conn.execute(b"RESET maintenance_work_mem")


def index_name(project_id: str, model_id: str) -> str:
    """The project's HNSW index of one model's vectors: a name within PostgreSQL's 63 bytes."""
    digest = hashlib.sha256(f"{project_id}\0{model_id}".encode()).hexdigest()[:20]
    return f"chunks_hnsw_{digest}"
