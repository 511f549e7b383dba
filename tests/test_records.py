"""knowledge_grep, knowledge_lookup, knowledge_records, knowledge_record over a vault written
as files (docs/spec/retrieval-and-dates.md, "Query contract" to "Index behavior")."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import pytest

from conftest import Api, StoreVault, assert_error, open_store


class Vault(StoreVault):
    def grep(self, query: str, status: int = 200, **params: Any) -> dict[str, Any]:
        r = self.api.post(f"{self.base}/grep", json={"query": query, **params})
        assert r.status_code == status, r.text
        return dict(r.json())

    def ids(self, query: str, **params: Any) -> list[str]:
        return [h["id"] for h in self.grep(query, **params)["hits"]]

    def lookup(self, query: str, **params: Any) -> dict[str, Any]:
        r = self.api.post(f"{self.base}/lookup", json={"query": query, **params})
        assert r.status_code == 200, r.text
        return dict(r.json())


@pytest.fixture
def vault(api: Api) -> Vault:
    return Vault(api)


def test_grep_modes_and_weights(vault: Vault) -> None:
    vault.write("clm_body", "The refund window is thirty days.", title="Policy")
    vault.write("clm_title", "Details inside.", title="Refund window")
    vault.write("clm_alias", "More details.", title="Returns", aliases=["refund window"])
    vault.write("clm_one", "Only the word window appears here.", title="Other")
    assert vault.ids("refund window") == ["clm_title", "clm_alias", "clm_body"]
    assert set(vault.ids("refund window", mode="any")) == {
        "clm_title",
        "clm_alias",
        "clm_body",
        "clm_one",
    }
    vault.write("clm_split", "window of the refund", title="Split")
    assert "clm_split" not in vault.ids("refund window", mode="phrase")
    assert "clm_split" in vault.ids("refund window")
    hit = vault.grep("refund window")["hits"][0]
    assert hit["score"] > 0 and hit["matches"] == ["title"]


def test_tokens_punctuation_case_diacritics_no_stemming(vault: Vault) -> None:
    vault.write("clm_cafe", "Le Café Zoë sells crème brûlée.", title="Café")
    vault.write("clm_plural", "Refunds are slow.", title="Plural")
    assert vault.ids("CAFE zoe") == ["clm_cafe"]
    assert vault.ids("creme-brulee!!") == ["clm_cafe"]
    assert vault.ids("refund") == []  # no stemming
    assert vault.ids("refu") == []  # no prefix search
    assert vault.ids("refunds") == ["clm_plural"]
    # FTS syntax is not executed: OR/NOT/columns/quotes are words or separators.
    assert vault.ids('title:"café" OR NOT', mode="any") == ["clm_cafe"]
    assert vault.grep('"unbalanced')["hits"] == []


def test_query_limits_are_errors(vault: Vault) -> None:
    vault.write("clm_a", "a body")
    for bad in (
        {"query": "x" * 501},
        {"query": " ".join(["w"] * 65)},
        {"query": "!!!"},
        {"query": ""},
        {"query": "a", "limit": 51},
        {"query": "a", "limit": 0},
        {"query": "a", "offset": 501},
        {"query": "a", "offset": -1},
        {"query": "a", "mode": "regex"},
        {"query": "a", "lifecycle": "withdrawn"},
        {"query": "a", "kind": "note"},
        {"query": "a", "extra": 1},
    ):
        assert_error(vault.api.post(f"{vault.base}/grep", json=bad), 400)
    assert vault.grep(" ".join(["w"] * 64))["total"] == 0


def test_filters_kind_type_alias_tag_lifecycle(vault: Vault) -> None:
    vault.write(
        "org_acme",
        "Acme builds anvils.",
        kind="page",
        type="company",
        title="Acme",
        tags=["Customer"],
    )
    vault.write("clm_acme", "Acme pays late.", kind="claim", type="fact", tags=["customer"])
    vault.write("clm_old", "Acme paid early.", lifecycle="superseded", superseded_by="clm_acme")
    assert vault.ids("acme", kind="page") == ["org_acme"]
    assert vault.ids("acme", type="organization") == ["org_acme"]  # alias expansion
    assert vault.ids("acme", type="business") == ["org_acme"]
    assert vault.ids("acme", tag="Customer") == ["org_acme"]
    assert vault.ids("acme", tag="customer") == ["clm_acme"]
    assert vault.ids("paid", lifecycle="superseded") == ["clm_old"]
    assert set(vault.ids("acme", lifecycle="all")) == {"org_acme", "clm_acme", "clm_old"}
    (vault.path.parent / "ontology.yaml").write_text(
        "types:\n  vendor: {aliases: [supplier]}\naliases:\n  firm: organization\n"
    )
    vault.write("ven_x", "Xylo supplies parts.", kind="page", type="supplier")
    assert vault.ids("xylo", type="vendor") == ["ven_x"]
    assert vault.ids("acme", type="firm") == ["org_acme"]


def test_superseded_wording_returns_the_current_record(vault: Vault) -> None:
    vault.write(
        "clm_v1",
        "Refunds take five business days.",
        title="Refund time v1",
        lifecycle="superseded",
        superseded_by="clm_v2",
        revision=2,
    )
    vault.write(
        "clm_v2",
        "Refunds take ten business days.",
        title="Refund time v2",
        lifecycle="superseded",
        superseded_by="clm_v3",
        revision=2,
        supersedes="clm_v1",
    )
    vault.write(
        "clm_v3",
        "Refunds are processed within two weeks.",
        title="Refund time",
        supersedes="clm_v2",
    )
    vault.write("clm_direct", "Five business days is our SLA for replies.", title="SLA")
    result = vault.grep("five business days")
    assert [h["id"] for h in result["hits"]] == ["clm_direct", "clm_v3"]
    replacement = result["hits"][1]
    assert replacement["matches"] == ["superseded"] and replacement["score"] is None
    assert replacement["via"]["id"] == "clm_v1" and replacement["via"]["revision"] == 2
    assert replacement["via"]["title"] == "Refund time v1" and replacement["via"]["sha256"]
    assert replacement["snippet"]["matchLocated"] is False
    assert replacement["citation"]["id"] == "clm_v3"
    assert result["total"] == 2
    # Matching both earlier versions still returns the current record once.
    assert vault.ids("business days refunds") == ["clm_v3"]
    # A direct match is not repeated as a replacement.
    assert vault.ids("refunds", mode="any") == ["clm_v3"]


def test_superseded_chains_that_end_badly_return_nothing(vault: Vault) -> None:
    vault.write("clm_a1", "zebra stripes", lifecycle="superseded", superseded_by="clm_missing")
    vault.write("clm_b1", "zebra herds", lifecycle="superseded", superseded_by="clm_b2")
    vault.write("clm_b2", "withdrawn", lifecycle="withdrawn")
    vault.write("clm_c1", "zebra foals", lifecycle="superseded", superseded_by="clm_c2")
    vault.write("clm_c2", "loops", lifecycle="superseded", superseded_by="clm_c1")
    vault.write("clm_d1", "zebra crossings", lifecycle="superseded", superseded_by="clm_d2")
    vault.write("clm_d2", "the current one", kind="page", type="topic", tags=["x"])
    assert vault.ids("zebra") == ["clm_d2"]
    assert vault.ids("zebra", kind="claim") == []  # filters apply to the returned record
    assert vault.ids("zebra", tag="x") == ["clm_d2"]
    vault.write("clm_e1", "zebra tails", lifecycle="superseded", superseded_by="clm_e2")
    vault.write("clm_e2", "depends on something absent", dependencies=["clm_nowhere"])
    assert vault.ids("zebra") == ["clm_d2"]


def test_pagination_total_next_offset_snapshot(vault: Vault) -> None:
    for i in range(7):
        vault.write(f"clm_{i}", f"common word number {i}")
    first = vault.grep("common", limit=3)
    assert first["total"] == 7 and first["nextOffset"] == 3 and len(first["hits"]) == 3
    second = vault.grep("common", limit=3, offset=3)
    last = vault.grep("common", limit=3, offset=6)
    assert last["nextOffset"] is None and len(last["hits"]) == 1
    assert first["snapshot"] == second["snapshot"] == last["snapshot"]
    seen = [h["id"] for r in (first, second, last) for h in r["hits"]]
    assert sorted(seen) == [f"clm_{i}" for i in range(7)]
    vault.write("clm_3", "common word changed")
    assert vault.grep("common")["snapshot"] != first["snapshot"]


def test_edits_behind_our_back(vault: Vault) -> None:
    path = vault.write("clm_x", "original wording about otters")
    assert vault.ids("otters") == ["clm_x"]
    vault.write("clm_x", "rewritten wording about beavers")
    assert vault.ids("otters") == [] and vault.ids("beavers") == ["clm_x"]
    vault.write("clm_y", "new file about beavers")
    assert set(vault.ids("beavers")) == {"clm_x", "clm_y"}
    path.unlink()
    assert vault.ids("beavers") == ["clm_y"]
    (vault.path / "clm_y.md").write_text("---\nformat: knowledge-record-v1\nid: [broken\n---\n")
    result = vault.grep("beavers")
    assert result["hits"] == [] and result["coverage"]["complete"] is False
    assert [i["path"] for i in result["coverage"]["issues"]] == ["clm_y.md"]


def test_duplicate_ids_are_reported_and_excluded(vault: Vault) -> None:
    vault.write("clm_dup", "first copy mentions walrus", name="a.md")
    vault.write("clm_dup", "second copy mentions walrus", name="b.md")
    vault.write("clm_ok", "unique walrus")
    result = vault.grep("walrus")
    assert [h["id"] for h in result["hits"]] == ["clm_ok"]
    assert {i["path"] for i in result["coverage"]["issues"]} == {"a.md", "b.md"}
    assert "duplicate" in result["coverage"]["issues"][0]["message"]


def test_unavailable_dependencies_endpoints_entities_exclude(vault: Vault) -> None:
    vault.write("per_ann", "Ann is a person.", kind="page", type="person", title="Ann")
    vault.write("clm_ok", "Ann likes tea.", entities=["per_ann"])
    vault.write("clm_bad", "Ghost likes tea.", entities=["per_ghost"])
    vault.write(
        "rel_bad",
        "Ann works at nowhere tea.",
        kind="relationship",
        type="works_at",
        **{"from": "per_ann", "to": "org_none"},
    )
    vault.write("clm_dep", "Depends on bad tea.", dependencies=["clm_bad"])
    vault.write("clm_wd", "Withdrawn tea.", lifecycle="withdrawn")
    assert vault.ids("tea") == ["clm_ok"]
    assert vault.ids("tea", lifecycle="all") == ["clm_ok"]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # inspects SQLite files
def test_withdrawn_record_stays_out_when_a_stale_file_returns(vault: Vault) -> None:
    memories = f"/v1/projects/{vault.project}/memory_stores/{vault.store}/memories"
    memory = vault.api.post(memories, json={"content": "The vault key is under the mat."}).json()
    path = vault.path / f"{memory['id']}.md"
    stale = path.read_text()
    assert vault.ids("vault key") == [memory["id"]]
    assert vault.api.delete(f"{memories}/{memory['id']}").status_code == 200
    assert vault.ids("vault key") == []
    path.write_text(stale)  # e.g. a git checkout brings the active revision 1 back
    assert vault.ids("vault key") == []
    assert vault.api.search(vault.project, query="vault key").json()["results"] == []
    state = sqlite3.connect(vault.path.parent / "state.sqlite")
    assert state.execute("SELECT record_id FROM keyword_withdrawals_v1").fetchall() == [
        (memory["id"],)
    ]


def test_snippets_offsets_and_lines(vault: Vault) -> None:
    body = "Intro line.\n\nSecond paragraph 😀 mentions the pelican here.\n"
    path = vault.write("clm_s", body, title="Birds")
    hit = vault.grep("pelican")["hits"][0]
    snippet = hit["snippet"]
    assert snippet["field"] == "body" and snippet["matchLocated"] is True
    utf16 = body.encode("utf-16-le")
    assert utf16[snippet["start"] * 2 : snippet["end"] * 2].decode("utf-16-le") == snippet["text"]
    assert "pelican" in snippet["text"]
    lines = path.read_text().splitlines()
    shown = "\n".join(lines[snippet["lineStart"] - 1 : snippet["lineEnd"]])
    assert snippet["text"].strip() in shown and "pelican" in shown
    assert lines[snippet["lineStart"] - 1] == "Intro line."  # front-matter lines counted
    long_body = "😀" * 600 + " the albatross"
    vault.write("clm_long", long_body)
    long_snippet = vault.grep("albatross")["hits"][0]["snippet"]
    assert len(long_snippet["text"].encode("utf-16-le")) // 2 <= 480
    assert long_snippet["end"] - long_snippet["start"] <= 480


def test_large_bodies_get_an_opening_excerpt(vault: Vault) -> None:
    vault.write("clm_big", "start " + "filler " * 12000 + "needle")
    hit = vault.grep("needle")["hits"][0]
    assert hit["snippet"]["matchLocated"] is False and hit["snippet"]["start"] == 0


def test_evidence_is_capped_at_three(vault: Vault) -> None:
    vault.write("src_1", "source one", kind="page", type="source")
    evidence = [{"source": "src_1", "quote": f"q{i}"} for i in range(4)] + [
        {"source": "src_missing", "quote": "unverified"}
    ]
    vault.write("clm_ev", "claim with evidence about lynx", evidence=evidence)
    hit = vault.grep("lynx")["hits"][0]
    assert len(hit["evidence"]) == 3 and hit["evidenceTruncated"] is True
    record = vault.api.get(f"{vault.base}/records/clm_ev").json()
    assert len(record["evidence"]) == 4 and record["body"].startswith("claim with evidence")
    assert record["sha256"] == hit["sha256"] == hit["citation"]["sha256"]


def test_complete_hit_fields_and_freshness(vault: Vault) -> None:
    vault.write(
        "clm_f",
        "Heron facts.",
        title="Herons",
        summary="Herons wade.",
        attribution={"agent": "scout"},
        origin="observed",
    )
    result = vault.grep("heron")
    hit = result["hits"][0]
    for key in (
        "id",
        "path",
        "revision",
        "sha256",
        "summary",
        "lifecycle",
        "matches",
        "attribution",
        "assertionOrigin",
        "snippet",
        "citation",
        "evidenceTruncated",
    ):
        assert key in hit
    assert hit["summary"] == "Herons wade." and hit["assertionOrigin"] == "observed"
    assert result["index"] == {"state": "ready", "lag": False}
    fresh = result["freshness"]
    assert fresh["queriedAt"] and fresh["scannedAt"] and fresh["indexedAt"]
    again = vault.grep("heron")["freshness"]
    assert again["scannedAt"] == fresh["scannedAt"]  # the scan was reused: nothing changed
    assert again["indexedAt"] == fresh["indexedAt"]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # inspects SQLite files
def test_projection_tables_and_reconcile(vault: Vault) -> None:
    for i in range(5):
        vault.write(f"clm_{i}", f"heron {i}")
    vault.grep("heron")
    db = sqlite3.connect(vault.path.parent / "state.sqlite")
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"keyword_state_v1", "keyword_withdrawals_v1", "lifecycle_guards_v1"} <= names
    fts = next(n for n in names if re.fullmatch(r"keyword_fts_v1_[a-z0-9]{16}", n))
    rows = fts.replace("fts", "rows")
    assert rows in names and fts.replace("keyword_", "keyword_history_") in names
    before = dict(db.execute(f"SELECT record_id, rowid FROM {rows}").fetchall())
    vault.write("clm_2", "heron changed")
    vault.grep("heron")
    after = dict(db.execute(f"SELECT record_id, rowid FROM {rows}").fetchall())
    assert {k for k in before if before[k] != after[k]} == {"clm_2"}  # only that re-indexed
    db.execute(f"DROP TABLE {fts}")
    db.commit()
    vault.api.naturali.records._reconciled.clear()
    assert len(vault.ids("heron")) == 5  # missing table: rebuilt on the next query
    db.execute("UPDATE keyword_state_v1 SET fingerprint = 'old'")
    db.commit()
    vault.api.naturali.records._reconciled.clear()
    assert len(vault.ids("heron")) == 5
    assert "keyword_withdrawals_v1" in {
        r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }


def test_unavailable_index_is_a_failed_retrieval(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from naturali.ports.state import ProjectionUnavailable

    vault.write("clm_u", "kestrel")
    opened = open_store(vault.api.naturali, vault.store)

    def broken(*args: object) -> list[tuple[str, float]]:
        raise ProjectionUnavailable("disk I/O error")

    monkeypatch.setattr(opened.state, "match", broken)
    result = vault.grep("kestrel")
    assert result["index"]["state"] == "unavailable" and result["total"] is None
    assert vault.lookup("clm_u")["status"] == "found"  # lookup does not depend on FTS5


def test_lookup(vault: Vault) -> None:
    vault.write("org_1", "", kind="page", type="organization", title="Acme  Corp", aliases=["ACME"])
    vault.write(
        "org_2", "", kind="page", type="organization", title="Acme Holdings", aliases=["acme"]
    )
    vault.write("per_1", "", kind="page", type="person", title="Ｊｏｈｎ Smith")
    assert vault.lookup("org_1")["status"] == "found"
    assert vault.lookup("ORG_1")["status"] == "missing"  # ids are case-sensitive
    assert [h["id"] for h in vault.lookup("  acme   corp ")["hits"]] == ["org_1"]
    ambiguous = vault.lookup("acme")
    assert ambiguous["status"] == "ambiguous"
    assert [h["id"] for h in ambiguous["hits"]] == ["org_1", "org_2"]
    assert vault.lookup("acme", type="person")["status"] == "missing"
    assert vault.lookup("john smith")["hits"][0]["id"] == "per_1"  # NFKC
    assert vault.lookup("john smit")["status"] == "missing"  # never fuzzy
    assert_error(vault.api.post(f"{vault.base}/lookup", json={"query": "x" * 201}), 400)


def test_records_inventory_and_record(vault: Vault) -> None:
    for i in range(5):
        vault.write(f"clm_{i}", f"body {i}")
    vault.write("clm_gone", "x", lifecycle="withdrawn")
    url = f"{vault.base}/records"
    first = vault.api.post(url, json={"limit": 2}).json()
    assert [r["id"] for r in first["records"]] == ["clm_0", "clm_1"]
    assert first["total"] == 5 and first["nextOffset"] == 2
    rest = vault.api.post(url, json={"limit": 10, "offset": 2}).json()
    assert [r["id"] for r in rest["records"]] == ["clm_2", "clm_3", "clm_4"]
    assert rest["nextOffset"] is None
    assert_error(vault.api.get(f"{url}/clm_gone"), 404, "record_not_found")
    record = vault.api.get(f"{url}/clm_3").json()
    assert record["frontMatter"]["id"] == "clm_3" and record["body"] == "body 3"


def test_other_members_and_stores(vault: Vault) -> None:
    _, stranger = vault.api.user("stranger")
    r = vault.api.post(f"{vault.base}/grep", stranger, json={"query": "x"})
    assert_error(r, 404)
    wrong = f"/v1/projects/{vault.project}/memory_stores/mstore_nope/knowledge/grep"
    assert_error(vault.api.post(wrong, json={"query": "x"}), 404, "memory_store_not_found")


def test_edits_are_seen_without_inotify(vault: Vault) -> None:
    """Where inotify is unavailable the scanner stats every file instead."""
    vault.write("clm_w", "first wording about puffins")
    assert vault.ids("puffins") == ["clm_w"]
    scanner = open_store(vault.api.naturali, vault.store).scanner
    scanner._watch._libc = None  # as on a system without inotify
    scanner._watch.close()
    vault.write("clm_w", "second wording about gannets")
    assert vault.ids("gannets") == ["clm_w"]
    vault.write("clm_v", "more gannets", name="sub/dir/clm_v.md")
    assert set(vault.ids("gannets")) == {"clm_w", "clm_v"}


def test_new_subfolders_are_watched(vault: Vault) -> None:
    vault.write("clm_a", "terns nest on cliffs")
    assert vault.ids("terns") == ["clm_a"]
    vault.write("clm_b", "terns dive", name="deep/er/clm_b.md")
    assert set(vault.ids("terns")) == {"clm_a", "clm_b"}
    vault.write("clm_b", "now about skuas", name="deep/er/clm_b.md")
    assert vault.ids("terns") == ["clm_a"] and vault.ids("skuas") == ["clm_b"]


def test_projections_per_filter_set_are_bounded(vault: Vault) -> None:
    from naturali.storage.sqlite.state import MAX_SCOPES

    for i in range(3):
        vault.write(f"clm_{i}", "shared words", tags=[f"t{i}"])
    for i in range(MAX_SCOPES + 8):
        assert vault.ids("shared", tag=f"t{i % 3}", limit=1 + i % 50) in ([f"clm_{i % 3}"], [])
        vault.grep("shared", kind="claim", offset=i % 3, tag=f"t{i % 3}", lifecycle="all")
        vault.grep("shared", since=f"2026-01-{i % 28 + 1:02d}")
    db = sqlite3.connect(vault.path.parent / "state.sqlite")
    tables = [
        r[0]
        for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        if re.fullmatch(r"keyword_fts_v1_[a-z0-9]{16}", r[0])
    ]
    assert len(tables) <= MAX_SCOPES
    vault.api.naturali.records._reconciled.clear()
    assert vault.ids("shared", tag="t1") == ["clm_1"]  # an evicted scope is rebuilt
