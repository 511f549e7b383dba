"""A server holds at most ``open_stores`` memory stores open while unused: many stores used in
turn do not hold a descriptor each, an evicted store answers as before when next asked, and
a store is never closed under a caller using it (service/stores.py)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from conftest import Api, make_api
from naturali.embed.onnx import OnnxEmbedder
from naturali.service.stores import StoreRegistry


def _open_states(data_dir: Path) -> int:
    """Descriptors this process holds on stores' databases (each open store: three)."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        held += target.startswith(str(data_dir / "stores")) and "state.sqlite" in target
    return held


def _memory(api: Api, project_id: str, store_id: str, text: str) -> None:
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    assert api.post(url, json={"content": text}).status_code == 201


def test_many_stores_used_in_turn_hold_a_bounded_set_open(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    for api in make_api(tmp_path, embedder, open_stores=2):
        project_id = api.project()
        stores = []
        for n in range(8):
            r = api.post(f"/v1/projects/{project_id}/memory_stores", json={"name": f"s{n}"})
            stores.append(r.json()["id"])
            _memory(api, project_id, stores[-1], f"the kestrel number {n} nests on cliff {n}")
        for _ in range(2):  # every store reopened in turn: descriptors do not grow
            for n, store_id in enumerate(stores):
                body = {"query": f"kestrel cliff {n}", "memory_store_ids": [store_id]}
                hits = api.search(project_id, **body).json()["results"]
                assert hits and f"cliff {n}" in hits[0]["content"]
                url = f"/v1/projects/{project_id}/memory_stores/{store_id}/knowledge/grep"
                grep = api.post(url, json={"query": "kestrel"}).json()
                assert grep["total"] == 1
        assert api.naturali.stores.open_count() <= 2
        assert _open_states(tmp_path / "data") <= 2 * 3  # eight stores would hold 24
        _memory(api, project_id, stores[0], "a second kestrel, written after a reopen")
        url = f"/v1/projects/{project_id}/memory_stores/{stores[0]}/knowledge/grep"
        assert api.post(url, json={"query": "kestrel"}).json()["total"] == 2


def _use(registry: StoreRegistry, store_id: str, done: threading.Event) -> None:
    with registry.opened(store_id):
        pass
    done.set()


def test_a_store_in_use_is_not_closed_under_its_caller(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    for api in make_api(tmp_path, embedder, open_stores=1):
        project_id = api.project()
        ids = []
        for name in ("held", "other"):
            r = api.post(f"/v1/projects/{project_id}/memory_stores", json={"name": name})
            ids.append(r.json()["id"])
        registry = api.naturali.stores
        with registry.opened(ids[0]) as held:
            done = threading.Event()
            threading.Thread(target=_use, args=(registry, ids[1], done)).start()
            assert done.wait(30)
            assert held.view().scan is not None  # still open: its state answers
            held.state.guards_version()
        assert registry.open_count() == 1  # once unused, one of the two was closed
