"""Results and citations: complete hits (HTTP API, Control UI) and list rows (agent tools)."""

from __future__ import annotations

from naturali.contracts.records import Citation, CompleteHit, Evidence, Snippet, Via
from naturali.retrieval.records.eligibility import AvailableRecord
from naturali.text import snippets

MAX_EVIDENCE = 3
SUMMARY_CHARS = 280


def citation(entry: AvailableRecord) -> Citation:
    return Citation(
        id=entry.id,
        path=entry.scanned.path,
        revision=entry.scanned.record.revision,
        sha256=entry.scanned.sha256,
    )


def summary(entry: AvailableRecord) -> str:
    given = entry.front.get("summary")
    if isinstance(given, str) and given.strip():
        return given.strip()
    for paragraph in entry.scanned.record.body.split("\n\n"):
        text = " ".join(paragraph.split()).lstrip("# ").strip()
        if text:
            return text[:SUMMARY_CHARS] + ("…" if len(text) > SUMMARY_CHARS else "")
    return entry.title


def evidence(entry: AvailableRecord, known: set[str]) -> list[Evidence]:
    """Evidence locators that verify: their ``source`` is an available record of this scope or
    a document id, and they say where (a quote, page, or line)."""
    out: list[Evidence] = []
    items = entry.front.get("evidence")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("source"), str):
            continue
        source = item["source"]
        if source in known or source.startswith("doc_"):
            out.append(
                Evidence(**{k: item[k] for k in ("source", "page", "line", "quote") if k in item})
            )
    return out


def snippet_for(
    entry: AvailableRecord,
    tokens: list[str] | None,
    fields: list[str] | None = None,
    phrase: bool = False,
) -> snippets.Snippet:
    """The snippet from where the match is: the first of body, title, aliases among the
    ``fields`` that matched (any field when not given). Replacement hits (``tokens`` None)
    and very large bodies get an opening excerpt of the body instead of a match location."""
    body = entry.scanned.record.body
    opening = snippets.make("body", body, None, entry.scanned.body_line)
    if tokens is None:
        return opening
    large = len(body.encode()) > snippets.LARGE_BODY
    for field in ("body", "title", "aliases"):
        if (fields is not None and field not in fields) or (field == "body" and large):
            continue
        text, at = _locate(entry, field, tokens, phrase)
        if at is not None:
            return snippets.make(field, text, at, entry.scanned.body_line if field == "body" else 0)
    return opening


def _locate(
    entry: AvailableRecord, field: str, tokens: list[str], phrase: bool
) -> tuple[str, int | None]:
    """A field's text and where the query first occurs in it. Aliases are shown joined by
    `` | `` but searched one by one, so a phrase never spans two of them."""
    find = snippets.find_phrase if phrase else snippets.find
    if field == "body":
        return entry.scanned.record.body, find(entry.scanned.record.body, tokens)
    if field == "title":
        return entry.title, find(entry.title, tokens)
    separator = " | "
    offset, found = 0, []
    for alias in entry.aliases:
        at = find(alias, tokens)
        if at is not None:
            found.append(offset + at)
        offset += len(alias) + len(separator)
    return separator.join(entry.aliases), min(found, default=None)


def complete_hit(
    entry: AvailableRecord,
    score: float | None,
    matches: list[str],
    tokens: list[str] | None,
    known: set[str],
    via: AvailableRecord | None = None,
    phrase: bool = False,
) -> CompleteHit:
    """A hit with everything needed to show, verify and cite it; ``via`` is the superseded
    record whose wording matched (the snippet is then the opening of the current body)."""
    located = evidence(entry, known)
    front = entry.front
    hit = CompleteHit(
        id=entry.id,
        kind=entry.kind,
        type=entry.type,
        title=entry.title,
        aliases=entry.aliases,
        tags=entry.tags,
        summary=summary(entry),
        lifecycle=entry.lifecycle,
        matches=matches,
        score=score,
        attribution=front.get("attribution") or front.get("recorded_by"),
        assertion_origin=front.get("assertion_origin") or front.get("origin"),
        path=entry.scanned.path,
        revision=entry.scanned.record.revision,
        sha256=entry.scanned.sha256,
        snippet=_snippet(
            snippet_for(entry, None if via is not None else tokens, matches or None, phrase)
        ),
        evidence=located[:MAX_EVIDENCE],
        evidence_truncated=len(located) > MAX_EVIDENCE,
        citation=citation(entry),
    )
    if via is not None:
        hit.via = Via(
            id=via.id,
            revision=via.scanned.record.revision,
            title=via.title,
            path=via.scanned.path,
            sha256=via.scanned.sha256,
        )
    return hit


def _snippet(found: snippets.Snippet) -> Snippet:
    located = Snippet(
        field=found.field,
        text=found.text,
        start=found.start,
        end=found.end,
        match_located=found.match_located,
    )
    if found.line_start is not None:
        located.line_start, located.line_end = found.line_start, found.line_end
    return located
