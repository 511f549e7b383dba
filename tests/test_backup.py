"""``naturali admin backup`` of a running server during a stream of writes, then ``restore``
into an empty data dir: every write acknowledged before the backup began is there, search
and grep find them, each vault's Git history is sound, and a withdrawal still holds."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from server import start, stop


def _admin(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "naturali.cli.main", "admin", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ,
    )


def test_backup_while_writing_then_restore(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start(data, tmp_path)
    headers = {"Authorization": f"Bearer {server.token}"}
    project = f"{server.base_url}/v1/projects/{server.demo_project}"
    http = httpx.Client(headers=headers, timeout=60)
    store = http.post(f"{project}/memory_stores", json={"name": "kb"}).json()["id"]
    knowledge = f"{project}/memory_stores/{store}/knowledge"
    gone = http.post(
        f"{knowledge}/save",
        json={"requestId": "w0", "record": {"kind": "claim", "title": "Old rule", "body": "x"}},
    ).json()["records"][0]["id"]
    assert http.post(f"{knowledge}/withdraw", json={"requestId": "w1", "id": gone, "reason": "old"})
    written: list[tuple[float, str, str]] = []  # (acknowledged at, document id, record id)
    stop_writing = threading.Event()

    def writer() -> None:
        with httpx.Client(headers=headers, timeout=60) as own:
            n = 0
            while not stop_writing.is_set():
                doc = own.post(
                    f"{project}/documents",
                    json={"path": f"/stream/{n}.md", "content": f"Stream note {n} on zebras."},
                )
                record = own.post(
                    f"{knowledge}/save",
                    json={
                        "requestId": f"s{n}",
                        "record": {"kind": "claim", "title": f"Zebra fact {n}", "body": "x"},
                    },
                )
                assert doc.status_code == 201 and record.status_code == 200
                written.append((time.time(), doc.json()["id"], record.json()["records"][0]["id"]))
                n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(1.5)
    began = time.time()
    made = _admin("backup", str(tmp_path / "backup"), "--data-dir", str(data))
    time.sleep(0.5)  # writes go on after the backup too
    stop_writing.set()
    thread.join()
    stop(server)
    assert made.returncode == 0, made.stderr
    before = [(d, r) for at, d, r in written if at < began]
    assert before and len(written) > len(before)

    restored = tmp_path / "restored"
    done = _admin("restore", str(tmp_path / "backup"), "--data-dir", str(restored))
    assert done.returncode == 0, done.stderr
    for copy in (tmp_path / "backup", restored):  # the owner's alone, like the data dir
        for path in [copy, *copy.rglob("*")]:
            if not path.is_symlink():
                assert path.stat().st_mode & 0o077 == 0, path
    refused = _admin("restore", str(tmp_path / "backup"), "--data-dir", str(restored))
    assert refused.returncode != 0  # never over a data dir in use
    again = start(restored, tmp_path, token=server.token, log_name="restored.log")
    try:
        project = f"{again.base_url}/v1/projects/{again.demo_project}"
        knowledge = f"{project}/memory_stores/{store}/knowledge"
        with httpx.Client(headers=headers, timeout=60) as check:
            for document_id, record_id in before:
                assert check.get(f"{project}/documents/{document_id}").status_code == 200
                assert check.get(f"{knowledge}/records/{record_id}").status_code == 200
            last_doc, last_record = before[-1]
            hits = check.post(
                f"{project}/knowledge/search",
                json={"query": "zebras", "document_ids": [last_doc]},
            ).json()["results"]
            assert hits and hits[0]["document_id"] == last_doc
            body = {"query": f"Zebra fact {len(before) - 1}", "mode": "phrase", "limit": 50}
            grep = check.post(f"{knowledge}/grep", json=body).json()["hits"]
            assert last_record in {h["id"] for h in grep}
            old = check.post(f"{knowledge}/grep", json={"query": "Old rule"}).json()["hits"]
            assert old == []  # the withdrawal holds
    finally:
        stop(again)
    vault = restored / "stores" / store / "vault"
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=vault, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
