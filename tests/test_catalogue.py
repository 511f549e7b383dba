"""The operation catalogue is the one definition: every operation is an HTTP route with its
request and result models, an MCP tool (over stdio) and a CLI command taking every parameter,
and an SDK method — each reached here with every parameter of its request model."""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from typer.testing import CliRunner

from conftest import Api, StoreVault
from naturali.catalogue import ENTRIES, TOOLS
from naturali.catalogue.operation import Operation
from naturali.cli.main import app
from naturali.cli.model_options import option_name
from naturali_client import Client
from naturali_client._operations import http_call
from test_authz_matrix import OPERATIONS as AUTHZ

Call = Callable[[str, dict[str, Any]], dict[str, Any]]
BY_NAME = {op.name: op for op in TOOLS}
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def world(api: Api) -> Iterator[StoreVault]:
    vault = StoreVault(api)
    vault.write(
        "clm_refund",
        "Refunds take five days.",
        title="Refund time",
        tags=["billing"],
        occurred_at="2026-03-03",
        entities=["per_ann"],
    )
    vault.write("per_ann", "Ann runs support.", kind="page", type="person", title="Ann")
    api.post(
        f"/v1/projects/{vault.project}/memory_stores/{vault.store}/memories",
        json={"content": "green tea"},
    )
    api.doc(vault.project, "/guide/a.md", "# Returns\n\nReturns are free for thirty days.")
    steps = "\n\n".join(f"## Step {i}\n\n" + f"Step {i} of the setup. " * 40 for i in range(6))
    api.doc(vault.project, "/guide/b.md", "# Setup\n\n" + steps)
    yield vault


def _script(call: Call, tag: str, project: str, store: str) -> set[tuple[str, str]]:
    """Every operation with every parameter (over as many calls as the rules allow); returns
    the (operation, parameter) pairs sent."""
    sent: set[tuple[str, str]] = set()

    def run(name: str, **params: Any) -> dict[str, Any]:
        op = BY_NAME[name]
        if "snapshot" in op.request.model_fields:
            params["snapshot"] = call(name, dict(params))["snapshot"]
        sent.update((name, p) for p in params)
        return call(name, params)

    filters = {"kind": "claim", "type": "fact", "tag": "billing"}
    window = {"since": "2026-01-01", "until": "2026-12-31"}
    grep = run(
        "knowledge_grep",
        query="refunds",
        mode="any",
        lifecycle="active",
        limit=5,
        offset=0,
        timeField="occurred_at",
        **filters,
        **window,
    )
    assert grep["hits"][0]["id"] == "clm_refund"
    assert (
        run("knowledge_lookup", query="Refund time", lifecycle="all", **filters)["status"]
        == "found"
    )
    run("knowledge_records", lifecycle="all", limit=10, offset=0, **filters)
    run("knowledge_record", id="clm_refund")
    timeline = run(
        "knowledge_timeline",
        entity="per_ann",
        kind="fact",
        timeField="occurred_at",
        order="desc",
        eligibility="include_inactive",
        includeSources=True,
        limit=10,
        offset=0,
        **window,
    )
    assert [r["id"] for r in timeline["rows"]] == ["clm_refund"]
    run("knowledge_timeline", entity="per_ann", group="source")
    day = run(
        "knowledge_chronicle_day",
        date="2026-03-03",
        week=True,
        timeZone="Europe/Berlin",
        kind="fact",
        limit=10,
        offset=0,
    )
    assert [r["id"] for r in day["rows"]] == ["clm_refund"]
    run("knowledge_chronicle_since", entity="per_ann", kind="fact", limit=10, offset=0, **window)
    seen = run("knowledge_chronicle_last_seen", entity="per_ann", occurredOnOrBefore="2026-12-31")
    assert seen["lastSeen"]["id"] == "clm_refund"
    record = {
        "kind": "claim",
        "type": "fact",
        "title": f"Shipping {tag}",
        "body": "Ships in 2 days.",
    }
    created = run("knowledge_save", requestId=f"{tag}-1", id=f"clm_ship_{tag}", record=record)
    first = created["records"][0]
    _as_of(run, first["id"])
    updated = run(
        "knowledge_save",
        requestId=f"{tag}-2",
        id=first["id"],
        expectedRevision=1,
        expectedHash=first["sha256"],
        record={"body": "Ships in 3 days."},
    )["records"][0]
    corrected = run(
        "knowledge_correct",
        requestId=f"{tag}-3",
        id=updated["id"],
        expectedRevision=2,
        expectedHash=updated["sha256"],
        replacement={"title": f"Shipping {tag}", "body": "Ships in 4 days."},
        reason="carrier changed",
    )["records"][0]
    run(
        "knowledge_withdraw",
        requestId=f"{tag}-4",
        id=corrected["id"],
        reason="obsolete",
        expectedRevision=1,
        expectedHash=corrected["sha256"],
    )
    assert run("knowledge_mutation", requestId=f"{tag}-1")["requestId"] == f"{tag}-1"
    assert len(run("knowledge_history", id=first["id"])["revisions"]) == 3
    run("knowledge_resume")
    found = run(
        "knowledge_search",
        query="green tea",
        min_similarity=0.0,
        limit=5,
        include_documents=True,
        include_memories=True,
        document_paths=["/"],
        document_ids=["doc_none"],
        memory_store_ids=[store],
        tags={"team": "none"},
        explain=True,
        rerank=True,
    )
    assert found["results"] == []  # every filter applied: the tag matches nothing
    _acting_on_a_hit(run, store)
    return sent


