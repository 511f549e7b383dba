"""Records and dates conformance points found by trying the spec as a new user (issue 9,
7–16), each through HTTP."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, StoreVault, assert_error, make_api, open_store
from naturali.embed.onnx import OnnxEmbedder


class Vault(StoreVault):
    def grep_ids(self, query: str, **body: Any) -> list[str]:
        return [h["id"] for h in self.call("grep", query=query, **body)["hits"]]

    def save(self, request_id: str, **body: Any) -> Any:
        return self.api.post(f"{self.base}/save", json={"requestId": request_id, **body})

    def visible(self, record_id: str) -> dict[str, bool]:
        """Where a record shows up: grep, lookup, records, GET and the timeline."""
        return {
            "grep": record_id in self.grep_ids("pelican"),
            "lookup": self.call("lookup", query=record_id)["status"] == "found",
            "records": record_id in [r["id"] for r in self.call("records")["records"]],
            "get": self.api.get(f"{self.base}/records/{record_id}").status_code == 200,
            "timeline": record_id in [r["id"] for r in self.call("timeline")["rows"]],
        }


@pytest.fixture
def vault(api: Api) -> Vault:
    return Vault(api)


def _created(vault: Vault, request_id: str, **record: Any) -> dict[str, Any]:
    r = vault.save(request_id, record=record)
    assert r.status_code == 200, r.text
    return dict(r.json())


# 7 ------------------------------------------------------------------------------------------
def test_a_stale_copy_with_a_higher_revision_stays_withdrawn(vault: Vault) -> None:
    receipt = _created(
        vault, "c1", kind="claim", title="Pelican count", body="pelican", occurred_at="2026-05-01"
    )
    record_id = receipt["records"][0]["id"]
    stale = (vault.path / f"{record_id}.md").read_text()
    r = vault.api.post(
        f"{vault.base}/withdraw", json={"requestId": "w1", "id": record_id, "reason": "wrong"}
    )
    assert r.status_code == 200, r.text
    assert not any(vault.visible(record_id).values())
    # An old copy comes back (a git checkout, a sync tool) claiming revision 3 > 2.
    (vault.path / f"{record_id}.md").write_text(stale.replace("revision: 1", "revision: 3"))
    assert not any(vault.visible(record_id).values())


def test_a_lifecycle_edited_in_the_file_is_guarded(vault: Vault) -> None:
    active = vault.write("clm_w", "pelican", revision=1, occurred_at="2026-05-01")
    old_w = active.read_text()
    vault.write("clm_s", "pelican too", revision=1, occurred_at="2026-05-02")
    old_s = (vault.path / "clm_s.md").read_text()
    vault.write("clm_new", "the replacement", revision=1)
    assert vault.visible("clm_w")["grep"]
    # Withdrawn and superseded by editing the files (an editor, a git pull) ...
    vault.write("clm_w", "pelican", revision=2, lifecycle="withdrawn", occurred_at="2026-05-01")
    vault.write("clm_s", "pelican too", revision=2, lifecycle="superseded", superseded_by="clm_new")
    assert not any(vault.visible("clm_w").values())
    # ... a query sees them, then older active copies come back: they stay out.
    (vault.path / "clm_w.md").write_text(old_w)
    (vault.path / "clm_s.md").write_text(old_s)
    assert not any(vault.visible("clm_w").values())
    hits = vault.call("grep", query="pelican")["hits"]
    assert [h["id"] for h in hits] == ["clm_new"] and hits[0]["via"]["id"] == "clm_s"
    listed = vault.call("records", lifecycle="superseded")["records"]
    assert [r["id"] for r in listed] == ["clm_s"]
    # A guarded id cannot be taken by a new record either.
    clash = vault.save("c2", id="clm_w", record={"kind": "claim", "title": "again"})
    assert_error(clash, 409, "record_exists")


# 8 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad_id", ["has space id", "../escape", "-dash", "a/b"])
def test_invalid_ids_are_excluded_and_reported(vault: Vault, bad_id: str) -> None:
    vault.write(bad_id, "pelican", name="bad.md")
    vault.write("clm_ok", "pelican")
    result = vault.call("grep", query="pelican")
    assert [h["id"] for h in result["hits"]] == ["clm_ok"]
    assert result["coverage"]["complete"] is False
    assert [i["path"] for i in result["coverage"]["issues"]] == ["bad.md"]
    assert [r["id"] for r in vault.call("records")["records"]] == ["clm_ok"]


# 9 ------------------------------------------------------------------------------------------
def test_line_end_is_the_last_line_of_the_snippet(vault: Vault) -> None:
    body = "".join(f"line {i}\n" for i in range(1, 7)) + "the pelican line\n"
    path = vault.write("clm_l", body)
    lines = path.read_text().splitlines()
    snippet = vault.call("grep", query="pelican")["hits"][0]["snippet"]
    assert snippet["text"].endswith("\n")
    assert snippet["lineEnd"] == len(lines)
    assert lines[snippet["lineEnd"] - 1] == "the pelican line"


# 10 -----------------------------------------------------------------------------------------
def test_chronicle_tools_take_kind(vault: Vault) -> None:
    vault.write("clm_d", "Decided.", type="decision", occurred_at="2026-05-04")
    vault.write("clm_e", "Happened.", type="event", occurred_at="2026-05-04")
    day = vault.call("chronicle/day", date="2026-05-04", kind="decision")
    assert [r["id"] for r in day["rows"]] == ["clm_d"]
    since = vault.call("chronicle/since", since="2026-05-01", kind="event")
    assert [r["id"] for r in since["rows"]] == ["clm_e"]


# 11 -----------------------------------------------------------------------------------------
def test_snapshot_is_accepted_and_a_change_is_a_distinct_error(vault: Vault) -> None:
    for i in range(3):
        vault.write(f"clm_{i}", "pelican", occurred_at=f"2026-05-0{i + 1}")
    for route, body in (
        ("grep", {"query": "pelican"}),
        ("records", {}),
        ("timeline", {}),
        ("chronicle/since", {"since": "2026-05-01"}),
        ("chronicle/day", {"date": "2026-05-01", "week": True}),
    ):
        first = vault.call(route, limit=1, **body)
        assert first["nextOffset"] == 1, route
        again = vault.call(route, limit=1, offset=1, snapshot=first["snapshot"], **body)
        assert again["snapshot"] == first["snapshot"], route
    first = vault.call("grep", query="pelican", limit=1)
    vault.write("clm_9", "pelican", occurred_at="2026-05-02")
    changed = vault.api.post(
        f"{vault.base}/grep",
        json={"query": "pelican", "limit": 1, "offset": 1, "snapshot": first["snapshot"]},
    )
    assert assert_error(changed, 409, "snapshot_changed")["param"] == "snapshot"


# 12 -----------------------------------------------------------------------------------------
def test_state_of_another_store_is_refused(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    api_iter = make_api(tmp_path, embedder)
    api = next(api_iter)
    a, b = Vault(api), None
    r = api.post(f"/v1/projects/{a.project}/memory_stores", json={"name": "other"})
    b_store = r.json()["id"]
    a.write("clm_a", "pelican")
    assert a.grep_ids("pelican") == ["clm_a"]
    b_base = f"/v1/projects/{a.project}/memory_stores/{b_store}/knowledge"
    assert api.post(f"{b_base}/records", json={}).status_code == 200
    memories = f"/v1/projects/{a.project}/memory_stores/{a.store}/memories"
    assert api.post(memories, json={"content": "a pelican, written"}).status_code == 201
    with sqlite3.connect(a.path.parent / "state.sqlite") as conn:
        (owner,) = conn.execute("SELECT store_id FROM store_identity_v1").fetchone()
        sessions = conn.execute("SELECT pid, writes FROM session_activity_v1").fetchall()
    assert owner == a.store and sessions and sessions[0][1] >= 1  # the process that wrote
    # Someone copies store a's state.sqlite over store b's while b is closed.
    api.naturali.stores.forget(b_store)
    target = api.naturali.settings.data_dir / "stores" / b_store / "state.sqlite"
    for leftover in target.parent.glob("state.sqlite*"):
        leftover.unlink()
    with sqlite3.connect(a.path.parent / "state.sqlite") as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    refused = api.post(f"{b_base}/records", json={})
    assert (
        "belongs to memory store"
        in assert_error(refused, 409, "store_identity_mismatch")["message"]
    )
    assert b is None
    next(api_iter, None)


def test_a_vault_over_its_file_limit_is_refused(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    api_iter = make_api(tmp_path, embedder, vault_max_files=3)
    vault = Vault(next(api_iter))
    for i in range(3):
        vault.write(f"clm_{i}", "pelican")
    assert len(vault.grep_ids("pelican")) == 3
    vault.write("clm_3", "pelican")
    for route, body in (("grep", {"query": "pelican"}), ("records", {}), ("timeline", {})):
        r = vault.api.post(f"{vault.base}/{route}", json=body)
        assert_error(r, 409, "scan_limit_exceeded")
    next(api_iter, None)


# 13 -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # inspects SQLite files
def test_a_locked_date_index_is_unavailable_not_a_client_error(vault: Vault) -> None:
    vault.write("clm_d", "pelican", occurred_at="2026-05-04")
    opened = open_store(vault.api.naturali, vault.store)
    opened.state.db.close()  # type: ignore[attr-defined]
    # Every later read of the projection fails the way a locked database does.
    original = opened.state.reconcile_temporal

    def locked(*args: Any, **kwargs: Any) -> Any:
        from naturali.ports.state import ProjectionUnavailable

        raise ProjectionUnavailable("database is locked")

    opened.state.reconcile_temporal = locked  # type: ignore[method-assign]
    try:
        timeline = vault.call("timeline")
        assert timeline["index"]["state"] == "unavailable" and timeline["total"] is None
        seen = vault.call("chronicle/last_seen", entity="per_x")
        assert seen["index"]["state"] == "unavailable" and seen["found"] is None
    finally:
        opened.state.reconcile_temporal = original  # type: ignore[method-assign]


def test_dates_no_timeline_can_place(vault: Vault) -> None:
    bad = vault.save("d1", record={"kind": "claim", "title": "x", "occurred_at": "2026-02-30"})
    assert assert_error(bad, 400, "invalid_date")["param"] == "record.occurred_at"
    page = vault.save(
        "d2", record={"kind": "page", "title": "m", "fields": {"occurred_at": "2026-13-01"}}
    )
    assert assert_error(page, 400, "invalid_date")["param"] == "record.fields.occurred_at"
    vault.write("clm_tz", "pelican", occurred_at="2026-05-04T10:00:00")
    result = vault.call("timeline")
    assert result["rows"] == [] and result["coverage"]["complete"] is False
    assert "occurred_at" in result["coverage"]["issues"][0]["message"]
    assert vault.grep_ids("pelican") == ["clm_tz"]  # still a valid record


def test_since_after_until_and_blank_lookup_are_400(vault: Vault) -> None:
    for route, body in (
        ("timeline", {"since": "2026-05-02", "until": "2026-05-01"}),
        ("chronicle/since", {"since": "2026-05-02", "until": "2026-05-01"}),
        ("grep", {"query": "x", "since": "2026-05-02", "until": "2026-05-01"}),
    ):
        r = vault.api.post(f"{vault.base}/{route}", json=body)
        assert assert_error(r, 400, "invalid_range")["param"] == "since", route
    same_day = vault.call("timeline", since="2026-05-01", until="2026-05-01")
    assert same_day["total"] == 0
    r = vault.api.post(f"{vault.base}/lookup", json={"query": "   "})
    assert assert_error(r, 400)["param"] == "query"


# 14 -----------------------------------------------------------------------------------------
def test_last_seen_reaches_sources_linked_by_a_relationship(vault: Vault) -> None:
    vault.write("per_ann", "Ann.", kind="page", type="person", title="Ann")
    vault.write(
        "mtg_a", "Planning.", kind="page", type="meeting", fields={"occurred_at": "2026-10-01"}
    )
    vault.write(
        "rel_att", "Ann attended.", kind="relationship", type="attended",
        **{"from": "per_ann", "to": "mtg_a"},
    )  # fmt: skip
    grouped = vault.call("timeline", entity="per_ann", group="source")
    assert [r["id"] for r in grouped["rows"]] == ["mtg_a"]
    seen = vault.call("chronicle/last_seen", entity="per_ann")
    assert seen["found"] is True and seen["lastSeen"]["id"] == "mtg_a"
    before = vault.call("chronicle/last_seen", entity="per_ann", occurredOnOrBefore="2026-09-30")
    assert before["found"] is False


def test_an_undated_source_event_takes_its_source_date(vault: Vault) -> None:
    vault.write(
        "mtg_b", "Review.", kind="page", type="meeting", fields={"occurred_at": "2026-10-08"}
    )
    vault.write("clm_ev", "The review happened.", type="event", source_event=True,
                sources=["mtg_b"])  # fmt: skip
    rows = vault.call("timeline")["rows"]
    assert [r["id"] for r in rows] == ["clm_ev"]
    assert rows[0]["date"]["start"].startswith("2026-10-08")
    day = vault.call("chronicle/day", date="2026-10-08")
    assert [r["id"] for r in day["rows"]] == ["clm_ev"]
    meetings = vault.call("timeline", kind="meeting")
    assert [r["id"] for r in meetings["rows"]] == ["mtg_b"]
    # The meeting moves: the event moves with it.
    vault.write(
        "mtg_b", "Review.", kind="page", type="meeting", fields={"occurred_at": "2026-10-09"}
    )
    assert vault.call("timeline")["rows"][0]["date"]["start"].startswith("2026-10-09")


# 15 -----------------------------------------------------------------------------------------
def test_a_phrase_matches_within_one_value(vault: Vault) -> None:
    vault.write(
        "per_b", "Works in sales.", kind="page", type="person", title="Tanaka",
        aliases=["Bobby", "B. Tanaka"],
    )  # fmt: skip
    vault.write(
        "per_c", "Manager.", kind="page", type="person", title="Chris",
        aliases=["Bobby B Tanaka"],
    )  # fmt: skip
    assert vault.grep_ids("bobby b tanaka", mode="phrase") == ["per_c"]
    assert sorted(vault.grep_ids("bobby b tanaka")) == ["per_b", "per_c"]


def test_a_title_phrase_gets_a_title_snippet(vault: Vault) -> None:
    vault.write("clm_t", "Refund notes: the window is long.", title="Refund window policy")
    hit = vault.call("grep", query="refund window", mode="phrase")["hits"][0]
    assert hit["matches"] == ["title"]
    snippet = hit["snippet"]
    assert snippet["field"] == "title" and snippet["matchLocated"] is True
    assert snippet["text"][snippet["start"] :].startswith("Refund window")


# 16 -----------------------------------------------------------------------------------------
def test_files_saved_on_windows_are_records(vault: Vault) -> None:
    text = (
        "---\nformat: knowledge-record-v1\nid: clm_win\nrevision: 1\nkind: claim\n"
        "type: fact\ntitle: Windows note\nlifecycle: active\n---\nFirst line.\nThe pelican.\n"
    )
    (vault.path / "win.md").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    result = vault.call("grep", query="pelican")
    assert result["coverage"]["complete"] is True, result["coverage"]
    hit = result["hits"][0]
    assert hit["id"] == "clm_win" and hit["title"] == "Windows note"
    # Front matter counts: the body starts on line 10, the match is on line 11.
    assert hit["snippet"]["lineStart"] == 10 and hit["snippet"]["lineEnd"] == 11
