"""The audit trail: every write through the API, with who, what, when, its request id and
outcome, readable by owners only, filterable and paged; reads and searches are not in it, and
neither is anything a body held."""

from __future__ import annotations

from conftest import Api, assert_error


def _trail(api: Api, project: str, token: str | None = None, **params: str) -> list[dict]:  # type: ignore[type-arg]
    r = api.get(f"/v1/projects/{project}/audit", token, params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["data"])


def test_every_write_is_in_the_trail_with_its_request_id(api: Api) -> None:
    project = api.project()
    created = api.post(
        f"/v1/projects/{project}/documents",
        json={"path": "/secret.md", "content": "The vault code is 4711."},
    )
    assert created.status_code == 201
    request_id = created.headers["x-request-id"]
    document = created.json()["id"]
    assert api.search(project, query="vault code").status_code == 200  # a read: not audited
    store = api.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"}).json()["id"]
    save = api.post(
        f"/v1/projects/{project}/memory_stores/{store}/knowledge/save",
        json={"requestId": "r1", "record": {"kind": "claim", "title": "Door", "body": "x"}},
    )
    assert save.status_code == 200
    editor = api.member(project, "editor")
    refused = api.delete(f"/v1/projects/{project}/documents/{document}", editor + "x")
    assert refused.status_code == 401  # no user: nothing to attribute
    assert api.delete(f"/v1/projects/{project}/documents/{document}").status_code == 200
    trail = _trail(api, project)
    operations = [e["operation"] for e in trail]
    assert operations == [
        "POST /v1/projects",
        "POST /v1/projects/{project_id}/documents",
        "POST /v1/projects/{project_id}/memory_stores",
        "POST /v1/projects/{project_id}/memory_stores/{memory_store_id}/knowledge/save",
        "PUT /v1/projects/{project_id}/members/{user_id}",
        "DELETE /v1/projects/{project_id}/documents/{document_id}",
    ]
    first = trail[1]
    assert first["request_id"] == request_id and first["status"] == 201
    assert first["ids"] == {"project_id": project, "created": document}
    assert first["token_name"] == "default" and first["user_id"]
    assert "4711" not in str(trail) and "vault" not in str(trail)  # never a body or a query
    only = _trail(
        api, project, operation="DELETE /v1/projects/{project_id}/documents/{document_id}"
    )
    assert [e["ids"]["document_id"] for e in only] == [document]
    assert _trail(api, project, since="2999-01-01T00:00:00Z") == []
    page = api.get(f"/v1/projects/{project}/audit", params={"limit": 2}).json()
    assert len(page["data"]) == 2 and page["next_cursor"]
    rest = api.get(f"/v1/projects/{project}/audit", params={"cursor": page["next_cursor"]}).json()
    assert [e["seq"] for e in page["data"] + rest["data"]] == [e["seq"] for e in trail]


def test_a_refused_write_is_in_the_trail_with_its_outcome(api: Api) -> None:
    project = api.project()
    viewer = api.member(project, "viewer")
    r = api.post(
        f"/v1/projects/{project}/documents", viewer, json={"path": "/a.md", "content": "x"}
    )
    assert r.status_code == 403
    denied = [e for e in _trail(api, project) if e["status"] == 403]
    assert denied and denied[0]["operation"] == "POST /v1/projects/{project_id}/documents"


def test_only_owners_read_the_trail(api: Api) -> None:
    project = api.project()
    editor = api.member(project, "editor")
    assert_error(api.get(f"/v1/projects/{project}/audit", editor), 403, "insufficient_role")
    every = api.get("/healthz")
    assert every.headers["x-request-id"].startswith("req_")
