"""The OpenAPI schema describes every route, with the error shape, and is valid."""

from __future__ import annotations

from openapi_spec_validator import validate

from conftest import Api


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
    assert set(request["properties"]) == {
        "query",
        "min_similarity",
        "limit",
        "include_documents",
        "include_memories",
        "document_paths",
        "document_ids",
        "memory_store_ids",
        "tags",
        "explain",  # the documented naturali extensions
        "rerank",
    }
    assert request["additionalProperties"] is False
    assert request["properties"]["limit"]["maximum"] == 100
    response = schema["components"]["schemas"]["KnowledgeSearchResponse"]
    assert "discriminator" in response["properties"]["results"]["items"]
    upload = paths["/v1/projects/{project_id}/documents"]["post"]["requestBody"]["content"]
    assert {"multipart/form-data", "application/json"} <= set(upload)


def test_records_dates_and_writes_are_typed(api: Api) -> None:
    schema = api.http.get("/openapi.json").json()
    base = "/v1/projects/{project_id}/memory_stores/{memory_store_id}/knowledge"
    expected = {
        ("/grep", "post"): "GrepResult",
        ("/lookup", "post"): "LookupResult",
        ("/records", "post"): "RecordsResult",
        ("/records/{record_id}", "get"): "RecordResult",
        ("/timeline", "post"): "TimelineResult",
        ("/chronicle/day", "post"): "TimelineResult",
        ("/chronicle/since", "post"): "TimelineResult",
        ("/chronicle/last_seen", "post"): "LastSeenResult",
        ("/save", "post"): "Receipt",
        ("/correct", "post"): "Receipt",
        ("/withdraw", "post"): "Receipt",
        ("/resume", "post"): "ResumeResult",
        ("/mutations/{requestId}", "get"): "Receipt",
        ("/records/{record_id}/history", "get"): "HistoryResult",
    }
    for (path, method), model in expected.items():
        op = schema["paths"][base + path][method]
        ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert ref.endswith("/" + model), (path, ref)
    grep = schema["components"]["schemas"]["GrepRequest"]["properties"]
    assert {
        "query",
        "mode",
        "kind",
        "type",
        "tag",
        "lifecycle",
        "limit",
        "offset",
        "timeField",
        "since",
        "until",
    } <= set(grep)
    assert grep["limit"]["maximum"] == 50 and grep["offset"]["maximum"] == 500
