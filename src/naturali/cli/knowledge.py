"""``naturali knowledge grep|lookup|records|record``: the records tools of one memory store."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from naturali.cli.common import BaseUrl, Token, client, errors, print_json

app = typer.Typer(
    help="Keyword search, lookup and inventory over a memory store's records.", no_args_is_help=True
)

Project = Annotated[str, typer.Option("--project-id", help="Project id")]
Store = Annotated[str, typer.Option("--store-id", help="Memory store id")]
Kind = Annotated[str | None, typer.Option(help="page, claim or relationship")]
Type = Annotated[str | None, typer.Option("--type", help="Ontology type (aliases expand)")]
Tag = Annotated[str | None, typer.Option(help="Exact, case-sensitive tag")]
Lifecycle = Annotated[str, typer.Option(help="active, superseded or all")]
Json = Annotated[bool, typer.Option("--json", help="Print the complete response")]
Snapshot = Annotated[
    str | None, typer.Option(help="The first page's snapshot (a change since is an error)")
]
RecordType = Annotated[str | None, typer.Option(help="Exact record.type (decision, meeting…)")]


def _show(response: dict[str, Any], rows_key: str, as_json: bool) -> None:
    if as_json:
        print_json(response)
        return
    rows = response.get(rows_key) or []
    if not rows:
        typer.echo("no records")
    for row in rows:
        via = f"  (via {row['via']['id']})" if "via" in row else ""
        typer.echo(f"{row['id']}  [{row['kind']}/{row['type']}]  {row['title']}{via}")
        if "snippet" in row:
            typer.echo("    " + " ".join(row["snippet"]["text"].split())[:160])
    if response.get("nextOffset") is not None:
        typer.echo(f"… more: --offset {response['nextOffset']}")
    if response.get("coverage", {}).get("complete") is False:
        typer.secho(
            f"{len(response['coverage']['issues'])} invalid file(s) skipped",
            err=True,
            fg=typer.colors.YELLOW,
        )


@app.command()
def grep(
    query: str,
    project_id: Project,
    store_id: Store,
    mode: Annotated[str, typer.Option(help="all, any or phrase")] = "all",
    kind: Kind = None,
    type_: Type = None,
    tag: Tag = None,
    lifecycle: Lifecycle = "active",
    limit: Annotated[int, typer.Option(help="1–50")] = 20,
    offset: Annotated[int, typer.Option(help="0–500")] = 0,
    time_field: Annotated[
        str, typer.Option("--time-field", help="occurred_at, recorded_at, updated_at, due_at")
    ] = "occurred_at",
    since: Annotated[str | None, typer.Option(help="YYYY-MM-DD or ISO timestamp")] = None,
    until: Annotated[str | None, typer.Option(help="Inclusive")] = None,
    snapshot: Snapshot = None,
    as_json: Json = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Keyword search (FTS5/BM25 over title, aliases, body)."""
    with errors(), client(base_url, token) as api:
        response = api.records.grep(
            project_id=project_id,
            memory_store_id=store_id,
            query=query,
            mode=mode,
            kind=kind,
            type=type_,
            tag=tag,
            lifecycle=lifecycle,
            limit=limit,
            offset=offset,
            timeField=time_field if since or until else None,
            since=since,
            until=until,
            snapshot=snapshot,
        )
    _show(response, "hits", as_json)


