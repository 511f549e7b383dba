"""``naturali tokens``: the caller's named tokens, through a server (needs an admin token)."""

from __future__ import annotations

from typing import Annotated

import typer

from naturali.cli.common import (
    BaseUrl,
    MemoryStoreIds,
    PathPrefixes,
    Token,
    client,
    errors,
    limits,
    print_json,
)

app = typer.Typer(
    rich_markup_mode=None,
    help="Your named tokens: create (scope, projects, paths, stores, expiry), list, revoke.",
    no_args_is_help=True,
)


@app.command("create")
def create(
    name: Annotated[str, typer.Option("--name", help="What the token is for")],
    scope: Annotated[
        str, typer.Option("--scope", help="read, write (also writes) or admin (also manages)")
    ] = "read",
    project: Annotated[
        list[str] | None,
        typer.Option("--project-id", help="Limit it to this project (repeatable)"),
    ] = None,
    expires: Annotated[
        str | None, typer.Option("--expires", help="Expire after this long: 30d, 12h, 90m")
    ] = None,
    path_prefix: Annotated[list[str] | None, PathPrefixes] = None,
    memory_store_id: Annotated[list[str] | None, MemoryStoreIds] = None,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Create a token; prints it with its secret, shown this once. Limited to some paths or
    stores, it reaches only those of each project (never more than your own token)."""
    with errors(), client(base_url, token) as api:
        made = api.tokens.create(
            name=name,
            scope=scope,
            projects=project,
            expires_in=expires,
            **limits(path_prefix, memory_store_id),
        )
    print_json(made.model_dump(mode="json"))


@app.command("list")
def list_tokens(
    as_json: Annotated[bool, typer.Option("--json", help="Print the tokens as JSON")] = False,
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Your tokens: name, scope, projects, limits, created, last used, expiry (never a
    secret)."""
    with errors(), client(base_url, token) as api:
        tokens = api.tokens.list()
    if as_json:
        print_json([t.model_dump(mode="json") for t in tokens])
        return
    for t in tokens:
        where = ",".join(t.projects) if t.projects is not None else "all projects"
        where += _limited(t.path_prefixes, "paths") + _limited(t.memory_store_ids, "stores")
        state = f"revoked {t.revoked_at}" if t.revoked_at else f"expires {t.expires_at or 'never'}"
        typer.echo(
            f"{t.id}  {t.name:<16} {t.scope:<5}  {where}  created {t.created_at}  "
            f"last used {t.last_used_at or 'never'}  {state}"
        )


@app.command("revoke")
def revoke(
    token_id: Annotated[str, typer.Argument(help="The token's id (tok_…)")],
    base_url: Annotated[str | None, BaseUrl] = None,
    token: Annotated[str | None, Token] = None,
) -> None:
    """Revoke a token: refused from now on."""
    with errors(), client(base_url, token) as api:
        api.tokens.revoke(token_id=token_id)
    typer.echo(f"revoked {token_id}")


def _limited(values: list[str] | None, what: str) -> str:
    if values is None:
        return ""
    return f" {what}:" + (",".join(values) if values else "none")
