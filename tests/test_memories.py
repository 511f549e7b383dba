"""Memory stores and memories: vault files as the truth, mirrored for search."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from conftest import Api, EmbedCall, assert_error
from naturali.ports.state import PlannedWrite
from naturali.service.memory.mutations import MemoryStoreKey
from naturali.service.memory.record_requests import SaveRequest
from naturali.vault.record import parse


def _store(api: Api, project_id: str, name: str = "agent", **tags: str) -> str:
    r = api.post(f"/v1/projects/{project_id}/memory_stores", json={"name": name, "tags": tags})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _vault(api: Api, store_id: str) -> Path:
    return api.naturali.memories.vault(store_id)


def test_store_crud(api: Api) -> None:
    project_id = api.project()
    store_id = _store(api, project_id, "support-agent", team="support")
    url = f"/v1/projects/{project_id}/memory_stores"
    assert store_id.startswith("mstore_")
    assert [s["id"] for s in api.get(url).json()["data"]] == [store_id]
    assert api.get(f"{url}/{store_id}").json()["tags"] == {"team": "support"}
    updated = api.patch(f"{url}/{store_id}", json={"tags": {"team": "billing"}}).json()
    assert updated["tags"] == {"team": "billing"} and updated["name"] == "support-agent"
    assert_error(api.post(url, json={"name": "support-agent"}), 409, "name_taken")
    assert_error(api.post(url, json={"name": ""}), 400)
    assert_error(api.post(url, json={"name": "x", "tags": ["a"]}), 400)
    assert api.delete(f"{url}/{store_id}").status_code == 200
    assert_error(api.get(f"{url}/{store_id}"), 404)
    assert not _vault(api, store_id).exists()


def test_memory_is_a_record_file(api: Api) -> None:
    project_id = api.project()
    store_id = _store(api, project_id)
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    r = api.post(
        url,
        json={
            "content": "The customer prefers email over phone.",
            "tags": {"customer": "acme"},
            "title": "Contact preference",
        },
    )
    assert r.status_code == 201, r.text
    memory = r.json()
    files = list(_vault(api, store_id).glob("*.md"))
    assert [f.name for f in files] == [f"{memory['id']}.md"]
    record = parse(files[0].read_text())
    assert record.front["format"] == "knowledge-record-v1"
    assert record.front["kind"] == "claim" and record.front["type"] == "fact"
    assert record.front["tags"] == ["customer:acme"] and record.revision == 1
    assert record.body.strip() == "The customer prefers email over phone."
    assert api.get(f"{url}/{memory['id']}").json()["title"] == "Contact preference"
    assert [m["id"] for m in api.get(url).json()["data"]] == [memory["id"]]


def test_update_bumps_revision_and_reindexes(api: Api) -> None:
    project_id = api.project()
    store_id = _store(api, project_id)
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    memory = api.post(url, json={"content": "Deploys happen on Tuesdays."}).json()
    updated = api.patch(f"{url}/{memory['id']}", json={"content": "Deploys happen on Thursdays."})
    assert updated.json()["revision"] == 2
    hits = api.search(project_id, query="which day are deploys").json()["results"]
    assert [h["content"] for h in hits] == ["Deploys happen on Thursdays."]


def test_delete_withdraws_the_record_but_keeps_the_file(api: Api) -> None:
    project_id = api.project()
    store_id = _store(api, project_id)
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    memory = api.post(url, json={"content": "Temporary note about llamas."}).json()
    assert api.delete(f"{url}/{memory['id']}").status_code == 200
    record = parse((_vault(api, store_id) / f"{memory['id']}.md").read_text())
    assert record.lifecycle == "withdrawn" and record.revision == 2
    assert api.search(project_id, query="llamas").json()["results"] == []
    assert_error(api.get(f"{url}/{memory['id']}"), 404)
    assert_error(api.delete(f"{url}/{memory['id']}"), 404)


def test_memory_validation(api: Api) -> None:
    project_id = api.project()
    store_id = _store(api, project_id)
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    assert_error(api.post(url, json={"content": ""}), 400, "invalid_content")
    assert_error(api.post(url, json={"content": "x", "tags": {"a:b": "c"}}), 400, "invalid_tags")
    assert_error(api.post(url, json={"content": "x", "extra": True}), 400, "unknown_field")
    assert_error(api.post(url, json={"content": 1}), 400)
    assert_error(
        api.post(
            f"/v1/projects/{project_id}/memory_stores/mstore_nope/memories", json={"content": "x"}
        ),
        404,
    )
    assert list(_vault(api, store_id).glob("*.md")) == []


def test_vault_edits_by_other_means_are_reconciled(api: Api) -> None:
    project_id = api.project()
    store_id = _store(api, project_id)
    vault = _vault(api, store_id)
    (vault / "handwritten.md").write_text(
        "---\nformat: knowledge-record-v1\nid: clm_hand\nrevision: 1\nkind: claim\n"
        'type: fact\ntitle: Office\ntags: ["site:berlin"]\n---\n'
        "The office wifi password rotates monthly.\n"
    )
    (vault / "broken.md").write_text("no front matter here about wifi")
    hits = api.search(project_id, query="wifi password").json()["results"]
    assert [(h["memory_id"], h["memory_store_id"]) for h in hits] == [("clm_hand", store_id)]
    # An edit (e.g. git pull) is picked up before the next search; only that file re-embeds.
    (vault / "handwritten.md").write_text(
        "---\nformat: knowledge-record-v1\nid: clm_hand\nrevision: 2\nkind: claim\n"
        "type: fact\ntitle: Office\n---\nThe office wifi password rotates weekly.\n"
    )
    hits = api.search(project_id, query="wifi password").json()["results"]
    assert hits[0]["content"].strip() == "The office wifi password rotates weekly."
    store = api.naturali.storage.get_memory_store(project_id, store_id)
    assert store
    report = api.naturali.memories.reconcile(store)
    assert (report.indexed, report.removed) == (0, 0)
    assert any("broken.md" in issue for issue in report.invalid)
    (vault / "handwritten.md").unlink()
    assert api.search(project_id, query="wifi password").json()["results"] == []


def test_a_search_reads_memory_hashes_back_only_after_the_vault_changed(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    project_id = api.project()
    store_id = _store(api, project_id)
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    assert api.post(url, json={"content": "The office wifi password rotates monthly."}).is_success
    storage = api.naturali.storage
    reads: list[str] = []
    original = storage.memory_hashes

    def spy(store: str) -> dict[str, str]:
        reads.append(store)
        return original(store)

    monkeypatch.setattr(storage, "memory_hashes", spy)
    assert api.search(project_id, query="wifi password").json()["results"]
    first = len(reads)
    for _ in range(3):  # nothing changed: the catalogue already matches the files
        assert api.search(project_id, query="wifi password").json()["results"]
    assert len(reads) == first
    (_vault(api, store_id) / "handwritten.md").write_text(  # an edit by other means
        "---\nformat: knowledge-record-v1\nid: clm_hand\nrevision: 1\nkind: claim\n"
        "type: fact\ntitle: Door\n---\nThe office door code changes weekly.\n"
    )
    hits = api.search(project_id, query="door code").json()["results"]
    assert len(reads) == first + 1 and hits[0]["memory_id"] == "clm_hand"


def test_memories_are_embedded_as_urgent_passages(api: Api, embed_calls: list[EmbedCall]) -> None:
    """A memory is indexed under its store's reconcile lock, which searches of the store wait
    on: its passages must not queue behind an upload's batches on the passage threads."""
    project_id = api.project()
    store_id = _store(api, project_id)
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    assert api.post(url, json={"content": "The office wifi password rotates monthly."}).is_success
    (_vault(api, store_id) / "handwritten.md").write_text(  # indexed by the next search
        "---\nformat: knowledge-record-v1\nid: clm_hand\nrevision: 1\nkind: claim\n"
        "type: fact\ntitle: Door\n---\nThe office door code changes weekly.\n"
    )
    assert api.search(project_id, query="door code").json()["results"][0]["memory_id"] == "clm_hand"
    embedded = {text.strip(): urgent for texts, urgent in embed_calls for text in texts}
    assert embedded == {
        "The office wifi password rotates monthly.": True,
        "The office door code changes weekly.": True,
    }


