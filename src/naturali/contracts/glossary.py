"""What each field of the API means, said once. Every request and result model derives from
``Described`` (contracts/described.py): a field whose definition carries no description takes
the glossary's, by its wire name (or ``Model.name`` where one name means different things), and
every field takes the glossary's example. OpenAPI, the TypeScript doc comments, the MCP tools'
input schemas, the CLI's ``--help`` and the Python SDK's docstrings all read the fields, so all
show the same words. A test fails while any field of any operation has no description, or no
example where its type does not already list its values."""

from __future__ import annotations

import json
from typing import Any, NamedTuple


class Term(NamedTuple):
    description: str | None  # None: the field's definition says it
    example: Any = None


_AT = "2026-03-14T09:30:00Z"
_SHA = "9f2c1e7a4b0d5c3e8f6a1b2d4c7e9f0a3b5d6c8e1f2a4b7c9d0e3f5a6b8c1d2e"

TERMS: dict[str, Term] = {
    # Identity and provenance
    "id": Term("This object's id.", "proj_V1StGXR8Z5jdHi6B"),
    "Citation.id": Term("The cited record's id.", "dec-use-postgres"),
    "CompleteHit.id": Term("The record's id.", "dec-use-postgres"),
    "InventoryRow.id": Term("The record's id.", "dec-use-postgres"),
    "RecordResult.id": Term("The record's id.", "dec-use-postgres"),
    "ReceiptRecord.id": Term("The written record's id.", "dec-use-postgres"),
    "Revision.id": Term("The record's id.", "dec-use-postgres"),
    "HistoryResult.id": Term("The record's id.", "dec-use-postgres"),
    "TimelineRow.id": Term("The dated record's id.", "dec-use-postgres"),
    "SourceRef.id": Term("The source record's id.", "mtg-2026-03-14"),
    "SourceSummary.id": Term("The source record's id.", "mtg-2026-03-14"),
    "Via.id": Term("The superseded record's id.", "dec-use-mysql"),
    "Deleted.id": Term("The deleted object's id.", "doc_V1StGXR8Z5jdHi6B"),
    "CorrectRequest.id": Term("The record to correct (its id).", "dec-use-postgres"),
    "WithdrawRequest.id": Term("The record to withdraw (its id).", "dec-use-postgres"),
    "RecordAt.id": Term("The record's id (case-sensitive).", "dec-use-postgres"),
    "DocumentOut.id": Term(None, "doc_V1StGXR8Z5jdHi6B"),
    "MemoryOut.id": Term(None, "mem_Tq84XbLw2sPz0aKd"),
    "MemoryStoreOut.id": Term(None, "mstore_tYHpKIiutxJg5XZH"),
    "SourceOut.id": Term(None, "src_5Nb1xZq8RkWc3DfG"),
    "TokenOut.id": Term(None, "tok_3Fr8yKs9LmQw2TzA"),
    "IngestJobOut.id": Term("The ingestion job's id.", "job_6Wc4tMa1VbNe7QrS"),
    "ModelOut.id": Term("The embedding model's name.", "bge-small-en-v1.5"),
    "source_id": Term("The source's id.", "src_5Nb1xZq8RkWc3DfG"),
    "token_id": Term("The token's id.", "tok_3Fr8yKs9LmQw2TzA"),
    "record_id": Term("The record's id (case-sensitive).", "dec-use-postgres"),
    "project_id": Term("The project's id.", "proj_V1StGXR8Z5jdHi6B"),
    "document_id": Term("The document's id.", "doc_V1StGXR8Z5jdHi6B"),
    "memory_id": Term("The memory's id.", "mem_Tq84XbLw2sPz0aKd"),
    "memory_store_id": Term("The memory store's id.", "mstore_tYHpKIiutxJg5XZH"),
    "memory_store_name": Term("The memory store's name.", "decisions"),
    "chunk_id": Term(
        "The passage's id: cite it, or read the passages around it.", "chunk_o9TuYIx7DJdNsSz6"
    ),
    "file_id": Term("The stored file's id (one per uploaded content).", "file_9f2c1e7a4b0d5c3e"),
    "user_id": Term("The user's id.", "user_Ad4LoVe1aCeB9bAg"),
    "request_id": Term("The HTTP request's id (the X-Request-Id header).", "req_0a1b2c3d"),
    "path": Term("The document's path in the project.", "/handbook/deploy.md"),
    "Citation.path": Term("The record file's path in the store.", "records/dec-use-postgres.md"),
    "CompleteHit.path": Term("The record file's path in the store.", "records/dec-use-postgres.md"),
    "InventoryRow.path": Term(
        "The record file's path in the store.", "records/dec-use-postgres.md"
    ),
    "RecordResult.path": Term(
        "The record file's path in the store.", "records/dec-use-postgres.md"
    ),
    "ReceiptRecord.path": Term(
        "The record file's path in the store.", "records/dec-use-postgres.md"
    ),
    "Revision.path": Term("The record file's path in the store.", "records/dec-use-postgres.md"),
    "TimelineRow.path": Term("The record file's path in the store.", "records/dec-use-postgres.md"),
    "Via.path": Term("The superseded record's path.", "decisions/dec-use-mysql.md"),
    "Issue.path": Term("The file that could not be read.", "decisions/broken.md"),
    "SourceOut.kind": Term("git: a Git repository; web: a documentation site.", None),
    "SourceOut.path": Term(
        "The folder of the project the source's files are kept under.", "/handbook/"
    ),
    "filename": Term("The uploaded file's name.", "deploy.md"),
    "sha256": Term("The SHA-256 of the exact bytes (hex).", _SHA),
    "content_hash": Term("The SHA-256 of the content (hex).", _SHA),
    "revision": Term("The record's revision, 1 on create, +1 on each write.", 3),
    "MemoryOut.revision": Term("The memory's revision, +1 on each update.", 2),
    "Via.revision": Term("The superseded record's revision.", 2),
    "version": Term("The document's version, +1 each time its content changes.", 2),
    "document_version": Term("The document version the passage belongs to.", 2),
    "ordinal": Term("The passage's place in its document, from 0.", 12),
    "citation": Term("What to cite: the record's id, path, revision and sha256.", None),
    "seq": Term("The audit entry's sequence number (increasing).", 1042),
    # Names, text and tags
    "name": Term("A name (1-200 characters, one line).", "decisions"),
    "ProjectOut.name": Term("The project's name.", "Platform team"),
    "ProjectCreate.name": Term("The project's name (1-200 characters, one line).", "Platform team"),
    "TokenCreate.name": Term("What the token is for (1-200 characters).", "ci-deploy"),
    "TokenOut.name": Term("What the token is for.", "ci-deploy"),
    "title": Term("The title.", "Use PostgreSQL for the event store"),
    "DocumentOut.title": Term(
        "The document's title (its first heading, or its name).", "Deploying"
    ),
    "DocumentKnowledgeResult.title": Term(
        "The document's title (its first heading, or its name).", "Deploying"
    ),
    "MemoryCreate.title": Term("A short title; the content's first line when left out.", "Deploys"),
    "MemoryUpdate.title": Term("The new title; unchanged when left out.", "Deploys"),
    "content": Term("The text.", "Deploys go out on Tuesdays after the 10:00 review."),
    "DocumentKnowledgeResult.content": Term(
        "The passage's own text (null in a fetch without a query when not stored).",
        "Run `make release` from a clean checkout.",
    ),
    "Passage.content": Term("The passage's text.", "Run `make release` from a clean checkout."),
    "MemoryUpdate.content": Term("The new content; unchanged when left out.", "Deploys: Mondays."),
    "body": Term("The record's Markdown body.", "We chose PostgreSQL because …"),
    "summary": Term("The record's one-line summary.", "Event store on PostgreSQL 18."),
    "aliases": Term("Other names the record is found by in lookup.", ["event store db"]),
    "tags": Term("Key-value labels (keys ≤ 256 chars without ':'; values ≤ 256).", {"team": "ops"}),
    "CompleteHit.tags": Term("The record's tags.", ["storage"]),
    "InventoryRow.tags": Term("The record's tags.", ["storage"]),
    "RecordResult.tags": Term("The record's tags.", ["storage"]),
    "metadata": Term("What was read from the file (format-specific).", {"sheet": "Q3"}),
    "content_type": Term("The file's media type.", "application/pdf"),
    "size": Term("The file's size in bytes.", 48213),
    "page": Term("The page the passage is on (PDF), else null.", 14),
    "Evidence.page": Term("The page, as the record's front matter spells it.", 14),
    "line": Term("The line, as the record's front matter spells it.", 120),
    "quote": Term(
        "The quoted words, as the record's front matter spells it.", "we ship on Tuesdays"
    ),
    "source": Term(
        "An available record's id or a document id this evidence points to.", "doc_V1StGXR8Z5jdHi6B"
    ),
    "TimelineRow.source": Term('With group "source": the dated source this row stands for.', None),
    "page_count": Term("Pages in the file (PDF and images), else null.", 160),
    "chunk_count": Term("Passages the document was cut into.", 214),
    "warnings": Term(
        "What was skipped or guessed, one sentence each.", ["ocr: pages 3-4 read by OCR"]
    ),
    # Records
    "kind": Term("The record's kind: page, claim or relationship.", "claim"),
    "type": Term("The record's type (from the ontology).", "decision"),
    "ErrorBody.type": Term("The error's class.", "invalid_request_error"),
    "lifecycle": Term("The record's lifecycle state.", "active"),
    "frontMatter": Term(
        "The record's front matter as written (unknown keys kept).", {"type": "decision"}
    ),
    "evidence": Term("Where the record's claims come from, each a locator that verifies.", None),
    "evidenceTruncated": Term("true when more evidence exists than is shown here.", None),
    "assertionOrigin": Term("Who asserted the record (the front matter's origin).", "agent"),
    "attribution": Term("Who the record is attributed to, as written.", "ada"),
    "matches": Term("The fields the query matched.", ["title", "body"]),
    "snippet": Term("The matched text, with where it is.", None),
    "via": Term("Set when superseded wording matched: the record it led from.", None),
    "field": Term("The field the text or date comes from.", "body"),
    "text": Term("The snippet's text.", "… we chose PostgreSQL because …"),
    "start": Term("Where it starts.", 10),
    "end": Term("Where it ends.", 42),
    "Snippet.start": Term("The snippet's first character in the field.", 120),
    "Snippet.end": Term("The character after the snippet's last.", 260),
    "TermMatch.start": Term("The term's first character in the content.", 14),
    "TermMatch.end": Term("The character after the term.", 22),
    "DateValue.start": Term("The instant the date's span starts (UTC).", "2026-03-14T00:00:00Z"),
    "DateValue.end": Term(
        "The instant the date's span ends (UTC, exclusive).", "2026-03-15T00:00:00Z"
    ),
    "PassageList.start": Term("The first ordinal returned.", 10),
    "lineStart": Term("The snippet's first line in the file.", 12),
    "lineEnd": Term("The snippet's last line in the file.", 14),
    "matchLocated": Term("false when the match could not be placed in the text.", None),
    "hits": Term("The matching records, best first.", None),
    "replacement": Term(None, {"kind": "claim", "type": "decision", "title": "Use PostgreSQL 18"}),
    "reason": Term("Why (recorded in the history, 1-2000 characters).", "The vote was re-run."),
    "expectedRevision": Term("The revision you last read: a write over a newer one is a 409.", 3),
    "expectedHash": Term("The sha256 you last read: a write over other bytes is a 409.", _SHA),
    "requestId": Term("Your id for this write: retried, it is applied once.", "save-2026-03-14-01"),
    "operation": Term("What was done.", "save"),
    "at": Term("When (UTC).", _AT),
    "records": Term("The records.", None),
    "git": Term("The write's Git commit state.", None),
    "indexed": Term("true once the write is searchable.", None),
    "state": Term("The state.", "committed"),
    "commit": Term("The Git commit.", "4e1f0c9"),
    "error": Term("What went wrong, or null.", "disk full"),
    "completed": Term("Writes finished by this call.", ["save-2026-03-14-01"]),
    "gitPending": Term("Writes still waiting for their Git commit.", []),
    "receipt": Term("The receipt of the write that made this revision.", None),
    "revisions": Term("Every revision, oldest first.", None),
    # Paging, snapshots and freshness
    "limit": Term("At most this many results.", 20),
    "offset": Term("Skip this many (follow nextOffset).", 0),
    "nextOffset": Term("The offset of the next page, or null at the end.", 20),
    "next_cursor": Term("Pass as ?cursor= for the next page; null at the end.", "eyJvIjoyMH0"),
    "total": Term("How many there are in all.", 42),
    "snapshot": Term("The snapshot these pages read; pass it back with nextOffset.", "s1-000042"),
    "data": Term("This page's items.", None),
    "coverage": Term("Whether every file was read; the unreadable ones if not.", None),
    "complete": Term("true when every file was read.", None),
    "issues": Term("The files that could not be read, and why.", None),
    "message": Term("What is wrong, in a sentence.", "front matter is not YAML"),
    "ErrorBody.message": Term("What is wrong and how to fix it.", "limit must be at most 100"),
    "code": Term("A stable code to branch on.", "invalid_request"),
    "param": Term("The request field at fault, if any.", "limit"),
    "freshness": Term("When the store was last scanned and indexed.", None),
    "queriedAt": Term("When this answer was read (UTC).", _AT),
    "scannedAt": Term("When the store's files were last scanned (UTC).", _AT),
    "indexedAt": Term("When the index last caught up (UTC), or null.", _AT),
    "index": Term("The index this answer read.", None),
    "lag": Term("true when the index is behind the files.", None),
    "query": Term("The query.", "why postgres"),
    "mode": Term("How the query's tokens matched.", "all"),
    # Dates
    "asOf": Term("The past instant the answer was read at, when one was asked.", _AT),
    "date": Term("The date.", "2026-03-14"),
    "DateValue.value": Term("The date as written in the record.", "2026-03-14"),
    "value": Term("The value.", "2026-03-14"),
    "dateOnly": Term("true when the date has no time of day.", None),
    "local": Term("The date in the asked time zone.", "2026-03-14"),
    "since": Term("From this date or instant (inclusive).", "2026-03-01"),
    "until": Term("Up to this date or instant (exclusive).", "2026-04-01"),
    "from": Term("The range's first day.", "2026-03-09"),
    "to": Term("The range's last day.", "2026-03-15"),
    "timeZone": Term("The IANA time zone days are read in.", "Europe/Paris"),
    "entity": Term("An entity record's id.", "ent-ada"),
    "entities": Term("Entity record ids the row names.", ["ent-ada"]),
    "occurredOnOrBefore": Term("The last date considered.", "2026-03-31"),
    "lastSeen": Term("The latest dated row naming the entity, or null.", None),
    "rows": Term("The rows, in the asked order.", None),
    "budgetTruncated": Term("true when the page stopped at the response budget.", None),
    "sources": Term('With group "source": the dated sources, one each.', None),
    "sourcesTruncated": Term("true when more sources exist than are listed.", None),
    "noteRecord": Term("The note record the date was read from.", "mtg-2026-03-14"),
    "eventClaim": Term("The claim of the event, as written.", "Decided to use PostgreSQL"),
    "claims": Term("How many claims the source holds.", 3),
    "links": Term("Records this row links to.", ["dec-use-postgres"]),
    "eligibility": Term("Which records count: available ones, or withdrawn ones too.", None),
    "includeSources": Term('Also list the dated sources (group "source").', None),
    "group": Term('"source" with an entity: one row per dated source.', None),
    "order": Term("Oldest first (asc) or newest first (desc).", None),
    "timeField": Term("Which date a record is placed by.", None),
    "week": Term("true when the answer covers the week of the date.", None),
    # Search results
    "source_type": Term("document or memory.", None),
    "score": Term("The ranking score (higher is better; compare within one answer).", 0.8731),
    "CompleteHit.score": Term("The BM25 score (null without a query).", 7.42),
    "similarity_score": Term(None, 0.7214),
    "explain": Term(None, None),
    "vector_rank": Term("Its rank in the vector leg (1 = first), or null.", 2),
    "cosine": Term("Its cosine similarity to the query, or null.", 0.7214),
    "lexical_rank": Term("Its rank in the lexical leg (1 = first), or null.", 1),
    "bm25": Term("Its BM25 score in the lexical leg, or null.", 11.3),
    "fed_back_cosine": Term(
        "A document's cosine with the query moved toward the best documents, which the "
        "fusion weighs in place of its cosine; null for a memory.",
        0.6512,
    ),
    "fused": Term("The blended score of both legs.", 0.8731),
    "rerank": Term(None, None),
    "Explanation.rerank": Term("The cross-encoder's score, when reranked.", 4.21),
    "term": Term("The query term found.", "deploy"),
    "results": Term("The results, best first (documents and memories mixed).", None),
    "created_at": Term("When it was created (UTC).", _AT),
    "updated_at": Term("When it last changed (UTC).", _AT),
    "expires_at": Term("When it stops working (UTC), or null for never.", "2027-01-01T00:00:00Z"),
    "last_used_at": Term("When it was last used (UTC), or null.", _AT),
    "revoked_at": Term("When it was revoked (UTC), or null.", _AT),
    # Projects, members, tokens, audit
    "role": Term("The role: owner, editor or viewer.", "editor"),
    "scope": Term("What the token may do: read, write or admin.", None),
    "projects": Term(
        "The projects it is limited to; null for all of the user's.", ["proj_V1StGXR8Z5jdHi6B"]
    ),
    "token_name": Term("The token the call was made with, or null.", "ci-deploy"),
    "ids": Term("The ids of what was acted on.", {"document_id": "doc_V1StGXR8Z5jdHi6B"}),
    "status": Term("The state.", "ready"),
    "AuditEntryOut.status": Term("The HTTP status answered.", 201),
    "deleted": Term("true: it is gone.", None),
    "SourceRun.deleted": Term("Documents removed because their file was.", 1),
    "bytes": Term("Bytes stored.", 10485760),
    "chunks": Term("Passages stored.", 2140),
    "documents": Term("Documents stored.", 37),
    "memories": Term("Memories stored.", 120),
    "memory_stores": Term("Memories per store.", None),
    "quotas": Term("The project's limits (null: none).", {"chunks": 1000000}),
    "dimension": Term("The vector's length.", 384),
    "embedding_model": Term("The model passages are embedded with.", None),
    "ProjectOut.embedding_model": Term(None, "multilingual-e5-small"),
    "embedding_model_next": Term(
        "The model the project is moving to, its passages embedded again (null: none).",
        "multilingual-e5-small",
    ),
    "chunks_to_reembed": Term(
        "While it moves: passages still to embed again by the new model (null: no move).", 1200
    ),
    "chunks_done": Term("Passages embedded so far.", 120),
    "chunks_total": Term("Passages to embed.", 214),
    "prefix": Term("The folder listed.", "/handbook/"),
    # Sources
    "url": Term("Where the source is fetched from.", "https://github.com/acme/handbook.git"),
    "ref": Term("The branch, tag or commit (Git); null for the default branch.", "main"),
    "folder": Term("The repository folder (Git) or URL path prefix (web) to read.", "docs"),
    "include": Term("Gitignore-style patterns a file must match.", ["*.md"]),
    "exclude": Term("Gitignore-style patterns that leave a file out.", ["drafts/"]),
    "every_seconds": Term("Seconds between scheduled syncs, or null for on demand.", 3600),
    "last_run": Term("The latest sync's outcome, or null before the first.", None),
    "created": Term("Documents added.", 12),
    "updated": Term("Documents changed.", 3),
    "unchanged": Term("Files already up to date.", 40),
}

