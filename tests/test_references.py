"""Nothing vanishes in silence: a record whose entities, endpoints or dependencies name no
available record is refused at save, and one excluded for it (written by other means, or
whose dependency was withdrawn) is reported in coverage and by knowledge_record. Entity
filters take an id, or an exact title or alias."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Api, StoreVault, assert_error


@pytest.fixture
def kb(api: Api) -> StoreVault:
    return StoreVault(api)


def _save(kb: StoreVault, request_id: str, status: int = 200, **record: Any) -> Any:
    response = kb.api.post(f"{kb.base}/save", json={"requestId": request_id, "record": record})
    assert response.status_code == status, response.text
    return response


def test_a_save_naming_no_record_is_refused_and_writes_nothing(kb: StoreVault) -> None:
    acme = _save(kb, "s1", kind="page", type="organization", title="Acme Corp", aliases=["acme"])
    acme_id = acme.json()["records"][0]["id"]
    before = sorted(p.name for p in kb.path.iterdir())
    for field, value in (("entities", ["acme"]), ("dependencies", ["clm_nope"]), ("owner", "x")):
        error = assert_error(
            _save(kb, f"bad-{field}", 400, kind="claim", title="Met", **{field: value}),
            400,
            "unresolved_reference",
        )
        assert error["param"] == f"record.{field}"
        assert "which is no available record of this store" in error["message"]
    by_title = assert_error(
        _save(kb, "bad-title", 400, kind="claim", title="Met", entities=["ACME "]), 400
    )
    assert f"'ACME ' is the title or alias of {acme_id}" in by_title["message"]
    rel = assert_error(
        _save(kb, "bad-rel", 400, kind="relationship", title="r", **{"from": acme_id, "to": "z"}),
        400,
    )
    assert rel["param"] == "record.to"
    assert sorted(p.name for p in kb.path.iterdir()) == before  # nothing written
    assert kb.api.get(f"{kb.base}/mutations/bad-entities").status_code == 404
    ok = _save(kb, "s2", kind="claim", title="Met Acme", body="We met.", entities=[acme_id])
    assert ok.json()["records"][0]["lifecycle"] == "active"
    assert kb.call("records")["coverage"] == {"complete": True, "issues": []}


def test_an_excluded_record_is_reported_everywhere(kb: StoreVault) -> None:
    kb.write("per_ann", "Ann runs support.", kind="page", type="person", title="Ann")
    kb.write("clm_met", "Ann met Acme about refunds.", entities=["acme"], title="Met")
    kb.write("clm_dep", "Follows from the meeting.", dependencies=["clm_met"], title="Dep")
    grep = kb.call("grep", query="refunds")
    assert grep["hits"] == []
    issues = {i["path"]: i["message"] for i in grep["coverage"]["issues"]}
    assert grep["coverage"]["complete"] is False
    assert issues == {
        "clm_met.md": "record clm_met is excluded: entities names 'acme', which is no record"
        " of this store",
        "clm_dep.md": "record clm_dep is excluded: dependencies names 'clm_met', which is"
        " itself excluded",
    }
    for route, body in (("records", {}), ("lookup", {"query": "Met"}), ("timeline", {})):
        assert kb.call(route, **body)["coverage"]["complete"] is False, route
    missing = assert_error(kb.api.get(f"{kb.base}/records/clm_met"), 404, "record_unavailable")
    assert missing["message"] == (
        "record clm_met is not available: entities names 'acme', which is no record of this store"
    )


def test_withdrawing_a_dependency_reports_its_dependants(kb: StoreVault) -> None:
    first = _save(kb, "w1", kind="claim", title="Base", body="The base fact.").json()
    base = first["records"][0]["id"]
    _save(kb, "w2", kind="claim", title="Built", body="Built on it.", dependencies=[base])
    assert kb.call("records")["total"] == 2
    kb.call("withdraw", requestId="w3", id=base, reason="wrong")
    listed = kb.call("records")
    assert listed["total"] == 0
    [issue] = listed["coverage"]["issues"]
    assert issue["message"].endswith(f"dependencies names '{base}', which is withdrawn")


def test_entity_filters_take_an_id_title_or_alias(kb: StoreVault) -> None:
    kb.write("per_ann", "", kind="page", type="person", title="Ann Lee", aliases=["Annie"])
    kb.write("per_bob", "", kind="page", type="person", title="Bob", aliases=["B"])
    kb.write("per_bee", "", kind="page", type="person", title="Bee", aliases=["b"])
    kb.write(
        "clm_1",
        "Ann met Acme.",
        entities=["per_ann"],
        occurred_at="2026-11-02T10:00:00Z",
        title="Meeting",
    )
    for name in ("per_ann", "ann lee", "  ANNIE "):
        rows = kb.call("timeline", entity=name)["rows"]
        assert [r["id"] for r in rows] == ["clm_1"], name
        assert kb.call("chronicle/since", since="2026-11-01", entity=name)["rows"] == rows
        seen = kb.call("chronicle/last_seen", entity=name)
        assert seen["lastSeen"]["id"] == "clm_1", name
    ambiguous = assert_error(
        kb.api.post(f"{kb.base}/timeline", json={"entity": "B"}), 409, "ambiguous_entity"
    )
    assert ambiguous["message"] == (
        "entity 'B' is ambiguous: it is the title or alias of per_bee, per_bob; name one by its id"
    )
    assert ambiguous["param"] == "entity"
    assert kb.call("timeline", entity="nobody")["rows"] == []
