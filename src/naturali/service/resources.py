"""The CRUD routes of the documents-and-memories API beside the operation catalogue
(service/operations.py): each route's method, path, required role and SDK method, so that the
authorization matrix, the audit trail and the SDK are checked against one list."""

from __future__ import annotations

from dataclasses import dataclass

from naturali.service.operation import PROJECT, Role


@dataclass(frozen=True)
class Resource:
    """A CRUD operation of the documents-and-memories API: its route and its SDK method."""

    name: str
    method: str
    path: str
    role: Role
    sdk: str


RESOURCES: tuple[Resource, ...] = (
    Resource("list_projects", "GET", "/v1/projects", "any", "projects.list"),
    Resource("create_project", "POST", "/v1/projects", "any", "projects.create"),
    Resource("list_tokens", "GET", "/v1/tokens", "any", "tokens.list"),
    Resource("create_token", "POST", "/v1/tokens", "any", "tokens.create"),
    Resource("revoke_token", "DELETE", "/v1/tokens/{token_id}", "any", "tokens.revoke"),
    Resource("get_project", "GET", PROJECT, "read", "projects.get"),
    Resource("project_usage", "GET", PROJECT + "/usage", "read", "projects.usage"),
    Resource("project_overview", "GET", PROJECT + "/overview", "read", "projects.overview"),
    Resource("ingest_jobs", "GET", PROJECT + "/ingest_jobs", "read", "projects.ingest_jobs"),
    Resource(
        "document_folders", "GET", PROJECT + "/documents/folders", "read", "documents.folders"
    ),
    Resource("project_audit", "GET", PROJECT + "/audit", "owner", "projects.audit"),
    Resource("list_members", "GET", PROJECT + "/members", "read", "projects.list_members"),
    Resource("put_member", "PUT", PROJECT + "/members/{user_id}", "owner", "projects.put_member"),
    Resource(
        "remove_member",
        "DELETE",
        PROJECT + "/members/{user_id}",
        "owner",
        "projects.remove_member",
    ),
    Resource("create_document", "POST", PROJECT + "/documents", "write", "documents.create_text"),
    Resource("get_document", "GET", PROJECT + "/documents/{document_id}", "read", "documents.get"),
    Resource(
        "update_document",
        "PUT",
        PROJECT + "/documents/{document_id}",
        "write",
        "documents.replace",
    ),
    Resource(
        "delete_document",
        "DELETE",
        PROJECT + "/documents/{document_id}",
        "write",
        "documents.delete",
    ),
    Resource("create_store", "POST", PROJECT + "/memory_stores", "write", "memory_stores.create"),
    Resource(
        "get_store",
        "GET",
        PROJECT + "/memory_stores/{memory_store_id}",
        "read",
        "memory_stores.get",
    ),
    Resource(
        "update_store",
        "PATCH",
        PROJECT + "/memory_stores/{memory_store_id}",
        "write",
        "memory_stores.update",
    ),
    Resource(
        "delete_store",
        "DELETE",
        PROJECT + "/memory_stores/{memory_store_id}",
        "owner",
        "memory_stores.delete",
    ),
    Resource(
        "create_memory",
        "POST",
        PROJECT + "/memory_stores/{memory_store_id}/memories",
        "write",
        "memory_stores.create_memory",
    ),
    Resource(
        "list_memories",
        "GET",
        PROJECT + "/memory_stores/{memory_store_id}/memories",
        "read",
        "memory_stores.list_memories",
    ),
    Resource(
        "get_memory",
        "GET",
        PROJECT + "/memory_stores/{memory_store_id}/memories/{memory_id}",
        "read",
        "memory_stores.get_memory",
    ),
    Resource(
        "update_memory",
        "PATCH",
        PROJECT + "/memory_stores/{memory_store_id}/memories/{memory_id}",
        "write",
        "memory_stores.update_memory",
    ),
    Resource(
        "delete_memory",
        "DELETE",
        PROJECT + "/memory_stores/{memory_store_id}/memories/{memory_id}",
        "write",
        "memory_stores.delete_memory",
    ),
    Resource("create_source", "POST", PROJECT + "/sources", "write", "sources.create"),
    Resource("list_sources", "GET", PROJECT + "/sources", "read", "sources.list"),
    Resource("get_source", "GET", PROJECT + "/sources/{source_id}", "read", "sources.get"),
    Resource("update_source", "PATCH", PROJECT + "/sources/{source_id}", "write", "sources.update"),
    Resource(
        "delete_source", "DELETE", PROJECT + "/sources/{source_id}", "write", "sources.delete"
    ),
    Resource("sync_source", "POST", PROJECT + "/sources/{source_id}/sync", "write", "sources.sync"),
)
