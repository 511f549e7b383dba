"""Dates and chronicle (docs/spec/retrieval-and-dates.md, "Dates and Chronicle"), row by row."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from conftest import Api, StoreVault, assert_error


class Vault(StoreVault):
    def ids(self, route: str, **body: Any) -> list[str]:
        return [row["id"] for row in self.call(route, **body)["rows"]]


@pytest.fixture
def vault(api: Api) -> Vault:
    return Vault(api)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # inspects SQLite files
def test_occurrence_comes_from_structured_fields_only(vault: Vault) -> None:
    vault.write(
        "clm_a",
        "Decided on 2026-01-05 in prose.",
        type="decision",
        occurred_at="2026-11-01",
        recorded_at="2026-11-03T10:00:00Z",
    )
    vault.write(
        "mtg_1",
        "Kickoff.",
        kind="page",
        type="meeting",
        title="Kickoff",
        fields={"occurred_at": "2026-11-02T09:00:00Z"},
    )
    vault.write("clm_b", "Prose says 2026-11-01.", recorded_at="2026-11-01T08:00:00Z")
    assert vault.ids("timeline") == ["clm_a", "mtg_1"]
    # recording time never stands in for occurrence; prose dates make no record
    assert vault.ids("timeline", timeField="recorded_at") == ["clm_b", "clm_a"]
    row = vault.call("timeline")["rows"][0]
    assert row["date"] == {
        "field": "occurred_at",
        "value": "2026-11-01",
        "dateOnly": True,
        "start": "2026-11-01T00:00:00.000000Z",
        "end": "2026-11-02T00:00:00.000000Z",
    }
    db = sqlite3.connect(vault.path.parent / "state.sqlite")
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert {"temporal_dates_v1", "temporal_entities_v1"} <= names


@pytest.mark.parametrize(
    "bound",
    [
        "2026-02-30",
        "2026-11-03T10:00:00",
        "2026-11-03T10:00Z",
        "yesterday",
        "2026-11",
        "2027-02-29",
        "03/11/2026",
        "2026-11-03T25:00:00Z",
    ],
)
def test_bad_bounds_are_errors(vault: Vault, bound: str) -> None:
    for route, body in (
        ("timeline", {"since": bound}),
        ("timeline", {"until": bound}),
        ("chronicle/since", {"since": bound}),
        ("chronicle/last_seen", {"entity": "x", "occurredOnOrBefore": bound}),
        ("grep", {"query": "x", "since": bound}),
    ):
        assert_error(vault.api.post(f"{vault.base}/{route}", json=body), 400)


def test_bounds_are_inclusive_and_date_only_covers_the_day(vault: Vault) -> None:
    vault.write("clm_late", occurred_at="2026-11-03T23:59:59Z")
    vault.write("clm_next", occurred_at="2026-11-04T00:00:00Z")
    vault.write("clm_day", occurred_at="2026-11-03")
    vault.write("clm_leap", occurred_at="2028-02-29")
    assert vault.ids("timeline", until="2026-11-03") == ["clm_day", "clm_late"]
    assert vault.ids("timeline", since="2026-11-04T00:00:00Z", until="2026-11-04T00:00:00Z") == [
        "clm_next"
    ]
    # a date-only record overlaps a range inside its day without claiming an instant
    assert vault.ids(
        "timeline", since="2026-11-03T12:00:00+02:00", until="2026-11-03T13:00:00+02:00"
    ) == ["clm_day"]
    assert vault.ids("timeline", since="2028-02-29", until="2028-02-29") == ["clm_leap"]


def test_kind_is_the_exact_record_type(vault: Vault) -> None:
    vault.write("clm_d", type="decision", occurred_at="2026-01-01")
    vault.write("clm_e", type="event", occurred_at="2026-01-02")
    vault.write("mtg_m", kind="page", type="meeting", fields={"occurred_at": "2026-01-03"})
    assert vault.ids("timeline", kind="decision") == ["clm_d"]
    assert vault.ids("timeline", kind="claim") == []  # not the record-kind category
    assert vault.ids("timeline", kind="meeting") == ["mtg_m"]
    assert vault.ids("timeline", order="desc") == ["mtg_m", "clm_e", "clm_d"]


def test_entity_filters_ignore_co_mentions(vault: Vault) -> None:
    vault.write("per_ann", "Ann", kind="page", type="person", title="Ann")
    vault.write("clm_ent", "Met.", occurred_at="2026-05-01", entities=["per_ann"])
    vault.write(
        "clm_own",
        "Due.",
        type="commitment",
        owner="per_ann",
        due_at="2026-05-09",
        occurred_at="2026-05-02",
    )
    vault.write(
        "rel_1",
        "Works.",
        kind="relationship",
        type="works_at",
        occurred_at="2026-05-03",
        **{"from": "per_ann", "to": "org_x"},
    )
    vault.write("org_x", "Org", kind="page", type="organization")
    vault.write("clm_mention", "per_ann and Ann were mentioned here.", occurred_at="2026-05-04")
    assert vault.ids("timeline", entity="per_ann") == ["clm_ent", "clm_own", "rel_1"]
    assert vault.ids("timeline", entity="per_ann", timeField="due_at") == ["clm_own"]
    assert vault.ids("chronicle/since", since="2026-05-02", entity="per_ann") == [
        "clm_own",
        "rel_1",
    ]


def test_eligibility_adds_superseded_and_expired_never_withdrawn(vault: Vault) -> None:
    vault.write("clm_new", occurred_at="2026-03-02", supersedes="clm_old")
    vault.write(
        "clm_old", occurred_at="2026-03-01", lifecycle="superseded", superseded_by="clm_new"
    )
    vault.write("clm_exp", occurred_at="2026-03-03", valid_until="2026-03-10")
    vault.write("clm_gone", occurred_at="2026-03-04", lifecycle="withdrawn")
    assert vault.ids("timeline") == ["clm_new"]
    assert vault.ids("timeline", eligibility="include_inactive") == [
        "clm_old",
        "clm_new",
        "clm_exp",
    ]


def test_grep_date_filters_apply_before_ranking(vault: Vault) -> None:
    vault.write("clm_a", "budget review", occurred_at="2026-01-10")
    vault.write("clm_b", "budget review budget", occurred_at="2026-02-10")
    vault.write("clm_c", "budget plan", recorded_at="2026-01-15T00:00:00Z")
    result = vault.call("grep", query="budget", since="2026-01-01", until="2026-01-31")
    assert [h["id"] for h in result["hits"]] == ["clm_a"] and result["total"] == 1
    assert [
        h["id"]
        for h in vault.call("grep", query="budget", timeField="recorded_at", since="2026-01-01")[
            "hits"
        ]
    ] == ["clm_c"]


def test_source_event_claims_replace_their_meeting(vault: Vault) -> None:
    vault.write(
        "mtg_k",
        "Kickoff meeting notes.",
        kind="page",
        type="meeting",
        title="Kickoff",
        fields={"occurred_at": "2026-06-01"},
    )
    vault.write(
        "clm_k",
        "We kicked off the project.",
        type="event",
        source_event=True,
        sources=["mtg_k"],
        occurred_at="2026-06-01",
    )
    vault.write(
        "mtg_other", "Other.", kind="page", type="meeting", fields={"occurred_at": "2026-06-02"}
    )
    assert vault.ids("timeline") == ["clm_k", "mtg_other"]
    assert vault.ids("timeline", kind="meeting") == ["mtg_k", "mtg_other"]


def test_pagination_and_snapshot(vault: Vault) -> None:
    for day in range(1, 8):
        vault.write(f"clm_{day}", occurred_at=f"2026-07-0{day}")
    first = vault.call("timeline", limit=3)
    assert [r["id"] for r in first["rows"]] == ["clm_1", "clm_2", "clm_3"]
    assert first["nextOffset"] == 3 and first["total"] == 7
    second = vault.call("timeline", limit=3, offset=3)
    assert second["snapshot"] == first["snapshot"]
    vault.write("clm_2", "edited", occurred_at="2026-07-02")
    assert vault.call("timeline", limit=3)["snapshot"] != first["snapshot"]


def test_response_budget_of_24_kib(vault: Vault) -> None:
    for i in range(40):
        vault.write(
            f"clm_{i:02d}",
            "word " * 400,
            occurred_at=f"2026-08-{i % 28 + 1:02d}",
            summary="s" * 1500,
            sources=[f"src_{i:02d}"],
        )
        vault.write(f"src_{i:02d}", "x", kind="page", type="source", summary="t" * 1500)
    result = vault.call("timeline", limit=200, includeSources=True)
    import json

    assert len(json.dumps(result).encode()) <= 24 * 1024
    assert result["budgetTruncated"] is True and result["nextOffset"] == len(result["rows"])
    assert result["sourcesTruncated"] is True
    ids = [s["id"] for s in result["sources"]]
    assert len(ids) == len(set(ids))  # deduplicated


def test_include_sources_lists_each_source_once(vault: Vault) -> None:
    vault.write(
        "mtg_s",
        "Sync.",
        kind="page",
        type="meeting",
        title="Weekly sync",
        fields={"occurred_at": "2026-09-01"},
    )
    vault.write("clm_1", "One.", occurred_at="2026-09-01", sources=["mtg_s"])
    vault.write("clm_2", "Two.", occurred_at="2026-09-01", sources=["mtg_s", "doc_nothere"])
    result = vault.call("timeline", includeSources=True)
    assert [s["id"] for s in result["sources"]] == ["mtg_s"]
    assert result["sources"][0]["title"] == "Weekly sync"


def test_group_by_source(vault: Vault) -> None:
    vault.write("per_ann", "Ann.", kind="page", type="person", title="Ann")
    vault.write(
        "mtg_a",
        "Planning.",
        kind="page",
        type="meeting",
        title="Planning",
        fields={"occurred_at": "2026-10-01"},
    )
    vault.write(
        "mtg_b",
        "Review.",
        kind="page",
        type="meeting",
        title="Review",
        fields={"occurred_at": "2026-10-08"},
    )
    vault.write(
        "rel_att",
        "Ann presented the roadmap, see [[clm_road]].",
        kind="relationship",
        type="attended",
        **{"from": "per_ann", "to": "mtg_a"},
    )
    vault.write(
        "clm_road",
        "Roadmap agreed.",
        entities=["per_ann"],
        sources=["mtg_a"],
        occurred_at="2026-10-01",
    )
    vault.write(
        "clm_ev",
        "The review happened.",
        type="event",
        source_event=True,
        sources=["mtg_b"],
        occurred_at="2026-10-08",
    )
    vault.write("clm_rev", "Ann raised risks.", entities=["per_ann"], sources=["mtg_b"])
    vault.write(
        "clm_late",
        "Ann followed up.",
        entities=["per_ann"],
        sources=["mtg_b"],
        occurred_at="2026-10-20",
    )
    vault.write("clm_free", "Ann joined.", entities=["per_ann"], occurred_at="2026-09-15")
    result = vault.call("timeline", entity="per_ann", group="source")
    rows = {r["id"]: r for r in result["rows"]}
    assert [r["id"] for r in result["rows"]] == ["clm_free", "mtg_a", "mtg_b", "clm_late"]
    assert rows["mtg_a"]["noteRecord"] == "rel_att" and rows["mtg_a"]["claims"] == 1
    assert rows["mtg_a"]["summary"].startswith("Ann presented") and rows["mtg_a"]["links"] == [
        "clm_road"
    ]
    assert rows["mtg_b"]["noteRecord"] is None and rows["mtg_b"]["eventClaim"] == "clm_ev"
    assert rows["mtg_b"]["summary"] == "The review happened." and rows["mtg_b"]["claims"] == 1
    assert_error(vault.api.post(f"{vault.base}/timeline", json={"group": "source"}), 400)
    assert_error(
        vault.api.post(
            f"{vault.base}/timeline",
            json={"group": "source", "entity": "per_ann", "kind": "meeting"},
        ),
        400,
    )
    assert_error(
        vault.api.post(
            f"{vault.base}/timeline",
            json={"group": "source", "entity": "per_ann", "timeField": "recorded_at"},
        ),
        400,
    )


def test_chronicle_day_in_a_time_zone(vault: Vault) -> None:
    vault.write("clm_late", occurred_at="2026-11-03T23:30:00Z")
    vault.write("clm_noon", occurred_at="2026-11-03T12:00:00Z")
    assert vault.ids("chronicle/day", date="2026-11-03") == ["clm_noon", "clm_late"]
    tokyo = vault.call("chronicle/day", date="2026-11-04", timeZone="Asia/Tokyo")
    assert [r["id"] for r in tokyo["rows"]] == ["clm_late"]
    assert tokyo["rows"][0]["date"]["local"] == "2026-11-04T08:30:00+09:00"
    assert_error(
        vault.api.post(
            f"{vault.base}/chronicle/day", json={"date": "2026-11-03", "timeZone": "Mars/Olympus"}
        ),
        400,
    )
    assert_error(vault.api.post(f"{vault.base}/chronicle/day", json={"date": "2026-02-30"}), 400)
    for edge in ({"date": "9999-12-31"}, {"date": "9999-12-30", "week": True}):
        assert_error(vault.api.post(f"{vault.base}/chronicle/day", json=edge), 400, "invalid_date")


def test_chronicle_week_is_monday_to_sunday_across_dst(vault: Vault) -> None:
    # Europe/Berlin leaves summer time on Sunday 2026-10-25; the week is Mon 19 – Sun 25.
    vault.write("clm_before", occurred_at="2026-10-18T21:59:59Z")  # Sun 18, 23:59:59 local
    vault.write("clm_monday", occurred_at="2026-10-18T22:00:00Z")  # Mon 19, 00:00 local
    vault.write("clm_sunday", occurred_at="2026-10-25T22:59:00Z")  # Sun 25, 23:59 CET
    vault.write("clm_after", occurred_at="2026-10-25T23:00:00Z")  # Mon 26, 00:00 CET
    vault.write("clm_dateonly", occurred_at="2026-10-22")
    week = vault.call("chronicle/day", date="2026-10-22", week=True, timeZone="Europe/Berlin")
    assert [r["id"] for r in week["rows"]] == ["clm_monday", "clm_dateonly", "clm_sunday"]
    assert (week["from"], week["to"]) == ("2026-10-19", "2026-10-25")


def test_last_seen(vault: Vault) -> None:
    vault.write("per_bo", "Bo.", kind="page", type="person")
    vault.write("clm_1", occurred_at="2026-04-01", entities=["per_bo"])
    vault.write("clm_2", occurred_at="2026-04-10T09:00:00Z", entities=["per_bo"])
    vault.write("clm_3", "per_bo mentioned", occurred_at="2026-04-20")
    seen = vault.call("chronicle/last_seen", entity="per_bo")
    assert seen["found"] is True and seen["lastSeen"]["id"] == "clm_2"
    earlier = vault.call("chronicle/last_seen", entity="per_bo", occurredOnOrBefore="2026-04-09")
    assert earlier["lastSeen"]["id"] == "clm_1"
    never = vault.call("chronicle/last_seen", entity="per_bo", occurredOnOrBefore="2026-03-01")
    assert never["found"] is False and never["lastSeen"] is None
