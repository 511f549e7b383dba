"""Grants inside a project (docs/operations.md "Grants"): one project holds /hr/, /eng/ and
/public/ documents, two memory stores and a source under /eng/ and one under /hr/; tokens
limited to /eng/, to /public/ and one store, and to nothing call every route of the OpenAPI,
on hidden ids and on their own, and no path, id, title, text, store or source of the rest
appears in any body or header; what they were granted they read, search and write."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from conftest import Api, assert_error
from naturali.model import Source
from test_authz_matrix import OPERATIONS

DOCS = {  # path, text, a word of it no other part holds
    "hr": ("/hr/salaries.md", "# Salary bands\n\nEngineers earn zanzibar units.", "zanzibar"),
    "eng": ("/eng/deploy.md", "# Deploy guide\n\nDeploys use the quokka pipeline.", "quokka"),
    "public": ("/public/handbook.md", "# Handbook\n\nRefunds follow kestrel rules.", "kestrel"),
}
STORES = {
    "kb-public": ("The office opens at nine, ocelot said.", "Ocelot seed"),
    "kb-hr": ("Alice's review is due on Monday, narwhal.", "Narwhal seed"),
}
QUERY = "salary zanzibar deploy quokka refunds kestrel office ocelot review narwhal seed"


@dataclass
class Part:
    """What one of the project's parts is called: each string must not reach a caller that
    was not granted it."""

    strings: set[str] = field(default_factory=set)
    ids: dict[str, str] = field(default_factory=dict)  # its path slot → its id


@dataclass
class GrantWorld:
    api: Api
    project: str
    parts: dict[str, Part]  # "hr", "eng", "public" (documents, sources), stores by name
    record: str  # for the matrix's bodies: the hidden store's record
    spare_user: str
    spare_token: str


# Each limited token: its grant, and the parts it reaches.
LIMITED = {
    "eng": ({"path_prefixes": ["/eng/"], "memory_store_ids": []}, {"eng"}),
    "public": (
        {"path_prefixes": ["/public/"], "memory_store_ids": ["kb-public"]},
        {"public", "kb-public"},
    ),
    "nothing": ({"path_prefixes": [], "memory_store_ids": []}, set()),
}  # fmt: skip


def _store(api: Api, project: str, name: str) -> Part:
    text, title = STORES[name]
    base = f"/v1/projects/{project}/memory_stores"
    store = api.post(base, json={"name": name}).json()["id"]
    memory = api.post(f"{base}/{store}/memories", json={"content": text}).json()["id"]
    saved = api.post(
        f"{base}/{store}/knowledge/save",
        json={"requestId": f"seed-{name}", "record": {"kind": "claim", "title": title}},
    ).json()
    record = saved["records"][0]["id"]
    word = text.split(",")[-1].strip(" .")
    return Part(
        {store, name, memory, record, title, word},
        {"memory_store_id": store, "memory_id": memory, "record_id": record},
    )


def _source(api: Api, project: str, key: str) -> str:
    now = "2026-01-01T00:00:00Z"
    source = Source(
        f"src_{key}_grant", project, "git", f"https://example.com/{key}-secret.git", None, "",
        f"/{key}/", [], [], None, now, now,
    )  # fmt: skip
    api.naturali.storage.create_source(source)
    return source.id


@pytest.fixture
def world(api: Api) -> GrantWorld:
    project = api.project("grants")
    parts: dict[str, Part] = {}
    for key, (path, text, word) in DOCS.items():
        document = api.doc(project, path, text)["id"]
        title = text.splitlines()[0].lstrip("# ")
        parts[key] = Part({document, path, title, word}, {"document_id": document})
        if key != "public":  # a source under /eng/ and one under /hr/
            source = _source(api, project, key)
            parts[key].strings |= {source, f"{key}-secret"}
            parts[key].ids["source_id"] = source
    for name in STORES:
        parts[name] = _store(api, project, name)
    spare_user, _ = api.user("spare")
    hr_lead, _ = api.user("hr-lead")  # a member limited to /hr/: its grant is of the rest too
    limits = {
        "path_prefixes": ["/hr/"],
        "memory_store_ids": [parts["kb-hr"].ids["memory_store_id"]],
    }
    r = api.put(f"/v1/projects/{project}/members/{hr_lead}", json={"role": "editor", **limits})
    assert r.status_code == 200, r.text
    parts["hr"].strings.add("/hr/")
    spare = api.post("/v1/tokens", json={"name": "spare", "scope": "read"}).json()
    assert api.naturali.indexer.idle(timeout=60)
    record = parts["kb-hr"].ids["record_id"]
    return GrantWorld(api, project, parts, record, spare_user, spare["id"])


def _token(world: GrantWorld, name: str) -> str:
    limits, _ = LIMITED[name]
    stores = [world.parts[s].ids["memory_store_id"] for s in limits["memory_store_ids"]]
    body = {"name": name, "scope": "admin", **limits, "memory_store_ids": stores}
    made = world.api.post("/v1/tokens", json=body)
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def _ids(world: GrantWorld, reached: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The path slots filled with what the token was not granted, and with what it was."""
    base = {
        "project_id": world.project,
        "requestId": "seed-kb-hr",
        "user_id": world.spare_user,
        "token_id": world.spare_token,
    }
    hidden, own = dict(base), dict(base)
    for key, part in world.parts.items():
        for slot, value in part.ids.items():
            if key not in reached:
                hidden.setdefault(slot, value)
            else:
                own[slot] = value
    return hidden, {**hidden, **own}


