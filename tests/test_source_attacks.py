"""Sources against a hostile tenant, through the public API on both backends: a URL or ref
that git would read as an option never runs a command (a marker file must never appear),
local repositories only under the operator's roots and never the server's own data, every
IPv6 form that carries a private IPv4 address refused, and syncs that no tenant can hold —
a page that drips is cut at its deadline while another project's sync runs beside it, and
an endless site stops at the run's budget and goes on from there at the next run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, assert_error, make_api
from naturali.embed.onnx import OnnxEmbedder
from naturali.sources.addresses import Allowlist, Target
from naturali.sources.git import GitRepository, GitSourceError
from sites import Hostile
from test_sources import Repo, _documents, _synced


@pytest.fixture
def roots(tmp_path: Path) -> Path:
    root = tmp_path / "repos"
    root.mkdir()
    return root


@pytest.fixture
def api(
    tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any], roots: Path
) -> Iterator[Api]:
    yield from make_api(
        tmp_path,
        embedder,
        backend,
        sources_allow="127.0.0.1",
        sources_local_roots=str(roots),
        sources_page_seconds=3.0,
        sources_run_pages=6,
        sources_workers=2,
    )


def _editor(api: Api, project: str) -> str:
    """A project-limited write token of an editor: the attacker of these tests."""
    token = api.member(project, "editor")
    r = api.post("/v1/tokens", token, json={"name": "ci", "scope": "write", "projects": [project]})
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def test_a_url_or_ref_git_would_read_as_an_option_is_refused_and_never_runs(
    api: Api, tmp_path: Path, roots: Path
) -> None:
    marker = tmp_path / "PWNED"
    project = api.project()
    token = _editor(api, project)
    repo = Repo(roots / "handbook")
    repo.write("a.md", "# A\n\nAlpha.")
    repo.commit("first")
    command = f"--upload-pack=touch${{IFS}}{marker}"
    for body in (
        {"kind": "git", "url": command},
        {"kind": "git", "url": f"{command}@8.8.8.8:repo"},
        {"kind": "git", "url": f"ssh://-oProxyCommand=touch%20{marker}/x"},
        {"kind": "git", "url": f"ssh://{command}@example.com/x"},
        {"kind": "git", "url": str(repo.root), "ref": command},
        {"kind": "git", "url": str(repo.root), "ref": "main\x07bell"},
        {"kind": "git", "url": str(repo.root) + "\n" + command},
    ):
        r = api.post(f"/v1/projects/{project}/sources", token, json=body)
        assert_error(r, 400, "source_refused")
    made = api.post(
        f"/v1/projects/{project}/sources", token, json={"kind": "git", "url": str(repo.root)}
    ).json()
    r = api.patch(f"/v1/projects/{project}/sources/{made['id']}", token, json={"ref": command})
    assert_error(r, 400, "source_refused")
    # git itself is handed a URL after "--": one that got past the API is a path, not an option
    git = GitRepository(tmp_path / "bare")
    with pytest.raises(GitSourceError) as refused:
        git.fetch(Target(command, "file", "", 0, None), None)
    assert "upload-pack" not in str(refused.value) and "touch" not in str(refused.value)
    with pytest.raises(GitSourceError):
        git.fetch(Target(str(repo.root), "file", "", 0, None), command)
    time.sleep(0.2)
    assert not marker.exists()


def test_local_repositories_only_under_the_roots_and_never_the_servers_own_data(
    api: Api, tmp_path: Path, roots: Path
) -> None:
    project = api.project()
    outside = Repo(tmp_path / "elsewhere")
    outside.write("a.md", "# Secret")
    outside.commit("first")
    (roots / "link").symlink_to(outside.root)  # a link inside a root to a folder outside it
    data = api.naturali.settings.data_dir
    for url in (
        str(outside.root),
        f"file://{outside.root}",
        str(roots / "link"),
        f"{roots}/../elsewhere",
        str(data),
        str(data / "stores"),
        "/etc",
    ):
        r = api.post(f"/v1/projects/{project}/sources", json={"kind": "git", "url": url})
        assert_error(r, 400, "source_refused")
    inside = Allowlist.parse("", str(tmp_path), (data,))
    with pytest.raises(Exception, match="own data"):
        inside.local(str(data / "stores"))  # under a root, and still the server's own
    with pytest.raises(ValueError, match="sources_local_roots"):
        Allowlist.parse("file, 127.0.0.1")  # the old way of opening every path is refused


@pytest.mark.parametrize(
    "host",
    [
        "[::127.0.0.1]",  # IPv4-compatible loopback
        "[::ffff:127.0.0.1]",  # IPv4-mapped
        "[::ffff:0:a9fe:a9fe]",  # IPv4-translated metadata address
        "[::a9fe:a9fe]",
        "[64:ff9b::a9fe:a9fe]",  # NAT64 of the metadata address
        "[64:ff9b::a00:1]",
        "[64:ff9b:1::a00:1]",  # a local-use NAT64 prefix
        "[2002:a9fe:a9fe::1]",  # 6to4 of the metadata address
        "[2001:0:a9fe:a9fe::1]",  # Teredo
        "[fec0::1]",  # site-local
    ],
)
def test_ipv6_forms_that_carry_a_private_address_are_refused(
    tmp_path: Path, embedder: OnnxEmbedder, host: str
) -> None:
    for api in make_api(tmp_path, embedder):  # sources_allow unset
        project = api.project()
        for body in (
            {"kind": "web", "url": f"http://{host}/docs/index.html"},
            {"kind": "git", "url": f"https://{host}/x.git"},
            {"kind": "git", "url": f"git://{host}/x"},
            {"kind": "git", "url": f"ssh://git@{host}/x"},
        ):
            r = api.post(f"/v1/projects/{project}/sources", json=body)
            assert_error(r, 400, "source_refused")


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    site = Hostile()
    yield site
    site.close()


def _source(api: Api, project: str, body: dict[str, Any]) -> str:
    r = api.post(f"/v1/projects/{project}/sources", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def test_a_dripping_page_is_cut_at_its_deadline_while_another_project_syncs(
    api: Api, hostile: Hostile, roots: Path
) -> None:
    slow = api.project("attacker")
    drip = _source(api, slow, {"kind": "web", "url": f"{hostile.url}/drip/index.html"})
    endless = _source(api, slow, {"kind": "web", "url": f"{hostile.url}/endless/0.html"})
    other = api.project("neighbour")
    repo = Repo(roots / "neighbour")
    repo.write("guide.md", "# Guide\n\nOtters hold hands while they sleep.")
    repo.commit("first")
    theirs = _source(api, other, {"kind": "git", "url": str(repo.root), "path": "/n/"})

    started = time.monotonic()
    api.post(f"/v1/projects/{slow}/sources/{drip}/sync")
    api.post(f"/v1/projects/{slow}/sources/{endless}/sync")
    while "/drip/index.html" not in hostile.asked:  # the attacker's page holds a worker
        assert time.monotonic() - started < 30
        time.sleep(0.05)
    api.post(f"/v1/projects/{other}/sources/{theirs}/sync")
    neighbour = _synced(api, other, theirs)
    assert neighbour["last_run"]["created"] == 1 and neighbour["last_run"]["error"] is None
    dripped = _synced(api, slow, drip)
    assert dripped["last_run"]["at"] > neighbour["last_run"]["at"]  # it ran beside, not after
    failed = dripped["last_run"]["failed"]
    assert "took more than 3 s" in failed[f"{hostile.url}/drip/index.html"], failed
    assert time.monotonic() - started < 30  # cut at 3 s, not the 40 s the page would take

    # One sync of a project at a time: the endless site began only once the drip had ended.
    first = _synced(api, slow, endless)
    assert first["last_run"]["at"] > dripped["last_run"]["at"]
    run = first["last_run"]
    assert run["truncated"] == "the run's budget of 6 pages was reached", run
    assert run["created"] == 6 and run["error"] is None
    hostile.asked.clear()
    api.post(f"/v1/projects/{slow}/sources/{endless}/sync")
    second = _synced(api, slow, endless, run["at"])["last_run"]
    assert second["created"] == 6 and second["truncated"] is not None
    pages = [p for p in hostile.asked if p.startswith("/endless/")]
    assert pages[0] == "/endless/6.html", pages  # it went on where the last run stopped
    assert len(_documents(api, slow)) == 12


def test_a_slow_repository_and_the_run_deadline(
    tmp_path: Path, embedder: OnnxEmbedder, roots: Path
) -> None:
    """A run over its deadline stops between files, and says so."""
    repo = Repo(roots / "big")
    for n in range(5):
        repo.write(f"f{n}.md", f"# File {n}\n\nThe number {n} in words.")
    repo.commit("first")
    for api in make_api(
        tmp_path, embedder, sources_local_roots=str(roots), sources_run_seconds=0.001
    ):
        project = api.project()
        made = _source(api, project, {"kind": "git", "url": str(repo.root), "path": "/big/"})
        api.post(f"/v1/projects/{project}/sources/{made}/sync")
        run = _synced(api, project, made)["last_run"]
        assert run["truncated"] == "the run's deadline (0.001 s) passed", run
        assert run["created"] == 0 and run["error"] is None


def test_a_sources_documents_count_against_the_projects_quota(
    tmp_path: Path, embedder: OnnxEmbedder, roots: Path
) -> None:
    repo = Repo(roots / "many")
    for n in range(5):
        repo.write(f"f{n}.md", f"# File {n}\n\nThe number {n} in words.")
    repo.commit("first")
    for api in make_api(tmp_path, embedder, sources_local_roots=str(roots), quota_documents=3):
        project = api.project()
        made = _source(api, project, {"kind": "git", "url": str(repo.root), "path": "/m/"})
        api.post(f"/v1/projects/{project}/sources/{made}/sync")
        run = _synced(api, project, made)["last_run"]
        assert run["created"] == 3 and len(run["failed"]) == 2, run
        assert len(_documents(api, project)) == 3
