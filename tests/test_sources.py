"""Git repositories as sources, synced by the server against real repositories: a local one
(under a folder ``sources_local_roots`` names) and one served by ``git daemon`` on loopback.
After each sync the source's documents equal the repository's files under its folder — added,
changed, renamed and deleted between syncs — a sync with nothing new reads no file, and
nothing the source did not make is touched. Addresses the operator did not open are refused."""

from __future__ import annotations

import functools
import http.server
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, assert_error, make_api
from naturali.embed.onnx import OnnxEmbedder

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "HOME": "/tmp",
}


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.root), *args], env=ENV, capture_output=True, check=True
        )
        return done.stdout.decode()

    def write(self, path: str, content: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()


@pytest.fixture
def api(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    yield from make_api(
        tmp_path, embedder, backend, sources_allow="127.0.0.1", sources_local_roots=str(tmp_path)
    )


def _synced(api: Api, project: str, source_id: str, after: str | None = None) -> dict[str, Any]:
    """The source once a sync that ended after ``after`` is recorded."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        source = api.get(f"/v1/projects/{project}/sources/{source_id}").json()
        run = source["last_run"]
        if (
            run is not None
            and (after is None or run["at"] > after)
            and not source["sync_requested"]
        ):
            return dict(source)
        time.sleep(0.1)
    raise AssertionError("the source did not sync")


def _documents(api: Api, project: str) -> dict[str, dict[str, Any]]:
    listed = api.get(f"/v1/projects/{project}/documents?limit=100").json()["data"]
    return {d["path"]: d for d in listed}


def _sync(api: Api, project: str, source: dict[str, Any]) -> dict[str, Any]:
    r = api.post(f"/v1/projects/{project}/sources/{source['id']}/sync")
    assert r.status_code == 202, r.text
    return _synced(api, project, source["id"], source["last_run"]["at"])


def test_a_repository_is_mirrored_then_kept_in_step(api: Api, tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("README.md", "# Outside the folder")
    repo.write("docs/refunds.md", "# Refunds\n\nRefunds take five days.")
    repo.write("docs/escalation.md", "# Escalation\n\nThe duty manager answers in an hour.")
    repo.write("docs/logo.bin", b"\x00\x01binary")
    repo.write("docs/drafts/wip.md", "# Draft")
    repo.write("docs/.hidden/x.md", "# Hidden")
    repo.write(".gitignore", "docs/build/\n")
    repo.write("docs/build/out.md", "# Built")
    repo.git("add", "-f", "docs/build/out.md")
    first = repo.commit("first")
    project = api.project()
    api.doc(project, "/kb/manual.md", "Written by hand under the prefix.")
    api.doc(project, "/elsewhere.md", "Outside the prefix.")
    body = {"kind": "git", "url": str(repo.root), "folder": "docs", "path": "/kb/"}
    r = api.post(f"/v1/projects/{project}/sources", json={**body, "exclude": ["drafts/"]})
    assert r.status_code == 201, r.text
    api.post(f"/v1/projects/{project}/sources/{r.json()['id']}/sync")
    source = _synced(api, project, r.json()["id"])
    run = source["last_run"]
    assert run["commit"] == first and run["error"] is None
    assert (run["created"], run["updated"], run["deleted"], run["files_read"]) == (2, 0, 0, 2)
    assert any(s.startswith("docs/logo.bin: not a type") for s in run["skipped"])
    documents = _documents(api, project)
    assert set(documents) == {
        "/kb/manual.md",
        "/elsewhere.md",
        "/kb/refunds.md",
        "/kb/escalation.md",
    }
    provenance = documents["/kb/refunds.md"]["metadata"]["source"]
    assert provenance["path"] == "docs/refunds.md" and provenance["commit"] == first

    repo.write("docs/refunds.md", "# Refunds\n\nRefunds take ten days now.")
    repo.git("mv", "docs/escalation.md", "docs/duty.md")
    repo.write("docs/holidays.md", "# Holidays\n\nThe office closes in August.")
    second = repo.commit("second")
    source = _sync(api, project, source)
    run = source["last_run"]
    assert run["commit"] == second
    assert (run["created"], run["updated"], run["deleted"], run["files_read"]) == (2, 1, 1, 3)
    documents = _documents(api, project)
    assert set(documents) == {
        "/kb/manual.md", "/elsewhere.md", "/kb/refunds.md", "/kb/duty.md", "/kb/holidays.md"
    }  # fmt: skip
    assert documents["/kb/refunds.md"]["version"] == 2
    hit = api.search(project, query="when does the office close", limit=1).json()["results"][0]
    assert hit["path"] == "/kb/holidays.md"

    source = _sync(api, project, source)  # nothing new: nothing read
    run = source["last_run"]
    assert (run["created"], run["updated"], run["deleted"], run["files_read"]) == (0, 0, 0, 0)
    assert run["unchanged"] == 3

    r = api.delete(f"/v1/projects/{project}/sources/{source['id']}")
    assert r.status_code == 200, r.text
    assert set(_documents(api, project)) == {"/kb/manual.md", "/elsewhere.md"}
    audited = [e["operation"] for e in api.get(f"/v1/projects/{project}/audit").json()["data"]]
    base = "/v1/projects/{project_id}/sources"
    assert {
        f"POST {base}",
        f"POST {base}/{{source_id}}/sync",
        f"DELETE {base}/{{source_id}}",
    } <= set(audited)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Repo, str]]:
    """A repository served by ``git daemon`` on loopback."""
    repo = Repo(tmp_path / "served" / "handbook")
    repo.write("guide.md", "# Guide\n\nOtters hold hands while they sleep.")
    repo.commit("first")
    port = _free_port()
    process = subprocess.Popen(
        ["git", "daemon", "--export-all", "--reuseaddr", f"--base-path={tmp_path / 'served'}",
         "--listen=127.0.0.1", f"--port={port}", str(tmp_path / "served")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # `git daemon` runs `git-daemon` as its child: stop both
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    yield repo, f"git://127.0.0.1:{port}/handbook"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def test_a_repository_served_by_git_daemon_is_synced_on_its_schedule(
    api: Api, daemon: tuple[Repo, str]
) -> None:
    repo, url = daemon
    project = api.project()
    r = api.post(
        f"/v1/projects/{project}/sources",
        json={"kind": "git", "url": url, "path": "/handbook/", "every": "1h"},
    )
    assert r.status_code == 201, r.text
    assert r.json()["every_seconds"] == 3600
    source = _synced(api, project, r.json()["id"])  # a scheduled source syncs at once
    assert source["last_run"]["created"] == 1 and source["next_run_at"] is not None
    hit = api.search(project, query="how do otters sleep", limit=1).json()["results"][0]
    assert hit["path"] == "/handbook/guide.md"

    repo.write("faq.md", "# FAQ\n\nSea otters use rocks as tools.")  # over the wire too:
    repo.write("guide.md", "# Guide\n\nOtters float on their backs to sleep.")  # change,
    repo.write("old.md", "# Old\n\nTo be removed.")
    repo.commit("second")
    source = _sync(api, project, source)
    repo.git("mv", "faq.md", "questions.md")  # rename,
    repo.git("rm", "-q", "old.md")  # and delete between syncs
    repo.commit("third")
    source = _sync(api, project, source)
    run = source["last_run"]
    assert (run["created"], run["updated"], run["deleted"], run["files_read"]) == (1, 0, 2, 1)
    assert set(_documents(api, project)) == {"/handbook/guide.md", "/handbook/questions.md"}
    assert _documents(api, project)["/handbook/guide.md"]["version"] == 2


@pytest.mark.parametrize(
    "url",
    [
        "git://127.0.0.1/x",  # loopback
        "https://localhost/x.git",  # a name resolving to loopback
        "http://169.254.169.254/latest/meta-data",  # the cloud metadata service
        "https://10.1.2.3/x.git",  # private
        "file:///etc",  # a local path
        "/srv/repos/x.git",
        "ext::sh%20-c%20touch%20/tmp/pwned",  # a transport that runs a command
        "https://ci:ghp_secret@github.com/x.git",  # a credential the API would show
    ],
)
def test_addresses_the_operator_did_not_open_are_refused(
    tmp_path: Path, embedder: OnnxEmbedder, url: str
) -> None:
    for api in make_api(tmp_path, embedder):  # sources_allow unset
        project = api.project()
        r = api.post(f"/v1/projects/{project}/sources", json={"kind": "git", "url": url})
        assert_error(r, 400, "source_refused")


class _Site:
    """A documentation site on loopback: pages with links, a canonical duplicate, a redirect
    loop, robots.txt, a sitemap, Last-Modified answered with 304 (the standard library's
    handler does that), and a log of what was asked."""

    def __init__(self, root: Path) -> None:
        self.root, self.asked = root, []
        site = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                site.asked.append((self.path, self.headers.get("If-Modified-Since")))
                if self.path == "/docs/metadata":  # a redirect to the cloud metadata service
                    self.send_response(302)
                    self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                    self.end_headers()
                    return
                if self.path.startswith("/docs/loop"):
                    self.send_response(302)
                    self.send_header(
                        "Location",
                        "/docs/loop-again" if self.path == "/docs/loop" else "/docs/loop",
                    )
                    self.end_headers()
                    return
                super().do_GET()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
        )
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def write(self, path: str, text: str) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        stamp = time.time() + len(self.asked)  # a newer Last-Modified than the page had
        os.utime(target, (stamp, stamp))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _page(title: str, body: str, links: str = "", head: str = "") -> str:
    return (
        f"<html><head><title>{title}</title>{head}</head><body><nav>Menu</nav>"
        f"<main><h1>{title}</h1><p>{body}</p>{links}</main></body></html>"
    )


def test_a_documentation_site_is_crawled_then_kept_in_step(api: Api, tmp_path: Path) -> None:
    site = _Site(tmp_path / "site")
    site.write("robots.txt", "User-agent: *\nDisallow: /docs/private/\n")
    site.write(
        "docs/index.html",
        _page(
            "Manual",
            "Start here.",
            '<a href="install.html">Install</a> <a href="faq.html#top">FAQ</a> '
            '<a href="faq-copy.html">FAQ again</a> <a href="private/keys.html">Keys</a> '
            '<a href="loop">Loop</a> <a href="/elsewhere.html">Out</a> <a href="old.html">Old</a> '
            '<a href="metadata">Metadata</a>',
        ),
    )
    site.write("docs/install.html", _page("Install", "Run the installer with sudo."))
    site.write("docs/faq.html", _page("FAQ", "Backups run nightly at two."))
    canonical = f'<link rel="canonical" href="{site.url}/docs/faq.html">'
    site.write("docs/faq-copy.html", _page("FAQ", "Backups run nightly at two.", head=canonical))
    site.write("docs/private/keys.html", _page("Keys", "Secret."))
    site.write("docs/old.html", _page("Old", "Deprecated flags."))
    site.write("elsewhere.html", _page("Out", "Not under the start page's folder."))
    try:
        project = api.project()
        body = {"kind": "web", "url": f"{site.url}/docs/index.html", "path": "/manual/"}
        r = api.post(f"/v1/projects/{project}/sources", json=body)
        assert r.status_code == 201, r.text
        api.post(f"/v1/projects/{project}/sources/{r.json()['id']}/sync")
        source = _synced(api, project, r.json()["id"])
        run = source["last_run"]
        assert run["error"] is None, run
        assert set(_documents(api, project)) == {
            "/manual/index.html", "/manual/install.html", "/manual/faq.html", "/manual/old.html"
        }  # fmt: skip
        assert any("robots.txt" in s for s in run["skipped"])
        assert any("loop" in url for url in run["failed"]), run["failed"]
        refused = run["failed"][f"{site.url}/docs/metadata"]
        assert "169.254.169.254" in refused and "sources_allow" in refused
        hit = api.search(project, query="when do backups run", limit=1).json()["results"][0]
        assert hit["path"] == "/manual/faq.html"

        site.asked.clear()
        source = _sync(api, project, source)  # nothing changed: headers only
        run = source["last_run"]
        assert (run["created"], run["updated"], run["deleted"], run["files_read"]) == (0, 0, 0, 0)
        pages = [(p, since) for p, since in site.asked if p.endswith(".html")]
        assert pages and all(since is not None for _, since in pages)  # conditional requests

        site.write("docs/install.html", _page("Install", "Run the installer without sudo now."))
        (site.root / "docs" / "old.html").unlink()
        source = _sync(api, project, source)
        run = source["last_run"]
        assert (run["updated"], run["deleted"]) == (1, 1), run
        assert "/manual/old.html" not in _documents(api, project)
        hit = api.search(project, query="installer sudo", limit=1).json()["results"][0]
        assert hit["path"] == "/manual/install.html" and "without sudo" in hit["content"]
    finally:
        site.close()


def test_a_sitemaps_pages_are_read_and_an_unchanged_lastmod_costs_no_request(
    api: Api, tmp_path: Path
) -> None:
    site = _Site(tmp_path / "site")
    site.write("docs/a.html", _page("Alpha", "Alpacas graze on the high plateau."))
    site.write("docs/b.html", _page("Beta", "Beavers build dams in autumn."))
    entries = "".join(
        f"<url><loc>{site.url}/docs/{name}.html</loc><lastmod>2026-01-0{n}</lastmod></url>"
        for n, name in enumerate("ab", start=1)
    )
    site.write(
        "docs/sitemap.xml",
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{entries}</urlset>",
    )
    try:
        project = api.project()
        body = {"kind": "web", "url": f"{site.url}/docs/sitemap.xml", "path": "/zoo/"}
        made = api.post(f"/v1/projects/{project}/sources", json=body).json()
        api.post(f"/v1/projects/{project}/sources/{made['id']}/sync")
        source = _synced(api, project, made["id"])
        assert source["last_run"]["created"] == 2, source["last_run"]
        assert set(_documents(api, project)) == {"/zoo/a.html", "/zoo/b.html"}
        site.asked.clear()
        source = _sync(api, project, source)
        assert source["last_run"]["unchanged"] == 2 and source["last_run"]["files_read"] == 0
        assert [path for path, _ in site.asked] == ["/docs/sitemap.xml"]  # no page asked
    finally:
        site.close()


def test_a_sync_is_held_by_one_worker_and_stops_when_its_lease_is_taken(api: Api) -> None:
    from naturali.model import Source
    from naturali.service.syncing.source_runs import LeaseLost, Run

    storage = api.naturali.storage
    project = api.project()
    now = "2026-01-01T00:00:00Z"
    source = Source(
        "src_lease", project, "git", "https://example.com/r.git", None, "", "/r/", [], [], None,
        now, now,
    )  # fmt: skip
    storage.create_source(source)
    storage.request_source_sync(project, source.id, time.time())
    held = storage.claim_source("worker_a", 60, time.time())
    assert held is not None and held.id == source.id
    assert storage.claim_source("worker_b", 60, time.time()) is None  # held: not taken twice
    assert storage.renew_source(source.id, "worker_a", 60)
    assert not storage.renew_source(source.id, "worker_b", 60)
    later = time.time() + 120  # a died: its lease ran out, and the sync is taken again
    resumed = storage.claim_source("worker_b", 60, later)
    assert resumed is not None and resumed.id == source.id
    run = Run(holding=lambda: storage.renew_source(source.id, "worker_a", 60))
    with pytest.raises(LeaseLost):
        run.beat()
    assert not storage.finish_source(source.id, "worker_a", {"at": now}, None, None, later)
    assert storage.finish_source(source.id, "worker_b", {"at": now}, None, None, later)
    done = storage.get_source(project, source.id)
    assert done is not None and done.last_run == {"at": now} and done.requested_at is None


def test_a_sitemap_bomb_or_a_broken_sitemap_is_refused_within_its_bound() -> None:
    import gzip

    from naturali.sources import web
    from naturali.sources.addresses import Refused

    bomb = gzip.compress(b"<urlset>" + b" " * 200_000_000 + b"</urlset>")  # 200 KB → 200 MB
    for body in (bomb, b"<urlset><url><loc>", b'<!DOCTYPE x [<!ENTITY a "b">]><urlset/>'):
        with pytest.raises(Refused):
            web.sitemap(body)
    fine = gzip.compress(
        b"<urlset><url><loc>https://x.test/a</loc><lastmod>1</lastmod></url></urlset>"
    )
    assert web.sitemap(fine) == ([("https://x.test/a", "1")], [])


SQLITE_DOCS = Path("/usr/share/doc/sqlite3")  # Debian's sqlite3-doc: a real docs site


def test_a_real_documentation_site_is_crawled_and_answers_from_its_pages(
    api: Api, tmp_path: Path
) -> None:
    """SQLite's own documentation (public domain), served as it ships: a crawl from its index
    through its real links, the pages read by naturali's HTML reader."""
    if not (SQLITE_DOCS / "index.html").exists():
        pytest.fail("this test crawls Debian's sqlite3-doc: apt-get install -y sqlite3-doc")
    handler = functools.partial(_QuietFiles, directory=str(SQLITE_DOCS))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        project = api.project()
        pages = ["index.html", "about.html", "whentouse.html", "quickstart.html"]
        body = {
            "kind": "web",
            "url": f"http://127.0.0.1:{server.server_address[1]}/index.html",
            "path": "/sqlite/",
            "include": pages,  # four of its 766 pages, reached by its own links
        }
        made = api.post(f"/v1/projects/{project}/sources", json=body).json()
        api.post(f"/v1/projects/{project}/sources/{made['id']}/sync")
        source = _synced(api, project, made["id"])
        assert source["last_run"]["error"] is None, source["last_run"]
        crawled = _documents(api, project)
        assert set(crawled) == {f"/sqlite/{page}" for page in pages}
        for document in crawled.values():  # a long page is embedded in the background
            assert api.ready(project, document["id"])["status"] == "ready"
        query = "situations where SQLite works well instead of a client/server database"
        hit = api.search(project, query=query, limit=1).json()["results"][0]
        assert hit["path"] == "/sqlite/whentouse.html"
        assert hit["metadata"]["source"]["url"].endswith("/whentouse.html")
    finally:
        server.shutdown()
        server.server_close()


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass
