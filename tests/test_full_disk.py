"""A full disk is an answer, not a crash: on a real file system of a few megabytes (a tmpfs
mounted by the test; skipped where the machine cannot mount one), writes are refused 507
with nothing half-written, searches keep answering, /readyz says so, and everything resumes
when space returns. Both backends (the data dir is on the small disk in each)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, assert_error, make_api
from naturali.embed.onnx import OnnxEmbedder

MiB = 1024 * 1024


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48m,mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def api_on_small_disk(
    small_disk: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> Iterator[Api]:
    yield from make_api(small_disk, embedder, backend, min_free_bytes=8 * MiB)


def _fill(disk: Path, leave: int) -> Path:
    """A file taking all but ``leave`` bytes of the disk's free space."""
    import shutil

    filler = disk / "filler"
    free = shutil.disk_usage(disk).free
    with filler.open("ab") as fh, contextlib.suppress(OSError):
        block = b"\0" * MiB
        for _ in range(max(0, free - leave) // MiB):
            fh.write(block)
        fh.write(b"\0" * ((free - leave) % MiB))
    return filler


def _post_doc(api: Api, project: str, path: str, content: str) -> Any:
    return api.post(f"/v1/projects/{project}/documents", json={"path": path, "content": content})


def _reread(api: Api) -> None:
    api.naturali.disk._read_at = -10.0  # noqa: SLF001 - read the free space now


def test_a_full_disk_refuses_writes_and_keeps_searching(
    api_on_small_disk: Api, small_disk: Path
) -> None:
    api = api_on_small_disk
    api.naturali.restore_indexes()  # what `naturali serve` does at start
    project = api.project()
    r = api.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"})
    store = r.json()["id"]
    kept = api.doc(project, "/refunds.md", "# Refunds\n\nRefunds take five business days.")
    assert api.get("/readyz").status_code == 200, api.get("/readyz").text

    filler = _fill(small_disk, leave=4 * MiB)  # under the 8 MiB floor
    _reread(api)
    documents = api.get(f"/v1/projects/{project}/documents").json()["data"]
    r = _post_doc(api, project, "/more.md", "# More\n\nShipping takes two days.")
    assert_error(r, 507, "insufficient_storage")
    save = api.post(
        f"/v1/projects/{project}/memory_stores/{store}/knowledge/save",
        json={"requestId": "r1", "record": {"kind": "claim", "title": "Refunds", "body": "5 d"}},
    )
    assert_error(save, 507, "insufficient_storage")
    assert_error(api.post("/v1/projects", json={"name": "another"}), 507, "insufficient_storage")
    ready = api.get("/readyz")
    assert ready.status_code == 503 and "disk" in " ".join(ready.json()["waiting"])
    hits = api.search(project, query="how long do refunds take").json()["results"]
    assert hits and hits[0]["document_id"] == kept["id"]
    assert api.get(f"/v1/projects/{project}/documents").json()["data"] == documents

    # Past the floor's check, the disk itself runs out: still 507, and nothing stored.
    api.naturali.disk._floor = 0  # noqa: SLF001
    _fill(small_disk, leave=0)
    _reread(api)
    text = "# Big\n\n" + "Words about refunds. " * 200
    r = api.upload(project, "/big.md", text.encode(), "big.md")
    assert_error(r, 507, "insufficient_storage")
    assert api.get(f"/v1/projects/{project}/documents").json()["data"] == documents

    filler.unlink()  # space returns: everything resumes
    api.naturali.disk._floor = 8 * MiB  # noqa: SLF001
    _reread(api)
    assert api.get("/readyz").status_code == 200
    assert _post_doc(api, project, "/more.md", "# More\n\nShipping.").status_code == 201
