"""A web site as a source: pages fetched over HTTP(S) under the network rules (every
connection — redirects included — is made to an address ``addresses.resolve`` cleared, the
name resolved once, at connect), ``robots.txt`` honoured, one request at a time a host at a
bounded rate, each body bounded, each page bounded in time as a whole (connect, headers and
every read of the body, redirects included: a server that sends a byte every few seconds is
cut at the deadline), redirects followed by hand (at most five: a loop is refused), and a
page's links, canonical URL and a sitemap's URLs read with the standard
library's tokenisers — the page's own text is read by naturali's HTML reader in the
isolated ingest worker, as any upload."""

from __future__ import annotations

import ssl
import time
import urllib.robotparser
import xml.etree.ElementTree as ElementTree
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import httpcore
import httpx

from naturali.sources.addresses import Allowlist, Refused, resolve

AGENT = "naturali"
MAX_REDIRECTS = 5
MAX_SITEMAP_BYTES = 10 * 1024 * 1024
TIMEOUT = httpx.Timeout(30.0, connect=10.0)


@dataclass(frozen=True)
class Fetched:
    """A page as fetched: where it ended (after redirects), its status, and its body with
    the validators a later fetch sends back (``not_modified``: a 304, no body)."""

    url: str
    status: int
    body: bytes = b""
    content_type: str = ""
    etag: str | None = None
    last_modified: str | None = None

    @property
    def not_modified(self) -> bool:
        return self.status == 304


class _Bounded(httpcore.NetworkStream):
    """A connection whose every wait ends by the page's deadline (``deadline()``, a
    ``time.monotonic()``)."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: Callable[[], float]) -> None:
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._left(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(ssl_context, server_hostname, self._left(timeout))
        return _Bounded(tls, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)

    def _left(self, timeout: float | None) -> float:
        return _within(self._deadline(), timeout, httpcore.ReadTimeout)


def _within(deadline: float, timeout: float | None, late: type[Exception]) -> float:
    """The wait a step may take: its own ``timeout``, cut to what is left of the page's
    ``deadline``; ``late`` raised once none is left."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise late("the page took longer than its deadline")
    return left if timeout is None else min(timeout, left)


class _Cleared(httpcore.SyncBackend):
    """Connects only to an address the rules clear, resolving the name itself (TLS then
    verifies the name, as it would have), each connection bounded by the page's deadline."""

    def __init__(self, allow: Allowlist, deadline: Callable[[], float]) -> None:
        self._allow = allow
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        address = str(resolve(host, port, self._allow))
        timeout = _within(self._deadline(), timeout, httpcore.ConnectTimeout)
        stream = super().connect_tcp(address, port, timeout, local_address, socket_options)
        return _Bounded(stream, self._deadline)


