"""Every field of every operation is described once (in the contracts, with the glossary's
help) and shown by every interface: OpenAPI, the TypeScript types' doc comments, the MCP
tools' input schemas, the CLI's --help and the Python SDK's docstrings."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest

from naturali.api.generate.openapi import document
from naturali.catalogue import TOOLS
from naturali.contracts.glossary import limits
from naturali.mcp.server import build
from naturali.service.requests import SearchRequest
from naturali_client import _records
from naturali_client._search import SearchKnowledge
from test_cli_vocabulary import _commands

TYPES = Path(__file__).parents[1] / "sdk/typescript/src/generated/types.gen.ts"


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return document()


def _lists_its_values(schema: dict[str, Any]) -> bool:
    """A field whose type says what it can hold (a boolean, an enum, a nested object) needs
    no example; every other one has one."""
    if schema.get("type") == "boolean" or {"enum", "const", "$ref", "oneOf"} & set(schema):
        return True
    if schema.get("type") == "array":
        return _lists_its_values(schema.get("items", {}))
    members = [m for m in schema.get("anyOf", []) if m.get("type") != "null"]
    return bool(members) and all(_lists_its_values(m) for m in members)


def _properties(openapi: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    schemas = openapi["components"]["schemas"]
    return [
        (model, name, prop)
        for model, schema in schemas.items()
        for name, prop in schema.get("properties", {}).items()
    ]


def test_every_field_has_a_description_and_an_example(openapi: dict[str, Any]) -> None:
    properties = _properties(openapi)
    assert len(properties) > 400
    undescribed = [f"{m}.{n}" for m, n, p in properties if not p.get("description")]
    assert not undescribed
    no_example = [
        f"{m}.{n}" for m, n, p in properties if not _lists_its_values(p) and not p.get("examples")
    ]
    assert not no_example


def test_every_path_and_query_parameter_is_described(openapi: dict[str, Any]) -> None:
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                assert parameter.get("description"), (method, path, parameter["name"])


def test_the_typescript_types_carry_the_descriptions(openapi: dict[str, Any]) -> None:
    types = TYPES.read_text()
    for model, name, prop in _properties(openapi):
        first_line = prop["description"].splitlines()[0]
        assert first_line in types, (model, name)


def test_every_mcp_tool_parameter_is_described_with_its_limits() -> None:
    class Unused:
        def call(self, *args: Any) -> dict[str, Any]:
            raise AssertionError

        def model(self) -> str | None:
            return None

    tools = asyncio.run(build(Unused()).list_tools())
    assert {t.name for t in tools} >= {o.name for o in TOOLS}
    for tool in tools:
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), (tool.name, name)
    search = next(t for t in tools if t.name == "knowledge_search").input_schema
    assert search["properties"]["limit"]["maximum"] == 100
    assert search["properties"]["query"]["anyOf"][0]["maxLength"] == 2000


def test_every_cli_option_and_argument_has_help() -> None:
    for path, command in _commands().items():
        for param in command.params:
            if param.name != "help":
                assert getattr(param, "help", None), f"naturali {path}: {param.name}"


def test_the_python_sdk_documents_every_parameter() -> None:
    search_doc = inspect.getdoc(SearchKnowledge.search_knowledge) or ""
    for name, info in SearchRequest.model_fields.items():
        assert f"{name}: {(info.description or '')[:40]}" in " ".join(search_doc.split())
    for operation in TOOLS:
        group, method = operation.sdk.split(".")
        if group != "records":
            continue
        doc = " ".join((inspect.getdoc(getattr(_records.Records, method)) or "").split())
        for name, info in operation.request.model_fields.items():
            if name != operation.path_field:
                assert f"{info.alias or name}: {info.description}" in doc, (method, name)


def test_the_cli_and_the_python_sdk_say_each_fields_limits_default_and_example() -> None:
    """The help that is not a schema says what the schema says: a field's bounds, its
    default and an example, after its description."""
    commands, said_somewhere = _commands(), 0
    for operation in TOOLS:
        path = "search-knowledge" if operation.cli == "search" else f"knowledge {operation.cli}"
        helps = {p.name: getattr(p, "help", "") for p in commands[path].params}
        group, method = operation.sdk.split(".")
        method_doc = inspect.getdoc(getattr(_records.Records, method)) if group == "records" else ""
        doc = " ".join((method_doc or "").split())
        properties = operation.request.model_json_schema(by_alias=True)["properties"]
        for name, info in operation.request.model_fields.items():
            said = limits(properties[info.alias or name])
            said_somewhere += bool(said)
            assert said in helps[name], (path, name)
            if group == "records" and name != operation.path_field:
                assert " ".join(said.split()) in doc, (operation.sdk, name)
    assert said_somewhere > 80
    assert "[1–100; default 10; e.g. 20]" in " ".join(
        (inspect.getdoc(SearchKnowledge.search_knowledge) or "").split()
    )


def _valid(example: Any, schema: dict[str, Any], openapi: dict[str, Any]) -> bool:
    from jsonschema import Draft202012Validator

    whole = {**schema, "components": openapi["components"]}  # its $refs resolve in it
    return bool(Draft202012Validator(whole).is_valid(example))


# Examples that are values of their field's type but the wrong kind of thing: an id of another
# object (each id's prefix says what it is), a record kind where a record type is meant.
_ID_PREFIXES = {
    "project_id": "proj_", "document_id": "doc_", "memory_store_id": "mstore_",
    "chunk_id": "chunk_", "source_id": "src_", "token_id": "tok_", "job_id": "job_",
}  # fmt: skip


def test_every_example_is_a_value_of_the_field_it_describes(openapi: dict[str, Any]) -> None:
    """Each example in OpenAPI (the glossary's, and the MCP tools' with them) validates
    against its own field's schema — its pattern, enum, type and bounds."""
    wrong = [
        (model, name, example)
        for model, name, prop in _properties(openapi)
        for example in prop.get("examples", [])
        if not _valid(example, {k: v for k, v in prop.items() if k != "examples"}, openapi)
        or not str(example).startswith(_ID_PREFIXES.get(name, ""))
    ]
    assert not wrong
    ids = tuple(_ID_PREFIXES.values())
    records = [
        (model, example)
        for model, name, prop in _properties(openapi)
        if name == "id" and "record" in prop["description"]
        for example in prop.get("examples", [])
        if str(example).startswith(ids)
    ]
    assert not records  # a record's id is no project's, document's or store's
    for path, operations in openapi["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                for example in parameter.get("schema", {}).get("examples", []):
                    assert _valid(example, parameter["schema"], openapi), (path, parameter)
    timeline = openapi["components"]["schemas"]["TimelineRequest"]["properties"]["kind"]
    assert timeline["examples"][0] not in ("page", "claim", "relationship")  # a type, not a kind
