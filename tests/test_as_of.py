"""asOf: the records and dates tools answer from the store as it stood at a past instant,
rebuilt from its history (never from today's files), on both backends."""

from __future__ import annotations

import time
from typing import Any

import pytest

from conftest import Api, assert_error
from naturali.model import utcnow


class Store:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.project = api.project()
        r = api.post(f"/v1/projects/{self.project}/memory_stores", json={"name": "kb"})
        self.base = f"/v1/projects/{self.project}/memory_stores/{r.json()['id']}/knowledge"

    def post(self, route: str, status: int = 200, **body: Any) -> dict[str, Any]:
        r = self.api.post(f"{self.base}/{route}", json=body)
        assert r.status_code == status, r.text
        return dict(r.json())

    def grep(self, query: str, **body: Any) -> list[tuple[str, int]]:
        hits = self.post("grep", query=query, **body)["hits"]
        return [(h["id"], h["revision"]) for h in hits]

    def inventory(self, **body: Any) -> dict[str, tuple[int, str, str]]:
        rows = self.post("records", **body)["records"]
        return {r["id"]: (r["revision"], r["lifecycle"], r["sha256"]) for r in rows}


def instant() -> str:
    """A moment strictly between the writes before it and those after."""
    time.sleep(0.002)
    moment = utcnow()
    time.sleep(0.002)
    return moment


@pytest.fixture
def store(api: Api) -> Store:
    return Store(api)


def test_each_instant_answers_with_that_instants_state(store: Store) -> None:
    before = instant()
    refund = store.post(
        "save",
        requestId="a1",
        record={"kind": "claim", "title": "Refund time", "body": "Refunds take five days."},
    )["records"][0]
    launch = store.post(
        "save",
        requestId="a2",
        record={
            "kind": "claim",
            "type": "decision",
            "title": "Launch date",
            "body": "We launch in March.",
            "occurred_at": "2026-03-01",
        },
    )["records"][0]
    t1 = instant()
    corrected = store.post(
        "correct",
        requestId="a3",
        id=refund["id"],
        expectedRevision=1,
        expectedHash=refund["sha256"],
        reason="policy changed",
        replacement={"title": "Refund time", "body": "Refunds take ten days."},
    )["records"]
    new_refund = corrected[0]
    t2 = instant()
    moved = store.post(
        "save",
        requestId="a4",
        id=launch["id"],
        expectedRevision=1,
        expectedHash=launch["sha256"],
        record={"body": "We launch in April.", "occurred_at": "2026-04-01"},
    )["records"][0]
    t3 = instant()
    store.post("withdraw", requestId="a5", id=launch["id"], reason="cancelled")
    t4 = instant()

    # before anything was written: nothing
    assert store.inventory(asOf=before) == {}
    # t1: both originals, active, at revision 1, cited by their own hashes
    assert store.inventory(asOf=t1) == {
        refund["id"]: (1, "active", refund["sha256"]),
        launch["id"]: (1, "active", launch["sha256"]),
    }
    assert store.grep("five days", asOf=t1) == [(refund["id"], 1)]
    assert store.grep("ten days", asOf=t1) == []
    # t2: the correction is in; old wording finds the replacement, as it does today
    assert store.grep("ten days", asOf=t2) == [(new_refund["id"], 1)]
    via = store.post("grep", query="five days", asOf=t2)["hits"]
    assert [(h["id"], h["via"]["id"]) for h in via] == [(new_refund["id"], refund["id"])]
    superseded = store.inventory(asOf=t2, lifecycle="superseded")
    assert superseded == {refund["id"]: (2, "superseded", corrected[1]["sha256"])}
    # t3: the launch moved to April; at t2 it was still March
    assert store.grep("April", asOf=t3) == [(launch["id"], 2)]
    assert store.grep("April", asOf=t2) == [] and store.grep("March", asOf=t2) == [
        (launch["id"], 1)
    ]
    march = store.post("timeline", asOf=t2)
    assert [(r["id"], r["date"]["value"]) for r in march["rows"]] == [(launch["id"], "2026-03-01")]
    assert march["asOf"] == t2
    april = store.post("timeline", asOf=t3)["rows"]
    assert [(r["id"], r["date"]["value"]) for r in april] == [(launch["id"], "2026-04-01")]
    # t4 and now: withdrawn, gone everywhere; before the withdrawal it is still there
    for at in (t4, None):
        extra = {"asOf": at} if at else {}
        assert launch["id"] not in store.inventory(lifecycle="all", **extra)
        assert store.grep("launch", **extra) == []
        assert store.post("timeline", **extra)["rows"] == []
        assert store.post("lookup", query="Launch date", **extra)["status"] == "missing"
    found = store.post("lookup", query="Launch date", asOf=t3)
    assert found["status"] == "found" and found["hits"][0]["citation"]["sha256"] == moved["sha256"]
    record = store.api.get(f"{store.base}/records/{launch['id']}", params={"asOf": t1})
    assert record.status_code == 200, record.text
    body = record.json()
    assert (body["revision"], body["sha256"], body["asOf"]) == (1, launch["sha256"], t1)
    assert "March" in body["body"]
    assert_error(store.api.get(f"{store.base}/records/{launch['id']}"), 404)
    # a present-time answer says nothing of asOf
    assert "asOf" not in store.post("records")


def test_an_instant_needs_a_zone(store: Store) -> None:
    for bad in ("2026-03-01", "2026-03-01T12:00:00", "yesterday"):
        assert_error(store.api.post(f"{store.base}/records", json={"asOf": bad}), 400)
    ok = store.post("records", asOf="2026-03-01T12:00:00+02:00")
    assert ok["asOf"] == "2026-03-01T10:00:00.000000Z"
