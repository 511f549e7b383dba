"""Search API conformance points found by trying the spec as a new user (issue 9, 1–6)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import naturali
from conftest import Api, assert_error
from naturali.retrieval.hybrid import Ranking
from naturali.service.requests import SearchRequest
from server import free_port


def _hits(api: Api, project_id: str, **body: Any) -> list[dict[str, Any]]:
    r = api.search(project_id, **body)
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


def _store(api: Api, project_id: str, name: str, tags: dict[str, str]) -> str:
    r = api.post(f"/v1/projects/{project_id}/memory_stores", json={"name": name, "tags": tags})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _memory(api: Api, project_id: str, store: str, content: str, **fields: Any) -> Any:
    url = f"/v1/projects/{project_id}/memory_stores/{store}/memories"
    r = api.post(url, json={"content": content, **fields})
    assert r.status_code == 201, r.text
    return r.json()


def test_a_candidate_under_the_floor_does_not_move_the_ranking(api: Api) -> None:
    project_id = api.project()
    api.doc(project_id, "/refunds.txt", "refunds refunds refunds. Ledger codes RF-1 to RF-9.")
    api.doc(project_id, "/policy.md", "Refunds are paid back to the card within five days.")
    store = _store(api, project_id, "agent", {})
    _memory(api, project_id, store, "Customers ask how long refunds take; answer five days.")
    owner = api.naturali.auth.authenticate(api.token)
    lexical = api.naturali.search.search(
        owner,
        project_id,
        SearchRequest(query="refunds"),
        Ranking(fuse=lambda pool: pool.bm25[pool.rows], conversation=None),
    )
    hits = _hits(api, project_id, query="refunds", min_similarity=1)
    # Nothing reaches cosine 1, so the order is the lexical leg's alone.
    assert [h["content"] for h in hits] == [r.content for r in lexical]
    assert all(h["similarity_score"] < 1 for h in hits)


def test_memory_tags_add_to_the_store_tags(api: Api) -> None:
    project_id = api.project()
    store = _store(api, project_id, "support-agent", {"team": "support"})
    memory = _memory(api, project_id, store, "Acme wants refunds.", tags={"team": "sales"})
    for team in ("support", "sales"):
        hits = _hits(api, project_id, tags={"team": team}, include_documents=False)
        assert [h["memory_id"] for h in hits] == [memory["id"]], team


def test_a_repeated_tag_key_keeps_every_value(api: Api) -> None:
    project_id = api.project()
    store = _store(api, project_id, "kb", {})
    vault = api.naturali.memories.vault(store)
    (vault / "note.md").write_text(
        "---\nformat: knowledge-record-v1\nid: note_1\nrevision: 1\nkind: claim\ntype: fact\n"
        "title: Shared note\ntags: [team:alpha, team:beta]\nlifecycle: active\n---\n"
        "Both teams own the refunds runbook.\n",
        encoding="utf-8",
    )
    for team in ("alpha", "beta"):
        hits = _hits(api, project_id, tags={"team": team}, include_documents=False)
        assert [h["memory_id"] for h in hits] == ["note_1"], team
    got = api.get(f"/v1/projects/{project_id}/memory_stores/{store}/memories/note_1")
    assert got.status_code == 200, got.text
    assert got.json()["tags"] == {"team": ["alpha", "beta"]}


@pytest.mark.parametrize("query", ["", "x" * 2001, 42, ["refunds"]])
def test_errors_on_the_body_field_query_name_it(api: Api, query: Any) -> None:
    project_id = api.project()
    assert assert_error(api.search(project_id, query=query), 400)["param"] == "query"


def test_invalid_json_says_so_without_a_param(api: Api) -> None:
    project_id = api.project()
    r = api.post(
        f"/v1/projects/{project_id}/knowledge/search",
        content=b'{"query": "refunds",',
        headers={"Content-Type": "application/json"},
    )
    error = assert_error(r, 400, "invalid_json")
    assert error["param"] is None


def test_openapi_documents_the_errors_each_operation_gives(api: Api) -> None:
    schema = api.http.get("/openapi.json").json()
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    operations = [
        (path, method, op) for path, ops in schema["paths"].items() for method, op in ops.items()
    ]
    assert len(operations) >= 35
    for path, method, op in operations:
        codes = set(op["responses"])
        assert "422" not in codes, (method, path)
        assert {"400", "401"} <= codes, (method, path)
        for code in codes - {"200", "201", "202", "204"}:
            ref = op["responses"][code]["content"]["application/json"]["schema"]["$ref"]
            assert ref.endswith("/ErrorResponse"), (method, path, code)
    search = schema["paths"]["/v1/projects/{project_id}/knowledge/search"]["post"]["responses"]
    assert set(search) == {"200", "400", "401", "404", "409"}
    upload = schema["paths"]["/v1/projects/{project_id}/documents"]["post"]["responses"]
    assert {"201", "202", "403", "409", "413", "415"} <= set(upload)


@pytest.mark.parametrize("query", ["\u200b", "\u200b\u200d\ufeff", " \u2060 \u00ad "])
def test_a_query_with_nothing_visible_is_400(api: Api, query: str) -> None:
    project_id = api.project()
    api.doc(project_id, "/a.md", "Some text.")
    assert assert_error(api.search(project_id, query=query), 400)["param"] == "query"


def test_an_empty_tag_map_is_400(api: Api) -> None:
    project_id = api.project()
    api.doc(project_id, "/a.md", "Some text.")
    assert assert_error(api.search(project_id, tags={}), 400)["param"] == "tags"


def test_401_names_the_bearer_scheme(api: Api) -> None:
    r = api.http.get("/v1/projects")
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"] == "Bearer"
    bad = api.http.get("/v1/projects", headers={"Authorization": "Bearer nk_nope"})
    assert bad.headers["WWW-Authenticate"] == "Bearer"


def test_sdk_and_cli_report_a_server_that_is_down(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    client = naturali.Client(base_url=url, token="nk_x")
    with pytest.raises(naturali.NaturaliConnectionError) as caught:
        client.knowledge.search_knowledge(project_id="proj_x", query="refunds")
    assert url in caught.value.url
    assert isinstance(caught.value, naturali.NaturaliClientError)
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        slow = naturali.Client(base_url=f"http://127.0.0.1:{port}", token="nk_x", timeout=0.3)
        with pytest.raises(naturali.NaturaliTimeoutError):
            slow.knowledge.search_knowledge(project_id="proj_x", query="refunds")
    cli = subprocess.run(
        [sys.executable, "-m", "naturali.cli.main", "search-knowledge"]
        + ["--project-id", "proj_x", "--query", "refunds", "--base-url", url, "--token", "nk_x"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert cli.returncode != 0
    assert "Traceback" not in cli.stderr
    lines = [line for line in cli.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and url in lines[0] and "naturali serve" in lines[0], cli.stderr
