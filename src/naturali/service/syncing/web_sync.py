"""A web site's sync: a crawl from the start URL within its prefix (the URL up to its last
``/``), following links, or the pages a sitemap names (and the sitemaps an index names),
``robots.txt`` honoured and the run bounded by pages and bytes. A page is fetched with the
validators it was last answered with (``ETag``, ``Last-Modified``): a 304 costs headers only,
and a sitemap's unchanged ``lastmod`` costs no request at all; a page whose bytes are the same
is not read again. A page's canonical URL is its identity, so a page reached twice is one
document. Pages that answer 404 or 410 — or, after a crawl that reached every page, are no
longer linked — lose their document; a crawl cut short by its budget deletes nothing else.

A run stops at its deadline or its page budget, marked ``truncated``; it keeps the crawl's
queue and what it reached in the source's cursor, and the next run goes on from there (a
site larger than ``MAX_SITE_PAGES`` is mirrored up to that, and said so)."""

from __future__ import annotations

import hashlib
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from naturali.contracts.formats import FORMATS
from naturali.model import Source, utcnow
from naturali.ports.storage import Storage
from naturali.service.corpus.documents import Documents, Upload
from naturali.service.syncing.source_runs import Fetching, Run, existing, listed, provenance, put
from naturali.service.syncing.sources import made_by
from naturali.sources import mirror, web
from naturali.sources.addresses import Refused

MAX_BYTES = 512 * 1024 * 1024  # a run's bodies
MAX_SITEMAPS = 50
MAX_SITE_PAGES = 20_000  # pages one crawl reaches, over the runs it resumes in
MAX_QUEUED = 20_000  # links kept for the next run of a truncated crawl
_TYPES = {"text/html": ".html", "application/xhtml+xml": ".html", "application/pdf": ".pdf"}


@dataclass
class _Crawl:
    source: Source
    prefix: str
    chosen: mirror.Selection
    fetcher: web.Fetcher
    before: dict[str, tuple[str, str]]  # path → (document id, key)
    state: dict[str, dict[str, Any]]  # page URL → validators, key, links, lastmod, as last seen
    run: Run
    fetching: Fetching
    now: dict[str, dict[str, Any]] = field(default_factory=dict)
    kept: set[str] = field(default_factory=set)  # paths whose document stays
    gone: set[str] = field(default_factory=set)  # paths that answered 404 or 410
    visited: set[str] = field(default_factory=set)
    queue: deque[tuple[str, str | None]] = field(default_factory=deque)
    spent: int = 0
    requests: int = 0


def sync_web(
    source: Source, documents: Documents, storage: Storage, fetching: Fetching, run: Run
) -> None:
    fetcher = web.Fetcher(fetching.allow, fetching.max_bytes, page_seconds=fetching.page_seconds)
    state, resume = _saved(source.cursor)
    crawl = _Crawl(
        source,
        _prefix(source.url),
        mirror.Selection.of(source.include, source.exclude),
        fetcher,
        made_by(storage, source),
        state,
        run,
        fetching,
    )
    try:
        if resume:
            _resumed(crawl, resume)
        else:
            crawl.queue.extend(_starts(crawl))
        complete = _walk(crawl, documents, storage)
        _delete(crawl, storage, complete)
        crawl.run.cursor = json.dumps(_cursor(crawl, complete))
    except (Refused, httpx.HTTPError, ValueError) as exc:
        crawl.run.error = str(exc)[:300]
    finally:
        fetcher.close()


def _walk(crawl: _Crawl, documents: Documents, storage: Storage) -> bool:
    """Visit the pages; whether every page was reached (False: the run was truncated)."""
    while crawl.queue:
        url, lastmod = crawl.queue[0]
        if url in crawl.visited:
            crawl.queue.popleft()
            continue
        if _spent(crawl):
            return False
        crawl.queue.popleft()
        crawl.visited.add(url)
        for link in _visit(crawl, url, lastmod, documents, storage):
            if link not in crawl.visited:
                crawl.queue.append((link, None))
    return True


def _spent(crawl: _Crawl) -> bool:
    """Whether the run has spent what it may (then it says why in ``truncated``)."""
    fetching, run = crawl.fetching, crawl.run
    if crawl.requests >= fetching.run_pages:
        run.truncated = f"the run's budget of {fetching.run_pages} pages was reached"
    elif crawl.spent >= MAX_BYTES:
        run.truncated = f"the run's budget of {MAX_BYTES} bytes was reached"
    elif len(crawl.visited) >= MAX_SITE_PAGES:
        run.truncated = f"the site has more than {MAX_SITE_PAGES} pages: the rest are not read"
    return run.truncated is not None or run.out_of_time(fetching.run_seconds)


def _saved(cursor: str | None) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """A cursor's pages (each one's validators, key, links) and, after a truncated run, where
    its crawl stopped."""
    saved = json.loads(cursor or "{}")
    if not isinstance(saved.get("pages"), dict):
        return saved, None  # a cursor of the pages alone
    return saved["pages"], saved.get("resume")


def _resumed(crawl: _Crawl, resume: dict[str, Any]) -> None:
    crawl.visited = set(resume["visited"])
    crawl.kept = set(resume["kept"])
    crawl.now = {url: crawl.state[url] for url in crawl.visited if url in crawl.state}
    crawl.queue.extend((url, lastmod) for url, lastmod in resume["queue"])


def _cursor(crawl: _Crawl, complete: bool) -> dict[str, Any]:
    """What the next run starts from: the pages as last seen; after a truncated run, its
    crawl's queue and what it reached (a crawl too large for any run starts over)."""
    if complete or len(crawl.visited) >= MAX_SITE_PAGES:
        return {"pages": crawl.now}
    queued = list(dict.fromkeys(crawl.queue))[:MAX_QUEUED]
    resume = {"queue": queued, "visited": sorted(crawl.visited), "kept": sorted(crawl.kept)}
    return {"pages": {**crawl.state, **crawl.now}, "resume": resume}