def _leaks(world: GrantWorld, reached: set[str], sent: str, answer: str) -> set[str]:
    """The strings of the parts not reached that the answer holds (those it was sent aside)."""
    hidden = {s for key, part in world.parts.items() if key not in reached for s in part.strings}
    return {s for s in hidden if s in answer and s not in sent}


def _call(world: GrantWorld, token: str, method: str, path: str, ids: dict[str, str]) -> Any:
    url = re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], path)
    body = OPERATIONS[(method, path)][1](world)  # type: ignore[arg-type]
    if path.endswith("/knowledge/search"):
        body = {"query": QUERY, "limit": 100, "explain": True}
    headers = {"Authorization": f"Bearer {token}"}
    return url, body, world.api.http.request(method.upper(), url, json=body, headers=headers)


NAMES_AN_ITEM = ("{document_id}", "{memory_store_id}", "{source_id}")


@pytest.mark.parametrize("name", sorted(LIMITED))
def test_no_route_shows_a_limited_token_what_it_was_not_granted(
    world: GrantWorld, name: str
) -> None:
    token, (_, reached) = _token(world, name), LIMITED[name]
    hidden_ids, own_ids = _ids(world, reached)
    calls = 0
    for pass_ids in (hidden_ids, own_ids):
        for method, path in sorted(OPERATIONS):
            url, body, r = _call(world, token, method, path, pass_ids)
            answer = r.text + " ".join(f"{k}: {v}" for k, v in r.headers.items())
            leaked = _leaks(world, reached, url + str(body), answer)
            assert not leaked, (name, method, path, r.status_code, leaked, r.text[:300])
            named = [slot for slot in NAMES_AN_ITEM if slot in path]
            if pass_ids is hidden_ids and any(
                hidden_ids[s.strip("{}")] != own_ids[s.strip("{}")] for s in named
            ):
                assert r.status_code in (403, 404), (name, method, path, r.status_code, r.text)
            calls += 1
    assert calls == 2 * len(OPERATIONS)
    # Nothing hidden was changed by any of it.
    for key, part in world.parts.items():
        if "document_id" in part.ids:
            got = world.api.get(f"/v1/projects/{world.project}/documents/{part.ids['document_id']}")
            assert got.status_code == 200 or key in reached, (key, got.text)


def test_a_limited_token_searches_reads_and_counts_only_its_grant(world: GrantWorld) -> None:
    api, project = world.api, world.project
    eng, public = _token(world, "eng"), _token(world, "public")
    found = api.search(project, eng, query=QUERY, limit=100).json()["results"]
    assert {h.get("path") for h in found} == {"/eng/deploy.md"}
    # The request's own filters only narrow it: /hr/ asked for is nothing, / is /eng/.
    assert api.search(project, eng, query=QUERY, document_paths=["/hr/"]).json()["results"] == []
    fetched = api.search(project, eng, document_paths=["/"]).json()["results"]
    assert {h["path"] for h in fetched} == {"/eng/deploy.md"}
    mixed = api.search(project, public, query=QUERY, limit=100).json()["results"]
    assert {h.get("path") or h["memory_store_name"] for h in mixed} == {
        "/public/handbook.md",
        "kb-public",
    }
    listed = api.get(f"/v1/projects/{project}/documents", eng).json()["data"]
    assert [d["path"] for d in listed] == ["/eng/deploy.md"]
    usage = api.get(f"/v1/projects/{project}/usage", eng).json()
    assert (usage["documents"], usage["memories"]) == (1, 0)
    whole = api.get(f"/v1/projects/{project}/overview").json()
    in_public = {s["name"]: s["memories"] for s in whole["memory_stores"]}["kb-public"]
    overview = api.get(f"/v1/projects/{project}/overview", public).json()
    assert (overview["documents"], overview["memories"]) == (1, in_public)
    assert overview["chunks"] < whole["chunks"] and overview["index"]["rows"] == 0
    assert [s["name"] for s in overview["memory_stores"]] == ["kb-public"]
    folders = api.get(f"/v1/projects/{project}/documents/folders", eng).json()
    assert [f["path"] for f in folders["data"]] == ["/eng/"]
    sources = api.get(f"/v1/projects/{project}/sources", eng).json()["data"]
    assert [s["id"] for s in sources] == [world.parts["eng"].ids["source_id"]]
    stores = api.get(f"/v1/projects/{project}/memory_stores", public).json()["data"]
    assert [s["name"] for s in stores] == ["kb-public"]


