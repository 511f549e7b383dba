"""The authorization matrix, generated from ``/openapi.json``: every operation × no token, a
bad token, a non-member, a role too low, another project's ids, and the owner's own tokens
of too low a scope, limited to another project, expired and revoked. A new route fails here
until it is listed with the role it needs and a valid body, so it is covered the day it is
added."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from conftest import Api
from naturali.model import Source
from naturali.settings import BGE_SMALL

Body = Callable[["World"], dict[str, Any] | None]


@dataclass
class World:
    api: Api
    project: str
    document: str
    store: str
    memory: str
    record: str
    other_project: str
    other_document: str
    other_store: str
    tokens: dict[str, str]
    spare_user: str
    spare_token: str
    source: str

    def ids(self, foreign: str | None = None) -> dict[str, str]:
        ids = {
            "project_id": self.project,
            "document_id": self.document,
            "memory_store_id": self.store,
            "memory_id": self.memory,
            "record_id": self.record,
            "requestId": "seed",
            "user_id": self.spare_user,
            "token_id": self.spare_token,
            "source_id": self.source,
        }
        if foreign == "document_id":
            ids["document_id"] = self.other_document
        elif foreign is not None:  # everything inside a store: take another project's store
            ids["memory_store_id"] = self.other_store
        return ids


def _no_body(_: World) -> None:
    return None


# (method, path) → (role needed, body). "any" is any authenticated user, "admin" an admin token.
OPERATIONS: dict[tuple[str, str], tuple[str, Body]] = {
    ("get", "/v1/projects"): ("any", _no_body),
    ("post", "/v1/projects"): ("any", lambda w: {"name": "authz"}),
    ("get", "/v1/tokens"): ("admin", _no_body),
    ("post", "/v1/tokens"): ("admin", lambda w: {"name": "authz"}),
    ("delete", "/v1/tokens/{token_id}"): ("admin", _no_body),
    ("get", "/v1/projects/{project_id}"): ("read", _no_body),
    ("patch", "/v1/projects/{project_id}"): ("owner", lambda w: {"embedding_model": BGE_SMALL}),
    ("get", "/v1/projects/{project_id}/usage"): ("read", _no_body),
    ("get", "/v1/projects/{project_id}/audit"): ("owner", _no_body),
    ("get", "/v1/projects/{project_id}/members"): ("read", _no_body),
    ("put", "/v1/projects/{project_id}/members/{user_id}"): (
        "owner",
        lambda w: {"role": "viewer"},
    ),
    ("delete", "/v1/projects/{project_id}/members/{user_id}"): ("owner", _no_body),
    ("post", "/v1/projects/{project_id}/documents"): (
        "write",
        lambda w: {"path": "/authz.md", "content": "x"},
    ),
    ("get", "/v1/projects/{project_id}/documents"): ("read", _no_body),
    ("get", "/v1/projects/{project_id}/documents/folders"): ("read", _no_body),
    ("get", "/v1/projects/{project_id}/overview"): ("read", _no_body),
    ("get", "/v1/projects/{project_id}/ingest_jobs"): ("read", _no_body),
    ("get", "/v1/projects/{project_id}/documents/{document_id}"): ("read", _no_body),
    ("get", "/v1/projects/{project_id}/documents/{document_id}/passages"): ("read", _no_body),
    ("put", "/v1/projects/{project_id}/documents/{document_id}"): (
        "write",
        lambda w: {"content": "changed"},
    ),
    ("delete", "/v1/projects/{project_id}/documents/{document_id}"): ("write", _no_body),
    ("post", "/v1/projects/{project_id}/memory_stores"): ("write", lambda w: {"name": "s2"}),
    ("get", "/v1/projects/{project_id}/memory_stores"): ("read", _no_body),
    ("get", "/v1/projects/{project_id}/memory_stores/{memory_store_id}"): ("read", _no_body),
    ("patch", "/v1/projects/{project_id}/memory_stores/{memory_store_id}"): (
        "write",
        lambda w: {"name": "s3"},
    ),
    ("delete", "/v1/projects/{project_id}/memory_stores/{memory_store_id}"): ("owner", _no_body),
    ("post", "/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories"): (
        "write",
        lambda w: {"content": "x"},
    ),
    ("get", "/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories"): (
        "read",
        _no_body,
    ),
    ("get", "/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories/{memory_id}"): (
        "read",
        _no_body,
    ),
    (
        "patch",
        "/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories/{memory_id}",
    ): ("write", lambda w: {"content": "y"}),
    (
        "delete",
        "/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories/{memory_id}",
    ): ("write", _no_body),
    ("post", "/v1/projects/{project_id}/knowledge/search"): ("read", lambda w: {"query": "x"}),
    ("post", "/v1/projects/{project_id}/sources"): (
        "write",
        lambda w: {"kind": "git", "url": "https://example.com/r.git"},
    ),
    ("get", "/v1/projects/{project_id}/sources"): ("read", _no_body),
    ("get", "/v1/projects/{project_id}/sources/{source_id}"): ("read", _no_body),
    ("patch", "/v1/projects/{project_id}/sources/{source_id}"): ("write", lambda w: {"ref": "x"}),
    ("delete", "/v1/projects/{project_id}/sources/{source_id}"): ("write", _no_body),
    ("post", "/v1/projects/{project_id}/sources/{source_id}/sync"): ("write", _no_body),
}
_KNOWLEDGE = "/v1/projects/{project_id}/memory_stores/{memory_store_id}/knowledge"
OPERATIONS |= {
    ("post", f"{_KNOWLEDGE}/grep"): ("read", lambda w: {"query": "x"}),
    ("post", f"{_KNOWLEDGE}/lookup"): ("read", lambda w: {"query": "x"}),
    ("post", f"{_KNOWLEDGE}/records"): ("read", lambda w: {}),
    ("get", f"{_KNOWLEDGE}/records/{{record_id}}"): ("read", _no_body),
    ("get", f"{_KNOWLEDGE}/records/{{record_id}}/history"): ("read", _no_body),
    ("post", f"{_KNOWLEDGE}/timeline"): ("read", lambda w: {}),
    ("post", f"{_KNOWLEDGE}/chronicle/day"): ("read", lambda w: {"date": "2026-01-01"}),
    ("post", f"{_KNOWLEDGE}/chronicle/since"): ("read", lambda w: {"since": "2026-01-01"}),
    ("post", f"{_KNOWLEDGE}/chronicle/last_seen"): ("read", lambda w: {"entity": "x"}),
    ("get", f"{_KNOWLEDGE}/mutations/{{requestId}}"): ("read", _no_body),
    ("post", f"{_KNOWLEDGE}/save"): (
        "write",
        lambda w: {"requestId": "z1", "record": {"kind": "claim", "title": "t"}},
    ),
    ("post", f"{_KNOWLEDGE}/correct"): (
        "write",
        lambda w: {
            "requestId": "z2",
            "id": w.record,
            "expectedRevision": 1,
            "expectedHash": "0" * 64,
            "replacement": {"title": "u"},
            "reason": "r",
        },
    ),
    ("post", f"{_KNOWLEDGE}/withdraw"): (
        "write",
        lambda w: {"requestId": "z3", "id": w.record, "reason": "r"},
    ),
    ("post", f"{_KNOWLEDGE}/resume"): ("write", lambda w: {}),
}
TOO_LOW = {"write": "viewer", "owner": "editor"}
# The token scope each operation needs: by its role, and for those any user may call, by route.
SCOPE = {"read": "read", "write": "write", "owner": "admin", "admin": "admin"}
SCOPE_OF_ANY = {
    ("get", "/v1/projects"): "read",
    ("post", "/v1/projects"): "write",
}
LOWER = {"write": "read-token", "admin": "write-token"}


@pytest.fixture
def world(api: Api) -> World:
    project = api.project("a")
    document = api.doc(project, "/a.md", "Refunds take five days.")["id"]
    store = api.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"}).json()["id"]
    memory = api.post(
        f"/v1/projects/{project}/memory_stores/{store}/memories", json={"content": "Acme."}
    ).json()["id"]
    saved = api.post(
        f"/v1/projects/{project}/memory_stores/{store}/knowledge/save",
        json={"requestId": "seed", "record": {"kind": "claim", "title": "Seed"}},
    ).json()
    other = api.project("b")
    other_document = api.doc(other, "/b.md", "Other project.")["id"]
    other_store = api.post(f"/v1/projects/{other}/memory_stores", json={"name": "kb"}).json()["id"]
    tokens = {role: api.member(project, role) for role in ("viewer", "editor")}
    _, tokens["outsider"] = api.user("outsider")
    spare_user, _ = api.user("spare")
    owned = {
        name: api.post("/v1/tokens", json={"name": name, **body}).json()
        for name, body in {
            "read-token": {"scope": "read"},
            "write-token": {"scope": "write"},
            "elsewhere": {"scope": "admin", "projects": [other]},
            "expired": {"scope": "admin", "expires_in": "1s"},
            "revoked": {"scope": "admin"},
            "spare": {"scope": "read"},
        }.items()
    }
    tokens |= {name: made["token"] for name, made in owned.items()}
    assert api.delete(f"/v1/tokens/{owned['revoked']['id']}").status_code == 204
    time.sleep(1.1)  # the expired one expires
    assert api.naturali.indexer.idle(timeout=60)  # the seed record, embedded in the background
    # A source made in the catalog itself: no address of the suite's network is fetched.
    now = "2026-01-01T00:00:00Z"
    source = Source(
        "src_authz", project, "git", "https://example.com/r.git", None, "", "/r/", [], [], None,
        now, now,
    )  # fmt: skip
    api.naturali.storage.create_source(source)
    return World(
        api,
        project,
        document,
        store,
        memory,
        saved["records"][0]["id"],
        other,
        other_document,
        other_store,
        tokens,
        spare_user,
        owned["spare"]["id"],
        "src_authz",
    )


def _call(
    world: World, method: str, path: str, ids: dict[str, str], token: str | None
) -> tuple[int, dict[str, Any]]:
    url = re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], path)
    body = OPERATIONS[(method, path)][1](world)
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    response = world.api.http.request(method.upper(), url, json=body, headers=headers)
    return response.status_code, response.json() if response.content else {}


def _scoped(
    world: World, method: str, path: str, need: str, ids: dict[str, str]
) -> list[tuple[str | None, dict[str, str], int]]:
    """The owner's own tokens: expired and revoked are 401, one limited to another project
    does not see this one (404), and one of too low a scope is 403."""
    tokens = world.tokens
    expected: list[tuple[str | None, dict[str, str], int]] = [
        (tokens["expired"], ids, 401),
        (tokens["revoked"], ids, 401),
    ]
    if "{project_id}" in path:
        expected.append((tokens["elsewhere"], ids, 404))
    scope = SCOPE_OF_ANY[(method, path)] if need == "any" else SCOPE[need]
    if scope in LOWER:
        expected.append((tokens[LOWER[scope]], ids, 403))
    return expected


def test_every_operation_is_in_the_matrix(api: Api) -> None:
    schema = api.http.get("/openapi.json").json()
    listed = {(m, p) for p, ops in schema["paths"].items() for m in ops}
    assert listed == set(OPERATIONS)


def test_the_matrix(world: World) -> None:
    calls = leaks = 0
    for (method, path), (need, _) in sorted(OPERATIONS.items()):
        ids = world.ids()
        expected: list[tuple[str | None, dict[str, str], int]] = [
            (None, ids, 401),
            ("nk_not_a_token", ids, 401),
        ]
        if "{project_id}" in path:
            expected.append((world.tokens["outsider"], ids, 404))
        if need in TOO_LOW:
            expected.append((world.tokens[TOO_LOW[need]], ids, 403))
        foreign = next((p for p in ("document_id", "memory_store_id") if f"{{{p}}}" in path), None)
        if foreign:
            expected.append((world.api.token, world.ids(foreign), 404))
        expected += _scoped(world, method, path, need, ids)
        for token, call_ids, status in expected:
            got, body = _call(world, method, path, call_ids, token)
            calls += 1
            if got != status:
                leaks += 1
            assert got == status, (method, path, token, got, body)
            assert set(body) == {"error"}, body
    assert calls >= 6 * len(OPERATIONS) and leaks == 0
