"""The ``naturali`` command: thin commands that parse, call the service or SDK, map errors."""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

from naturali.cli import admin, documents, sources, tokens
from naturali.cli.audit import audit
from naturali.cli.folders.sync import ingest, sync
from naturali.cli.lazy import LazyCommand, LazyGroup
from naturali.cli.mcp import mcp
from naturali.cli.serve import serve


class Naturali(TyperGroup):
    """The top-level commands, with ``search-knowledge``'s options (made from SearchRequest)
    loaded only when it is used."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        search = LazyCommand(
            "search-knowledge",
            "naturali.cli.search",
            "search_knowledge",
            help="Search a project's documents and memories; a table by default, --json for raw.",
        )
        self.add_command(search)

    def main(self, args: Any = None, *rest: Any, **options: Any) -> Any:
        given = list(sys.argv[1:] if args is None else args)
        return super().main(canonical(given), *rest, **options)


# One spelling of each option everywhere; an earlier release's is still read, for one release.
RENAMED = {"--project": "--project-id", "--store": "--store-id"}


def canonical(args: list[str]) -> list[str]:
    """``args`` with the earlier spellings of options in today's (``--project=x`` too)."""
    out = []
    for arg in args:
        name, equals, value = arg.partition("=")
        out.append(RENAMED.get(name, name) + equals + value if name in RENAMED else arg)
    return out


app = typer.Typer(
    cls=Naturali,
    help="naturali: a self-hosted knowledge layer for AI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help: rich's table cuts option names at 80 columns (--include-docume…).
    rich_markup_mode=None,
)
app.command()(serve)
app.command()(ingest)
app.command()(sync)
app.command()(audit)
app.command()(mcp)
app.add_typer(admin.app, name="admin")
app.add_typer(tokens.app, name="tokens")
app.add_typer(documents.app, name="documents")
app.add_typer(sources.app, name="sources")
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