def _acting_on_a_hit(run: Callable[..., dict[str, Any]], store: str) -> None:
    """The project's stores and documents, and a document's passages around one of them."""
    assert store in {s["id"] for s in run("knowledge_stores")["data"]}
    first = run("knowledge_documents", path_prefix="/guide/", limit=1)
    assert [d["path"] for d in first["data"]] == ["/guide/a.md"]
    cursor = first["next_cursor"]
    second = run("knowledge_documents", path_prefix="/guide/", limit=1, cursor=cursor)
    document_id = second["data"][0]["id"]
    opening = run("knowledge_passages", document_id=document_id, start=0, limit=1)
    assert opening["start"] == 0 and opening["total"] > 3
    middle = opening["total"] // 2
    hit = run("knowledge_passages", document_id=document_id, start=middle, limit=1)["data"][0]
    around = run("knowledge_passages", document_id=document_id, around=hit["chunk_id"], limit=3)
    assert [p["ordinal"] for p in around["data"]] == [middle - 1, middle, middle + 1]


def _as_of(run: Callable[..., dict[str, Any]], saved: str) -> None:
    """Each reading tool at a later instant: the store as its history has it then (records
    written into the vault by hand have none: ``saved`` is in it, clm_refund is not)."""
    later = "2099-01-01T00:00:00Z"
    echoed = "2099-01-01T00:00:00.000000Z"
    reads = {
        "knowledge_grep": {"query": "shipping"},
        "knowledge_lookup": {"query": saved},
        "knowledge_records": {},
        "knowledge_record": {"id": saved},
        "knowledge_timeline": {},
        "knowledge_chronicle_day": {"date": "2026-03-03"},
        "knowledge_chronicle_since": {"since": "2026-01-01"},
        "knowledge_chronicle_last_seen": {"entity": "per_ann"},
    }
    for name, params in reads.items():
        assert run(name, asOf=later, **params)["asOf"] == echoed, name
    past = {r["id"] for r in run("knowledge_records", asOf=later)["records"]}
    assert saved in past and "clm_refund" not in past


def _every_parameter(sent: set[tuple[str, str]]) -> None:
    for op in TOOLS:
        assert {p for name, p in sent if name == op.name} == set(op.request.model_fields), op.name


def _sdk(api: Api) -> Client:
    """The SDK over the in-process app: its resources share the test's HTTP client."""
    client = Client(base_url="http://testserver", token=api.token)
    client.close()
    api.http.headers["Authorization"] = f"Bearer {api.token}"
    for resource in ("knowledge", "projects", "documents", "memory_stores", "records"):
        getattr(client, resource)._http = api.http
    client._http = api.http
    return client