def test_the_background_indexer_indexes_the_records_it_was_handed_not_the_files(
    api: Api,
) -> None:
    """What a write hands over is what gets indexed: the file is not read back (here it is
    gone before the indexer runs, and the memory is still indexed with the content written);
    a record the write took out of the active set leaves the index."""
    project_id = api.project()
    store_id = _store(api, project_id)
    handed: list[PlannedWrite] = []
    mutations = api.naturali.mutations
    mutations.after_write = lambda _p, _s, writes: handed.extend(writes)
    key = MemoryStoreKey(project_id, store_id)
    record = {"kind": "claim", "type": "fact", "title": "Door", "body": "The door code is 4711."}
    mutations.save_in(key, SaveRequest(requestId="req_1", id="clm_door", record=record))
    (write,) = handed
    (_vault(api, store_id) / write.path).unlink()
    memories = api.naturali.memories
    memories.index_written(project_id, store_id, handed)
    indexed = api.naturali.storage.get_store_memories([(store_id, "clm_door")])
    assert indexed[(store_id, "clm_door")].content.strip() == "The door code is 4711."
    withdrawn = PlannedWrite(write.path, "", "clm_door", 2, "withdrawn", "0" * 64)
    memories.index_written(project_id, store_id, [withdrawn])
    assert api.naturali.storage.memory_hashes(store_id) == {}


def test_a_memory_write_authorizes_and_finds_its_store_once(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    project_id = api.project()
    store_id = _store(api, project_id)
    calls: list[str] = []
    auth, storage = api.naturali.auth, api.naturali.storage
    require, get_store = auth.require, storage.get_memory_store

    def called(what: str) -> None:
        # The background indexer (its own thread) may look the store up too, when it gets
        # to the write: what is counted is the write's own path.
        if threading.current_thread().name != "naturali-indexer":
            calls.append(what)

    monkeypatch.setattr(auth, "require", lambda *a: called("auth") or require(*a))
    monkeypatch.setattr(storage, "get_memory_store", lambda *a: called("store") or get_store(*a))
    url = f"/v1/projects/{project_id}/memory_stores/{store_id}/memories"
    assert api.post(url, json={"content": "The office wifi password rotates monthly."}).is_success
    # the token's user is looked up by the route; the write itself asks once each
    assert calls.count("auth") == 1 and calls.count("store") == 1
