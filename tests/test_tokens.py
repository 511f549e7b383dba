"""Named tokens with a scope, project limits and an expiry, revoked at once; on both backends,
through the HTTP API (and on PostgreSQL across two servers)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, assert_error
from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.errors import Unauthenticated
from naturali.settings import Settings


def _token(api: Api, token: str | None = None, **body: Any) -> dict[str, Any]:
    r = api.post("/v1/tokens", token, json={"name": "agent", **body})
    assert r.status_code == 201, r.text
    return dict(r.json())


def test_a_token_is_shown_once_and_listed_without_its_secret(api: Api) -> None:
    made = _token(api, scope="read", expires_in="30d")
    assert made["token"].startswith("nk_") and made["scope"] == "read"
    assert made["expires_at"] > made["created_at"]
    listed = api.get("/v1/tokens").json()["data"]
    assert {t["name"] for t in listed} == {"default", "agent"}
    assert all("token" not in t for t in listed)
    catalog = api.naturali.settings.data_dir / "catalog.sqlite"
    assert not catalog.exists() or made["token"].encode() not in catalog.read_bytes()
    api.get("/v1/projects", made["token"])
    api.naturali.auth._touched.clear()  # noqa: SLF001 - the next use records its time
    assert api.get("/v1/projects", made["token"]).status_code == 200
    used = next(t for t in api.get("/v1/tokens").json()["data"] if t["id"] == made["id"])
    assert used["last_used_at"] is not None


def test_a_read_token_reads_and_cannot_write(api: Api) -> None:
    project = api.project()
    reader = _token(api, scope="read")["token"]
    assert api.search(project, reader, query="refunds").status_code == 200
    r = api.post(
        f"/v1/projects/{project}/documents", reader, json={"path": "/a.md", "content": "x"}
    )
    assert_error(r, 403, "insufficient_scope")
    assert_error(api.post("/v1/projects", reader, json={"name": "p"}), 403, "insufficient_scope")
    assert_error(api.post("/v1/tokens", reader, json={"name": "more"}), 403, "insufficient_scope")


def test_a_write_token_writes_and_cannot_manage(api: Api) -> None:
    project = api.project()
    writer = _token(api, scope="write")["token"]
    r = api.post(
        f"/v1/projects/{project}/documents", writer, json={"path": "/a.md", "content": "x"}
    )
    assert r.status_code == 201
    user_id, _ = api.user("someone")
    r = api.put(f"/v1/projects/{project}/members/{user_id}", writer, json={"role": "viewer"})
    assert_error(r, 403, "insufficient_scope")


def test_a_token_limited_to_one_project_does_not_see_another(api: Api) -> None:
    mine, other = api.project("a"), api.project("b")
    limited = _token(api, scope="admin", projects=[mine])
    token = limited["token"]
    assert api.search(mine, token, query="x").status_code == 200
    assert_error(api.search(other, token, query="x"), 404, "project_not_found")
    assert [p["id"] for p in api.get("/v1/projects", token).json()["data"]] == [mine]
    assert_error(api.post("/v1/projects", token, json={"name": "c"}), 403, "insufficient_scope")
    # what it makes is as limited as itself
    assert _token(api, token, scope="read")["projects"] == [mine]
    r = api.post("/v1/tokens", token, json={"name": "wider", "projects": [other]})
    assert_error(r, 404, "project_not_found")


def test_an_expired_or_revoked_token_is_refused(api: Api) -> None:
    short = _token(api, expires_in="1s")
    assert api.get("/v1/projects", short["token"]).status_code == 200
    time.sleep(1.1)
    assert_error(api.get("/v1/projects", short["token"]), 401, "token_expired")
    revoked = _token(api)
    assert api.get("/v1/projects", revoked["token"]).status_code == 200
    assert api.delete(f"/v1/tokens/{revoked['id']}").status_code == 204
    assert_error(api.get("/v1/projects", revoked["token"]), 401, "token_revoked")  # at once
    assert_error(api.delete(f"/v1/tokens/{revoked['id']}"), 404, "token_not_found")
    bad = api.post("/v1/tokens", json={"name": "x", "expires_in": "soon"})
    assert_error(bad, 400)


def test_a_token_revoked_through_one_server_is_refused_by_another(
    api: Api, tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]
) -> None:
    if "database_url" not in backend:
        pytest.skip("several servers share a catalog on PostgreSQL")
    made = _token(api)
    second = build_services(Settings(data_dir=tmp_path / "b", **backend), embedder=embedder)
    try:
        assert second.auth.authenticate(made["token"]).token_name == "agent"
        assert api.delete(f"/v1/tokens/{made['id']}").status_code == 204
        time.sleep(1.1)  # what the other server remembers, it reads again after a second
        with pytest.raises(Unauthenticated) as refused:
            second.auth.authenticate(made["token"])
        assert refused.value.code == "token_revoked"
    finally:
        second.close()


def test_a_token_made_by_a_short_lived_one_expires_with_it(api: Api) -> None:
    parent = _token(api, expires_in="2s", scope="admin")
    child = _token(api, parent["token"], name="forever")  # no expiry asked for
    assert child["expires_at"] == parent["expires_at"]
    later = _token(api, parent["token"], name="later", expires_in="30d")
    assert later["expires_at"] == parent["expires_at"]
    assert api.get("/v1/projects", child["token"]).status_code == 200
    time.sleep(2.1)
    assert_error(api.get("/v1/projects", child["token"]), 401, "token_expired")


def test_revoking_a_token_ends_every_token_made_through_it(api: Api) -> None:
    parent = _token(api, name="ci", scope="admin")
    child = _token(api, parent["token"], name="job", scope="admin")
    grandchild = _token(api, child["token"], name="step", scope="read")
    sibling = _token(api, name="other")
    assert api.delete(f"/v1/tokens/{parent['id']}").status_code == 204
    for made in (parent, child, grandchild):
        assert_error(api.get("/v1/projects", made["token"]), 401, "token_revoked")
    assert api.get("/v1/projects", sibling["token"]).status_code == 200
    listed = {t["id"]: t for t in api.get("/v1/tokens").json()["data"]}
    assert all(listed[m["id"]]["revoked_at"] for m in (parent, child, grandchild))


def test_a_token_cannot_make_a_wider_scope(api: Api) -> None:
    writer = _token(api, scope="write")
    # A write token manages no tokens at all; an admin token's child can be anything up to it.
    assert_error(api.post("/v1/tokens", writer["token"], json={"name": "x"}), 403)


def test_a_project_token_sees_and_revokes_only_its_own_lineage(api: Api) -> None:
    mine = api.project("a")
    limited = _token(api, scope="admin", projects=[mine], name="team")
    made = _token(api, limited["token"], name="bot", scope="read")
    seen = {t["id"] for t in api.get("/v1/tokens", limited["token"]).json()["data"]}
    assert seen == {limited["id"], made["id"]}
    default = next(t for t in api.get("/v1/tokens").json()["data"] if t["name"] == "default")
    r = api.delete(f"/v1/tokens/{default['id']}", limited["token"])
    assert_error(r, 404, "token_not_found")
    assert api.get("/v1/projects").status_code == 200  # the owner's token stands
    assert api.delete(f"/v1/tokens/{made['id']}", limited["token"]).status_code == 204
    assert_error(api.get("/v1/projects", made["token"]), 401, "token_revoked")


def test_a_token_revokes_only_itself_and_what_was_made_through_it(api: Api) -> None:
    parent = _token(api, name="ci", scope="admin")
    child = _token(api, parent["token"], name="job", scope="admin")  # unrestricted
    sibling = _token(api, parent["token"], name="other", scope="admin")
    default = next(t for t in api.get("/v1/tokens").json()["data"] if t["name"] == "default")
    for victim in (parent, sibling, default):
        r = api.delete(f"/v1/tokens/{victim['id']}", child["token"])
        assert_error(r, 404, "token_not_found")
    for standing in (parent, sibling):
        assert api.get("/v1/projects", standing["token"]).status_code == 200
    assert api.get("/v1/projects").status_code == 200
    grandchild = _token(api, child["token"], name="step", scope="read")
    assert api.delete(f"/v1/tokens/{grandchild['id']}", child["token"]).status_code == 204
    assert api.delete(f"/v1/tokens/{child['id']}", child["token"]).status_code == 204
    assert_error(api.get("/v1/projects", child["token"]), 401, "token_revoked")


@pytest.mark.parametrize("expires_in", ["0s", "0d", "000m"])
def test_a_token_that_would_be_expired_at_birth_is_refused(api: Api, expires_in: str) -> None:
    r = api.post("/v1/tokens", json={"name": "x", "expires_in": expires_in})
    assert_error(r, 400, "invalid_value")
