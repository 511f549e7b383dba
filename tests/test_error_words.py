"""Every validation error is one sentence in our own words — the field, the rule, what was
given — and the same sentence over HTTP and the CLI (MCP: tests/test_mcp.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from conftest import Api, assert_error

# knowledge_grep's body, the parameter named, the sentence.
CASES: list[tuple[dict[str, Any], str, str]] = [
    ({"query": "x", "limit": 99}, "limit", "limit must be at most 50, got 99"),
    (
        {"query": "x", "lifecycle": "old"},
        "lifecycle",
        "lifecycle must be one of 'active', 'superseded' or 'all', got 'old'",
    ),
    ({"query": "x" * 501}, "query", "query must be at most 500 characters, got 501 characters"),
    ({"query": "x", "offset": 501}, "offset", "offset must be at most 500, got 501"),
    (
        {"query": "x", "mode": "fuzzy"},
        "mode",
        "mode must be one of 'all', 'any' or 'phrase', got 'fuzzy'",
    ),
]


@pytest.fixture
def base(api: Api) -> str:
    project = api.project()
    store = api.post(f"/v1/projects/{project}/memory_stores", json={"name": "kb"}).json()["id"]
    return f"/v1/projects/{project}/memory_stores/{store}/knowledge"


@pytest.mark.parametrize(("body", "param", "message"), CASES)
def test_http_says_it_in_one_sentence(
    api: Api, base: str, body: dict[str, Any], param: str, message: str
) -> None:
    error = assert_error(api.post(f"{base}/grep", json=body), 400, "invalid_value")
    assert (error["param"], error["message"]) == (param, message)


def test_http_body_errors(api: Api, base: str) -> None:
    empty = assert_error(api.post(f"{base}/grep", content=b""), 400, "missing_field")
    assert empty["message"] == "the request body is required: a JSON object"
    missing = assert_error(api.post(f"{base}/grep", json={}), 400, "missing_field")
    assert (missing["param"], missing["message"]) == ("query", "query is required")
    typed = assert_error(api.post(f"{base}/grep", json={"query": "x", "limit": "ten"}), 400)
    assert typed["message"] == "limit must be an integer, got 'ten'"
    unknown = assert_error(api.post(f"{base}/grep", json={"query": "x", "nope": 1}), 400)
    assert unknown["message"] == "unknown field 'nope'"
    search = assert_error(
        api.post(base.split("/memory_stores")[0] + "/knowledge/search", json={"query": "  "}), 400
    )
    assert search["message"] == "query must not be empty (it has no visible characters)"
    for error in (empty, missing, typed, unknown, search):
        assert "Input should" not in error["message"] and "pydantic" not in error["message"]


@pytest.mark.parametrize(("body", "param", "message"), CASES)
def test_the_cli_says_the_same(body: dict[str, Any], param: str, message: str) -> None:
    """The CLI checks a request before it sends it (no server needed), in the same words."""
    args = [body.pop("query")]
    for name, value in body.items():
        args += [f"--{name}", str(value)]
    done = subprocess.run(
        [sys.executable, "-m", "naturali.cli.main", "knowledge", "grep", *args]
        + ["--project-id", "p", "--store-id", "s", "--base-url", "http://127.0.0.1:9"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("NATURALI_")},
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {message}"
