"""Request bodies, validated once at the edge by every interface (HTTP, CLI, SDK, MCP).

Strict types and ``extra="forbid"``: a wrong type or an unknown field is a 400, never a
silent coercion.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from naturali.contracts.described import Described
from naturali.model import ROLES, WHOLE, Grant
from naturali.service import validation

MAX_QUERY_CHARS = 2000
MAX_PASSAGES = 200  # a page of a document's passages
MAX_FILTER_ITEMS = 100

Text = Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)]
FilterList = Annotated[list[str], Field(min_length=1, max_length=MAX_FILTER_ITEMS)]


# What the service refuses (with its own codes: invalid_path, invalid_tags, …), said in the
# schema too, so a client generated from OpenAPI does not send it: one-line values have no
# control characters (nor U+2028/9, which YAML reads as line breaks); text keeps tabs and line
# breaks only; tag keys have no ':'.
ONE_LINE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$"
TEXT_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]*$"


def _documented(pattern: str, **more: int) -> Any:
    return Field(json_schema_extra={"pattern": pattern, **more})


OneLine = Annotated[str, _documented(ONE_LINE_PATTERN)]
Name = Annotated[
    str, StringConstraints(min_length=1, max_length=200), _documented(ONE_LINE_PATTERN)
]
TextBody = Annotated[str, _documented(TEXT_PATTERN)]
TagKey = Annotated[str, _documented(r"^[^:\x00-\x1f\x7f-\x9f]+$", maxLength=256)]
Tags = dict[TagKey, Annotated[str, _documented(ONE_LINE_PATTERN, maxLength=256)]]


class Strict(Described):
    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _integral_floats(cls, data: Any) -> Any:
        """JSON has one number type: 2.0 is the integer 2 (JSON Schema's "integer" agrees),
        so a client may send it for an integer field; 2.5 is still refused."""
        if not isinstance(data, dict):
            return data
        ints = _integer_fields(cls)
        return {
            k: int(v) if k in ints and isinstance(v, float) and v.is_integer() else v
            for k, v in data.items()
        }


def union_members(annotation: Any) -> tuple[Any, ...]:
    """The types an annotation allows: the members of ``X | Y``, or the annotation itself."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _integer_fields(model: type[BaseModel]) -> set[str]:
    return {
        info.alias or name
        for name, info in model.model_fields.items()
        if int in union_members(info.annotation)
    }


Snapshot = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class Paged(Strict):
    """A paged records or dates tool: follow ``nextOffset`` with unchanged filters and the
    returned ``snapshot``; a changed snapshot is a 409 ``snapshot_changed`` (restart)."""

    snapshot: Snapshot | None = Field(
        None, description="The snapshot of the first page; a change since is a 409."
    )


def _path_prefixes(value: list[str] | None, info: ValidationInfo) -> list[str] | None:
    """Each entry of a list of path prefixes is a logical path (what starts it)."""
    for prefix in value or []:
        validation.logical_path(prefix, info.field_name or "path", prefix=True)
    return value


class SearchRequest(Strict):
    """``POST /v1/projects/{project_id}/knowledge/search`` (docs/spec/search-api.md)."""

    query: Text | None = Field(None, description="The text to search semantically.")
    min_similarity: float | None = Field(
        None,
        ge=-1.0,
        le=1.0,
        description="Minimum raw cosine similarity_score a vector candidate must reach to take "
        "part in ranking. Only applies with query; lexical matches are kept.",
    )
    limit: int = Field(10, ge=1, le=100, description="Maximum results (default 10).")
    include_documents: bool = Field(True, description="false leaves documents out.")
    include_memories: bool = Field(True, description="false leaves memories out.")
    document_paths: FilterList | None = Field(
        None, description="Restrict to documents whose path starts with one of these prefixes."
    )
    document_ids: FilterList | None = Field(None, description="Restrict to these documents.")
    memory_store_ids: FilterList | None = Field(
        None, description="Restrict to memories in these memory stores."
    )
    tags: Tags | None = Field(
        None,
        description="Every key-value pair must be contained in the result's tags "
        "(for memories, the store's tags count as well as the memory's own).",
    )
    explain: bool = Field(
        False,
        description="naturali extension: add to each result why it ranked there (its rank "
        "and cosine in the vector leg, its rank and BM25 score in the lexical leg, the fused "
        "score). Without it the response is exactly the spec's.",
    )
    rerank: bool = Field(
        False,
        description="naturali extension: rescore the fused ranking's top candidates (the "
        "server's rerank_depth, 20 unless configured) with a cross-encoder that reads the "
        "query and each passage together, and order them by its score blended with the fused "
        "one (a fifth of the blend; half when all of them are memories). Slower (~10 ms a "
        "candidate on a small CPU); with explain, each rescored result shows its rerank score.",
    )

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not validation.has_visible(value):
            raise ValueError("query must not be empty (it has no visible characters)")
        return value

    _prefixes = field_validator("document_paths")(_path_prefixes)

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value == {}:
            raise ValueError("tags must have at least one key-value pair")
        return None if value is None else validation.tags(value)


class DocumentText(Strict):
    """A document sent as JSON text instead of a file."""

    path: OneLine
    content: str
    title: OneLine | None = None
    metadata: dict[str, Any] | None = None
    tags: Tags | None = None


class DocumentTextUpdate(Strict):
    path: OneLine | None = None
    content: str
    title: OneLine | None = None
    metadata: dict[str, Any] | None = None
    tags: Tags | None = None


EmbeddingModel = Literal["bge-small-en-v1.5", "multilingual-e5-small"]  # settings.PROJECT_MODELS
_MODEL = (
    "What the project's passages and questions are embedded with: bge-small-en-v1.5 (English) "
    "or multilingual-e5-small (100 languages; a question finds passages in any of them)."
)


class ProjectCreate(Strict):
    name: Name
    embedding_model: EmbeddingModel | None = Field(
        None, description=_MODEL + " Default: the server's."
    )


class ProjectUpdate(Strict):
    embedding_model: EmbeddingModel = Field(
        description=_MODEL + " A change embeds the project's passages again in the background; "
        "searches use the model it had until every one is done."
    )


GrantList = Annotated[list[str], Field(max_length=MAX_FILTER_ITEMS)]


class Limits(Strict):
    """What of a project a token or a membership reaches, beyond its projects and role."""

    path_prefixes: GrantList | None = Field(
        None,
        description="Only the documents whose path starts with one of these prefixes, and "
        "the sources that write under them (default: every document; [] none).",
    )
    memory_store_ids: GrantList | None = Field(
        None, description="Only these memory stores (default: every store; [] none)."
    )

    _prefixes = field_validator("path_prefixes")(_path_prefixes)

    def grant(self, inherited: Grant) -> Grant:
        """The limits asked for; one not given is ``inherited``'s."""
        paths, stores = self.path_prefixes, self.memory_store_ids
        return Grant(
            inherited.paths if paths is None else tuple(paths),
            inherited.stores if stores is None else tuple(stores),
        ).narrowed(WHOLE)


class TokenCreate(Limits):
    """``POST /v1/tokens``: a named token of the caller's; limited, it reaches only what the
    caller's own token reaches (``path_prefixes``, ``memory_store_ids`` included)."""

    name: Name
    scope: Literal["read", "write", "admin"] = Field(
        "read",
        description="read: read only; write: also write; admin: also manage projects and tokens.",
    )
    projects: FilterList | None = Field(
        None,
        description="Limit the token to these projects (default: every project).",
    )
    expires_in: str | None = Field(
        None,
        pattern=r"^\d{1,6}[smhd]$",
        description="Expire after this long: a number and s, m, h or d (30d). Default: never.",
    )


class MemberRole(Limits):
    """A membership: a role, and what of the project it reaches (default: all of it)."""

    role: str = Field(
        description="owner, editor or viewer", json_schema_extra={"enum": list(ROLES)}
    )


class MemoryStoreCreate(Strict):
    name: Name
    tags: Tags | None = None


class MemoryStoreUpdate(Strict):
    name: Name | None = None
    tags: Tags | None = None


class MemoryCreate(Strict):
    content: TextBody
    tags: Tags | None = None
    title: OneLine | None = None


class MemoryUpdate(Strict):
    content: TextBody | None = None
    tags: Tags | None = None
    title: OneLine | None = None


class DocumentsRequest(Strict):
    """knowledge_documents: the project's documents by path, a page at a time."""

    path_prefix: Annotated[str, StringConstraints(min_length=1, max_length=1024)] | None = Field(
        None, description="Only documents whose path starts with this.", examples=["/handbook/"]
    )
    cursor: Annotated[str, StringConstraints(max_length=1024)] | None = Field(
        None, description="The previous page's next_cursor.", examples=["eyJvIjoyMH0"]
    )
    limit: int = Field(20, ge=1, le=100, description="At most this many documents (default 20).")


class PassagesRequest(Strict):
    """knowledge_passages: a document's passages in order, or those around one passage."""

    document_id: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    around: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        None,
        description="A search hit's chunk_id: the passages centred on it.",
        examples=["chunk_o9TuYIx7DJdNsSz6"],
    )
    start: int = Field(0, ge=0, description="The first passage's place (0-based), without around.")
    limit: int = Field(50, ge=1, le=MAX_PASSAGES, description="At most this many passages.")