_ERROR = {
    "type": "invalid_request_error",
    "code": "pdf_limit_reached",
    "message": "reading the file needed more CPU time or memory than a document may use",
    "param": "file",
}
# Examples for fields described where they are defined (their definition says what they are).
EXAMPLES: dict[str, Any] = {
    "document_paths": ["/handbook/"],
    "document_ids": ["doc_V1StGXR8Z5jdHi6B"],
    "memory_store_ids": ["mstore_tYHpKIiutxJg5XZH"],
    "path_prefixes": ["/eng/", "/public/"],
    "min_similarity": 0.3,
    "SearchRequest.query": "how do we deploy on Fridays?",
    "GrepRequest.query": "postgres",
    "LookupRequest.query": "Use PostgreSQL for the event store",
    "record": {
        "kind": "claim",
        "type": "decision",
        "title": "Use PostgreSQL for the event store",
        "occurred_at": "2026-03-14",
        "entities": ["pg-ada"],
        "body": "Chosen at the architecture review.",
    },
    "expires_in": "30d",
    "every": "1h",
    "tag": "storage",
    "budget_bytes": 268435456,
    "mapped_bytes": 33554432,
    "memory_bytes": 8388608,
    "documents_here": 4,
    "FolderOut.chunks": 512,
    "FolderOut.documents": 9,
    "FolderOut.path": "/handbook/",
    "IndexOut.rows": 2140,
    "empty_pages": [7],
    "ocr_pages": [3, 4],
    "ocr_pending": [5],
    "ocr_skipped": [301, 302],
    "text_pages": 150,
    "pages_done": 2,
    "pages_total": 5,
    "token": "nat_live_9x8Yq…",
    "next_run_at": _AT,
    "files_read": 55,
    "skipped": ["assets/logo.png: not a supported format"],
    "failed": {"broken.pdf": "not a PDF"},
    "ingestion": {"queued": 2, "processing": 1},
    "truncated": "the run's budget of 2000 pages was reached",
    # Where a wire name means another thing in one model than the glossary's term says.
    "SaveRequest.id": "dec-use-postgres",
    "StoreCount.id": "mstore_tYHpKIiutxJg5XZH",
    "TimelineRequest.kind": "decision",
    "ChronicleDayRequest.kind": "decision",
    "ChronicleSinceRequest.kind": "decision",
    "SourceCreate.kind": "git",
    "SourceOut.kind": "git",
    "IndexState.state": "ready",
    "IngestJobOut.state": "running",
    "LookupResult.status": "found",
    "DateValue.field": "occurred_at",
    "TimelineRow.date": {
        "field": "occurred_at",
        "value": "2026-03-14",
        "dateOnly": True,
        "start": "2026-03-14T00:00:00Z",
        "end": "2026-03-15T00:00:00Z",
    },
    "TimelineRow.source": {
        "id": "mtg-2026-03-14",
        "title": "Architecture review",
        "type": "meeting",
    },
    "Explanation.matches": [{"start": 14, "end": 22, "term": "deploy"}],
    "ErrorResponse.error": _ERROR,
    "DocumentOut.error": _ERROR,
    "IngestJobOut.error": _ERROR,
}


