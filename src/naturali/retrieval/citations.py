"""Results and citations: complete hits (HTTP API, Control UI) and list rows (agent tools)."""

from __future__ import annotations

from typing import Any

from naturali.retrieval.eligibility import Entry
from naturali.text import snippets

MAX_EVIDENCE = 3
SUMMARY_CHARS = 280


def citation(entry: Entry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "path": entry.scanned.path,
        "revision": entry.scanned.record.revision,
        "sha256": entry.scanned.sha256,
    }


def summary(entry: Entry) -> str:
    given = entry.front.get("summary")
    if isinstance(given, str) and given.strip():
        return given.strip()
    for paragraph in entry.scanned.record.body.split("\n\n"):
        text = " ".join(paragraph.split()).lstrip("# ").strip()
        if text:
            return text[:SUMMARY_CHARS] + ("…" if len(text) > SUMMARY_CHARS else "")
    return entry.title


def evidence(entry: Entry, known: set[str]) -> list[dict[str, Any]]:
    """Evidence locators that verify: their ``source`` is an available record of this scope or
    a document id, and they say where (a quote, page, or line)."""
    out: list[dict[str, Any]] = []
    items = entry.front.get("evidence")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("source"), str):
            continue
        source = item["source"]
        if source in known or source.startswith("doc_"):
            out.append({k: item[k] for k in ("source", "page", "line", "quote") if k in item})
    return out


def snippet_for(entry: Entry, tokens: list[str] | None) -> snippets.Snippet:
    record = entry.scanned.record
    body = record.body
    if tokens is None or len(body.encode()) > snippets.LARGE_BODY:
        # Replacement hits and very large bodies get an opening excerpt, not a match location.
        if tokens is not None:
            for field, text in (("title", entry.title), ("aliases", " | ".join(entry.aliases))):
                at = snippets.find(text, tokens)
                if at is not None:
                    return snippets.make(field, text, at)
        return snippets.make("body", body, None, entry.scanned.body_line)
    for field, text in (
        ("body", body),
        ("title", entry.title),
        ("aliases", " | ".join(entry.aliases)),
    ):
        at = snippets.find(text, tokens)
        if at is not None:
            return snippets.make(field, text, at, entry.scanned.body_line if field == "body" else 0)
    return snippets.make("body", body, None, entry.scanned.body_line)


def complete_hit(
    entry: Entry,
    score: float | None,
    matches: list[str],
    tokens: list[str] | None,
    known: set[str],
    via: Entry | None = None,
) -> dict[str, Any]:
    located = evidence(entry, known)
    front = entry.front
    hit: dict[str, Any] = {
        "id": entry.id,
        "kind": entry.kind,
        "type": entry.type,
        "title": entry.title,
        "aliases": entry.aliases,
        "tags": entry.tags,
        "summary": summary(entry),
        "lifecycle": entry.lifecycle,
        "matches": matches,
        "score": score,
        "attribution": front.get("attribution") or front.get("recorded_by"),
        "assertionOrigin": front.get("assertion_origin") or front.get("origin"),
        "path": entry.scanned.path,
        "revision": entry.scanned.record.revision,
        "sha256": entry.scanned.sha256,
        "snippet": snippet_for(entry, None if via is not None else tokens).to_dict(),
        "evidence": located[:MAX_EVIDENCE],
        "evidenceTruncated": len(located) > MAX_EVIDENCE,
        "citation": citation(entry),
    }
    if via is not None:
        hit["via"] = {
            "id": via.id,
            "revision": via.scanned.record.revision,
            "title": via.title,
            "path": via.scanned.path,
            "sha256": via.scanned.sha256,
        }
    return hit


def list_row(hit: dict[str, Any]) -> dict[str, Any]:
    """The short row agent tools receive."""
    row = {k: hit[k] for k in ("id", "kind", "type", "title", "path", "score")}
    row["snippet"] = hit["snippet"]["text"][:200]
    if "via" in hit:
        row["via"] = {"id": hit["via"]["id"], "revision": hit["via"]["revision"]}
    return row