class StoresRequest(Strict):
    """knowledge_stores: the project's memory stores."""


Cursor = Annotated[str, StringConstraints(max_length=1024)] | None
_CURSOR = "next_cursor of the previous page"


class AuditQuery(Strict):
    """The audit trail's filters and page."""

    since: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        None, description="From this instant (ISO 8601)"
    )
    until: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        None, description="Before this instant (ISO 8601)"
    )
    operation: Annotated[str, StringConstraints(max_length=256)] | None = Field(
        None, description="One operation: POST /v1/projects/{project_id}/documents"
    )
    cursor: Cursor = Field(None, description=_CURSOR)
    limit: int = Field(50, ge=1, le=100)


class FoldersQuery(Strict):
    """A level of the project's folder tree, a page at a time."""

    prefix: Annotated[str, StringConstraints(max_length=1024)] = Field(
        "/", description="A folder, ending with '/'"
    )
    cursor: Cursor = Field(None, description=_CURSOR)
    limit: int = Field(100, ge=1, le=100)


class JobsQuery(Strict):
    """The project's ingestion jobs, a page at a time."""

    cursor: Cursor = Field(None, description=_CURSOR)
    limit: int = Field(20, ge=1, le=100)


class SourceDeleteQuery(Strict):
    keep_documents: bool = Field(
        False, description="Keep the documents it made (default: delete them)."
    )