def description(model: str, wire_name: str) -> str | None:
    for key in (f"{model}.{wire_name}", wire_name):
        found = TERMS.get(key)
        if found is not None and found.description is not None:
            return found.description
    return None


def example(model: str, wire_name: str) -> Any:
    for key in (f"{model}.{wire_name}", wire_name):
        found = TERMS.get(key)
        if found is not None and found.example is not None:
            return found.example
        if key in EXAMPLES:
            return EXAMPLES[key]
    return None


_BOUNDS = (
    ("minimum", "maximum", ""),
    ("minLength", "maxLength", " characters"),
    ("minItems", "maxItems", " items"),
)


def limits(schema: dict[str, Any]) -> str:
    """A field's limits, default and example as its JSON schema (one property) says them, for
    the help that is not a schema: the CLI's --help and the Python SDK's docstrings."""
    members = [schema, *(m for m in schema.get("anyOf", []) if m.get("type") != "null")]
    said = []
    for low, high, unit in _BOUNDS:
        least = next((m[low] for m in members if low in m), None)
        most = next((m[high] for m in members if high in m), None)
        if most is not None:
            said.append(f"{least if least is not None else 0}–{most}{unit}")
        elif least:
            said.append(f"at least {least}{unit}")
    if schema.get("default") is not None:
        said.append(f"default {json.dumps(schema['default'])}")
    if schema.get("examples"):
        said.append(f"e.g. {json.dumps(schema['examples'][0], ensure_ascii=False)}")
    return f"[{'; '.join(said)}]" if said else ""