def test_a_limited_token_writes_only_inside_its_grant(world: GrantWorld) -> None:
    api, project = world.api, world.project
    eng = _token(world, "eng")
    documents = f"/v1/projects/{project}/documents"
    inside = api.post(documents, eng, json={"path": "/eng/new.md", "content": "New runbook."})
    assert inside.status_code == 201, inside.text
    outside = api.post(documents, eng, json={"path": "/hr/new.md", "content": "x"})
    assert_error(outside, 403, "outside_grant")
    moved = api.put(
        f"{documents}/{inside.json()['id']}", eng, json={"path": "/hr/moved.md", "content": "x"}
    )
    assert_error(moved, 403, "outside_grant")
    hr_doc = world.parts["hr"].ids["document_id"]
    assert_error(api.delete(f"{documents}/{hr_doc}", eng), 404, "document_not_found")
    hr_store = world.parts["kb-hr"].ids["memory_store_id"]
    save = api.post(
        f"/v1/projects/{project}/memory_stores/{hr_store}/knowledge/save",
        eng,
        json={"requestId": "w1", "record": {"kind": "claim", "title": "t"}},
    )
    assert_error(save, 403, "outside_grant")
    new_store = api.post(f"/v1/projects/{project}/memory_stores", eng, json={"name": "mine"})
    assert_error(new_store, 403, "outside_grant")
    source = {"kind": "git", "url": "https://example.com/r.git", "path": "/hr/"}
    assert_error(api.post(f"/v1/projects/{project}/sources", eng, json=source), 403)
    assert_error(api.get(f"/v1/projects/{project}/audit", eng), 403, "outside_grant")
    # The write it made is audited under its grant.
    trail = api.get(f"/v1/projects/{project}/audit").json()["data"]
    made = [e for e in trail if e["status"] == 201 and e["token_name"] == "eng"]
    assert made and made[0]["path_prefixes"] == ["/eng/"] and made[0]["memory_store_ids"] == []
    owner_made = [e for e in trail if e["token_name"] != "eng"]
    assert owner_made and owner_made[0]["path_prefixes"] is None


def test_a_token_made_by_a_limited_one_is_no_wider(world: GrantWorld) -> None:
    api = world.api
    eng = _token(world, "eng")
    wider = api.post("/v1/tokens", eng, json={"name": "w", "path_prefixes": ["/"]})
    assert_error(wider, 403, "outside_grant")
    narrower = api.post("/v1/tokens", eng, json={"name": "n", "path_prefixes": ["/eng/a/"]})
    assert narrower.status_code == 201 and narrower.json()["path_prefixes"] == ["/eng/a/"]
    inherited = api.post("/v1/tokens", eng, json={"name": "i"}).json()
    assert (inherited["path_prefixes"], inherited["memory_store_ids"]) == (["/eng/"], [])
    listed = {t["name"] for t in api.get("/v1/tokens", eng).json()["data"]}
    assert listed == {"eng", "n", "i"}  # its own lineage, not the owner's other tokens


def test_a_members_grant_meets_its_tokens_and_a_limited_owner_gives_no_more(
    world: GrantWorld,
) -> None:
    api, project = world.api, world.project
    user_id, token = api.user("engineer")
    members = f"/v1/projects/{project}/members"
    r = api.put(f"{members}/{user_id}", json={"role": "owner", "path_prefixes": ["/eng/"]})
    assert r.status_code == 200 and r.json()["path_prefixes"] == ["/eng/"]
    found = api.search(project, token, query=QUERY, limit=100).json()["results"]
    assert {h.get("path") or h["memory_store_name"] for h in found} == {
        "/eng/deploy.md",
        "kb-public",
        "kb-hr",
    }
    # As a limited owner: a member within its grant, never a wider one or one it cannot see.
    assert (
        api.put(f"{members}/{world.spare_user}", token, json={"role": "viewer"}).status_code == 403
    )
    inside = {"role": "viewer", "path_prefixes": ["/eng/"]}
    assert api.put(f"{members}/{world.spare_user}", token, json=inside).status_code == 200
    listed = api.get(members, token).json()["data"]
    assert all(m["path_prefixes"] in (["/eng/"], []) for m in listed), listed
    # Narrowed by the owner, it holds at the member's next call.
    api.put(
        f"{members}/{user_id}", json={"role": "owner", "path_prefixes": [], "memory_store_ids": []}
    )
    assert api.search(project, token, query=QUERY).json()["results"] == []
