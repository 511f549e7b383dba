"""How ``naturali knowledge`` commands print a response (``--json`` prints it whole)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from naturali.cli.common import print_json


def show_json(response: dict[str, Any], as_json: bool) -> None:
    print_json(response)


def _hits(rows_key: str) -> Callable[[dict[str, Any], bool], None]:
    def show(response: dict[str, Any], as_json: bool) -> None:
        if as_json:
            print_json(response)
            return
        if "status" in response:
            typer.echo(response["status"])
        rows = response.get(rows_key) or []
        if not rows:
            typer.echo("no records")
        for row in rows:
            via = f"  (via {row['via']['id']})" if "via" in row else ""
            typer.echo(f"{row['id']}  [{row['kind']}/{row['type']}]  {row['title']}{via}")
            if "snippet" in row:
                typer.echo("    " + " ".join(row["snippet"]["text"].split())[:160])
        _more(response)
        _coverage(response)

    return show


def _more(response: dict[str, Any]) -> None:
    if response.get("nextOffset") is not None:
        typer.echo(f"… more: --offset {response['nextOffset']}")


def _coverage(response: dict[str, Any]) -> None:
    if response.get("coverage", {}).get("complete") is False:
        typer.secho(
            f"{len(response['coverage']['issues'])} invalid file(s) skipped",
            err=True,
            fg=typer.colors.YELLOW,
        )


def _record(response: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(response)
        return
    typer.echo(
        f"{response['id']}  r{response['revision']}  {response['path']}  "
        f"sha256 {response['sha256']}"
    )
    typer.echo(f"{response['title']}\n\n{response['body']}")


def _dated(response: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(response)
        return
    rows = response.get("rows") or []
    if not rows:
        typer.echo("no dated records")
    for row in rows:
        when = row["date"].get("local") or row["date"]["value"]
        typer.echo(f"{when}  {row['id']}  [{row['type']}]  {row['title']}")
    _more(response)


def _last_seen(response: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(response)
    elif response["lastSeen"] is None:
        typer.echo("not seen")
    else:
        row = response["lastSeen"]
        typer.echo(f"{row['date']['value']}  {row['id']}  {row['title']}")


def _passages(response: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(response)
        return
    for passage in response["data"]:
        page = f" p.{passage['page']}" if passage.get("page") is not None else ""
        typer.secho(f"[{passage['ordinal']}{page}] {passage['chunk_id']}", bold=True)
        typer.echo(passage["content"])
    shown = response["start"] + len(response["data"])
    if shown < response["total"]:
        typer.echo(f"… {response['total'] - shown} more: --start {shown}")


def _stores(response: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(response)
        return
    for store in response["data"]:
        typer.echo(f"{store['id']}  {store['name']}")


def _documents(response: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(response)
        return
    for d in response["data"]:
        typer.echo(f"{d['id']}  {d['path']}  {d['status']}  {d['chunk_count']} passages")
    if response.get("next_cursor"):
        typer.echo(f"… more: --cursor {response['next_cursor']}")


SHOW: dict[str, Callable[[dict[str, Any], bool], None]] = {
    "knowledge_documents": _documents,
    "knowledge_passages": _passages,
    "knowledge_stores": _stores,
    "knowledge_grep": _hits("hits"),
    "knowledge_lookup": _hits("hits"),
    "knowledge_records": _hits("records"),
    "knowledge_record": _record,
    "knowledge_timeline": _dated,
    "knowledge_chronicle_day": _dated,
    "knowledge_chronicle_since": _dated,
    "knowledge_chronicle_last_seen": _last_seen,
}