def _starts(crawl: _Crawl) -> list[tuple[str, str | None]]:
    """The start URL, or the pages of the sitemap it is (and of the sitemaps it names)."""
    url = crawl.source.url
    if not urlsplit(url).path.endswith((".xml", ".xml.gz")):
        return [(url, None)]
    pages: list[tuple[str, str | None]] = []
    sitemaps = deque([url])
    for _ in range(MAX_SITEMAPS):
        if not sitemaps:
            break
        got = crawl.fetcher.get(sitemaps.popleft())
        crawl.requests += 1
        if got.status == 200:
            found, nested = web.sitemap(got.body)
            pages += found
            sitemaps.extend(nested)
    return pages


def _visit(
    crawl: _Crawl, url: str, lastmod: str | None, documents: Documents, storage: Storage
) -> list[str]:
    """Fetch one page (unless its sitemap entry says it has not changed) and mirror it; the
    links to follow from it."""
    inside = _inside(crawl, url)
    if not url.startswith(crawl.prefix) or "?" in url or not crawl.chosen.takes(inside, inside):
        return []  # outside the crawl, a query (a calendar's endless pages), left out
    old = crawl.state.get(url, {})
    path = _path(crawl, url)
    if lastmod is not None and old.get("lastmod") == lastmod and path in crawl.before:
        return _unchanged(crawl, url, path, old)
    crawl.run.beat()
    if not crawl.fetcher.allowed(url):
        listed(crawl.run.skipped, f"{url}: robots.txt")
        return []
    try:
        got = crawl.fetcher.get(url, old.get("etag"), old.get("last_modified"))
    except (Refused, httpx.HTTPError) as exc:  # this page (a loop, a refused hop), not the run
        crawl.run.failed.setdefault(url, str(exc)[:300])
        crawl.kept.add(path)
        return []
    crawl.requests += 1
    crawl.spent += len(got.body)
    if got.not_modified and old.get("canonical"):
        crawl.now[url] = old  # another URL of a page: its validators, and nothing to read
        return []
    if got.not_modified:
        return _unchanged(crawl, url, path, old)
    if got.status in (404, 410):
        crawl.gone.add(path)
        return []
    if got.status != 200:
        crawl.run.failed.setdefault(url, f"answered {got.status}")
        crawl.kept.add(path)
        return []
    return _fetched(crawl, url, lastmod, got, documents, storage)


def _fetched(
    crawl: _Crawl,
    url: str,
    lastmod: str | None,
    got: web.Fetched,
    documents: Documents,
    storage: Storage,
) -> list[str]:
    html = got.content_type in ("text/html", "application/xhtml+xml")
    found = web.links(got.body, got.url) if html else None
    identity = (
        found.canonical
        if found and found.canonical and found.canonical.startswith(crawl.prefix)
        else got.url
    )
    if identity != url:  # another URL of a page: remembered, so it is asked conditionally
        crawl.now[url] = {
            "etag": got.etag,
            "last_modified": got.last_modified,
            "canonical": identity,
        }
    if identity in crawl.now and identity != url or not identity.startswith(crawl.prefix):
        return []  # the same page under another URL
    path = _path(crawl, identity)
    links = [link for link in (found.found if found else []) if link.startswith(crawl.prefix)]
    key = hashlib.sha256(got.body).hexdigest()
    crawl.now[identity] = {
        "etag": got.etag, "last_modified": got.last_modified, "key": key, "links": links[:500],
        "lastmod": lastmod,
    }  # fmt: skip
    crawl.kept.add(path)
    suffix = _TYPES.get(got.content_type) or PurePosixPath(urlsplit(identity).path).suffix.lower()
    if suffix not in FORMATS:
        listed(crawl.run.skipped, f"{identity}: not a type naturali reads ({got.content_type})")
        return links
    if path in crawl.before and crawl.before[path][1] == key:
        crawl.run.unchanged += 1
        return links
    current = existing(storage, crawl.source, crawl.before, path)
    where = provenance(crawl.source, url=identity, fetched_at=utcnow(), key=key)
    put(
        crawl.source,
        crawl.run,
        documents,
        Upload(got.body, "page" + suffix, path, metadata=where),
        current,
    )
    return links


def _unchanged(crawl: _Crawl, url: str, path: str, old: dict[str, Any]) -> list[str]:
    crawl.now[url] = old
    crawl.kept.add(path)
    crawl.run.unchanged += 1
    return list(old.get("links", []))


def _delete(crawl: _Crawl, storage: Storage, complete: bool) -> None:
    """Documents of pages that are gone; after a complete crawl, of pages no longer reached."""
    for path, (document_id, _) in crawl.before.items():
        if path in crawl.gone or (complete and path not in crawl.kept):
            storage.delete_document(crawl.source.project_id, document_id)
            crawl.run.deleted += 1


def _prefix(url: str) -> str:
    """What a crawl stays within: the start URL up to its last ``/``."""
    split = urlsplit(url)
    folder = split.path.rsplit("/", 1)[0] + "/"
    return f"{split.scheme}://{split.netloc}{folder}"


def _inside(crawl: _Crawl, url: str) -> str:
    return unquote(urlsplit(url).path)[len(urlsplit(crawl.prefix).path) :]


def _path(crawl: _Crawl, url: str) -> str:
    """A page's logical path: the source's prefix, then the URL's path under the crawl's
    (a folder's page is its ``index.html``)."""
    inside = _inside(crawl, url)
    if not inside or inside.endswith("/"):
        inside += "index.html"
    return crawl.source.path + inside
