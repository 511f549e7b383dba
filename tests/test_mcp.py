"""An MCP client from the official SDK drives every tool of ``naturali mcp`` over stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.model import Grant
from naturali.settings import Settings
from records_vault import write

TOOLS = {
    "knowledge_grep",
    "knowledge_lookup",
    "knowledge_records",
    "knowledge_record",
    "knowledge_timeline",
    "knowledge_chronicle_day",
    "knowledge_chronicle_since",
    "knowledge_chronicle_last_seen",
    "knowledge_mutation",
    "knowledge_history",
    "knowledge_save",
    "knowledge_correct",
    "knowledge_withdraw",
    "knowledge_resume",
    "knowledge_search",
    "knowledge_passages",
    "knowledge_documents",
    "knowledge_stores",
}


@pytest.fixture
def store(tmp_path: Path, embedder: OnnxEmbedder) -> tuple[Path, str, str]:
    naturali = build_services(Settings(data_dir=tmp_path), embedder=embedder)
    naturali.bootstrap()
    owner = naturali.storage.oldest_user()
    assert owner
    project, _ = naturali.projects.create(owner, "agents")
    store = naturali.memories.create_store(owner, project.id, "kb", None)
    vault = naturali.memories.vault(store.id)
    write(
        vault,
        "per_ann",
        "Ann runs support.",
        kind="page",
        type="person",
        title="Ann",
        aliases=["Annie"],
    )
    write(
        vault,
        "clm_1",
        "Ann met Acme about refunds.",
        entities=["per_ann"],
        occurred_at="2026-11-02T10:00:00Z",
        title="Acme meeting",
    )
    naturali.close()
    return tmp_path, project.id, store.id


async def _session_calls(data_dir: Path, project: str, store: str) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "naturali.cli.main",
            "mcp",
            "--project",
            project,
            "--store",
            store,
            "--data-dir",
            str(data_dir),
        ],
        env={k: v for k, v in os.environ.items() if not k.startswith("NATURALI_")},
    )
    out: dict[str, Any] = {}
    async with stdio_client(params) as (read, writer), ClientSession(read, writer) as session:
        started = await session.initialize()
        out["instructions"] = started.instructions
        listed = await session.list_tools()
        out["tools"] = {t.name: t for t in listed.tools}

        async def call(name: str, **args: Any) -> Any:
            result = await session.call_tool(name, args)
            text = result.content[0].text if result.content else "{}"  # type: ignore[union-attr]
            return ("error", text) if result.is_error else json.loads(text)

        out["grep"] = await call("knowledge_grep", query="refunds")
        out["lookup"] = await call("knowledge_lookup", query="annie")
        out["records"] = await call("knowledge_records")
        out["record"] = await call("knowledge_record", id="clm_1")
        out["timeline"] = await call("knowledge_timeline", entity="per_ann")
        out["day"] = await call("knowledge_chronicle_day", date="2026-11-02")
        out["since"] = await call("knowledge_chronicle_since", since="2026-11-01")
        out["day_kind"] = await call("knowledge_chronicle_day", date="2026-11-02", kind="fact")
        out["since_kind"] = await call(
            "knowledge_chronicle_since", since="2026-11-01", kind="decision"
        )
        first = await call("knowledge_records", limit=1)
        out["paged"] = await call(
            "knowledge_records", limit=1, offset=1, snapshot=first["snapshot"]
        )
        out["last_seen"] = await call("knowledge_chronicle_last_seen", entity="per_ann")
        saved = await call(
            "knowledge_save",
            requestId="m1",
            record={"kind": "claim", "title": "Tea", "body": "Ann likes tea."},
        )
        out["save"] = saved
        rec = saved["records"][0]
        out["correct"] = await call(
            "knowledge_correct",
            requestId="m2",
            id=rec["id"],
            expectedRevision=1,
            expectedHash=rec["sha256"],
            replacement={"body": "Ann likes green tea."},
            reason="more precise",
        )
        out["mutation"] = await call("knowledge_mutation", requestId="m2")
        out["history"] = await call("knowledge_history", id=rec["id"])
        out["withdraw"] = await call(
            "knowledge_withdraw", requestId="m3", id="clm_1", reason="duplicate"
        )
        out["resume"] = await call("knowledge_resume")
        out["search"] = await call("knowledge_search", query="green tea")
        out["explained"] = await call("knowledge_search", query="green tea", explain=True)
        out["bad_limit"] = await call("knowledge_grep", query="x", limit=99)
        out["bad_lifecycle"] = await call("knowledge_grep", query="x", lifecycle="old")
        out["no_query"] = await call("knowledge_grep")
        out["missing"] = await call("knowledge_record", id="nope")
        out["bad_date"] = await call("knowledge_timeline", since="2026-02-30")
        out["stale"] = await call(
            "knowledge_save",
            requestId="m4",
            id="per_ann",
            expectedRevision=9,
            expectedHash="0" * 64,
            record={"body": "x"},
        )
    return out


def test_every_tool_over_stdio(store: tuple[Path, str, str]) -> None:
    out = anyio.run(_session_calls, *store)
    tools = out["tools"]
    assert set(tools) == TOOLS
    assert "embedded with bge-small-en-v1.5: ask in English" in out["instructions"]
    grep_schema = tools["knowledge_grep"].input_schema
    assert grep_schema["properties"]["limit"]["maximum"] == 50
    assert "timeField" in grep_schema["properties"]
    assert "expectedRevision" in tools["knowledge_save"].input_schema["properties"]
    assert not any(
        p in ("store", "store_id", "scope")
        for t in tools.values()
        for p in t.input_schema.get("properties", {})
    )
    assert [h["id"] for h in out["grep"]["hits"]] == ["clm_1"]
    assert set(out["grep"]["hits"][0]) >= {"id", "title", "path", "snippet"}  # a list row
    assert out["lookup"]["status"] == "found" and out["lookup"]["hits"][0]["id"] == "per_ann"
    assert out["records"]["total"] == 2
    assert out["record"]["body"].startswith("Ann met Acme")
    assert [r["id"] for r in out["timeline"]["rows"]] == ["clm_1"]
    assert [r["id"] for r in out["day"]["rows"]] == ["clm_1"]
    assert [r["id"] for r in out["since"]["rows"]] == ["clm_1"]
    assert [r["id"] for r in out["day_kind"]["rows"]] == ["clm_1"]
    assert out["since_kind"]["rows"] == []
    assert [r["id"] for r in out["paged"]["records"]] == ["per_ann"]
    assert out["last_seen"]["lastSeen"]["id"] == "clm_1"
    assert out["save"]["git"]["state"] == "committed"
    assert [r["lifecycle"] for r in out["correct"]["records"]] == ["active", "superseded"]
    assert out["mutation"]["requestId"] == "m2"
    assert [r["revision"] for r in out["history"]["revisions"]] == [1, 2]
    assert out["withdraw"]["records"][0]["lifecycle"] == "withdrawn"
    assert out["resume"]["gitPending"] == []
    assert out["search"]["results"][0]["source_type"] == "memory"
    assert "green tea" in out["search"]["results"][0]["content"]
    assert "explain" not in out["search"]["results"][0]
    why = out["explained"]["results"][0]["explain"]  # asked for, honoured
    assert why["fused"] > 0 and why["lexical_rank"] == 1
    for key in ("bad_limit", "bad_date", "stale"):
        assert out[key][0] == "error", key
    said = "Error executing tool {}: {} (parameter: {})"
    assert out["bad_limit"][1] == said.format(
        "knowledge_grep", "limit must be at most 50, got 99", "limit"
    )
    assert out["bad_lifecycle"][1] == said.format(
        "knowledge_grep",
        "lifecycle must be one of 'active', 'superseded' or 'all', got 'old'",
        "lifecycle",
    )
    assert out["no_query"][1] == said.format("knowledge_grep", "query is required", "query")
    # The tool's own parameter, not the HTTP path's record_id.
    assert out["missing"][1] == said.format(
        "knowledge_record", "record nope not found or not available", "id"
    )
    assert "since" in out["bad_date"][1]
    assert "revision" in out["stale"][1]


def test_streamable_http_transport(store: tuple[Path, str, str]) -> None:
    import subprocess
    import time

    import httpx
    from mcp.client.streamable_http import streamable_http_client

    from server import free_port

    data_dir, project, store_id = store
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NATURALI_")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "naturali.cli.main",
            "mcp",
            "--project",
            project,
            "--store",
            store_id,
            "--data-dir",
            str(data_dir),
            "--transport",
            "streamable-http",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)

        async def run() -> tuple[int, dict[str, Any]]:
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                streamable_http_client(url) as (read, write, *_),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = await session.list_tools()
                result = await session.call_tool("knowledge_lookup", {"query": "Ann"})
                text = result.content[0].text  # type: ignore[union-attr]
                return len(tools.tools), json.loads(text)

        count, lookup = anyio.run(run)
        assert count == len(TOOLS) and lookup["status"] == "found"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_token_granted_no_store_reaches_none_through_mcp(
    store: tuple[Path, str, str], embedder: OnnxEmbedder
) -> None:
    """The MCP tools run every call through the catalogue's admission: a token granted no
    memory store finds none of this one's records, by any tool."""
    data_dir, project, store_id = store
    naturali = build_services(Settings(data_dir=data_dir), embedder=embedder)
    owner = naturali.storage.oldest_user()
    assert owner
    _, secret = naturali.tokens.create(owner, "agent", "read", grant=Grant(None, ()))
    naturali.close()

    async def calls() -> dict[str, Any]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("NATURALI_")}
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "naturali.cli.main", "mcp", "--project", project, "--store", store_id,
                  "--data-dir", str(data_dir)],
            env={**env, "NATURALI_TOKEN": secret},
        )  # fmt: skip
        async with stdio_client(params) as (read, writer), ClientSession(read, writer) as session:
            await session.initialize()
            grep = await session.call_tool("knowledge_grep", {"query": "refunds"})
            search = await session.call_tool("knowledge_search", {"query": "Ann met Acme"})
            return {"grep": grep, "search": search}

    out = anyio.run(calls)
    assert out["grep"].is_error and "not found" in out["grep"].content[0].text
    assert json.loads(out["search"].content[0].text)["results"] == []
