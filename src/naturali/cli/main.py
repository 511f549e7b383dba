"""The ``naturali`` command: thin commands that parse, call the service or SDK, map errors."""

from __future__ import annotations

import typer

from naturali.cli import admin
from naturali.cli.ingest import ingest
from naturali.cli.lazy import LazyGroup
from naturali.cli.mcp import mcp
from naturali.cli.search import search_knowledge
from naturali.cli.serve import serve

app = typer.Typer(
    help="naturali: a self-hosted knowledge layer for AI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help: rich's table cuts option names at 80 columns (--include-docume…).
    rich_markup_mode=None,
)
app.command()(serve)
app.command()(ingest)
app.command("search-knowledge")(search_knowledge)
app.command()(mcp)
app.add_typer(admin.app, name="admin")
app.add_typer(
    typer.Typer(
        rich_markup_mode=None,
        cls=LazyGroup.of("naturali.cli.knowledge"),
        help="The records tools of a memory store: search, lookup, inventory, dates and writes.",
        no_args_is_help=True,
    ),
    name="knowledge",
)


if __name__ == "__main__":
    app()