@app.command()
def lookup(
    query: str,
    project_id: Project,
    store_id: Store,
    kind: Kind = None,
    type_: Type = None,
    tag: Tag = None,
    lifecycle: Lifecycle = "active",
    as_json: Json = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Exact id, full title or alias: found, ambiguous or missing."""
    with errors(), client(base_url, token) as api:
        response = api.records.lookup(
            project_id=project_id,
            memory_store_id=store_id,
            query=query,
            kind=kind,
            type=type_,
            tag=tag,
            lifecycle=lifecycle,
        )
    if not as_json:
        typer.echo(response["status"])
    _show(response, "hits", as_json)


@app.command()
def records(
    project_id: Project,
    store_id: Store,
    kind: Kind = None,
    type_: Type = None,
    tag: Tag = None,
    lifecycle: Lifecycle = "active",
    limit: Annotated[int, typer.Option(help="1–500")] = 100,
    offset: Annotated[int, typer.Option()] = 0,
    snapshot: Snapshot = None,
    as_json: Json = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """The exhaustive inventory of available records."""
    with errors(), client(base_url, token) as api:
        response = api.records.records(
            project_id=project_id,
            memory_store_id=store_id,
            kind=kind,
            type=type_,
            tag=tag,
            lifecycle=lifecycle,
            limit=limit,
            offset=offset,
            snapshot=snapshot,
        )
    _show(response, "records", as_json)


@app.command()
def record(
    record_id: str,
    project_id: Project,
    store_id: Store,
    as_json: Json = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """One record whole, with all its evidence."""
    with errors(), client(base_url, token) as api:
        response = api.records.record(
            project_id=project_id, memory_store_id=store_id, record_id=record_id
        )
    if as_json:
        print_json(response)
        return
    typer.echo(
        f"{response['id']}  r{response['revision']}  {response['path']}  "
        f"sha256 {response['sha256']}"
    )
    typer.echo(f"{response['title']}\n\n{response['body']}")


def _show_rows(response: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(response)
        return
    rows = response.get("rows") or []
    if not rows:
        typer.echo("no dated records")
    for row in rows:
        when = row["date"].get("local") or row["date"]["value"]
        typer.echo(f"{when}  {row['id']}  [{row['type']}]  {row['title']}")
    if response.get("nextOffset") is not None:
        typer.echo(f"… more: --offset {response['nextOffset']}")


@app.command()
def timeline(
    project_id: Project,
    store_id: Store,
    entity: Annotated[str | None, typer.Option(help="Entity id")] = None,
    kind: RecordType = None,
    time_field: Annotated[str, typer.Option("--time-field")] = "occurred_at",
    since: Annotated[str | None, typer.Option(help="YYYY-MM-DD or ISO timestamp")] = None,
    until: Annotated[str | None, typer.Option(help="Inclusive")] = None,
    order: Annotated[str, typer.Option(help="asc or desc")] = "asc",
    eligibility: Annotated[str, typer.Option(help="active or include_inactive")] = "active",
    include_sources: Annotated[bool, typer.Option("--include-sources")] = False,
    group: Annotated[str | None, typer.Option(help='"source" (with --entity)')] = None,
    limit: Annotated[int, typer.Option()] = 50,
    offset: Annotated[int, typer.Option()] = 0,
    snapshot: Snapshot = None,
    as_json: Json = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Dated records (knowledge_timeline)."""
    with errors(), client(base_url, token) as api:
        response = api.records.timeline(
            project_id=project_id,
            memory_store_id=store_id,
            entity=entity,
            kind=kind,
            timeField=time_field,
            since=since,
            until=until,
            order=order,
            eligibility=eligibility,
            includeSources=include_sources or None,
            group=group,
            limit=limit,
            offset=offset,
            snapshot=snapshot,
        )
    _show_rows(response, as_json)


@app.command("chronicle-day")
def chronicle_day(
    day: Annotated[str, typer.Argument(metavar="DATE", help="YYYY-MM-DD")],
    project_id: Project,
    store_id: Store,
    week: Annotated[bool, typer.Option("--week", help="Its Monday–Sunday week")] = False,
    time_zone: Annotated[str, typer.Option("--time-zone", help="IANA zone")] = "UTC",
    kind: RecordType = None,
    limit: Annotated[int, typer.Option(help="1–500")] = 100,
    offset: Annotated[int, typer.Option()] = 0,
    snapshot: Snapshot = None,
    as_json: Json = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """One day or week of dated records (knowledge_chronicle_day)."""
    with errors(), client(base_url, token) as api:
        response = api.records.chronicle(
            "day",
            project_id=project_id,
            memory_store_id=store_id,
            date=day,
            week=week or None,
            timeZone=time_zone,
            kind=kind,
            limit=limit,
            offset=offset,
            snapshot=snapshot,
        )
    _show_rows(response, as_json)


@app.command("chronicle-since")
def chronicle_since(
    since: str,
    project_id: Project,
    store_id: Store,
    until: Annotated[str | None, typer.Option()] = None,
    entity: Annotated[str | None, typer.Option()] = None,
    kind: RecordType = None,
    limit: Annotated[int, typer.Option(help="1–200")] = 50,
    offset: Annotated[int, typer.Option()] = 0,
    snapshot: Snapshot = None,
    as_json: Json = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Occurrence-time range, oldest first (knowledge_chronicle_since)."""
    with errors(), client(base_url, token) as api:
        response = api.records.chronicle(
            "since",
            project_id=project_id,
            memory_store_id=store_id,
            since=since,
            until=until,
            entity=entity,
            kind=kind,
            limit=limit,
            offset=offset,
            snapshot=snapshot,
        )
    _show_rows(response, as_json)


@app.command("last-seen")
def last_seen(
    entity: str,
    project_id: Project,
    store_id: Store,
    on_or_before: Annotated[str | None, typer.Option("--on-or-before")] = None,
    as_json: Json = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Latest dated context for an entity (knowledge_chronicle_last_seen)."""
    with errors(), client(base_url, token) as api:
        response = api.records.chronicle(
            "last_seen",
            project_id=project_id,
            memory_store_id=store_id,
            entity=entity,
            occurredOnOrBefore=on_or_before,
        )
    if as_json:
        print_json(response)
    elif response["lastSeen"] is None:
        typer.echo("not seen")
    else:
        row = response["lastSeen"]
        typer.echo(f"{row['date']['value']}  {row['id']}  {row['title']}")


def _store_url(project_id: str, store_id: str) -> str:
    return f"/v1/projects/{project_id}/memory_stores/{store_id}/knowledge"


def _send(
    base_url: str | None,
    token: str | None,
    project_id: str,
    store_id: str,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
) -> None:
    """One write-side call through the SDK; prints the response."""
    with errors(), client(base_url, token) as api:
        extra = {"json": body} if body is not None else {}
        print_json(api.request(method, _store_url(project_id, store_id) + path, **extra))


def _json_option(value: str | None, name: str) -> Any:
    import json

    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"{name} must be JSON: {exc.msg}") from exc


RequestIdOpt = Annotated[str, typer.Option("--request-id", help="Your id for this write")]


@app.command()
def save(
    project_id: Project,
    store_id: Store,
    request_id: RequestIdOpt,
    record: Annotated[str, typer.Option(help='JSON: {"kind": "claim", "title": …, "body": …}')],
    record_id: Annotated[str | None, typer.Option("--id", help="Record to update")] = None,
    expected_revision: Annotated[int | None, typer.Option("--expected-revision")] = None,
    expected_hash: Annotated[str | None, typer.Option("--expected-hash")] = None,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Create or update a record (knowledge_save); prints the receipt."""
    body = {
        "requestId": request_id,
        "record": _json_option(record, "--record"),
        "id": record_id,
        "expectedRevision": expected_revision,
        "expectedHash": expected_hash,
    }
    body = {k: v for k, v in body.items() if v is not None}
    _send(base_url, token, project_id, store_id, "POST", "/save", body)


@app.command()
def correct(
    record_id: str,
    project_id: Project,
    store_id: Store,
    request_id: RequestIdOpt,
    expected_revision: Annotated[int, typer.Option("--expected-revision")],
    expected_hash: Annotated[str, typer.Option("--expected-hash")],
    replacement: Annotated[str, typer.Option(help="JSON fields and body of the replacement")],
    reason: Annotated[str, typer.Option()],
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Supersede a claim or relationship (knowledge_correct); prints the receipt."""
    body = {
        "requestId": request_id,
        "id": record_id,
        "expectedRevision": expected_revision,
        "expectedHash": expected_hash,
        "reason": reason,
        "replacement": _json_option(replacement, "--replacement"),
    }
    _send(base_url, token, project_id, store_id, "POST", "/correct", body)


@app.command()
def withdraw(
    record_id: str,
    project_id: Project,
    store_id: Store,
    request_id: RequestIdOpt,
    reason: Annotated[str, typer.Option()],
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Withdraw a record with a reason (knowledge_withdraw); prints the receipt."""
    body = {"requestId": request_id, "id": record_id, "reason": reason}
    _send(base_url, token, project_id, store_id, "POST", "/withdraw", body)


@app.command()
def resume(
    project_id: Project,
    store_id: Store,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Finish interrupted writes and retry pending Git commits (knowledge_resume)."""
    _send(base_url, token, project_id, store_id, "POST", "/resume", {})


@app.command()
def mutation(
    request_id: str,
    project_id: Project,
    store_id: Store,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """A write's receipt (knowledge_mutation)."""
    _send(base_url, token, project_id, store_id, "GET", f"/mutations/{request_id}")


@app.command()
def history(
    record_id: str,
    project_id: Project,
    store_id: Store,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """A record's revisions with their receipts (knowledge_history)."""
    _send(base_url, token, project_id, store_id, "GET", f"/records/{record_id}/history")
