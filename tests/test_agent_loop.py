"""An agent's loop through the official MCP client, written from the tool list alone: the
script knows no tool's parameters, the record format or the ontology; it reads them from the
tools' descriptions and input schemas, as a model given the tool list would. It saves a dated
decision, supersedes it, searches, reads the document hit in context and cites what it found."""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from naturali.compose import build_services
from naturali.embed.onnx import OnnxEmbedder
from naturali.service.corpus.documents import Upload
from naturali.settings import Settings


def _project(data_dir: Path, embedder: OnnxEmbedder) -> tuple[str, str]:
    naturali = build_services(Settings(data_dir=data_dir), embedder=embedder)
    naturali.bootstrap()
    owner = naturali.storage.oldest_user()
    assert owner
    project, _ = naturali.projects.create(owner, "agents")
    store = naturali.memories.create_store(owner, project.id, "decisions", None)
    runbook = "# Database runbook\n\n" + "\n\n".join(
        f"## Step {i}\n\n" + f"Step {i}: check the replication lag of the primary. " * 8
        for i in range(1, 7)
    )
    document = naturali.documents.create(
        owner, project.id, Upload(runbook.encode(), path="/ops/runbook.md")
    )
    assert document.status == "ready"
    naturali.close()
    return project.id, store.id


def _tool(tools: dict[str, Any], *words: str) -> Any:
    """The tool whose description says all these words (what a model reads to choose)."""
    found = [t for t in tools.values() if all(w in (t.description or "") for w in words)]
    assert len(found) == 1, (words, [t.name for t in found])
    return found[0]


def _arguments(tool: Any, known: dict[str, Any]) -> dict[str, Any]:
    """Every required parameter filled from what the agent knows, by the schema's names; a
    required one it cannot fill fails the test (the schema asked for something unexplained)."""
    schema = tool.input_schema
    args = {k: v for k, v in known.items() if k in schema["properties"]}
    missing = set(schema.get("required", [])) - set(args)
    assert not missing, (tool.name, missing)
    return args


def _decision(schema: dict[str, Any], title: str, day: str) -> dict[str, Any]:
    """A record built from the save tool's record schema: a claim whose type is the ontology's
    word for a decision, dated by the schema's occurrence field."""
    fields = schema["properties"]["record"]["properties"]
    kinds = fields["kind"]["anyOf"][0]["enum"]
    types = re.findall(r"\b[a-z_]+\b", fields["type"]["description"])
    date_field = next(n for n, f in fields.items() if "happened" in f.get("description", ""))
    assert "claim" in kinds and "decision" in types
    return {"kind": "claim", "type": "decision", "title": title, date_field: day}


async def _loop(data_dir: Path, project: str, store: str) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "naturali.cli.main", "mcp", "--project-id", project, "--store-id", store]
        + ["--data-dir", str(data_dir)],
        env={k: v for k, v in os.environ.items() if not k.startswith("NATURALI_")},
    )
    async with stdio_client(params) as (read, writer), ClientSession(read, writer) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}

        async def call(tool: Any, known: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(tool.name, _arguments(tool, known))
            text = result.content[0].text  # type: ignore[union-attr]
            assert not result.is_error, (tool.name, text)
            return dict(json.loads(text))

        save = _tool(tools, "Write a record")
        record = _decision(save.input_schema, "Use MySQL for the event store", "2026-03-02")
        saved = await call(save, {"requestId": str(uuid.uuid4()), "record": record})
        first = saved["records"][0]
        supersede = _tool(tools, "Supersede")
        replacement = _decision(
            save.input_schema, "Use PostgreSQL for the event store", "2026-03-14"
        )
        corrected = await call(
            supersede,
            {
                "requestId": str(uuid.uuid4()),
                "id": first["id"],
                "expectedRevision": first["revision"],
                "expectedHash": first["sha256"],
                "replacement": replacement,
                "reason": "MySQL lacked the JSON indexes we need",
            },
        )
        search = _tool(tools, "Start here")
        found = await call(search, {"query": "which database did we choose for the event store?"})
        lag = await call(search, {"query": "replication lag of the primary"})
        hit = next(r for r in lag["results"] if r["source_type"] == "document")
        context = _tool(tools, "around")
        around = await call(context, {"document_id": hit["document_id"], "around": hit["chunk_id"]})
    return {"saved": saved, "corrected": corrected, "found": found, "hit": hit, "around": around}


def test_an_agent_saves_supersedes_searches_and_cites_from_the_tool_list_alone(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    project, store = _project(tmp_path, embedder)
    out = anyio.run(_loop, tmp_path, project, store)
    replacement = out["corrected"]["records"]
    assert {r["lifecycle"] for r in replacement} == {"active", "superseded"}
    memory = next(r for r in out["found"]["results"] if r["source_type"] == "memory")
    # The memory hit says what it is and when, and carries what to cite.
    assert memory["title"] == "Use PostgreSQL for the event store"
    assert (memory["kind"], memory["type"], memory["lifecycle"]) == ("claim", "decision", "active")
    assert memory["occurred_at"] == "2026-03-14"
    citation = memory["citation"]
    cited = f"{citation['path']}@{citation['revision']} ({citation['sha256'][:12]})"
    assert citation["id"] == memory["memory_id"] and cited.startswith(citation["path"])
    assert citation["path"].endswith(".md")
    superseded = [r for r in out["found"]["results"] if r.get("title", "").startswith("Use MySQL")]
    assert not superseded  # the superseded decision no longer answers
    # The document hit is cited by path and page, and read in its context.
    hit, around = out["hit"], out["around"]
    assert hit["path"] == "/ops/runbook.md"
    ids = [p["chunk_id"] for p in around["data"]]
    assert hit["chunk_id"] in ids and len(ids) > 1
