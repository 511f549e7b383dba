"""The OpenAPI schema describes every route, with the error shape, and is valid."""

from __future__ import annotations

from openapi_spec_validator import validate

from conftest import Api
from naturali.catalogue import TOOLS
from naturali.service.requests import SearchRequest


def test_openapi_is_valid_and_complete(api: Api) -> None:
    schema = api.http.get("/openapi.json").json()
    validate(schema)
    paths = schema["paths"]
    expected = {
        ("/v1/projects", "post"),
        ("/v1/projects", "get"),
        ("/v1/projects/{project_id}", "get"),
        ("/v1/projects/{project_id}/members", "get"),
        ("/v1/projects/{project_id}/members/{user_id}", "put"),
        ("/v1/projects/{project_id}/members/{user_id}", "delete"),
        ("/v1/projects/{project_id}/documents", "post"),
        ("/v1/projects/{project_id}/documents", "get"),
        ("/v1/projects/{project_id}/documents/{document_id}", "get"),
        ("/v1/projects/{project_id}/documents/{document_id}", "put"),
        ("/v1/projects/{project_id}/documents/{document_id}", "delete"),
        ("/v1/projects/{project_id}/memory_stores", "post"),
        ("/v1/projects/{project_id}/memory_stores/{memory_store_id}/memories", "post"),
        ("/v1/projects/{project_id}/knowledge/search", "post"),
    }
    present = {(p, m) for p, ops in paths.items() for m in ops}
    assert expected <= present
    for path, ops in paths.items():
        for method, op in ops.items():
            assert "400" in op["responses"] or method == "get", (path, method)
            # 404 where the path names something that may not exist (or not be yours).
            for status in ("401", "404") if "{" in path else ("401",):
                ref = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/ErrorResponse"), (path, method)
    search = paths["/v1/projects/{project_id}/knowledge/search"]["post"]
    body_ref = search["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    request = schema["components"]["schemas"][body_ref.rsplit("/", 1)[1]]
    assert set(request["properties"]) == {  # the model's fields, explain and rerank included
        field.alias or name for name, field in SearchRequest.model_fields.items()
    }
    assert request["additionalProperties"] is False
    assert request["properties"]["limit"]["maximum"] == 100
    response = schema["components"]["schemas"]["KnowledgeSearchResponse"]
    assert "discriminator" in response["properties"]["results"]["items"]
    upload = paths["/v1/projects/{project_id}/documents"]["post"]["requestBody"]["content"]
    assert {"multipart/form-data", "application/json"} <= set(upload)


def test_records_requests_carry_their_models_fields_and_limits(api: Api) -> None:
    """Each records operation's route and result model: tests/test_catalogue.py. Here: the
    request schemas are the models' fields by their wire names, with the models' limits."""
    schemas = api.http.get("/openapi.json").json()["components"]["schemas"]
    for op in TOOLS:
        if op.method == "POST":
            wire = {f.alias or name for name, f in op.request.model_fields.items()}
            assert set(schemas[op.request.__name__]["properties"]) == wire, op.name
    grep = schemas["GrepRequest"]["properties"]
    assert grep["limit"]["maximum"] == 50 and grep["offset"]["maximum"] == 500