def test_every_operation_is_a_route_with_its_request_and_result_models(api: Api) -> None:
    schema = api.http.get("/openapi.json").json()
    for op in TOOLS:
        route = schema["paths"][op.path][op.method.lower()]
        result = route["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert result.endswith("/" + op.result.__name__), op.name
        if op.method == "POST":
            body = route["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert body.endswith("/" + op.request.__name__), op.name
        else:
            slots = {p["name"] for p in route["parameters"] if p["in"] == "path"}
            assert slots == set(re.findall(r"\{(\w+)\}", op.path)), op.name
    for entry in ENTRIES:
        assert entry.method.lower() in schema["paths"][entry.path], entry.name


def test_the_catalogue_says_who_may_call_each_operation() -> None:
    roles = {(m, p): role for (m, p), (role, _) in AUTHZ.items()}
    declared = {(op.method.lower(), op.path): op.role for op in ENTRIES}
    assert declared == roles  # every route is declared, with the role the matrix enforces


def test_every_operation_with_every_parameter_over_http(world: StoreVault) -> None:
    api = world.api

    def call(name: str, params: dict[str, Any]) -> dict[str, Any]:
        op = BY_NAME[name]
        request = op.request.model_validate(params)
        ids = {"project_id": world.project, "memory_store_id": world.store}
        fields = request.model_dump(mode="json", exclude_none=True)
        url, extra = http_call(op.method, op.path, op.path_field, ids, fields)
        r = api.http.request(op.method, url, **extra, headers=api.headers())
        assert r.status_code == 200, (name, r.text)
        return dict(r.json())

    _every_parameter(_script(call, "http", world.project, world.store))


def test_every_operation_is_in_the_sdk_and_takes_every_parameter(world: StoreVault) -> None:
    client = _sdk(world.api)
    for entry in ENTRIES:
        group, method = entry.sdk.split(".")
        assert callable(getattr(getattr(client, group), method)), entry.sdk
    slots = {"id": "record_id", "requestId": "request_id"}

    def call(name: str, params: dict[str, Any]) -> dict[str, Any]:
        op = BY_NAME[name]
        group, method = op.sdk.split(".")
        where = {"project_id": world.project}
        if "{memory_store_id}" in op.path:
            where["memory_store_id"] = world.store
        if op.path_field is not None:
            params = {slots.get(k, k): v for k, v in params.items()}
        response = getattr(getattr(client, group), method)(**where, **params)
        if isinstance(response, list):  # a list the SDK reads whole
            return {"data": [item.model_dump() for item in response]}
        return response.model_dump() if hasattr(response, "model_dump") else dict(response)

    _every_parameter(_script(call, "sdk", world.project, world.store))


def test_every_operation_with_every_parameter_in_the_cli(
    world: StoreVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _sdk(world.api)
    monkeypatch.setattr("naturali.cli.knowledge.client", lambda base_url, token: _Kept(client))
    monkeypatch.setattr("naturali.cli.search.client", lambda base_url, token: _Kept(client))
    runner = CliRunner()

    def call(name: str, params: dict[str, Any]) -> dict[str, Any]:
        op = BY_NAME[name]
        args = ["search-knowledge"] if op.cli == "search" else ["knowledge", op.cli]
        args += _cli_args(op, params)
        args += ["--project-id", world.project, "--json"]
        if "{memory_store_id}" in op.path:
            args += ["--store-id", world.store]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        return dict(json.loads(result.stdout))

    _every_parameter(_script(call, "cli", world.project, world.store))


def test_every_operation_with_every_parameter_over_mcp_stdio(world: StoreVault) -> None:
    world.api.naturali.indexer.idle(30)
    data_dir = world.api.naturali.settings.data_dir
    database = world.api.naturali.settings.database_url
    sent, tools = anyio.run(_over_stdio, data_dir, world.project, world.store, database)
    _every_parameter(sent)
    for op in TOOLS:
        schema = tools[op.name].input_schema
        assert set(schema["properties"]) == set(op.request.model_fields), op.name
        required = {n for n, f in op.request.model_fields.items() if f.is_required()}
        assert set(schema.get("required", [])) == required, op.name


async def _over_stdio(
    data_dir: Path, project: str, store: str, database: str | None
) -> tuple[set[Any], dict[str, Any]]:
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
        env={k: v for k, v in os.environ.items() if not k.startswith("NATURALI_")}
        | ({"NATURALI_DATABASE_URL": database} if database else {}),
    )
    async with stdio_client(params) as (read, writer), ClientSession(read, writer) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}

        async def answer(name: str, params: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(name, params)
            text = result.content[0].text if result.content else "{}"  # type: ignore[union-attr]
            assert not result.is_error, (name, text)
            return dict(json.loads(text))

        sent = await _script_async(answer, project, store)
    return sent, tools


async def _script_async(
    answer: Callable[[str, dict[str, Any]], Any], project: str, store: str
) -> set[tuple[str, str]]:
    """Runs ``_script`` in a worker thread, each call answered on the event loop."""

    def call(name: str, params: dict[str, Any]) -> dict[str, Any]:
        return dict(anyio.from_thread.run(answer, name, params))

    return await anyio.to_thread.run_sync(_script, call, "mcp", project, store)


def _cli_args(op: Operation, params: dict[str, Any]) -> list[str]:
    args: list[str] = []
    for name, value in params.items():
        if name == op.argument:
            args.insert(0, str(value))
        elif op.cli == "search" and name == "tags":
            args += [x for k, v in value.items() for x in ("--tags", f"{k}={v}")]
        elif isinstance(value, bool):
            args.append(option_name(name) if value else "--no-" + option_name(name)[2:])
        elif isinstance(value, list):
            args += [x for item in value for x in (option_name(name), str(item))]
        elif isinstance(value, dict):
            args += [option_name(name), json.dumps(value)]
        else:
            args += [option_name(name), str(value)]
    return args


class _Kept:
    """The test's SDK client as the CLI's ``with client(…)`` block expects it, kept open."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def __enter__(self) -> Client:
        return self._client

    def __exit__(self, *exc: object) -> None:
        return None


def test_the_sdks_and_the_clis_search_parameters_are_the_request_models_fields() -> None:
    """A search field is defined once, in SearchRequest: the CLI's options are made from it and
    the Python SDK's method is generated from it (and committed current, as the TypeScript
    SDK is)."""
    import inspect

    from naturali.api.generate.python_sdk import source
    from naturali.cli.search import search_knowledge as cli_search
    from naturali.service.requests import SearchRequest
    from naturali_client._client import Knowledge

    fields = set(SearchRequest.model_fields)
    sdk = set(inspect.signature(Knowledge.search_knowledge).parameters) - {"self", "project_id"}
    cli_only = {"project_id", "as_json", "local", "data_dir", "base_url", "token"}
    cli = set(inspect.signature(cli_search).parameters) - cli_only
    assert sdk == fields
    assert cli == fields
    committed = (ROOT / "client/src/naturali_client/_search.py").read_text()
    assert committed == source(), "the Python SDK is stale: run bash scripts/sdk"


def test_the_sdks_models_and_records_are_generated() -> None:
    """The Python SDK's response models are generated from the contracts and its records
    methods from the catalogue: the committed files are what the generators write, and each
    model has its contract's fields."""
    from naturali.api.generate import python_models
    from naturali.api.generate.python_sdk import records_source
    from naturali_client import _models

    records = (ROOT / "client/src/naturali_client/_records.py").read_text()
    assert records == records_source(), "the Python SDK is stale: run bash scripts/sdk"
    committed = (ROOT / "client/src/naturali_client/_models.py").read_text()
    assert committed == python_models.source(), "the Python SDK is stale: run bash scripts/sdk"
    for name, contract in python_models.MODELS.items():
        assert set(getattr(_models, name).model_fields) == set(contract.model_fields), name


def test_a_new_search_field_reaches_the_cli_and_the_sdk_with_no_edit_of_theirs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Derived, not copied: a field planted in SearchRequest becomes a CLI option and an SDK
    argument."""
    import inspect

    from pydantic import Field, create_model

    import naturali.api.generate.python_sdk as generator
    import naturali.cli.search as cli
    from naturali.service.requests import SearchRequest

    assert "path_exclude" not in SearchRequest.model_fields  # a field that does not exist
    planted = create_model(
        "Planted", __base__=SearchRequest, path_exclude=(list[str] | None, Field(None))
    )
    assert "path_exclude" not in inspect.signature(cli._command()).parameters
    monkeypatch.setattr(cli, "SearchRequest", planted)
    monkeypatch.setattr(generator, "SearchRequest", planted)
    assert "path_exclude" in inspect.signature(cli._command()).parameters
    assert "        path_exclude: list[str] | None = None,\n" in generator.source()


def test_every_sdk_method_takes_its_entrys_path_and_fields() -> None:
    """The SDK's hand-written methods (the CRUD beside the generated tools) take what their
    route does: each slot of its path and each field of its request, by name. A method that
    reads every page itself leaves out the page's cursor and size."""
    client = Client("http://sdk.invalid", "nk_unused")
    paging = {"cursor", "limit"}
    for entry in ENTRIES:
        group, name = entry.sdk.split(".")
        method = getattr(getattr(client, group), name)
        parameters = inspect.signature(method).parameters.values()
        taken = {p.name for p in parameters}
        wanted = set(re.findall(r"\{(\w+)\}", entry.path))
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            wanted |= set(entry.request.model_fields)  # else the tools' generated **params
        if entry.path_field is not None:  # the tools' path fields, as the SDK names them
            wanted = {_SDK_SLOT.get(n, n) for n in wanted - {entry.path_field}}
            wanted.add(_SDK_SLOT.get(entry.path_field, entry.path_field))
        if entry.upload:  # a file, or text as ``content``
            taken |= {"content"} if "file" in taken else set()
        missing = wanted - taken - (paging if "cursor" not in taken else set())
        assert not missing, (entry.sdk, sorted(missing))


_SDK_SLOT = {"id": "record_id", "requestId": "request_id"}