class Fetcher:
    def __init__(
        self,
        allow: Allowlist,
        max_bytes: int,
        seconds_between: float = 0.2,
        page_seconds: float = 60.0,
    ) -> None:
        transport = httpx.HTTPTransport(trust_env=False)
        # httpx builds its pool without a way to name a network backend: this is that pool
        # with one, so that every connection goes through the rules and the page's deadline.
        backend = _Cleared(allow, lambda: self._deadline)
        transport._pool = httpcore.ConnectionPool(  # noqa: SLF001
            ssl_context=httpx.create_ssl_context(), network_backend=backend
        )
        self._page_seconds = page_seconds
        self._deadline = float("inf")
        self._http = httpx.Client(
            transport=transport, timeout=TIMEOUT, headers={"User-Agent": AGENT}
        )
        self._max = max_bytes
        self._between = seconds_between
        self._last: dict[str, float] = {}  # host → when it was last asked
        self._robots: dict[str, urllib.robotparser.RobotFileParser] = {}

    def close(self) -> None:
        self._http.close()

    def allowed(self, url: str) -> bool:
        """Whether the host's ``robots.txt`` lets naturali fetch ``url`` (no file: yes)."""
        split = urlsplit(url)
        origin = f"{split.scheme}://{split.netloc}"
        if origin not in self._robots:
            robots = urllib.robotparser.RobotFileParser()
            got = self.get(origin + "/robots.txt")
            lines = got.body.decode("utf-8", "replace").splitlines()
            robots.parse(lines if got.status == 200 else [])  # none: every page may be read
            self._robots[origin] = robots
        return self._robots[origin].can_fetch(AGENT, url)

    def get(self, url: str, etag: str | None = None, last_modified: str | None = None) -> Fetched:
        """The page, following redirects (each hop checked); a conditional request when
        validators are given. Refused for an address the rules refuse or a redirect loop."""
        headers = {
            k: v for k, v in (("If-None-Match", etag), ("If-Modified-Since", last_modified)) if v
        }
        self._deadline = time.monotonic() + self._page_seconds
        try:
            return self._follow(url, headers)
        except httpx.TimeoutException as exc:
            if time.monotonic() < self._deadline:
                raise
            raise Refused(f"{url}: took more than {self._page_seconds:g} s") from exc
        finally:
            self._deadline = float("inf")

    def _follow(self, url: str, headers: dict[str, str]) -> Fetched:
        for _ in range(MAX_REDIRECTS + 1):
            if urlsplit(url).scheme not in ("http", "https"):
                raise Refused(f"{url}: only http and https pages are fetched")
            self._pace(urlsplit(url).netloc)
            with self._http.stream("GET", url, headers=headers) as response:
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                body = b"" if response.status_code == 304 else self._read(response)
                return Fetched(
                    str(response.url),
                    response.status_code,
                    body,
                    response.headers.get("content-type", "").split(";")[0].strip().lower(),
                    response.headers.get("etag"),
                    response.headers.get("last-modified"),
                )
        raise Refused(f"{url}: more than {MAX_REDIRECTS} redirects (a loop?)")

    def _read(self, response: httpx.Response) -> bytes:
        parts, size = [], 0
        for part in response.iter_bytes():
            size += len(part)
            if size > self._max:
                raise Refused(f"{response.url}: larger than {self._max} bytes")
            parts.append(part)
        return b"".join(parts)

    def _pace(self, host: str) -> None:
        wait = self._last.get(host, 0.0) + self._between - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last[host] = time.monotonic()


@dataclass
class Links(HTMLParser):
    """A page's links (absolute, without fragments) and its canonical URL."""

    base: str
    found: list[str] = field(default_factory=list)
    canonical: str | None = None

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = dict(attrs)
        if tag == "base" and given.get("href"):
            self.base = urljoin(self.base, given["href"] or "")
        elif (
            tag == "link" and (given.get("rel") or "").lower() == "canonical" and given.get("href")
        ):
            self.canonical = urldefrag(urljoin(self.base, given["href"] or ""))[0]
        elif tag == "a" and given.get("href"):
            self.found.append(urldefrag(urljoin(self.base, given["href"] or ""))[0])


def links(page: bytes, url: str) -> Links:
    parsed = Links(url)
    parsed.feed(page.decode("utf-8", "replace"))
    parsed.close()
    return parsed


def sitemap(body: bytes) -> tuple[list[tuple[str, str | None]], list[str]]:
    """A sitemap's pages, each with its ``lastmod``, and the sitemaps an index names.
    A DTD is refused: a sitemap declares no entities."""
    if body[:2] == b"\x1f\x8b":  # inflated at most to the bound: a gzip bomb stops there
        inflating = zlib.decompressobj(16 + zlib.MAX_WBITS)
        body = inflating.decompress(body, MAX_SITEMAP_BYTES)
        if inflating.unconsumed_tail:
            raise Refused(f"a sitemap inflates past {MAX_SITEMAP_BYTES} bytes")
    elif len(body) > MAX_SITEMAP_BYTES:
        raise Refused(f"a sitemap is larger than {MAX_SITEMAP_BYTES} bytes")
    if b"<!DOCTYPE" in body or b"<!ENTITY" in body:
        raise Refused("a sitemap declaring a DTD or entities is not read")
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as exc:
        raise Refused(f"the sitemap is not XML: {exc}") from exc
    pages, nested = [], []
    for entry in root:
        loc = next((c.text for c in entry if c.tag.endswith("loc")), None)
        lastmod = next((c.text for c in entry if c.tag.endswith("lastmod")), None)
        if not loc:
            continue
        (
            nested.append(loc.strip())
            if entry.tag.endswith("sitemap")
            else pages.append((loc.strip(), lastmod))
        )
    return pages, nested
