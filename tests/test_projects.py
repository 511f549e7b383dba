"""Projects, tokens, members and roles through the HTTP API and on first start."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Api, assert_error
from naturali.compose import build_services
from naturali.errors import Unauthenticated
from naturali.settings import Settings


def test_missing_and_bad_tokens_are_401(api: Api) -> None:
    assert_error(api.http.get("/v1/projects"), 401, "missing_token")
    assert_error(api.get("/v1/projects", token="nk_wrong"), 401, "invalid_token")
    bad_scheme = api.http.get("/v1/projects", headers={"Authorization": f"Basic {api.token}"})
    assert_error(bad_scheme, 401)


def test_create_and_list_projects(api: Api) -> None:
    project_id = api.project("alpha")
    assert project_id.startswith("proj_") and len(project_id) == 21
    listed = api.get("/v1/projects").json()["data"]
    assert [(p["id"], p["name"], p["role"]) for p in listed] == [(project_id, "alpha", "owner")]
    assert api.get(f"/v1/projects/{project_id}").json()["role"] == "owner"


def test_non_member_gets_404_member_without_role_gets_403(api: Api) -> None:
    project_id = api.project()
    _, stranger = api.user("stranger")
    assert_error(api.get(f"/v1/projects/{project_id}", token=stranger), 404, "project_not_found")
    assert_error(api.search(project_id, token=stranger, query="x"), 404)
    viewer = api.member(project_id, "viewer")
    assert api.search(project_id, token=viewer, query="anything").status_code == 200
    write = api.post(
        f"/v1/projects/{project_id}/documents", viewer, json={"path": "/a.md", "content": "text"}
    )
    assert_error(write, 403, "insufficient_role")
    editor = api.member(project_id, "editor")
    ok = api.post(
        f"/v1/projects/{project_id}/documents", editor, json={"path": "/a.md", "content": "text"}
    )
    assert ok.status_code == 201
    # Editors write documents but do not manage members.
    user_id, _ = api.user("third")
    assert_error(
        api.put(f"/v1/projects/{project_id}/members/{user_id}", editor, json={"role": "viewer"}),
        403,
    )


def test_member_routes(api: Api) -> None:
    project_id = api.project()
    user_id, token = api.user("bob")
    url = f"/v1/projects/{project_id}/members/{user_id}"
    assert api.put(url, json={"role": "editor"}).json()["role"] == "editor"
    roles = {
        m["user_id"]: m["role"]
        for m in api.get(f"/v1/projects/{project_id}/members").json()["data"]
    }
    assert roles[user_id] == "editor"
    assert_error(api.put(url, json={"role": "admin"}), 400, "invalid_role")
    assert_error(api.put(url, json={"role": "viewer", "extra": 1}), 400, "unknown_field")
    assert api.delete(url).status_code == 204
    assert_error(api.get(f"/v1/projects/{project_id}", token=token), 404)


def test_the_last_owner_cannot_leave(api: Api) -> None:
    project_id = api.project()
    owner_id = api.get(f"/v1/projects/{project_id}/members").json()["data"][0]["user_id"]
    assert_error(api.delete(f"/v1/projects/{project_id}/members/{owner_id}"), 409, "last_owner")


def test_first_start_writes_owner_token_0600(tmp_path: Path) -> None:
    naturali = build_services(Settings(data_dir=tmp_path))
    token = naturali.bootstrap()
    assert token and token.startswith("nk_")
    token_file = tmp_path / "owner-token"
    assert token_file.read_text().strip() == token
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert naturali.bootstrap() is None  # printed once: a second start creates nothing
    assert naturali.auth.authenticate(token).name == "owner"
    # Tokens are stored hashed: the secret is not in the database file.
    naturali.close()
    assert token.encode() not in (tmp_path / "catalog.sqlite").read_bytes()


def test_a_known_token_is_answered_without_a_store_read_and_a_refused_one_is_not_kept(
    tmp_path: Path,
) -> None:
    naturali = build_services(Settings(data_dir=tmp_path))
    token = naturali.bootstrap()
    assert token is not None
    reads: list[str] = []
    lookup = naturali.storage.token_for

    def counted(token_hash: str) -> object:
        reads.append(token_hash)
        return lookup(token_hash)

    naturali.storage.token_for = counted  # type: ignore[method-assign]
    owner = naturali.auth.authenticate(token)
    assert naturali.auth.authenticate(token) == owner and len(reads) == 1
    # A refused token is never remembered: the store is asked each time.
    later = naturali.users.new_token(owner.id)
    for _ in range(2):
        with pytest.raises(Unauthenticated):
            naturali.auth.authenticate(later + "x")
    assert naturali.auth.authenticate(later).id == owner.id  # its own token: another name
    assert len(reads) == 4
    naturali.close()


FIXED = "nk_fixed_for_ci_7Qm2Zx9Lp4Rt8Vw3Ky6"


def test_bootstrap_token_from_settings(tmp_path: Path) -> None:
    naturali = build_services(
        Settings.load({"data_dir": tmp_path}, env={"NATURALI_BOOTSTRAP_TOKEN": FIXED})
    )
    assert naturali.bootstrap() == FIXED
    assert naturali.auth.authenticate(FIXED).name == "owner"
    naturali.close()


@pytest.mark.parametrize("weak", ["nk_fixed_for_ci", "a" * 40, "abababababababababababababababab"])
def test_a_guessable_bootstrap_token_is_refused(tmp_path: Path, weak: str) -> None:
    with pytest.raises(ValueError, match="bootstrap_token"):
        Settings.load({"data_dir": tmp_path}, env={"NATURALI_BOOTSTRAP_TOKEN": weak})
    serve = subprocess.run(
        [sys.executable, "-m", "naturali.cli.main", "serve", "--data-dir", str(tmp_path)],
        env={**os.environ, "NATURALI_BOOTSTRAP_TOKEN": weak},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert serve.returncode != 0 and "bootstrap_token" in serve.stderr
    assert not (tmp_path / "catalog.sqlite").exists()


def test_projects_validate_body(api: Api) -> None:
    assert_error(api.post("/v1/projects", json={}), 400, "missing_field")
    assert_error(api.post("/v1/projects", json={"name": 5}), 400)
    assert_error(api.post("/v1/projects", json={"name": "x", "color": "red"}), 400, "unknown_field")
    assert_error(
        api.post(
            "/v1/projects", content=b"{not json", headers={"Content-Type": "application/json"}
        ),
        400,
    )
    assert len(api.get("/v1/projects").json()["data"]) == 0


def test_unknown_route_uses_the_error_shape(api: Api) -> None:
    assert_error(api.get("/v1/nothing-here"), 404)
