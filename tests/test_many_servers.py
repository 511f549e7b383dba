"""Two real ``naturali serve`` processes on one PostgreSQL database and one shared data dir
behave as one service: what one writes the other searches, role and grant changes hold at
once, writers to one store from both lose nothing, and a server killed mid-write loses
nothing acknowledged."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from postgres import PostgresServer
from server import Server, start, stop


@pytest.fixture
def pair(tmp_path: Path, postgres: PostgresServer) -> Iterator[tuple[Server, Server, str]]:
    """Server A (first start: bootstrap, demo) then server B, each with its own cache dir."""
    url = postgres.new_database()
    data_dir = tmp_path / "shared"
    env = {"NATURALI_DATABASE_URL": url, "NATURALI_SOURCES_LOCAL_ROOTS": str(tmp_path)}
    a = start(
        data_dir,
        tmp_path,
        env={**env, "NATURALI_CACHE_DIR": str(tmp_path / "cache-a")},
        log_name="a.log",
    )
    b = start(
        data_dir,
        tmp_path,
        token=a.token,
        env={**env, "NATURALI_CACHE_DIR": str(tmp_path / "cache-b")},
        log_name="b.log",
    )
    yield a, b, url
    for server in (a, b):
        stop(server)
    postgres.drop(url)


def _client(server: Server, token: str | None = None) -> httpx.Client:
    return httpx.Client(
        base_url=server.base_url,
        headers={"Authorization": f"Bearer {token or server.token}"},
        timeout=60,
    )


def _paths(client: httpx.Client, project: str, query: str) -> list[str]:
    r = client.post(f"/v1/projects/{project}/knowledge/search", json={"query": query})
    assert r.status_code == 200, r.text
    return [h.get("path") or h["memory_id"] for h in r.json()["results"]]


def test_writes_deletes_and_roles_cross_servers(pair: tuple[Server, Server, str]) -> None:
    a, b, url = pair
    with _client(a) as via_a, _client(b) as via_b:
        project = via_a.post("/v1/projects", json={"name": "shared"}).json()["id"]
        doc = via_a.post(
            f"/v1/projects/{project}/documents",
            json={"path": "/refunds.md", "content": "Refunds take five business days."},
        ).json()
        assert "/refunds.md" in _paths(via_b, project, "refund time")
        store = via_b.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"}).json()
        memories = f"/v1/projects/{project}/memory_stores/{store['id']}/memories"
        memory = via_b.post(memories, json={"content": "Ann prefers green tea."}).json()
        assert memory["id"] in _paths(via_a, project, "green tea")
        assert via_b.delete(f"/v1/projects/{project}/documents/{doc['id']}").is_success
        assert "/refunds.md" not in _paths(via_a, project, "refund time")
        # A role change through one server holds at once through the other.
        user_id, token = _new_user(a.data_dir, url)
        members = f"/v1/projects/{project}/members/{user_id}"
        assert via_a.put(members, json={"role": "editor"}).status_code == 200
        with _client(b, token) as newcomer:
            assert newcomer.post(memories, json={"content": "x"}).status_code == 201
            assert via_a.put(members, json={"role": "viewer"}).status_code == 200
            assert newcomer.post(memories, json={"content": "y"}).status_code == 403
            # A grant narrowed through one server holds at once through the other.
            narrowed = {"role": "viewer", "path_prefixes": ["/eng/"], "memory_store_ids": []}
            assert via_a.put(members, json=narrowed).status_code == 200
            assert newcomer.get(memories).status_code == 404
            assert _paths(newcomer, project, "green tea") == []
            assert via_a.delete(members).is_success
            assert newcomer.get(f"/v1/projects/{project}").status_code == 404


def _new_user(data_dir: Path, url: str) -> tuple[str, str]:
    out = subprocess.run(
        [sys.executable, "-m", "naturali.cli.main", "admin", "user", "create", "newcomer"],
        env={**os.environ, "NATURALI_DATA_DIR": str(data_dir), "NATURALI_DATABASE_URL": url},
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    created = json.loads(out.stdout)
    return created["id"], created["token"]


def _store(client: httpx.Client) -> str:
    project = client.post("/v1/projects", json={"name": "writes"}).json()["id"]
    store = client.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"}).json()
    return f"/v1/projects/{project}/memory_stores/{store['id']}/knowledge"


def _writers(
    servers: list[Server], base: str, per_writer: int, acknowledged: list[str]
) -> list[threading.Thread]:
    """Four writers per server, each saving ``per_writer`` new records; the request ids of
    the saves that were answered 200 go to ``acknowledged``."""

    def write(server: Server, writer: int) -> None:
        with _client(server) as client:
            for i in range(per_writer):
                request_id = f"{server.base_url[-5:]}-{writer}-{i}"
                body: dict[str, Any] = {
                    "requestId": request_id,
                    "record": {"kind": "claim", "title": f"note {request_id}", "body": "x"},
                }
                try:
                    r = client.post(base + "/save", json=body)
                except httpx.HTTPError:
                    return  # the server went away: this write was never acknowledged
                if r.status_code == 200:
                    acknowledged.append(request_id)

    return [
        threading.Thread(target=write, args=(server, w)) for server in servers for w in range(4)
    ]


def _saved(client: httpx.Client, base: str) -> list[str]:
    records = client.post(base + "/records", json={"limit": 500}).json()["records"]
    return [r["title"].removeprefix("note ") for r in records]


def test_two_servers_times_four_writers_lose_nothing(pair: tuple[Server, Server, str]) -> None:
    a, b, _ = pair
    with _client(a) as via_a:
        base = _store(via_a)
    acknowledged: list[str] = []
    threads = _writers([a, b], base, 50, acknowledged)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acknowledged) == 400
    with _client(b) as via_b:
        saved = _saved(via_b, base)
        assert sorted(saved) == sorted(acknowledged)  # none lost, none twice
        assert via_b.post(base + "/resume", json={}).json()["gitPending"] == []


def test_a_server_killed_mid_write_loses_nothing_acknowledged(
    pair: tuple[Server, Server, str],
) -> None:
    a, b, _ = pair
    with _client(a) as via_a:
        base = _store(via_a)
    acknowledged: list[str] = []
    threads = _writers([a, b], base, 40, acknowledged)
    for t in threads:
        t.start()
    while len(acknowledged) < 30:
        threading.Event().wait(0.05)
    a.process.send_signal(signal.SIGKILL)
    for t in threads:
        t.join()
    with _client(b) as via_b:
        # The other server carries on: it finishes what the dead one journaled, and writes.
        via_b.post(base + "/resume", json={})
        after = {"requestId": "after-kill", "record": {"kind": "claim", "title": "note after"}}
        assert via_b.post(base + "/save", json=after).status_code == 200
        saved = set(_saved(via_b, base))
    assert set(acknowledged) <= saved
    assert "after" in saved


def test_each_scheduled_sync_runs_on_one_server_and_the_cli_drives_sources(
    pair: tuple[Server, Server, str], tmp_path: Path
) -> None:
    """Sources due at once on two servers: each is synced by one of them, once (a sync
    leaves its bare repository in the cache dir of the server that ran it)."""
    from test_real_server import _cli
    from test_sources import Repo

    a, b, _ = pair
    repo = Repo(tmp_path / "repo")
    repo.write("guide.md", "# Guide\n\nOtters hold hands while they sleep.")
    repo.commit("first")
    with _client(a) as client:
        project = client.post("/v1/projects", json={"name": "sources"}).json()["id"]
        made = [
            client.post(
                f"/v1/projects/{project}/sources",
                json={"kind": "git", "url": str(repo.root), "path": f"/r{n}/", "every": "1h"},
            ).json()["id"]
            for n in range(4)
        ]
        deadline = time.monotonic() + 120
        runs: dict[str, Any] = {}
        while len(runs) < len(made) and time.monotonic() < deadline:
            listed = client.get(f"/v1/projects/{project}/sources").json()["data"]
            runs = {s["id"]: s["last_run"] for s in listed if s["last_run"]}
            time.sleep(0.2)
    assert all(run["created"] == 1 and run["error"] is None for run in runs.values()), runs
    for source_id in made:
        held = [(tmp_path / f"cache-{x}" / "sources" / source_id).exists() for x in "ab"]
        assert held.count(True) == 1, (source_id, held)

    repo.write("guide.md", "# Guide\n\nOtters float on their backs to sleep.")
    repo.commit("second")
    synced = _cli(b, "sources", "sync", made[0], "--project", project, "--wait", "120")
    assert synced.returncode == 0, synced.stderr
    assert "0 created, 1 updated, 0 deleted" in synced.stdout
    listed = _cli(a, "sources", "list", "--project", project)
    assert listed.returncode == 0 and listed.stdout.count("src_") == 4
    gone = _cli(a, "sources", "delete", made[1], "--project", project, "--keep-documents")
    assert gone.returncode == 0, gone.stderr
