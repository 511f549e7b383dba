"""Writing knowledge safely: save, correct, withdraw, resume, receipts, history, Git."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, assert_error
from naturali.vault.record import parse


class Store:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.project = api.project()
        r = api.post(f"/v1/projects/{self.project}/memory_stores", json={"name": "kb"})
        self.id = r.json()["id"]
        self.vault: Path = api.naturali.memories.vault(self.id)
        self.base = f"/v1/projects/{self.project}/memory_stores/{self.id}/knowledge"

    def post(self, route: str, status: int = 200, **body: Any) -> dict[str, Any]:
        r = self.api.post(f"{self.base}/{route}", json=body)
        assert r.status_code == status, r.text
        return dict(r.json())

    def save(self, request_id: str, **record: Any) -> dict[str, Any]:
        return self.post("save", requestId=request_id, record=record)

    def grep(self, query: str) -> list[str]:
        return [h["id"] for h in self.post("grep", query=query)["hits"]]

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", f"--git-dir={self.vault / '.git'}", *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()


@pytest.fixture
def store(api: Api) -> Store:
    return Store(api)


def test_save_creates_a_record_with_a_receipt_and_a_commit(store: Store) -> None:
    receipt = store.save(
        "r1",
        kind="claim",
        type="decision",
        title="Ship on Fridays",
        tags=["team:eng"],
        body="We ship on Fridays.",
        extra_key={"a": "no"},
    )
    assert receipt["requestId"] == "r1" and receipt["operation"] == "save"
    (record,) = receipt["records"]
    assert record["revision"] == 1 and record["id"].startswith("clm_")
    assert receipt["git"]["state"] == "committed" and len(receipt["git"]["commit"]) == 40
    assert receipt["indexed"] is False  # until the next search
    on_disk = parse((store.vault / record["path"]).read_text())
    assert on_disk.front["extra_key"] == {"a": "no"} and on_disk.body == "We ship on Fridays.\n"
    assert store.git("log", "--format=%H") == receipt["git"]["commit"]
    assert store.grep("fridays") == [record["id"]]
    again = store.api.get(f"{store.base}/mutations/r1").json()
    assert again["indexed"] is True and again["git"] == receipt["git"]


def test_request_ids_are_idempotent(store: Store) -> None:
    first = store.save("same", kind="claim", title="Once", body="only once")
    second = store.save("same", kind="claim", title="Once", body="only once")
    assert second["records"] == first["records"] and second["at"] == first["at"]
    assert len(list(store.vault.glob("*.md"))) == 1
    assert len(store.git("log", "--format=%H").splitlines()) == 1
    clash = store.api.post(
        f"{store.base}/save", json={"requestId": "same", "record": {"kind": "claim", "title": "x"}}
    )
    assert_error(clash, 409, "request_id_reused")


def test_updates_are_fenced_by_revision_and_hash(store: Store) -> None:
    created = store.save("c1", kind="page", type="topic", title="Deploys", body="v1")
    rec = created["records"][0]
    stale = {
        "requestId": "u0",
        "id": rec["id"],
        "expectedRevision": 2,
        "expectedHash": rec["sha256"],
        "record": {"body": "nope"},
    }
    assert_error(store.api.post(f"{store.base}/save", json=stale), 409, "revision_conflict")
    wrong_hash = {**stale, "expectedRevision": 1, "expectedHash": "0" * 64}
    assert_error(store.api.post(f"{store.base}/save", json=wrong_hash), 409, "hash_conflict")
    updated = store.post(
        "save",
        requestId="u1",
        id=rec["id"],
        expectedRevision=1,
        expectedHash=rec["sha256"],
        record={"body": "v2", "aliases": ["ship"]},
    )
    assert updated["records"][0]["revision"] == 2
    record = parse((store.vault / rec["path"]).read_text())
    assert record.body == "v2\n" and record.front["title"] == "Deploys"
    assert record.front["aliases"] == ["ship"]
    history = store.api.get(f"{store.base}/records/{rec['id']}/history").json()
    assert [r["revision"] for r in history["revisions"]] == [1, 2]
    assert history["revisions"][1]["receipt"]["requestId"] == "u1"


def test_bad_writes_change_nothing(store: Store) -> None:
    url = f"{store.base}/save"
    for body in (
        {"requestId": "b1", "record": {"kind": "note"}},
        {"requestId": "b2", "record": {"kind": "claim", "revision": 5}},
        {"requestId": "b3", "record": {"kind": "claim", "lifecycle": "withdrawn"}},
        {"requestId": "b4", "record": {"kind": "claim", "tags": "x"}},
        {"requestId": "b5", "record": {"kind": "claim", "body": 5}},
        {"requestId": "bad id!", "record": {"kind": "claim"}},
        {"requestId": "b6", "record": {"kind": "claim"}, "extra": 1},
        {"requestId": "b7", "record": {"kind": "claim"}, "expectedRevision": 1},
        {
            "requestId": "b8",
            "record": {"kind": "claim"},
            "id": "x",
            "expectedRevision": 1,
            "expectedHash": "abc",
        },
    ):
        r = store.api.post(url, json=body)
        assert r.status_code in (400, 404), (body, r.text)
    assert list(store.vault.glob("*.md")) == []
    assert_error(store.api.get(f"{store.base}/mutations/b1"), 404)


def test_correct_supersedes_with_one_receipt(store: Store) -> None:
    made = store.save("k1", kind="claim", title="Refund time", body="Refunds take five days.")
    old = made["records"][0]
    receipt = store.post(
        "correct",
        requestId="k2",
        id=old["id"],
        expectedRevision=1,
        expectedHash=old["sha256"],
        reason="policy changed",
        replacement={"title": "Refund time", "body": "Refunds take ten days."},
    )
    new, superseded = receipt["records"]
    assert new["revision"] == 1 and new["lifecycle"] == "active"
    assert superseded == {**superseded, "id": old["id"], "revision": 2, "lifecycle": "superseded"}
    original = parse((store.vault / old["path"]).read_text())
    assert original.front["superseded_by"] == new["id"]
    assert original.front["lifecycle_change"] == "policy changed"
    assert parse((store.vault / new["path"]).read_text()).front["supersedes"] == old["id"]
    hits = store.post("grep", query="five days")["hits"]
    assert [(h["id"], h["via"]["id"]) for h in hits] == [(new["id"], old["id"])]
    # a stale copy of the original's active file does not bring it back
    stale = (
        (store.vault / old["path"])
        .read_text()
        .replace("lifecycle: superseded", "lifecycle: active")
    )
    stale = stale.replace("revision: 2", "revision: 1")
    (store.vault / old["path"]).write_text(stale)
    assert store.grep("five") == [new["id"]]
    hit = store.post("grep", query="five")["hits"][0]
    assert hit.get("via", {}).get("id") == old["id"]
    page = store.save("k3", kind="page", title="A page")
    assert_error(
        store.api.post(
            f"{store.base}/correct",
            json={
                "requestId": "k4",
                "id": page["records"][0]["id"],
                "expectedRevision": 1,
                "expectedHash": page["records"][0]["sha256"],
                "reason": "x",
                "replacement": {},
            },
        ),
        400,
    )


def test_withdraw(store: Store) -> None:
    made = store.save("w1", kind="claim", title="Wifi password", body="hunter2 is the password")
    rec = made["records"][0]
    receipt = store.post("withdraw", requestId="w2", id=rec["id"], reason="secret leaked")
    assert receipt["records"][0]["lifecycle"] == "withdrawn"
    assert store.grep("password") == []
    record = parse((store.vault / rec["path"]).read_text())
    assert record.lifecycle == "withdrawn" and record.front["lifecycle_change"] == "secret leaked"
    history = store.api.get(f"{store.base}/records/{rec['id']}/history").json()
    assert [r["lifecycle"] for r in history["revisions"]] == ["active", "withdrawn"]
    assert_error(
        store.api.post(
            f"{store.base}/withdraw", json={"requestId": "w3", "id": rec["id"], "reason": "again"}
        ),
        404,
    )


def test_failed_git_leaves_pending_and_resume_retries(store: Store) -> None:
    store.save("g0", kind="claim", title="first")
    lock = store.vault / ".git" / "index.lock"
    lock.write_text("")  # another git process holds the index: commits fail
    pending = store.save("g1", kind="claim", title="second", body="written anyway")
    assert pending["git"]["state"] == "pending" and pending["git"]["commit"] is None
    assert (store.vault / pending["records"][0]["path"]).exists()  # never rolled back
    assert store.grep("anyway") == [pending["records"][0]["id"]]
    assert store.post("resume")["gitPending"] == ["g1"]
    lock.unlink()
    assert store.post("resume")["gitPending"] == []
    receipt = store.api.get(f"{store.base}/mutations/g1").json()
    assert receipt["git"]["state"] == "committed"
    assert receipt["git"]["commit"] == store.git("rev-parse", "HEAD")
    assert "written anyway" in store.git("show", "HEAD")


def test_the_memories_api_goes_through_the_same_path(store: Store) -> None:
    memories = f"/v1/projects/{store.project}/memory_stores/{store.id}/memories"
    memory = store.api.post(memories, json={"content": "Prefers tea."}).json()
    updated = store.api.patch(f"{memories}/{memory['id']}", json={"content": "Prefers coffee."})
    assert updated.json()["revision"] == 2
    store.api.delete(f"{memories}/{memory['id']}")
    history = store.api.get(f"{store.base}/records/{memory['id']}/history").json()
    assert [r["operation"] for r in history["revisions"]] == ["save", "save", "withdraw"]
    assert all(r["receipt"]["git"]["state"] == "committed" for r in history["revisions"])
    assert store.git("log", "--format=%H").count("\n") == 2  # three commits


@pytest.mark.parametrize("bad_id", ["../escape", "a/b", "/abs", ".hidden", "x y", "ü" * 3])
def test_record_ids_never_name_paths(store: Store, bad_id: str) -> None:
    r = store.api.post(
        f"{store.base}/save",
        json={"requestId": "p1", "id": bad_id, "record": {"kind": "claim", "title": "x"}},
    )
    assert_error(r, 400)
    assert list(store.vault.parent.parent.rglob("escape*")) == []
    assert list(store.vault.glob("*.md")) == []


def test_creating_an_id_that_files_already_claim_is_a_conflict(store: Store) -> None:
    from records_vault import write

    write(store.vault, "clm_twice", "one", name="a.md")
    write(store.vault, "clm_twice", "two", name="b.md")
    r = store.api.post(
        f"{store.base}/save",
        json={"requestId": "t1", "id": "clm_twice", "record": {"kind": "claim", "title": "x"}},
    )
    assert_error(r, 409, "record_exists")
    assert not (store.vault / "clm_twice.md").exists()


def test_temp_files_of_interrupted_writes_are_cleaned(api: Api) -> None:
    """A kill -9 inside an atomic write leaves a temp file: one old enough is removed when the
    server starts, any when the store is next written (under its lock)."""
    import os
    import time

    store = Store(api)
    store.save("first", kind="claim", title="Refunds", body="Refunds take five days.")
    old, fresh = store.vault / ".tmp-old.part", store.vault / "claims" / ".tmp-new.part"
    fresh.parent.mkdir(exist_ok=True)
    old.write_text("half")
    fresh.write_text("half")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    api.naturali.restore_indexes()  # what `naturali serve` does at start
    assert not old.exists() and fresh.exists()
    store.save("second", kind="claim", title="Shipping", body="Shipping takes two days.")
    assert not fresh.exists()


def test_an_unknown_field_is_kept_and_the_receipt_names_what_it_may_mean(store: Store) -> None:
    receipt = store.save(
        "r-unknown", kind="claim", type="decision", title="Ship on Fridays", date="2026-03-01",
        priorty="high",
    )  # fmt: skip
    assert receipt["warnings"] == [
        "record.date is not a field naturali reads: it is kept, but no query uses it; did you "
        "mean occurred_at?",
        "record.priorty is not a field naturali reads: it is kept, but no query uses it",
    ]
    record = parse((store.vault / receipt["records"][0]["path"]).read_text())
    assert record.front["date"] == "2026-03-01" and record.front["priorty"] == "high"
    again = store.save("r-known", kind="claim", title="Dated", occurred_at="2026-03-01")
    assert again["warnings"] == []
